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
