// drag: press at one point, move in steps to another, release, all as trusted CDP mouse input, so
// pointer-driven sortable lists and range sliders respond as to a hand. An HTML5 drag (draggable,
// dragstart) has no OS drag loop under CDP: Chrome hands it over (Input.setInterceptDrags) and
// the rest of the gesture is CDP drag events (dragEnter, dragOver, drop), as Playwright does.

import { Code } from './errors.js';
import { withDebugger } from './debugger.js';
import { callPage } from './page.js';
import { page, within } from './input.js';
import { pageBefore, pointOf } from './aiming.js';
import { HEADLESS, awaitBar } from './viewport.js';

/** @typedef {{x: number, y: number}} Point */
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const DRAG_EVENT_WAIT_MS = 500;

/**
 * Chrome's Input.dragIntercepted for `tabId`, once it comes.
 * @param {number} tabId
 */
function interceptedDrag(tabId) {
  /** @type {any} */
  let data = null;
  /** @type {Parameters<typeof chrome.debugger.onEvent.addListener>[0]} */
  const on = (source, method, params) => {
    if (source.tabId === tabId && method === 'Input.dragIntercepted') data = /** @type {any} */ (params).data;
  };
  chrome.debugger.onEvent.addListener(on);
  return { get data() { return data; }, stop: () => chrome.debugger.onEvent.removeListener(on) };
}

/** @param {Point} a @param {Point} b @param {number} t */
const lerp = (a, b, t) => ({ x: Math.round((a.x + (b.x - a.x) * t) * 100) / 100, y: Math.round((a.y + (b.y - a.y) * t) * 100) / 100 });

/**
 * `drag {selector | x, y, to: {selector | x, y}, steps}` → both ends, and whether it was an HTML5 drag.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function drag(ctx) {
  const a = ctx.args;
  const { tabId, before: first } = await pageBefore(ctx, a.expect_url);
  const opts = { idleMs: a.debugger_idle_ms, cancelled: ctx.cancelled, failCode: Code.INTERNAL };
  /** @type {{p0: Point, p1: Point, ends: any, notes: string[]} | null} */
  let aimed = null;
  let html5 = false;
  try {
    html5 = await withDebugger(tabId, opts, async (dbg) => {
      // Aimed once attached: in a headed window the debugging bar this attach may bring shrinks
      // the viewport (a screenshot's pixel is then refused, a label re-aimed), as click does.
      const before = dbg.newBar && !HEADLESS ? await afterBar(ctx, tabId, first) : first;
      aimed = await ends(tabId, a, before);
      return gesture(ctx, dbg, tabId, aimed.p0, aimed.p1, a.steps);
    });
  } finally {
    if (aimed) {
      const { p0, p1 } = aimed;
      // A pixel end (not a selector or a label's element) is replayed as the same mouse path.
      const byPoints = (a.selector ?? a.expect_selector) === null || !(a.to.selector || a.to.expect_selector);
      await within(callPage(tabId, 'dragDone', { from: p0, to: p1, by_points: byPoints }), 1000, null);
    }
  }
  const { p0, p1, ends: hit, notes } = /** @type {NonNullable<typeof aimed>} */ (aimed);
  const after = await within(callPage(tabId, 'nextPaint', { max_ms: 200 }), 1000, null);
  return { action: 'drag', start: { point: p0, hit: hit.from }, end: { point: p1, hit: hit.to }, html5,
    url: after?.url ?? first.url, title: after?.title ?? first.title, ...(notes.length ? { notes } : {}) };
}

/**
 * Both ends' points, what is at them, and the notes of aiming there.
 * @param {number} tabId
 * @param {any} a the command's arguments
 * @param {any} before page state
 */
async function ends(tabId, a, before) {
  const from = await pointOf(tabId, a, before, "The drag's start");
  const end = { selector: null, x: null, y: null, expect_selector: null, from_scroll: a.from_scroll, expect_viewport: a.expect_viewport, ...a.to };
  const to = await pointOf(tabId, end, before, "The drag's end");
  const p0 = /** @type {Point} */ (from.point);
  const p1 = /** @type {Point} */ (to.point);
  return { p0, p1, ends: await page(tabId, 'dragPrepare', { from: p0, to: p1 }), notes: [...from.notes, ...to.notes] };
}

/**
 * The page state once Chrome's debugging bar, shown by this attach, has reached the page.
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {any} first page state before attaching
 */
async function afterBar(ctx, tabId, first) {
  const viewportOf = (/** @type {any} */ s) => ({ width: s.viewport.width, height: s.viewport.height, dpr: s.device_pixel_ratio });
  const read = async () => {
    const s = await page(tabId, 'pageState', null).catch(() => null);
    return s?.viewport ? viewportOf(s) : null;
  };
  await ctx.guard(awaitBar(read, viewportOf(first)));
  return page(tabId, 'pageState', null);
}

/**
 * The mouse gesture itself; true when the page started an HTML5 drag.
 * @param {import('./context.js').CommandContext} ctx
 * @param {import('./debugger.js').DebuggerHandle} dbg
 * @param {number} tabId
 * @param {Point} p0
 * @param {Point} p1
 * @param {number} steps
 */
async function gesture(ctx, dbg, tabId, p0, p1, steps) {
  const mouse = (/** @type {string} */ type, /** @type {Point} */ p, buttons = 1) => dbg.send('Input.dispatchMouseEvent',
    { type, x: p.x, y: p.y, button: type === 'mouseMoved' ? (buttons ? 'left' : 'none') : 'left', buttons, clickCount: 1 });
  ctx.step = 'pressing at the start';
  await mouse('mouseMoved', p0, 0);
  const caught = interceptedDrag(tabId);
  await dbg.send('Input.setInterceptDrags', { enabled: true });
  try {
    await mouse('mousePressed', p0);
    ctx.step = 'moving to the end';
    for (let i = 1; i <= steps; i++) {
      const p = lerp(p0, p1, i / steps);
      if (caught.data) {
        await dbg.send('Input.dispatchDragEvent', { type: 'dragOver', x: p.x, y: p.y, data: caught.data });
        continue;
      }
      await mouse('mouseMoved', p);
      if (!caught.data && await callPage(tabId, 'dragStarted', null)) {
        for (const t0 = performance.now(); !caught.data && performance.now() - t0 < DRAG_EVENT_WAIT_MS;) await sleep(10);
      }
      if (caught.data) await dbg.send('Input.dispatchDragEvent', { type: 'dragEnter', x: p.x, y: p.y, data: caught.data });
    }
    ctx.step = 'releasing at the end';
    if (caught.data) {
      await dbg.send('Input.dispatchDragEvent', { type: 'drop', x: p1.x, y: p1.y, data: caught.data });
    } else {
      await mouse('mouseReleased', p1, 0);
    }
    return !!caught.data;
  } finally {
    caught.stop();
    await dbg.send('Input.setInterceptDrags', { enabled: false }).catch(() => {});
  }
}
