// node --test tests/extension/ : the tab-facing helpers of helper "tabs" (viewport changes, the
// restricted-page message, the popup's state text). Pure modules: no chrome.* at load time.
import test from 'node:test';
import assert from 'node:assert/strict';

const { viewportChange } = await import('../../extension/lib/viewport.js');
const { restrictedMessage, assertCapturable } = await import('../../extension/lib/restricted.js');

test('an unchanged viewport is no change', () => {
  assert.equal(viewportChange({ width: 1400, height: 813, dpr: 1 }, { width: 1400, height: 813, dpr: 1 }), null);
});

test("the debugging bar's height change is named", () => {
  const why = viewportChange({ width: 1400, height: 813, dpr: 1 }, { width: 1400, height: 757, dpr: 1 });
  assert.match(why, /1400×813 .* → 1400×757/);
  assert.match(why, /started debugging this browser/);
});

test('zoom and resize are told apart', () => {
  assert.match(viewportChange({ width: 1400, height: 813, dpr: 1 }, { width: 1120, height: 650, dpr: 1.25 }), /zoomed/);
  assert.match(viewportChange({ width: 1400, height: 813, dpr: 1 }, { width: 1000, height: 813, dpr: 1 }), /resized/);
});

test('a restricted page is named with its URL and tab', () => {
  assert.equal(restrictedMessage('chrome://extensions/', 7, false),
    'The tracked tab (tab 7) shows chrome://extensions/ (a browser page that cannot be captured or scripted); ' +
    'switch to a web page or pass tab_id. (observe what="tabs" lists the open tabs.)');
  assert.match(restrictedMessage('chrome://settings/', 9, true), /^Tab 9 shows chrome:\/\/settings\/ .*pass the tab_id of a web page/);
  assert.throws(() => assertCapturable('chrome://version/', 3), (e) => e.code === 'restricted_page' && /tab 3/.test(e.message));
  assert.doesNotThrow(() => assertCapturable('https://example.com/', 3));
});
