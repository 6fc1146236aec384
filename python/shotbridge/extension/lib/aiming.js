// Where the select, upload and drag commands act: the tab, the page's state before, and a point
// aimed like input's (a screenshot's pixel follows the content it showed; a label's element is
// found where it is now). A selector needs no point for select and upload: a hidden file input is
// still set through its selector, as Playwright does.

import { Code, ShotError } from './errors.js';
import { targetTab } from './tabs.js';
import { callPage } from './page.js';
import { aim, page, within } from './input.js';
import { viewportChange } from './viewport.js';

/**
 * One end of an action as the host sends it (viewport CSS px, mapped from a screenshot).
 * @typedef {{selector: string | null, x: number | null, y: number | null,
 *   from_scroll: {x: number, y: number} | null, expect_selector: string | null}} Target
 */

/**
 * The tab to act on and its state now; refused when it no longer shows the screenshot's URL.
 * @param {import('./context.js').CommandContext} ctx
 * @param {string | null} expectUrl
 */
export async function pageBefore(ctx, expectUrl) {
  const tabId = await targetTab(ctx);
  ctx.step = 'reading the page';
  const before = await page(tabId, 'pageState', null);
  if (expectUrl !== null && before.url !== expectUrl) {
    throw new ShotError(Code.STALE_SCREENSHOT,
      `The tab now shows ${before.url}, not ${expectUrl} where the screenshot was taken; ` +
      'take a fresh screenshot (or act by selector) before acting by coordinates or labels.');
  }
  return { tabId, before };
}

/**
 * `t` as it can be aimed now: a pixel of a screenshot that saw another viewport is refused (the
 * layout may have moved under it); a label's element is then aimed at where it is now.
 * @param {Target & {expect_viewport?: import('./viewport.js').Viewport | null}} t
 * @param {any} before page state
 * @returns {Target}
 */
function current(t, before) {
  if (!t.expect_viewport || t.x === null || !before?.viewport) return t;
  const now = { width: before.viewport.width, height: before.viewport.height, dpr: before.device_pixel_ratio };
  const change = viewportChange(t.expect_viewport, now);
  if (change === null) return t;
  if (t.expect_selector !== null) return { ...t, x: null, y: null, selector: t.expect_selector };
  throw new ShotError(Code.STALE_SCREENSHOT, `The viewport changed since the screenshot was taken (${change}), so its ` +
    'pixels no longer map exactly onto the page. Take a fresh screenshot and use its pixels, or act by selector or label.');
}

/**
 * The viewport point for `t` (scrolled into view when needed), what is there, and notes.
 * @param {number} tabId
 * @param {Target} t
 * @param {any} before page state
 * @param {string} what the end's name in an error ("the drag's start")
 */
export async function pointOf(tabId, t, before, what) {
  const got = await aim(tabId, current(t, before), before);
  if (!got.point) throw new ShotError(Code.BAD_REQUEST, `${what} needs a selector, a label or x/y.`);
  return got;
}

/**
 * What the page-side function gets for `t`: its selector, or the point aimed at.
 * @param {number} tabId
 * @param {Target} t
 * @param {any} before
 * @param {string} what
 * @returns {Promise<{where: {selector?: string, x?: number, y?: number}, notes: string[]}>}
 */
export async function whereOf(tabId, t, before, what) {
  t = current(t, before);
  if (t.selector !== null) return { where: { selector: t.selector }, notes: [] };
  const got = await pointOf(tabId, t, before, what);
  const p = /** @type {{x: number, y: number}} */ (got.point);
  return { where: { x: p.x, y: p.y }, notes: got.notes };
}

/**
 * An action's result with the page it left (URL, title, once a frame is painted) and its notes.
 * @param {number} tabId
 * @param {any} before page state before the action
 * @param {Record<string, any>} out
 * @param {string[]} notes
 */
export async function finish(tabId, before, out, notes) {
  const after = await within(callPage(tabId, 'nextPaint', { max_ms: 200 }), 1000, null);
  return { ...out, url: after?.url ?? before.url, title: after?.title ?? before.title, ...(notes.length ? { notes } : {}) };
}
