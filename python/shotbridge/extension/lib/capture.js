// capture: screenshots with the geometry the host needs to map page rectangles onto the image.
// CDP (chrome.debugger) is preferred: it captures background-safe, at any scale, clipped to an
// element or the full page. chrome.tabs.captureVisibleTab is the fallback when the debugger cannot
// attach (DevTools or another debugger client already on the tab, enterprise policy).

import { Code, ShotError } from './errors.js';
import { callPage, callPageAll } from './page.js';
import { withDebugger } from './debugger.js';
import { resolveTab } from './tabs.js';
import { assertCapturable } from './restricted.js';
import { MAX_MESSAGE_BYTES } from './native.js';
import { planTiles } from './tiles.js';
import { captureScreenshot } from './chrome-capture.js';

/**
 * @typedef {null | 'top' | 'bottom' | {y: number} | {selector: string}} ScrollTarget
 * @typedef {import('./tiles.js').TileCaps} TileCaps
 * CaptureArgs as lib/args.js reads them (declared by wire.extension.CaptureArgs):
 * @typedef {{tab_id: number | null, method: 'auto' | 'cdp' | 'visible', format: 'jpeg' | 'png',
 *   quality: number, scale: number | null, selector: string | null, full_page: boolean,
 *   max_height_css: number, debugger_idle_ms: number, scroll: ScrollTarget, tile: TileCaps | null,
 *   fit: TileCaps | null, fit_quality: number | null, mask_selectors: string[]}} CaptureArgs
 * @typedef {{x: number, y: number, width: number, height: number}} Rect
 */

const BACKGROUND_WAIT_MS = 3000;
/** Wall-clock ms (sub-ms precision), comparable across processes: the benchmark's stage stamps. */
const epochMs = () => Math.round((performance.timeOrigin + performance.now()) * 10) / 10;
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Add the duration of `p` to timings[key] (ms, summed over retries).
 * @template T
 * @param {Record<string, number>} timings
 * @param {string} key
 * @param {Promise<T>} p
 * @returns {Promise<T>}
 */
async function timed(timings, key, p) {
  const t0 = performance.now();
  try {
    return await p;
  } finally {
    timings[key] = Math.round(((timings[key] || 0) + performance.now() - t0) * 10) / 10;
  }
}

/**
 * Page geometry and secrets to mask, from every frame. Masks are a safety feature: if they cannot
 * be collected the capture fails instead of returning unmasked pixels.
 * @param {number} tabId
 * @param {string | null} selector
 * @param {string[]} maskSelectors the user's own secrets, on top of password fields
 * @param {{freeze?: boolean, thaw?: boolean}} [motion] pause / resume page animations
 */
async function probe(tabId, selector, maskSelectors, motion = {}) {
  let frames;
  try {
    frames = await callPageAll(tabId, 'probe', { selector, mask_selectors: maskSelectors, ...motion }, { allFrames: true });
  } catch (e) {
    const code = /** @type {any} */ (e).code;
    if (code === Code.RESTRICTED_PAGE || code === Code.TAB_CLOSED || code === Code.NAVIGATION_FAILED) throw e;
    const msg = /** @type {Error} */ (e).message;
    if (NAVIGATING.test(msg)) throw new Moved('the page navigated to another document');
    throw new ShotError(Code.CAPTURE_FAILED, `Could not collect password masks, so no image was taken: ${msg}`);
  }
  const top = frames.find((f) => f.frameId === 0);
  if (top?.error && NAVIGATING.test(top.error)) throw new Moved('the page navigated to another document');
  if (!top || top.error || !top.value) {
    throw new ShotError(Code.CAPTURE_FAILED, `Could not collect password masks, so no image was taken: ${top?.error || 'no answer from the page'}`);
  }
  const p = top.value;
  if (p.error) throw new ShotError(p.error.code, p.error.message);
  // Secrets inside frames the top document cannot look into (cross-origin), or frames whose probe
  // failed: mask every such frame whole, since we cannot tell which one it is.
  const blind = frames.some((f) => f.frameId !== 0 && (f.error || (f.value.hasSecrets && !f.value.reachable)));
  /** @type {Rect[]} */
  const masks = blind ? p.masks.concat(p.opaqueFrames) : p.masks;
  return { ...p, masks };
}

/**
 * Every rect of the given lists once.
 * @param {Rect[][]} lists
 */
function unionRects(...lists) {
  const seen = new Set();
  return lists.flat().filter((r) => {
    const k = `${r.x},${r.y},${r.width},${r.height}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** @param {Rect} a @param {Rect} b */
function intersects(a, b) {
  return Math.min(a.x + a.width, b.x + b.width) > Math.max(a.x, b.x) && Math.min(a.y + a.height, b.y + b.height) > Math.max(a.y, b.y);
}

/**
 * The secrets of one or more probes (before and after a screenshot) that touch the captured area.
 * @param {Rect} area captured area, viewport-relative CSS px
 * @param {...any} probes
 */
function masksFor(area, ...probes) {
  const all = unionRects(...probes.map((p) => p.masks));
  // A mask that cannot be placed fails the capture: dropping it would show the secret.
  const bad = all.find((m) => ![m.x, m.y, m.width, m.height].every(Number.isFinite));
  if (bad) throw new ShotError(Code.CAPTURE_FAILED, `A secret's mask could not be placed (${JSON.stringify(bad)}), so no image was taken.`);
  return all.filter((m) => intersects(m, area));
}

/**
 * Why the probes before and after an image may not describe it (null: they do): another
 * document, URL or scroll position, or a document Chrome has not painted yet.
 * @param {any} pre
 * @param {any} post
 * @returns {string | null}
 */
export function documentMismatch(pre, post) {
  if (!pre.painted) return 'the page had not painted yet';
  if (pre.document_id !== post.document_id) return 'the page navigated to another document';
  if (pre.url !== post.url) return 'the page changed its URL';
  if (!sameScroll(pre, post)) return 'the page scrolled';
  return null;
}

/**
 * Top frame's loader (one per document) and URL, from CDP.
 * @param {import('./debugger.js').DebuggerHandle} dbg
 */
async function loaderOf(dbg) {
  const tree = await dbg.send('Page.getFrameTree');
  return `${tree?.frameTree?.frame?.loaderId}|${tree?.frameTree?.frame?.url}`;
}

const MAX_ATTEMPTS = 3;
// A young document may take seconds to first paint on a loaded machine (two browsers on one
// display, a slow stylesheet): wait for it, bounded, rather than burn the tries in a second.
const FIRST_PAINT_WAIT_MS = 4000;

/**
 * Wait until the page's document is on screen (or the bounded wait is over).
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 */
async function awaitFirstPaint(ctx, tabId) {
  const ms = Math.max(300, Math.min(FIRST_PAINT_WAIT_MS, ctx.remainingMs() - 1500));
  await callPage(tabId, 'firstPaint', { max_ms: ms }).catch(() => {});
}

/**
 * A hidden document (its window covered by another or minimised; Chromium marks a fully covered
 * window occluded) paints nothing until something asks for a frame, so it would never be "on
 * screen". A 1-pixel CDP capture renders one; the next try's probe then sees its first paint.
 * @param {import('./debugger.js').DebuggerHandle} dbg
 */
async function kickFrame(dbg) {
  const clip = { x: 0, y: 0, width: 1, height: 1, scale: 1 };
  await dbg.send('Page.captureScreenshot', { format: 'jpeg', quality: 1, clip }).catch(() => {});
}

/** Resume animations a probe paused, when the attempt ended before its second probe. @param {number} tabId */
async function thawAll(tabId) {
  await callPageAll(tabId, 'thawAnimations', null, { allFrames: true }).catch(() => {});
}
/** What chrome.scripting says when the document went away under it. */
const NAVIGATING = /Frame with ID \d+ was removed|No frame with id|frame was removed|document was unloaded|Execution context was destroyed/i;

/** A secret field is animated: the visible-tab path cannot be sure to mask it (it reads the last frame shown). */
class AnimatedSecrets extends ShotError {
  constructor() {
    super(Code.CAPTURE_FAILED,
      'A secret field on this page is animated, and a visible-area capture cannot be sure to mask it ' +
      '(it reads the last frame shown); no image was taken. Use method "cdp" (or "auto").');
  }
}

/**
 * A secret moved (by script, or an animation it started) while a visible-area capture was taken:
 * the last frame shown may be from any moment of that motion, so no mask can be vouched for.
 */
class MovingSecrets extends ShotError {
  constructor() {
    super(Code.CAPTURE_FAILED,
      'A secret field on this page moved while it was being captured, and a visible-area capture cannot ' +
      'be sure to mask it (it reads the last frame shown); no image was taken. Use method "cdp" (or "auto").');
  }
}

/**
 * Headless (no user window): the visible path saves no debugging bar there, and on a page with
 * secrets it costs two frames of waiting before the pixels (nextPaint) where CDP renders a new
 * frame at once. Measured (corpus, 1920×1080): stage before the capture 27-31 ms visible vs
 * 4-7 ms CDP on pages with a password field; on pages without one visible stays the faster.
 */
const HEADLESS = typeof navigator !== 'undefined' && /\bHeadlessChrome\//.test(navigator.userAgent);
/** Tabs whose last probe, at the URL kept here, found secrets to watch (headless: CDP takes them). */
/** @type {Map<number, string>} */
const watchedPages = new Map();
// A closed tab's entry would stay for the life of the service worker.
globalThis.chrome?.tabs?.onRemoved?.addListener((tabId) => watchedPages.delete(tabId));

/**
 * @param {number} tabId
 * @param {any} pre the probe before the pixels
 */
function noteSecrets(tabId, pre) {
  if (pre.hasSecrets || pre.watching) watchedPages.set(tabId, pre.url);
  else watchedPages.delete(tabId);
}

/** Headless "auto" met secrets on the visible path: CDP takes the capture (see HEADLESS). */
class SecretsToCdp extends ShotError {
  constructor() {
    super(Code.CAPTURE_FAILED, 'the page has secrets: CDP captures it without waiting for frames');
  }
}

/** The page's script kept the secret watch past its time limit: its masks cannot be vouched for. */
const WATCH_EXPIRED = 'No image was taken: the capture outlasted the watch that follows secret fields in motion ' +
  '(60 s), so its masks could not be vouched for. Try again.';

/** The page moved on (another document) mid-capture: try again, up to MAX_ATTEMPTS. */
class Moved extends ShotError {
  /** @param {string} why */
  constructor(why) {
    super(Code.CAPTURE_FAILED, why);
    this.why = why;
  }
}

/**
 * Rejects with Moved once the top frame's loader differs from `loader` (polled): a screenshot
 * asked for during a navigation can wait for a frame that never comes.
 * @param {import('./debugger.js').DebuggerHandle} dbg
 * @param {string} loader
 */
function watchLoader(dbg, loader) {
  let stop = false;
  /** @type {Promise<never>} */
  const moved = (async () => {
    while (!stop) {
      await sleep(150);
      if (!stop && (await loaderOf(dbg).catch(() => loader)) !== loader) throw new Moved('the page navigated to another document');
    }
    return /** @type {never} */ (undefined);
  })();
  moved.catch(() => {});
  return { moved, stop: () => { stop = true; } };
}

/** @param {string} why */
function refuse(why) {
  return new ShotError(Code.CAPTURE_FAILED,
    `No image was taken: ${why} while it was being captured (${MAX_ATTEMPTS} tries), so its masks could not be matched to its pixels.`);
}

/**
 * Same scroll position and viewport size in two Page.getLayoutMetrics results.
 * @param {any} a @param {any} b
 */
function sameViewport(a, b) {
  const va = a?.cssVisualViewport;
  const vb = b?.cssVisualViewport;
  if (!va || !vb) return false;
  return va.pageX === vb.pageX && va.pageY === vb.pageY && va.clientWidth === vb.clientWidth && va.clientHeight === vb.clientHeight;
}

/** @param {any} a @param {any} b */
const sameScroll = (a, b) => a.scroll.x === b.scroll.x && a.scroll.y === b.scroll.y &&
  a.viewport.width === b.viewport.width && a.viewport.height === b.viewport.height;

/**
 * @param {string | number} dataUrl the image as a data URL, or the total length of several
 */
function checkSize(dataUrl) {
  const length = typeof dataUrl === 'number' ? dataUrl : dataUrl.length;
  if (length > MAX_MESSAGE_BYTES) {
    throw new ShotError(Code.CAPTURE_FAILED,
      `The image is ${(length / 1048576).toFixed(1)} MiB as base64, over Chrome's 64 MiB native-messaging limit; ` +
      'use format jpeg, a lower scale or a smaller max_height_css.');
  }
}

/**
 * @param {import('./context.js').CommandContext} ctx
 */
export async function capture(ctx) {
  const a = /** @type {CaptureArgs} */ (ctx.args);
  const tab = await resolveTab(a.tab_id);
  const tabId = /** @type {number} */ (tab.id);
  ctx.watchTab(tabId);
  assertCapturable(tab.url || tab.pendingUrl, tabId, a.tab_id !== null);
  /** @type {Record<string, number>} */
  const timings = { start_at: epochMs() };
  if (a.scroll !== null) await timed(timings, 'scroll', scrollBefore(ctx, tabId, a.scroll));
  if (a.method === 'visible') return captureVisible(ctx, tab, a, timings, 'not available with method "visible"');
  /** @type {unknown} */
  let handedOver = null;
  if (preferVisible(a, tab)) {
    try {
      return await captureVisible(ctx, tab, a, timings, '');
    } catch (e) {
      // Quota hit, the window cannot be read, or secrets in motion: CDP can still take it.
      handedOver = e;
      console.info('[shotbridge] captureVisibleTab failed, using CDP:', /** @type {Error} */ (e).message);
    }
  }
  try {
    return await captureCdp(ctx, tabId, !!tab.active, a, timings);
  } catch (e) {
    if (a.method !== 'auto' || /** @type {any} */ (e).code !== Code.DEBUGGER_UNAVAILABLE) throw e;
    console.info('[shotbridge] CDP capture unavailable, falling back to captureVisibleTab:', /** @type {Error} */ (e).message);
    const fresh = await resolveTab(tabId);
    return captureVisible(ctx, fresh, a, timings, /** @type {Error} */ (e).message);
  } finally {
    // Animated secrets the visible path kept paused for CDP: resumed once CDP is done with them.
    if (handedOver instanceof AnimatedSecrets) await thawAll(tabId);
  }
}

/**
 * Scroll the page (instantly) and wait for the scrolled frame to be painted, so the capture shows
 * the new position and the probe reports it.
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {ScrollTarget} target
 */
async function scrollBefore(ctx, tabId, target) {
  ctx.step = 'scrolling before the capture';
  const args = target === 'top' || target === 'bottom' ? { to: target }
    : 'selector' in /** @type {object} */ (target) ? { selector: /** @type {{selector: string}} */ (target).selector }
      : { y: /** @type {{y: number}} */ (target).y };
  const out = await callPage(tabId, 'scrollTo', args);
  if (out && out.error) throw new ShotError(out.error.code, out.error.message);
  await callPage(tabId, 'nextPaint', { max_ms: 300 });
}

/**
 * Where the image lies (CDP clip in document CSS px) and what it covers (viewport-relative).
 * @param {any} pre
 * @param {any} metrics Page.getLayoutMetrics result
 * @param {CaptureArgs} a
 */
function planClip(pre, metrics, a) {
  const dpr = pre.device_pixel_ratio;
  // Page.captureScreenshot renders clip.scale * devicePixelRatio image px per CSS px.
  const clipScale = (a.scale ?? dpr) / dpr;
  const vp = pre.viewport;
  const sc = pre.scroll;
  const content = metrics?.cssContentSize || { width: 0, height: 0 };
  const page = { width: Math.max(pre.document.width, content.width), height: Math.max(pre.document.height, content.height) };
  const pageHeight = page.height;
  let truncated = false;
  /** @type {Rect} viewport-relative CSS px */
  let area;
  if (a.selector !== null) {
    ({ area, truncated } = elementArea(pre, page, a));
  } else if (a.full_page) {
    const h = Math.min(pageHeight, a.max_height_css);
    truncated = pageHeight > a.max_height_css;
    area = { x: -sc.x, y: -sc.y, width: page.width, height: h };
    if (a.tile !== null) return { area, truncated, pageHeight, ...tilePlan(pre, page.width, h, a), captureBeyondViewport: true };
  } else {
    area = { x: 0, y: 0, width: vp.width, height: vp.height };
  }
  const inViewport = area.x >= 0 && area.y >= 0 && area.x + area.width <= vp.width && area.y + area.height <= vp.height;
  // `fit`: let the browser render at the size the output will have (never upscaling), so the
  // image crossing native messaging is small and the core has no resize left to do.
  const fitScale = a.fit === null ? clipScale
    : Math.min(a.scale ?? dpr, a.fit.max_width / area.width, a.fit.max_long_edge / Math.max(area.width, area.height)) / dpr;
  // The whole viewport at its own pixels: no clip. Chrome renders any clip under a temporary
  // device emulation and renders the page again when it lifts it (bench/results-chrome-capture.md).
  const whole = a.selector === null && !a.full_page && Math.abs(fitScale - 1) < 1e-9;
  return {
    area,
    truncated,
    pageHeight,
    clip: whole ? null : { x: area.x + sc.x, y: area.y + sc.y, width: area.width, height: area.height, scale: fitScale },
    fitted: a.fit !== null,
    /** @type {{area: Rect, clip: object}[] | null} */
    tiles: null,
    captureBeyondViewport: !inViewport,
  };
}

/**
 * The element's box clamped to the document (CDP cannot paint outside it) and cut at
 * max_height_css, viewport-relative.
 * @param {any} pre the probe, which resolved the selector
 * @param {{width: number, height: number}} page the document's size, CSS px
 * @param {CaptureArgs} a
 * @returns {{area: Rect, truncated: boolean}}
 */
function elementArea(pre, page, a) {
  const t = pre.target;
  const sc = pre.scroll;
  if (!t) throw new ShotError(Code.INTERNAL, 'probe did not resolve the selector');
  if (t.error) throw new ShotError(t.error.code, t.error.message);
  const r = t.rect;
  // Clamp to the document: CDP cannot paint outside it.
  const x0 = Math.max(r.x, -sc.x);
  const y0 = Math.max(r.y, -sc.y);
  const x1 = Math.min(r.x + r.width, page.width - sc.x);
  let y1 = Math.min(r.y + r.height, page.height - sc.y);
  if (!(x1 - x0 > 0 && y1 - y0 > 0)) {
    throw new ShotError(Code.CAPTURE_FAILED, `The element matching "${a.selector}" has no visible size (${r.width}x${r.height} CSS px).`);
  }
  let truncated = false;
  if (y1 - y0 > a.max_height_css) {
    y1 = y0 + a.max_height_css;
    truncated = true;
  }
  return { area: { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }, truncated };
}

/**
 * A full page as bands that each fit the tile caps (lib/tiles.js), at one scale.
 * @param {any} pre
 * @param {number} pageWidth
 * @param {number} h the height captured (the page's, cut at max_height_css)
 * @param {CaptureArgs} a with `tile`
 */
function tilePlan(pre, pageWidth, h, a) {
  const dpr = pre.device_pixel_ratio;
  const sc = pre.scroll;
  const t = planTiles(pageWidth, h, a.scale ?? dpr, /** @type {TileCaps} */ (a.tile));
  const tileClipScale = t.scale / dpr;
  return {
    clip: { x: 0, y: 0, width: pageWidth, height: h, scale: tileClipScale },
    tiles: t.bands.map((b) => ({
      area: { x: -sc.x, y: b.y - sc.y, width: pageWidth, height: b.height },
      clip: { x: 0, y: b.y, width: pageWidth, height: b.height, scale: tileClipScale },
    })),
  };
}

/**
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {boolean} active the tab is the active tab of its window
 * @param {CaptureArgs} a
 * @param {Record<string, number>} timings
 */
async function captureCdp(ctx, tabId, active, a, timings) {
  ctx.step = 'chrome.debugger.attach';
  return withDebugger(tabId, { idleMs: a.debugger_idle_ms, cancelled: ctx.cancelled }, async (dbg) => {
    timings.attach = Math.round(dbg.attachMs * 10) / 10;
    // No pause of the document timeline here: chrome.debugger offers no Animation domain
    // ("'Animation.setPlaybackRate' wasn't found"). Secrets in motion are the page's part: the
    // probe pauses their animations and the watch measures every place they take (page/probe.js).
    return cdpAttempts(ctx, tabId, active, a, timings, dbg);
  });
}

/**
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {boolean} active
 * @param {CaptureArgs} a
 * @param {Record<string, number>} timings
 * @param {import('./debugger.js').DebuggerHandle} dbg
 */
async function cdpAttempts(ctx, tabId, active, a, timings, dbg) {
  for (let attempt = 1; ; attempt++) {
    try {
      const out = await cdpAttempt(ctx, tabId, active, a, timings, dbg, attempt);
      if (out) return out;
    } catch (e) {
      await thawAll(tabId);
      if (!(e instanceof Moved)) throw e;
      if (attempt >= MAX_ATTEMPTS) throw refuse(e.why);
      continue;
    }
    await thawAll(tabId);
  }
}

/**
 * One try: the result, or null when the page changed under it (try again).
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {boolean} active
 * @param {CaptureArgs} a
 * @param {Record<string, number>} timings
 * @param {import('./debugger.js').DebuggerHandle} dbg
 * @param {number} attempt 1-based
 */
async function cdpAttempt(ctx, tabId, active, a, timings, dbg, attempt) {
  ctx.step = 'probe page + Page.getLayoutMetrics';
  // The probe is the longest of these and leaves first: the page's main thread takes its work
  // before the short CDP commands queued behind it.
  const probed = timed(timings, 'masks', probe(tabId, a.selector, a.mask_selectors, { freeze: true }));
  const [pre, loader, metrics] = await Promise.all([
    probed,
    loaderOf(dbg),
    timed(timings, 'metrics', dbg.send('Page.getLayoutMetrics')),
  ]);
  noteSecrets(tabId, pre);
  timings.probe_ran_at = pre.ran_at;
  timings.probe_ran_ms = pre.ran_ms;
  if (!pre.painted) {
    // A new document: Chrome still shows the old one's pixels until it paints.
    if (attempt >= MAX_ATTEMPTS) throw refuse('the page had not painted');
    await (pre.hidden ? kickFrame(dbg) : awaitFirstPaint(ctx, tabId));
    return null;
  }
  const plan = planClip(pre, metrics, a);
  ctx.step = 'Page.captureScreenshot';
  timings.shoot_at = epochMs();
  // Rendered at the output size, the image may leave the host as Chrome encoded it: then the
  // host asks for its own final quality here (fit_quality) instead of an intermediate one.
  const quality = 'fitted' in plan && plan.fitted && a.fit_quality !== null ? a.fit_quality : a.quality;
  const { shot, tileShots } = await cdpShoot(ctx, tabId, active, a, plan, quality, dbg, loader, timings);
  timings.image_at = epochMs(); // Chrome has handed us the pixels
  // The host may shrink them while the page is checked below: it holds them until the reply,
  // whose masks (the probe before plus the one after) are the ones that count.
  const early = a.early_pixels && !tileShots;
  if (early) ctx.partial({ ...cdpResult(a, tabId, plan, pre, pre, { data: shot.data, tiles: null, quality }, timings), attempt });
  // One image, one document: the same document (loader and page-side id), URL and scroll
  // before and after the pixels, or the masks may describe another page. The second probe's
  // masks are added too: they hold every place a secret took since the first one (the page
  // watched each DOM change, scroll, new animation and frame in between).
  ctx.step = 'check the document after capture';
  const [loaderAfter, post, after] = await Promise.all([
    loaderOf(dbg),
    timed(timings, 'masks', probe(tabId, null, a.mask_selectors, { thaw: true })),
    timed(timings, 'metrics', dbg.send('Page.getLayoutMetrics')),
  ]);
  timings.post_ran_at = post.ran_at;
  timings.post_ran_ms = post.ran_ms;
  if (post.watch_expired) throw new ShotError(Code.CAPTURE_FAILED, WATCH_EXPIRED);
  const why = loader !== loaderAfter ? 'the page navigated to another document'
    : !sameViewport(metrics, after) ? 'the page scrolled or resized' : documentMismatch(pre, post);
  if (why) {
    if (attempt >= MAX_ATTEMPTS) throw refuse(why);
    return null;
  }
  const shots = { data: shot.data, tiles: tileShots, quality };
  const out = cdpResult(a, tabId, plan, pre, post, shots, timings);
  return early ? { ...out, data_url: '', attempt } : { ...out, attempt };
}

/**
 * Page.captureScreenshot of the plan's clip (or of each of its bands, one at a time), bounded for
 * a background tab and abandoned when the page navigates to another document.
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {boolean} active
 * @param {CaptureArgs} a
 * @param {any} plan from planClip
 * @param {number} quality
 * @param {import('./debugger.js').DebuggerHandle} dbg
 * @param {string} loader the top frame's loader before the pixels
 * @param {Record<string, number>} timings
 * @returns {Promise<{shot: any, tileShots: {area: Rect, data: string}[] | null}>}
 */
async function cdpShoot(ctx, tabId, active, a, plan, quality, dbg, loader, timings) {
  const shoot = (/** @type {object | null} */ clip) => captureScreenshot(dbg, {
    format: a.format,
    ...(a.format === 'jpeg' ? { quality } : {}),
    ...(clip === null ? {} : { clip }),
    fromSurface: true,
    captureBeyondViewport: plan.captureBeyondViewport,
    // Same JPEG bytes (checked on the bench pages), 3-4 ms sooner: bench/results-chrome-capture.md.
    optimizeForSpeed: true,
  });
  /** @type {{area: Rect, data: string}[] | null} */
  let tileShots = null;
  /** @type {Promise<any>} */
  let screenshot;
  if (plan.tiles) {
    // One band at a time: each is a bounded image, never the 32 768 px strip of a DPR 2 page.
    const tiles = /** @type {{area: Rect, clip: object}[]} */ (plan.tiles);
    screenshot = (async () => {
      tileShots = [];
      for (const [i, t] of tiles.entries()) {
        ctx.step = `Page.captureScreenshot (tile ${i + 1} of ${tiles.length})`;
        tileShots.push({ area: t.area, data: (await shoot(t.clip)).data });
      }
      return { data: tileShots[0].data };
    })();
  } else {
    screenshot = shoot(plan.clip);
  }
  if (!active) screenshot = boundForBackground(ctx, tabId, screenshot);
  const watch = watchLoader(dbg, loader);
  try {
    const shot = await timed(timings, 'capture', Promise.race([screenshot, watch.moved]));
    return { shot, tileShots };
  } finally {
    watch.stop();
  }
}

/**
 * Chrome does not paint background tabs; a screenshot then waits for a frame that may never come.
 * Bound the wait and say why instead of burning the whole timeout.
 * @template T
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {Promise<T>} screenshot
 * @returns {Promise<T>}
 */
function boundForBackground(ctx, tabId, screenshot) {
  const waitMs = Math.max(500, Math.min(BACKGROUND_WAIT_MS, ctx.remainingMs() - 200));
  return Promise.race([screenshot, sleep(waitMs).then(() => {
    throw new ShotError(Code.CAPTURE_FAILED,
      `Chrome did not paint tab ${tabId} within ${Math.round(waitMs)} ms: it is not the active tab of its window ` +
      'and background tabs are not rendered. Make it the active tab, then retry.');
  })]);
}

/**
 * The reply of a CDP capture whose document held still around its pixels.
 * @param {CaptureArgs} a
 * @param {number} tabId
 * @param {any} plan from planClip
 * @param {any} pre the probe before the pixels
 * @param {any} post the probe after them
 * @param {{data: string, tiles: {area: Rect, data: string}[] | null, quality: number}} shots
 * @param {Record<string, number>} timings
 */
function cdpResult(a, tabId, plan, pre, post, shots, timings) {
  const dataUrl = `data:image/${a.format};base64,${shots.data}`;
  const tiles = shots.tiles === null ? undefined : shots.tiles.map((t) => ({
    data_url: `data:image/${a.format};base64,${t.data}`,
    origin: { x: t.area.x, y: t.area.y },
    css_size: { width: t.area.width, height: t.area.height },
  }));
  checkSize(tiles ? tiles.reduce((n, t) => n + t.data_url.length, 0) : dataUrl);
  return {
    ...(tiles ? { tiles } : {}),
    data_url: dataUrl,
    method: 'cdp',
    ...(a.format === 'jpeg' ? { quality: shots.quality } : {}),
    url: pre.url,
    title: pre.title,
    tab_id: tabId,
    device_pixel_ratio: pre.device_pixel_ratio,
    viewport: pre.viewport,
    scroll: pre.scroll,
    origin: { x: plan.area.x, y: plan.area.y },
    css_size: { width: plan.area.width, height: plan.area.height },
    masks: masksFor(plan.area, pre, post),
    unavailable: [],
    truncated: plan.truncated,
    page_height: plan.pageHeight,
    timings: { ...timings, return_at: epochMs() },
  };
}

// captureVisibleTab is Chrome's cheapest path to what is on screen: it reads the last frame
// instead of rendering a new one, and needs no debugger (so no "started debugging this browser"
// bar in the user's window). Chrome allows it about twice a second.
const VISIBLE_MIN_INTERVAL_MS = 550;
const VISIBLE_MIN_AGE_MS = 1000;
let lastVisibleAt = -Infinity;
const HIDDEN_WINDOW = 'The tab\'s window is covered by another window or minimised, so Chrome shows no current ' +
  'frame of it and a visible-area capture could be stale; no image was taken. Use method "cdp" (or "auto").';

/**
 * A plain viewport capture of the active tab, with the quota free: the visible-tab path.
 * @param {CaptureArgs} a
 * @param {chrome.tabs.Tab} tab
 */
function preferVisible(a, tab) {
  if (HEADLESS && tab.id !== undefined && watchedPages.get(tab.id) === tab.url) return false;
  return a.method === 'auto' && !!tab.active && a.selector === null && !a.full_page && a.scale === null &&
    performance.now() - lastVisibleAt >= VISIBLE_MIN_INTERVAL_MS;
}

/**
 * chrome.tabs.captureVisibleTab, retried once on Chrome's ~2 calls/s quota.
 * @param {number} windowId
 * @param {chrome.tabs.CaptureVisibleTabOptions} opts
 */
async function captureVisibleTab(windowId, opts) {
  for (let attempt = 0; ; attempt++) {
    try {
      lastVisibleAt = performance.now();
      return await chrome.tabs.captureVisibleTab(windowId, opts);
    } catch (e) {
      const msg = /** @type {Error} */ (e).message || String(e);
      if (attempt === 0 && /MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND|quota/i.test(msg)) {
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      throw new ShotError(Code.CAPTURE_FAILED, `captureVisibleTab failed: ${msg}`);
    }
  }
}

/**
 * @param {import('./context.js').CommandContext} ctx
 * @param {chrome.tabs.Tab} tab
 * @param {CaptureArgs} a
 * @param {Record<string, number>} timings
 * @param {string} why reason the CDP-only modes are unavailable
 */
async function captureVisible(ctx, tab, a, timings, why) {
  const tabId = /** @type {number} */ (tab.id);
  if (!tab.active) {
    throw new ShotError(Code.CAPTURE_FAILED,
      `Tab ${tabId} is not the active tab of its window; a visible-area capture needs it in front (or use method "cdp").`);
  }
  for (let attempt = 1; ; attempt++) {
    const { pre, dataUrl, failed } = await visibleShot(tabId, tab.windowId, a, timings, why);
    // As on the CDP path: the host may shrink the pixels while the page is checked below.
    const early = a.early_pixels && !!dataUrl && dataUrl.length <= MAX_MESSAGE_BYTES; // none when it failed
    if (early) ctx.partial({ ...visibleResult(a, tabId, pre, pre, /** @type {string} */ (dataUrl), timings, why), attempt });
    // "auto" hands animated secrets over to CDP still paused: resuming them first and pausing
    // them again there let a moving field slip past its mask (2 of 10 auto captures).
    const keepFrozen = failed instanceof AnimatedSecrets && a.method === 'auto';
    const post = await timed(timings, 'masks', probe(tabId, null, a.mask_selectors, { thaw: !keepFrozen })).catch((e) => e);
    const moved = [failed, post].find((e) => e instanceof Moved);
    if (moved && attempt < MAX_ATTEMPTS) continue;
    if (moved) throw refuse(/** @type {Moved} */ (moved).why);
    if (failed) throw failed;
    if (post instanceof Error) throw post;
    if (post.watch_expired) throw new ShotError(Code.CAPTURE_FAILED, WATCH_EXPIRED);
    // Script moved a secret between the probes (timers, rAF, a scrolled box, a new transition):
    // unlike a fresh CDP frame, the frame read here may be from any moment of that motion, so
    // "visible" refuses and "auto" hands over to CDP, which masks every place the secret took.
    if (post.moved) throw new MovingSecrets();
    const mismatch = documentMismatch(pre, post);
    if (mismatch) {
      if (attempt >= MAX_ATTEMPTS) throw refuse(mismatch);
      if (!pre.painted) await awaitFirstPaint(ctx, tabId);
      continue;
    }
    const out = visibleResult(a, tabId, pre, post, /** @type {string} */ (dataUrl), timings, why);
    return early ? { ...out, data_url: '', attempt } : { ...out, attempt };
  }
}

/**
 * The first probe and the visible frame, or why there is no frame (`failed`, with the probe when
 * it got that far): the caller still takes the second probe, which resumes what the first paused.
 * @param {number} tabId
 * @param {number} windowId
 * @param {CaptureArgs} a
 * @param {Record<string, number>} timings
 * @param {string} why reason the CDP-only modes are unavailable ('' when "auto" may still use CDP)
 * @returns {Promise<{pre: any, dataUrl: string | undefined, failed: unknown}>}
 */
async function visibleShot(tabId, windowId, a, timings, why) {
  // No debugger here: the page's own animations are paused (where it has secrets) from the
  // first probe to the second, which resumes them.
  let pre;
  try {
    pre = await timed(timings, 'masks', probe(tabId, a.selector, a.mask_selectors, { freeze: true }));
    // A bad selector is the caller's error even when only the visible area can be captured.
    if (pre.target?.error) throw new ShotError(pre.target.error.code, pre.target.error.message);
    // A covered or minimised window shows no current frame: the last one may predate any change
    // since (a secret typed, a scroll). Only CDP renders this document as it is now.
    if (pre.hidden) throw new ShotError(Code.CAPTURE_FAILED, HIDDEN_WINDOW);
    // captureVisibleTab reads the last frame the window showed, which can lag behind: a young
    // document may still be on screen as its predecessor. Only an established one is taken
    // this way (method "auto" then uses CDP, which renders a fresh frame).
    if (pre.paint_age_ms < VISIBLE_MIN_AGE_MS) {
      // "auto" tries CDP for a young page; when CDP is the path that failed (`why`), wait.
      if (a.method !== 'visible' && !why) throw new ShotError(Code.CAPTURE_FAILED, 'the page is too new for a visible-area capture');
      await sleep(VISIBLE_MIN_AGE_MS - Math.max(0, pre.paint_age_ms));
      throw new Moved('the page kept loading new documents');
    }
    // Secrets in motion: CDP pauses the animations and renders a fresh frame; here the last
    // shown frame may predate the pause (measured: 2 of 20 leaked), so "auto" hands over to
    // CDP and "visible" refuses.
    if (pre.frozen > 0) throw new AnimatedSecrets();
    noteSecrets(tabId, pre);
    if (pre.hasSecrets || pre.watching) {
      if (HEADLESS && a.method === 'auto' && !why) throw new SecretsToCdp();
      // The last frame shown may predate this probe and its watch: let two frames pass.
      await callPage(tabId, 'nextPaint', { max_ms: 300 }).catch(() => {});
    }
    timings.shoot_at = epochMs();
    const dataUrl = await timed(timings, 'capture', captureVisibleTab(windowId, {
      format: a.format,
      ...(a.format === 'jpeg' ? { quality: a.quality } : {}),
    }));
    timings.image_at = epochMs();
    return { pre, dataUrl, failed: null };
  } catch (e) {
    return { pre, dataUrl: undefined, failed: e };
  }
}

/**
 * The reply of a visible-area capture whose document held still around its frame.
 * @param {CaptureArgs} a
 * @param {number} tabId
 * @param {any} pre the probe before the frame
 * @param {any} post the probe after it
 * @param {string} dataUrl
 * @param {Record<string, number>} timings
 * @param {string} why reason the CDP-only modes are unavailable
 */
function visibleResult(a, tabId, pre, post, dataUrl, timings, why) {
  checkSize(dataUrl);
  const dpr = pre.device_pixel_ratio;
  /** @type {string[]} */
  const unavailable = [];
  if (a.full_page) unavailable.push(`full_page: ${why}`);
  if (a.selector !== null) unavailable.push(`selector: ${why}`);
  if (a.scale !== null && Math.abs(a.scale - dpr) > 1e-6) unavailable.push(`scale: ${why}; the image is at devicePixelRatio ${dpr}`);
  const area = { x: 0, y: 0, width: pre.viewport.width, height: pre.viewport.height };
  return {
    data_url: dataUrl,
    method: 'visible',
    ...(a.format === 'jpeg' ? { quality: a.quality } : {}),
    url: pre.url,
    title: pre.title,
    tab_id: tabId,
    device_pixel_ratio: dpr,
    viewport: pre.viewport,
    scroll: pre.scroll,
    origin: { x: 0, y: 0 },
    css_size: { width: area.width, height: area.height },
    masks: masksFor(area, pre, post),
    unavailable,
    truncated: false,
    page_height: pre.document.height,
    timings: { ...timings, return_at: epochMs() },
  };
}
