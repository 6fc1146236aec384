// node --test tests/extension/ : discover reuses its last read of the page's geometry (what is
// visible, what covers it, where the text is) while the page's mark holds (page/unchanged.js).
// In a real Chromium: the second look at a still page does no hit test, and every way a page can
// change between two looks shows in the second answer, those that no MutationObserver sees too.
import test from 'node:test';
import assert from 'node:assert/strict';
import { launch, openPage } from './page-world.mjs';

const PAGE = `<!doctype html><style>
  #menu { display: none } #wrap:hover #menu { display: block }
  #scroller { height: 60px; overflow: auto } #scroller div { height: 40px }
  @keyframes spin { to { transform: rotate(360deg) } }
</style><body>
  <button id="save">Save</button><label><input type="checkbox" id="agree"> Agree</label>
  <div id="wrap" style="padding: 10px"><span>Hover me</span><button id="menu">Menu item</button></div>
  <div id="scroller"><div></div><div></div><div><button>Deep</button></div></div>
  <div id="host"></div>
</body>`;

/** One annotated read, and how many hit tests it made. */
const LOOK = `(() => {
  const L = globalThis.__shotbridge;
  let hits = 0;
  const real = Document.prototype.elementFromPoint;
  Document.prototype.elementFromPoint = function (...a) { hits++; return real.apply(this, a); };
  try {
    const found = L.discover({ target: 'interactive', max: 50, text_rects: true });
    return { hits, hidden: found.hidden.map((h) => h.name), texts: found.text_rects.length,
      labels: found.elements.map((e) => ({ name: e.name, bounds: e.bounds, state: e.state })) };
  } finally {
    Document.prototype.elementFromPoint = real;
  }
})()`;

const names = (look) => look.labels.map((l) => l.name);
const label = (look, name) => look.labels.find((l) => l.name === name);

test('a still page is read once; its second look answers the same without hit tests', async (t) => {
  const { run } = await openPage(await launch(t), PAGE);
  const first = await run(LOOK);
  assert.ok(first.hits > 0);
  const second = await run(LOOK);
  assert.equal(second.hits, 0, 'the geometry was reused');
  assert.deepEqual({ ...second, hits: 0 }, { ...first, hits: 0 });
});

test('every kind of change between two looks shows in the second', async (t) => {
  const { page, run } = await openPage(await launch(t), PAGE);
  const look = async () => {
    await run(LOOK);
    return run(LOOK); // the second of two looks: reused if nothing was seen to change
  };

  // A property with no attribute to see: states are read afresh every time.
  await look();
  await run(`document.getElementById('agree').checked = true`);
  assert.equal(label(await run(LOOK), 'Agree').state.checked, true);

  // A rule added through the CSSOM moves a button: no mutation, no event.
  const before = label(await look(), 'Save').bounds;
  await run(`document.styleSheets[0].insertRule('#save { margin-left: 200px }')`);
  const moved = await run(LOOK);
  assert.ok(moved.hits > 0);
  assert.equal(label(moved, 'Save').bounds.x, before.x + 200);

  // Hover reveals a menu item through CSS alone.
  assert.ok(!names(await look()).includes('Menu item'));
  await page.hover('#wrap span');
  assert.ok(names(await run(LOOK)).includes('Menu item'));
  await page.mouse.move(600, 500);

  // A scroll inside a box (its event comes with the next frame; the box's contents moved at once).
  assert.ok(!names(await look()).includes('Deep'));
  await run(`document.getElementById('scroller').scrollTop = 80`);
  assert.ok(names(await run(LOOK)).includes('Deep'));

  // An overlay drawn over the Save button by a new rule in a new sheet: the button is covered.
  assert.ok(!(await look()).hidden.includes('Save'));
  await run(`(() => { const s = new CSSStyleSheet();
    s.replaceSync('#wrap { position: fixed; inset: 0; background: white }');
    document.adoptedStyleSheets = [s]; })()`);
  assert.ok((await run(LOOK)).hidden.includes('Save'));
  await run(`document.adoptedStyleSheets = []`);

  // A shadow root attached to an element already there (no mutation record).
  await look();
  await run(`document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML = '<button>Inside</button>'`);
  assert.ok(names(await run(LOOK)).includes('Inside'));
});

test('nothing is reused while the page animates', async (t) => {
  const { run } = await openPage(await launch(t), PAGE);
  await run(`document.getElementById('save').style.animation = 'spin 10s linear infinite'`);
  await run(LOOK);
  assert.ok((await run(LOOK)).hits > 0);
});

/** Counts the hit tests of every read from now on (each read of this page makes some). */
const COUNT_HITS = `(() => {
  const real = Document.prototype.elementFromPoint;
  globalThis.hitTests = 0;
  Document.prototype.elementFromPoint = function (...a) { globalThis.hitTests++; return real.apply(this, a); };
})()`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('after a change, the page is read again once idle, and the next look reuses that', async (t) => {
  const { run } = await openPage(await launch(t), PAGE);
  await run(LOOK);
  await run(`document.body.insertAdjacentHTML('afterbegin', '<button>Added</button>')`);
  await sleep(600); // the assistant's turn
  const next = await run(LOOK);
  assert.equal(next.hits, 0, 'read while the page was idle');
  assert.ok(names(next).includes('Added'));
});

test('a page that never stops changing is not read again between looks', async (t) => {
  const { run } = await openPage(await launch(t), PAGE);
  await run(COUNT_HITS);
  await run(LOOK);
  const oneRead = await run('globalThis.hitTests');
  assert.ok(oneRead > 0);
  await run(`setInterval(() => document.getElementById('save').toggleAttribute('data-tick'), 50)`);
  await sleep(3000); // a read waits for 0.1 s without a change, which never comes
  assert.equal(await run('globalThis.hitTests'), oneRead);
});

test('a page that changes now and then is read again at most twice per look', async (t) => {
  const { run } = await openPage(await launch(t), PAGE);
  await run(COUNT_HITS);
  await run(LOOK);
  const oneRead = await run('globalThis.hitTests');
  await run(`setInterval(() => document.getElementById('save').toggleAttribute('data-tick'), 400)`);
  await sleep(3500);
  const hits = await run('globalThis.hitTests');
  assert.ok(hits >= 2 * oneRead, 'read again in a quiet moment');
  assert.ok(hits <= 3 * oneRead, `the look and at most two reads after it: ${hits / oneRead} reads`);
});

test('the page is read again once it is quiet, not while it keeps changing', async (t) => {
  const { run } = await openPage(await launch(t), PAGE);
  await run(LOOK);
  // A button renamed every 40 ms for 0.6 s (a list filling in, a clock), then left alone.
  await run(`(() => { let n = 0; const b = document.getElementById('save');
    const timer = setInterval(() => { b.textContent = 'Save ' + (++n); if (n === 15) clearInterval(timer); }, 40); })()`);
  await sleep(1800);
  const next = await run(LOOK);
  assert.equal(next.hits, 0, 'read again after the changes, while the page was idle');
  assert.ok(names(next).includes('Save 15'));
});
