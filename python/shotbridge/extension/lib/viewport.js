// Viewport identity of a screenshot: CSS width × height and devicePixelRatio. A resize, a zoom or
// Chrome's "started debugging this browser" bar changes it, and with it where a layout that depends
// on the window puts things; pixel actions compare it before acting (see input.js).

/** @typedef {{width: number, height: number, dpr: number}} Viewport */

/**
 * A description of how the viewport changed, or null when it did not. Zoom changes both the CSS
 * size and the device pixel ratio; Chrome's debugging bar and window resizes change the size.
 * Pure (unit-tested).
 * @param {Viewport} expected when the screenshot was taken
 * @param {Viewport} now
 * @returns {string | null}
 */
export function viewportChange(expected, now) {
  const same = (/** @type {number} */ p, /** @type {number} */ q) => Math.abs(p - q) < 0.01;
  if (same(expected.width, now.width) && same(expected.height, now.height) && same(expected.dpr, now.dpr)) return null;
  const fmt = (/** @type {Viewport} */ v) => `${v.width}×${v.height} CSS px at devicePixelRatio ${v.dpr}`;
  const why = !same(expected.dpr, now.dpr) ? 'the page was zoomed'
    : same(expected.width, now.width) ? 'Chrome\'s "started debugging this browser" bar appeared or closed, or the window was resized'
      : 'the window was resized';
  return `${fmt(expected)} → ${fmt(now)}: ${why}`;
}

/** Headless Chrome shows no infobars, so no debugging bar ever changes its viewport. */
export const HEADLESS = typeof navigator !== 'undefined' && /HeadlessChrome/.test(navigator.userAgent);

/** How long to wait for a new debugging bar to reach the page (measured 100-300 ms; see below). */
export const BAR_WAIT_MS = 1000;

/**
 * Wait for Chrome's debugging bar after an attach that showed it. The bar shrinks the viewport
 * some 100-300 ms after the attach (measured on Chromium 156 under Xvfb: a click sent right after
 * attaching reached the page only 60-150 ms before the resize), so a pixel aimed before then can
 * land in a layout that is moving. Polls `read` until the viewport differs from `before`, or
 * `maxMs` passed (another infobar in front keeps the bar from showing: nothing changes).
 * @param {() => Promise<Viewport | null>} read the viewport now (null: could not tell)
 * @param {Viewport} before the viewport before attaching
 * @param {number} [maxMs]
 * @param {number} [stepMs]
 * @returns {Promise<boolean>} whether the viewport changed
 */
export async function awaitBar(read, before, maxMs = BAR_WAIT_MS, stepMs = 25) {
  const end = Date.now() + maxMs;
  for (;;) {
    const now = await read();
    if (now && viewportChange(before, now) !== null) return true;
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * Runs in the page (isolated world; self-contained): reports the viewport growing back by a
 * bar's height before `until` (Date.now() time: the same clock as the service worker's, so a slow
 * injection cannot stretch the watch into Chrome's own close), with the same width and zoom.
 * @param {number} until
 * @param {number} minPx
 * @param {number} maxPx
 */
function barTailWatcher(until, minPx, maxPx) {
  const w0 = innerWidth;
  const d0 = devicePixelRatio;
  // The lowest height seen: a bar that reached the page only after the detach shrinks it first.
  let low = innerHeight;
  const stop = () => removeEventListener('resize', onResize);
  function onResize() {
    // Another width or zoom: the window was resized or zoomed, not the bar closed.
    if (Date.now() > until || innerWidth !== w0 || devicePixelRatio !== d0) return stop();
    low = Math.min(low, innerHeight);
    const grew = innerHeight - low;
    if (grew < minPx || grew > maxPx) return undefined; // a closing animation's first steps
    stop();
    chrome.runtime.sendMessage({ type: 'shotbridge:bar_closed_early', grew }).catch(() => {});
    return undefined;
  }
  addEventListener('resize', onResize);
  setTimeout(stop, Math.max(0, until - Date.now()));
}

/**
 * After the last debugger session detaches, Chrome keeps its bar `lingerMs` longer and tells the
 * extension nothing when the user presses Cancel (or ✕) then: it just closes the bar early. The
 * page does see that: its viewport grows back by the bar's height (56 px measured) before
 * Chrome's own close. Watch the tab we detached from for it, until 300 ms before Chrome's close
 * (its timer starts when it handles our detach, so not before now); status.js takes the report
 * as the user's refusal.
 * @param {number} tabId
 * @param {number} lingerMs
 */
export function watchBarTail(tabId, lingerMs) {
  if (HEADLESS || typeof chrome === 'undefined' || !chrome.scripting) return;
  const until = Date.now() + lingerMs - 300;
  chrome.scripting.executeScript({ target: { tabId }, func: barTailWatcher, args: [until, 30, 90] })
    .catch(() => {}); // a browser page, or the tab went away: nothing to watch
}
