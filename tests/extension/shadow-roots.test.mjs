// node --test tests/extension/ : page/shadow-roots.js in a real Chromium. A document's roots are
// walked once and then followed (new elements by a MutationObserver, roots attached to elements
// already there by the attachShadow hook's report), but only where every same-origin window
// around had that hook from its start; anywhere else each call walks the whole document. The
// library runs here without content/bridge-main.js, so a root attached by script is reported
// only when the test says so: what a call misses shows whether it walked or used the cache.
import test from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage } from './page-world.mjs';

const PAGE = '<!doctype html><body><div id="a"></div><div id="b"></div></body>';

// Hosts of the roots a call returns (the document as "#document").
const ROOTS = `globalThis.__shotbridge.allRoots(document, true).map((r) => r.host ? r.host.id : '#document')`;
const attach = (id) => `document.getElementById('${id}').attachShadow({ mode: 'open' }).innerHTML = '<span id="${id}-in"></span>'`;

test('roots are followed between calls once the hook is known to be in place', async (t) => {
  const { run } = await openPage(await launch(t), PAGE);
  await run('globalThis.__shotbridge.shadowHooked = true');
  assert.deepEqual(await run(ROOTS), ['#document']);

  // New elements that bring a root (declarative, so no attachShadow call) are seen by the observer.
  await run(`document.body.insertAdjacentHTML('beforeend',
    '<div id="c"></div>'); document.getElementById('c').setHTMLUnsafe('<p id="d"><template shadowrootmode="open"><i></i></template></p>')`);
  assert.deepEqual(await run(ROOTS), ['#document', 'd']);

  // A root attached to an element already there: unseen until the hook reports it...
  await run(attach('a'));
  assert.deepEqual(await run(ROOTS), ['#document', 'd'], 'the cache is used');
  await run(`globalThis.__shotbridge.rootAttached(document.getElementById('a').shadowRoot)`);
  assert.deepEqual(await run(ROOTS), ['#document', 'd', 'a']);

  // ...and a host taken out of the document takes its root with it.
  await run(`document.getElementById('d').remove()`);
  assert.deepEqual(await run(ROOTS), ['#document', 'a']);
});

test('without the hook, or beside a same-origin window without it, every call walks', async (t) => {
  const { run } = await openPage(await launch(t), PAGE);
  // shadowHooked unset: this world never saw bridge-main.js take its node.
  assert.deepEqual(await run(ROOTS), ['#document']);
  await run(attach('a'));
  assert.deepEqual(await run(ROOTS), ['#document', 'a']);

  // Hooked here, but a same-origin frame's realm (whose attachShadow the page may call on our
  // elements) has no hook of ours: still a walk each time.
  await run(`globalThis.__shotbridge.shadowHooked = true;
    document.body.append(Object.assign(document.createElement('iframe'), { id: 'f' }))`);
  assert.deepEqual(await run(ROOTS), ['#document', 'a']);
  await run(`document.getElementById('f').contentWindow.Element.prototype.attachShadow.call(document.getElementById('b'), { mode: 'open' })`);
  assert.deepEqual(await run(ROOTS), ['#document', 'a', 'b']);

  // Once the frame is gone, the cache is used again.
  await run(`document.getElementById('f').remove()`);
  assert.deepEqual(await run(ROOTS), ['#document', 'a', 'b']);
  await run(`document.body.append(document.createElement('div')); document.body.lastChild.id = 'e'`);
  await run(attach('e'));
  assert.deepEqual(await run(ROOTS), ['#document', 'a', 'b', 'e'], 'a new element is walked when the cache catches up');
});
