// Full-page tiling, kept apart from capture.js because it is pure arithmetic (unit-tested under
// node, tests/extension/tiles.test.mjs).

/**
 * @typedef {{max_width: number, max_long_edge: number}} TileCaps output px each tile must fit
 */

/**
 * Horizontal bands of a full page that each fit the output caps at the width-fitting scale, so a
 * long page arrives as readable tiles instead of one strip shrunk to illegibility (or refused by
 * clients). Document CSS px.
 * @param {number} pageWidth
 * @param {number} height CSS px to cover (already cut at max_height_css)
 * @param {number} renderScale image px per CSS px asked for (devicePixelRatio or a.scale)
 * @param {TileCaps} caps
 * @returns {{scale: number, bands: {y: number, height: number}[]}}
 */
export function planTiles(pageWidth, height, renderScale, caps) {
  const scale = Math.min(renderScale, caps.max_width / pageWidth, caps.max_long_edge / pageWidth);
  const band = Math.max(1, Math.floor(caps.max_long_edge / scale));
  const bands = [];
  for (let y = 0; y < height; y += band) bands.push({ y, height: Math.min(band, height - y) });
  return { scale, bands };
}
