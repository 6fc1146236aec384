// node --test tests/extension/ : discover keeps selectors across calls (page/memo.js), so in a real
// Chromium every change of the DOM between two calls must show in the second answer: an attribute
// that makes a selector ambiguous, text that makes an element worth listing, a shadow root
// attached (no mutation record), and a change made in the same task as the call.
import test from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage } from './page-world.mjs';

const PAGE = `<!doctype html><body>
  <button name="save">Save</button><button name="send">Send</button>
  <span id="chip" tabindex="0">Chip</span><p id="later"></p><div id="host"></div>
</body>`;

// Each listed element: its name (or text), selector, Playwright locator, and how many elements that selector matches now (>>> paths
// through shadow roots resolved by the library).
const LABELS = (target) => `(() => { const L = globalThis.__shotbridge;
  const found = L.discover({ target: '${target}', max: 100, text_rects: true });
  return found.elements.map((e) => {
    const sel = e.selector || e.shadow_selector;
    return { name: e.name || e.text, sel, locator: e.locator, matches: L.resolveAll(sel).length };
  }); })()`;

const byName = (labels, name) => labels.find((l) => l.name === name);

test('selectors kept across discover calls follow every change of the DOM', async (t) => {
  const { run } = await openPage(await launch(t), PAGE);

  const first = await run(LABELS('interactive'));
  assert.equal(byName(first, 'Send').sel, 'button[name="send"]');
  assert.equal(byName(first, 'Chip').locator, 'locator("#chip")');
  assert.deepEqual(await run(LABELS('interactive')), first, 'an unchanged page answers the same');

  // The other button takes the same name: the old selector would now match two elements.
  await run(`document.querySelector('[name=save]').setAttribute('name', 'send')`);
  const renamed = byName(await run(LABELS('interactive')), 'Send');
  assert.notEqual(renamed.sel, 'button[name="send"]');
  assert.equal(renamed.matches, 1);

  // Text arrives in an empty paragraph: all_visible lists it now.
  assert.equal(byName(await run(LABELS('all_visible')), 'Later text'), undefined);
  await run(`document.getElementById('later').textContent = 'Later text'`);
  assert.ok(byName(await run(LABELS('all_visible')), 'Later text'));

  // A shadow root attached to an element already there is no mutation the observer sees. Its
  // second #chip makes "#chip" ambiguous for Playwright, whose CSS pierces open shadow roots.
  await run(`document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML =
    '<button>Inside</button><span id="chip">Other</span>'`);
  const shadowed = await run(LABELS('interactive'));
  const inside = byName(shadowed, 'Inside');
  assert.ok(inside, 'the button in the new shadow root is found');
  assert.equal(inside.matches, 1);
  assert.notEqual(byName(shadowed, 'Chip').locator, 'locator("#chip")');

  // A change and the call in one task: the observer has not delivered its records yet.
  const same = await run(`(() => { document.querySelectorAll('button[name=send]')[1].setAttribute('name', 'post');
    return ${LABELS('interactive')}; })()`);
  assert.equal(byName(same, 'Send').sel, 'button[name="post"]');
  assert.equal(byName(same, 'Save').sel, 'button[name="send"]', 'the renamed Save is the only "send" again');
});

// An annotated capture asks for its labels with `after_frame`: the page is read once the capture
// has its pixels (its probe after them), not before, since Chrome's capture waits for this thread.
// A button added before the probes must be in the answer, even when frames passed in between.
test('after_frame reads the page after the capture\'s probe and its frame', async (t) => {
  const { run } = await openPage(await launch(t), PAGE);
  const names = (afterFrame) => `(async () => {
    const L = globalThis.__shotbridge;
    const pending = L.discover({ target: 'interactive', after_frame: ${afterFrame} });
    await new Promise((resolve) => setTimeout(resolve, 60)); // frames pass; no capture probed yet
    document.body.insertAdjacentHTML('beforeend', '<button id="late">Late</button>');
    L.probe({ freeze: true, mask_selectors: [] }); // what a capture runs before its pixels
    L.probe({ thaw: true, mask_selectors: [] });
    const found = await pending;
    document.getElementById('late').remove();
    return found.elements.map((e) => e.name);
  })()`;
  assert.ok(!(await run(names(false))).includes('Late'), 'without it the page is read at once');
  assert.ok((await run(names(true))).includes('Late'), 'with it, after the capture\'s probes');
});
