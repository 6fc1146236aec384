// node --test tests/extension/ : pure helpers of the extension, no browser needed.
import test from 'node:test';
import assert from 'node:assert/strict';

// lib/restricted.js imports lib/errors.js only (no chrome.* at module load), so node can load it.
const { isRestrictedUrl } = await import('../../extension/lib/restricted.js');

test('browser-internal schemes are restricted', () => {
  for (const url of [
    'chrome://settings', 'chrome://version/', 'chrome-extension://abcdefghijklmnopabcdefghijklmnop/popup.html',
    'edge://flags', 'devtools://devtools/bundled/inspector.html', 'view-source:https://example.com/',
    'about:settings', 'chrome-untrusted://terminal/', 'chrome-search://local-ntp/',
  ]) assert.equal(isRestrictedUrl(url), true, url);
});

test('the Chrome Web Store is restricted', () => {
  assert.equal(isRestrictedUrl('https://chromewebstore.google.com/detail/x/abc'), true);
  assert.equal(isRestrictedUrl('https://chrome.google.com/webstore/detail/abc'), true);
  assert.equal(isRestrictedUrl('https://chrome.google.com/webstore'), true);
  assert.equal(isRestrictedUrl('https://chrome.google.com/webstorefront'), false);
  assert.equal(isRestrictedUrl('https://chrome.google.com/'), false);
});

test('ordinary pages and about:blank are not restricted', () => {
  for (const url of ['http://127.0.0.1:8000/', 'https://example.com/a?b#c', 'about:blank', 'file:///tmp/x.html', 'data:text/html,hi']) {
    assert.equal(isRestrictedUrl(url), false, url);
  }
  assert.equal(isRestrictedUrl(''), false);
  assert.equal(isRestrictedUrl(undefined), false);
  assert.equal(isRestrictedUrl('not a url'), false);
});
