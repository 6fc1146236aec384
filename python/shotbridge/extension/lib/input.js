// input, element_at, resolve: act on the tracked tab like a user would, at CSS viewport
// coordinates. Input goes through CDP (Input.dispatchMouseEvent / dispatchKeyEvent / insertText)
// rather than element.click() or synthetic DOM events, so the page sees trusted events: isTrusted
// handlers run, focus moves, forms submit on Enter, and user-activation-gated APIs work.
// Every action reports what was under the point before acting and waits for the page to settle.

import { Code, ShotError } from './errors.js';
import { callPage, callPageAll } from './page.js';
import { elementAtDeep, inFocusedFrame, locateDeep, pointOnDeep } from './frames.js';
import { isAttached, withDebugger } from './debugger.js';
import { targetTab } from './tabs.js';
import { MODIFIER_BITS, keyPressEvents, modifierName } from './keys.js';
import { HEADLESS, awaitBar, viewportChange } from './viewport.js';
import * as dialogs from './dialogs.js';
import { openDialog } from './open-dialogs.js';

/**
 * @typedef {{x: number, y: number}} Point
 * InputArgs as lib/args.js reads them (declared by wire.extension.InputArgs):
 * @typedef {{action: 'click' | 'hover' | 'type' | 'keypress' | 'scroll', x: number | null,
 *   y: number | null, from_scroll: Point | null, selector: string | null,
 *   expect_selector: string | null, expect_url: string | null, text: string | null,
 *   clear: boolean, key: string | null, modifiers: string[], button: 'left' | 'right' | 'middle',
 *   click_count: number, delta_x: number, delta_y: number, to: 'top' | 'bottom' | {y: number} | null,
 *   debugger_idle_ms: number, expect_viewport: Viewport | null, screenshot_id: number | null}} InputArgs
 * @typedef {import('./viewport.js').Viewport} Viewport
 */

const BUTTON_BITS = { left: 1, right: 2, middle: 4 };
// How long a click/keypress gets to start a navigation after the first paint before we decide
// it did not (form submission starts asynchronously, within a task or two).
const NAVIGATION_GRACE_MS = 60;
// The longest an action's answer waits for the page's read ahead of the next look.
const READ_AHEAD_MAX_MS = 150;
const WHEEL_SETTLE_MAX_MS = 1500;
const IS_MAC = /Mac/i.test(/** @type {any} */ (navigator).userAgentData?.platform || navigator.platform || '');

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * `p`, or `fallback` after `ms`. Scripts injected into a document that is being replaced may
 * never answer, so waits on the page during a navigation are bounded.
 * @template T
 * @param {Promise<T>} p
 * @param {number} ms
 * @param {T} fallback
 * @returns {Promise<T>}
 */
export const within = (p, ms, fallback) => Promise.race([p.catch(() => fallback), sleep(ms).then(() => fallback)]);
const bad = (/** @type {string} */ m) => new ShotError(Code.BAD_REQUEST, m);

/**
 * Run a page-library function, turning its `{error}` answers into ShotErrors.
 * @param {number} tabId
 * @param {string} name
 * @param {any} args
 */
export async function page(tabId, name, args) {
  const out = await callPage(tabId, name, args);
  if (out && out.error) throw new ShotError(out.error.code, out.error.message);
  return out;
}

/**
 * `locate` for a selector, through iframes when a ">>>" step lands on one; `{error}` answers
 * become ShotErrors.
 * @param {number} tabId
 * @param {string} selector
 * @param {boolean} scrollIntoView
 */
async function locate(tabId, selector, scrollIntoView) {
  const out = await locateDeep(tabId, selector, scrollIntoView);
  if (out && out.error) throw new ShotError(out.error.code, out.error.message);
  return out;
}

/**
 * Watches a tab for navigations an action starts (link clicks, Enter in a form), from before the
 * action is dispatched so a fast one is not missed.
 * @param {number} tabId
 */
function navigationWatch(tabId) {
  let loading = false;
  let urlChanged = false;
  /** @type {Parameters<typeof chrome.tabs.onUpdated.addListener>[0]} */
  const onUpdated = (id, info) => {
    if (id !== tabId) return;
    if (info.status === 'loading') loading = true;
    if (info.url) urlChanged = true;
  };
  chrome.tabs.onUpdated.addListener(onUpdated);
  return {
    get started() {
      return loading || urlChanged;
    },
    get loading() {
      return loading;
    },
    dispose() {
      chrome.tabs.onUpdated.removeListener(onUpdated);
    },
  };
}

/**
 * Wait until the action's effects are on screen: one painted frame, and when a navigation
 * started, its load (bounded by the command's deadline; a load still running is reported, not
 * failed).
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {ReturnType<typeof navigationWatch>} nav
 * @returns {Promise<{still_loading: boolean}>}
 */
async function settle(ctx, tabId, nav) {
  ctx.step = 'waiting for the page to settle';
  // The page may be unloading: then the script fails, which is fine.
  await ctx.guard(within(callPage(tabId, 'nextPaint', { max_ms: 200 }), 400, null));
  if (!nav.started) await Promise.all([sleep(NAVIGATION_GRACE_MS), readAhead(tabId)]);
  if (!nav.loading) return { still_loading: false };
  ctx.step = 'waiting for the navigation the action started to load';
  const deadline = performance.now() + Math.max(0, ctx.remainingMs() - 300);
  while (performance.now() < deadline) {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (!tab) throw new ShotError(Code.TAB_CLOSED, `Tab ${tabId} was closed.`);
    if (tab.status === 'complete') return { still_loading: false };
    await sleep(100);
  }
  return { still_loading: true };
}

/**
 * Every frame reads what the last looks asked while the action waits for a navigation
 * (page/discover.js readAhead): a look right after the action then reuses it. Best effort, and
 * bounded so a huge page does not hold the action's answer long.
 * @param {number} tabId
 */
const readAhead = (tabId) => within(callPageAll(tabId, 'readAhead', null, { allFrames: true }), READ_AHEAD_MAX_MS, null);

/**
 * Page state after the action; survives a page the library cannot run in any more.
 * @param {number} tabId
 */
async function finalState(tabId) {
  const state = await within(callPage(tabId, 'nextPaint', { max_ms: 100 }), 1000, null);
  if (state) return state;
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  return { url: tab?.url ?? '', title: tab?.title ?? '', scroll: null, viewport: null };
}

/**
 * Where a coordinate or selector action lands, in viewport CSS px now; scrolls when needed.
 * @param {number} tabId
 * @param {InputArgs} a
 * @param {any} state page state (url, scroll, viewport) before the action
 * @returns {Promise<{point: Point | null, hit: any, notes: string[], extra: Record<string, any>}>}
 */
export async function aim(tabId, a, state) {
  /** @type {string[]} */
  const notes = [];
  /** @type {Record<string, any>} */
  const extra = {};
  if (a.selector !== null) {
    const loc = await locate(tabId, a.selector, true);
    if (!loc.visible || !loc.point) {
      throw new ShotError(Code.NOT_FOUND, `The element matching "${a.selector}" is not visible (${loc.bounds.width}x${loc.bounds.height} CSS px at ${loc.bounds.x},${loc.bounds.y}).`);
    }
    if (loc.count > 1) notes.push(`"${a.selector}" matches ${loc.count} elements; used the first.`);
    if (loc.covered_by) notes.push(`The element is covered at its centre by ${loc.covered_by.tag} "${loc.covered_by.name || loc.covered_by.text}"; that element receives the input.`);
    return { point: loc.point, hit: loc.covered_by ?? loc.element, notes, extra };
  }
  if (a.x === null || a.y === null) return { point: null, hit: null, notes, extra };

  let x = a.x;
  let y = a.y;
  // The point was measured at another scroll position: follow the content it pointed at.
  if (a.from_scroll) {
    const dx = state.scroll.x - a.from_scroll.x;
    const dy = state.scroll.y - a.from_scroll.y;
    if (dx || dy) {
      x -= dx;
      y -= dy;
      extra.scroll_corrected = { dx, dy };
      notes.push(`The page is scrolled ${dy >= 0 ? 'down' : 'up'} ${Math.abs(dy)} px${dx ? ` (and ${dx} px sideways)` : ''} since that screenshot; the point was moved with the content (fixed or sticky elements do not move: take a fresh screenshot if you meant one of those).`);
    }
  }
  const vp = state.viewport;
  if (x < 0 || y < 0 || x >= vp.width || y >= vp.height) {
    // Off screen now (a full-page tile, or the page scrolled): bring that spot to the middle.
    const docX = x + state.scroll.x;
    const docY = y + state.scroll.y;
    const moved = await page(tabId, 'scrollTo', { x: Math.max(0, docX - vp.width / 2), y: Math.max(0, docY - vp.height / 2) });
    x = docX - moved.scroll.x;
    y = docY - moved.scroll.y;
    if (x < 0 || y < 0 || x >= vp.width || y >= vp.height) {
      throw bad(`The point (${Math.round(docX)}, ${Math.round(docY)}) in page CSS px lies outside the page's scrollable area.`);
    }
    extra.scrolled_to = moved.scroll;
    notes.push(`Scrolled to y=${moved.scroll.y} to bring the point into view.`);
  }
  x = Math.round(x * 100) / 100;
  y = Math.round(y * 100) / 100;
  if (a.expect_selector !== null && !(await pointOnDeep(tabId, a.expect_selector, x, y))) {
    // A labelled element that moved since the screenshot: act on it where it is now.
    const loc = await locateDeep(tabId, a.expect_selector, true);
    if (loc && !loc.error && loc.visible && loc.point && !loc.covered_by) {
      notes.push(`The labelled element is no longer at that spot; used its current position (${loc.point.x}, ${loc.point.y}).`);
      extra.retargeted = true;
      return { point: loc.point, hit: loc.element, notes, extra };
    }
  }
  const at = await elementAtDeep(tabId, x, y);
  return { point: { x, y }, hit: at.hit, notes, extra };
}

/**
 * @param {import('./debugger.js').DebuggerHandle} dbg
 * @param {Point} p
 * @param {InputArgs} a
 * @param {number} modifiers
 */
export async function click(dbg, p, a, modifiers) {
  const bit = BUTTON_BITS[a.button];
  await dbg.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: p.x, y: p.y, modifiers, button: 'none', buttons: 0 });
  // A double click is two press/release pairs with clickCount 1 then 2, as a real mouse reports.
  for (let n = 1; n <= a.click_count; n++) {
    await dbg.send('Input.dispatchMouseEvent', { type: 'mousePressed', x: p.x, y: p.y, modifiers, button: a.button, buttons: bit, clickCount: n });
    await dbg.send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: p.x, y: p.y, modifiers, button: a.button, buttons: 0, clickCount: n });
  }
}

/**
 * Wheel scrolling is animated; wait until the scroll position stops changing.
 * @param {number} tabId
 * @param {Point} before
 */
async function wheelSettled(tabId, before) {
  const t0 = performance.now();
  let last = before;
  let still = 0;
  while (performance.now() - t0 < WHEEL_SETTLE_MAX_MS) {
    const s = (await callPage(tabId, 'nextPaint', { max_ms: 100 })).scroll;
    const moved = s.x !== last.x || s.y !== last.y;
    // Two quiet frames after it moved (or ~10 frames without any movement) end the wait.
    still = moved ? 0 : still + 1;
    if ((s.x !== before.x || s.y !== before.y) ? still >= 2 : still >= 10) return;
    last = s;
  }
}

/**
 * Modifier bits for mouse events ("Shift"-click, "Control"-click).
 * @param {string[]} modifiers
 */
function mouseModifiers(modifiers) {
  let bits = 0;
  for (const m of modifiers) {
    const name = typeof m === 'string' ? modifierName(m.trim()) : null;
    if (!name) throw bad(`Unknown modifier "${m}": use Alt, Control, Meta or Shift.`);
    bits |= MODIFIER_BITS[/** @type {keyof typeof MODIFIER_BITS} */ (name)];
  }
  return bits;
}

/**
 * The viewport a page state reports, in the shape of expect_viewport.
 * @param {any} state a page header (viewport, device_pixel_ratio)
 * @returns {Viewport}
 */
function viewportOf(state) {
  return { width: state.viewport.width, height: state.viewport.height, dpr: state.device_pixel_ratio };
}

/**
 * Refuse a pixel action whose screenshot saw another viewport (its point cannot be mapped exactly
 * once the layout may have moved); a label action falls back to its element's current position.
 * @param {InputArgs} a
 * @param {any} state page state now
 * @returns {boolean} true when a label action must be re-aimed at its element
 */
function checkViewport(a, state) {
  if (a.expect_viewport === null || a.x === null || !state?.viewport) return false;
  const change = viewportChange(a.expect_viewport, viewportOf(state));
  if (change === null) return false;
  if (a.expect_selector !== null) return true;
  const which = a.screenshot_id !== null ? `screenshot ${a.screenshot_id}` : 'the screenshot';
  throw new ShotError(Code.STALE_SCREENSHOT,
    `The viewport changed since ${which} was taken (${change}), so its pixels no longer map exactly onto ` +
    'the page. Take a fresh screenshot and use its pixels, or act by selector or label.');
}

/** The same action aimed at the labelled element where it is now, instead of at x/y. @param {InputArgs} a */
const byLabel = (a) => ({ ...a, x: null, y: null, selector: a.expect_selector });

/**
 * @param {import('./context.js').CommandContext} ctx
 */
export async function input(ctx) {
  const a = /** @type {InputArgs} */ (ctx.args);
  const tabId = await targetTab(ctx);
  const blocking = openDialog(tabId);
  if (blocking && isAttached(tabId)) throw dialogs.dialogError(blocking);
  ctx.step = 'reading the page';
  const before = await page(tabId, 'pageState', null);
  if (a.expect_url !== null && before.url !== a.expect_url) {
    throw new ShotError(Code.STALE_SCREENSHOT,
      `The tab now shows ${before.url}, not ${a.expect_url} where the screenshot was taken; ` +
      'take a fresh screenshot (or pass its screenshot_id) before acting by coordinates or labels.');
  }
  // A label whose screenshot saw another viewport: act on its element where it is now.
  const relabel = checkViewport(a, before);
  let target = await aim(tabId, relabel ? byLabel(a) : a, before);
  if (relabel) target.notes.push('The viewport changed since that screenshot; acted on the labelled element where it is now.');
  /** @type {Record<string, any>} */
  const result = { action: a.action, hit: target.hit, point: target.point, ...target.extra };
  const mods = mouseModifiers(a.modifiers);
  const nav = navigationWatch(tabId);
  // A dialog the action opens blocks the page (Chrome holds the input's own answer back too):
  // the action is done then, and its result says what the page asks.
  const dialogOpens = dialogs.whenOpen(tabId);
  try {
    ctx.step = 'chrome.debugger.attach';
    const acted = withDebugger(tabId, { idleMs: a.debugger_idle_ms, cancelled: ctx.cancelled, failCode: Code.INTERNAL }, async (dbg) => {
      const again = !dbg.reused && !relabel && a.expect_viewport !== null && a.x !== null
        ? await reaim(ctx, tabId, a, dbg, before) : null;
      if (again) {
        target = again;
        result.point = target.point;
        result.hit = target.hit;
      }
      ctx.step = `dispatching ${a.action}`;
      await dispatch(dbg, tabId, a, target.point, mods, before, result);
    });
    const dialog = await Promise.race([acted.then(() => null), dialogOpens.promise]);
    if (dialog) {
      acted.catch(() => {}); // finishes (or fails) once the dialog is answered
      return await withDialog(tabId, before, dialog, target.notes, result);
    }
    await settled(ctx, tabId, a, nav, before, target.notes, result);
  } finally {
    dialogOpens.cancel();
    nav.dispose();
  }
  const late = openDialog(tabId); // opened while the page settled
  if (late) {
    result.dialog = late;
    target.notes.push(dialogs.dialogNote(late));
  }
  if (target.notes.length) result.notes = target.notes;
  return result;
}

/**
 * A fresh attach shows Chrome's debugging bar in a headed window, which shrinks the viewport
 * 100-300 ms later: wait for it when this attach brought a new bar, else look again after a
 * frame, before aiming at a pixel. A label whose viewport changed is aimed at its element.
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {InputArgs} a
 * @param {import('./debugger.js').DebuggerHandle} dbg
 * @param {any} before page state before the action
 * @returns {Promise<Awaited<ReturnType<typeof aim>> | null>} the new aim, or null to keep the old one
 */
async function reaim(ctx, tabId, a, dbg, before) {
  ctx.step = 'checking the viewport after attaching';
  if (dbg.newBar && !HEADLESS) {
    const read = async () => {
      const state = await page(tabId, 'pageState', null).catch(() => null);
      return state?.viewport ? viewportOf(state) : null;
    };
    await ctx.guard(awaitBar(read, viewportOf(before)));
  } else {
    await ctx.guard(within(callPage(tabId, 'nextPaint', { max_ms: 200 }), 400, null));
  }
  const now = await page(tabId, 'pageState', null);
  return checkViewport(a, now) ? aim(tabId, byLabel(a), now) : null;
}

/**
 * The action's trusted input events (or the page's own scroll), at `point` where it has one.
 * @param {import('./debugger.js').DebuggerHandle} dbg
 * @param {number} tabId
 * @param {InputArgs} a
 * @param {Point | null} point
 * @param {number} mods modifier bits for mouse events
 * @param {any} before page state before the action
 * @param {Record<string, any>} result gets the wheel's point
 */
async function dispatch(dbg, tabId, a, point, mods, before, result) {
  if (a.action === 'click' && point) {
    await click(dbg, point, a, mods);
  } else if (a.action === 'hover' && point) {
    await dbg.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: point.x, y: point.y, modifiers: mods, button: 'none', buttons: 0 });
  } else if (a.action === 'type') {
    await typeText(dbg, tabId, a, point);
  } else if (a.action === 'keypress') {
    // A target means "press it there": focus it the way a user would, by clicking it.
    if (point) await click(dbg, point, { ...a, button: 'left', click_count: 1 }, 0);
    for (const params of keyPressEvents(/** @type {string} */ (a.key), a.modifiers, IS_MAC)) {
      await dbg.send('Input.dispatchKeyEvent', params);
    }
  } else if (a.action === 'scroll') {
    if (a.delta_x || a.delta_y) {
      const p = point ?? { x: before.viewport.width / 2, y: before.viewport.height / 2 };
      result.point = p;
      await dbg.send('Input.dispatchMouseEvent', { type: 'mouseWheel', x: p.x, y: p.y, deltaX: a.delta_x, deltaY: a.delta_y, modifiers: mods });
    } else if (a.to !== null) {
      await page(tabId, 'scrollTo', a.to === 'top' || a.to === 'bottom' ? { to: a.to } : { y: a.to.y });
    } else if (a.selector !== null) {
      await page(tabId, 'scrollTo', { selector: a.selector });
    }
    // x/y alone: aim() already brought the point into view when it was off screen.
  }
}

/**
 * type: click the target (if any) to focus it, then insert the text into what has focus.
 * @param {import('./debugger.js').DebuggerHandle} dbg
 * @param {number} tabId
 * @param {InputArgs} a
 * @param {Point | null} point
 */
async function typeText(dbg, tabId, a, point) {
  if (point) await click(dbg, point, { ...a, button: 'left', click_count: 1 }, 0);
  const focus = (await inFocusedFrame(tabId, 'focused')).focused;
  if (!focus || !focus.editable) {
    throw bad(focus
      ? `The focused element (${focus.tag} "${focus.name || focus.text}", ${focus.selector}) does not take text; click a text field first or pass its selector.`
      : 'Nothing has focus to type into: give x/y, a label or a selector of a text field.');
  }
  if (a.clear) await inFocusedFrame(tabId, 'selectFocused');
  // insertText behaves like an IME commit: one beforeinput/input pair, no per-key events.
  if (a.text) await dbg.send('Input.insertText', { text: a.text });
}

/**
 * The result of an action that opened a dialog: the page is blocked, so what the tab says.
 * @param {number} tabId
 * @param {any} before page state before the action
 * @param {import('./open-dialogs.js').DialogInfo} dialog
 * @param {string[]} notes
 * @param {Record<string, any>} result
 */
async function withDialog(tabId, before, dialog, notes, result) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  Object.assign(result, { url: tab?.url ?? before.url, title: tab?.title ?? before.title, scroll: null,
    scroll_before: before.scroll, viewport: before.viewport, navigated: false, dialog });
  notes.push(dialogs.dialogNote(dialog));
  result.notes = notes;
  return result;
}

/**
 * Wait for the action's effects, then add the page state after it to `result`.
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {InputArgs} a
 * @param {ReturnType<typeof navigationWatch>} nav
 * @param {any} before page state before the action
 * @param {string[]} notes
 * @param {Record<string, any>} result
 */
async function settled(ctx, tabId, a, nav, before, notes, result) {
  if (a.action === 'scroll' && (a.delta_x || a.delta_y)) await ctx.guard(wheelSettled(tabId, before.scroll));
  const done = await settle(ctx, tabId, nav);
  const after = await finalState(tabId);
  Object.assign(result, {
    url: after.url,
    title: after.title,
    scroll: after.scroll,
    scroll_before: before.scroll,
    viewport: after.viewport ?? before.viewport,
    navigated: nav.started || after.url !== before.url,
  });
  if (done.still_loading) notes.push('A navigation started and the page is still loading.');
  if (a.action === 'type' || a.action === 'keypress') {
    const f = await within(inFocusedFrame(tabId, 'focused'), 1000, null);
    if (f) result.focused = f.focused;
  }
}

/**
 * element_at {x, y}: what is under a viewport point, without acting.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function elementAt(ctx) {
  const { x, y } = ctx.args;
  const tabId = await targetTab(ctx);
  return elementAtDeep(tabId, x, y);
}

/**
 * resolve {selector, scroll_into_view?}: where an element is now (bounds, in_viewport, the point
 * an action would aim at), or not_found / invalid_selector.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function resolve(ctx) {
  const tabId = await targetTab(ctx);
  return locate(tabId, ctx.args.selector, ctx.args.scroll_into_view);
}
