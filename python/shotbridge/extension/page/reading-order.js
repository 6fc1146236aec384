// Reading order for discovered elements: top to bottom, then left to right within a row. Pure
// function of the rectangles so it is unit-tested under node (tests/extension/).
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  /**
   * `b` belongs to the row whose vertical band is `a`: their tops are within `tolerance` CSS px,
   * their centres are, or they overlap by more than half the shorter box, as long as neither is
   * more than 4 times as tall as the other (a tall sidebar or hero must not swallow the rows next
   * to it). Rows of mixed heights (a 40 px button beside a centred 20 px link) stay one row.
   * @param {{y: number, height: number}} a row band
   * @param {{y: number, height: number}} b
   * @param {number} tolerance
   */
  function sameRow(a, b, tolerance) {
    if (Math.abs(a.y - b.y) < tolerance) return true;
    const short = Math.max(1, Math.min(a.height, b.height));
    const tall = Math.max(a.height, b.height);
    if (tall > 4 * short) return false;
    if (Math.abs(a.y + a.height / 2 - (b.y + b.height / 2)) < tolerance) return true;
    const overlap = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
    return overlap > 0.5 * short;
  }

  /**
   * @template {{bounds: {x: number, y: number, width: number, height: number}}} T
   * @param {T[]} items
   * @param {{tolerance?: number}} [opts]
   * @returns {T[]} a new array in reading order
   */
  L.readingOrder = (items, opts = {}) => {
    const tolerance = opts.tolerance ?? 10;
    const byTop = items.slice().sort((a, b) => a.bounds.y - b.bounds.y || a.bounds.x - b.bounds.x);
    /** @type {{band: {y: number, height: number}, items: T[]}[]} */
    const rows = [];
    for (const it of byTop) {
      const row = rows[rows.length - 1];
      if (row && sameRow(row.band, it.bounds, tolerance)) {
        row.items.push(it);
        // The band grows with members of comparable height only, so one row cannot creep down.
        const b = it.bounds;
        if (b.height <= 4 * Math.max(1, row.band.height) && b.height * 4 >= row.band.height) {
          const top = Math.min(row.band.y, b.y);
          const bottom = Math.max(row.band.y + row.band.height, b.y + b.height);
          if (bottom - top <= 2 * Math.max(row.band.height, b.height)) row.band = { y: top, height: bottom - top };
        }
      } else {
        rows.push({ band: { y: it.bounds.y, height: it.bounds.height }, items: [it] });
      }
    }
    return rows.flatMap((r) => r.items.sort((a, b) => a.bounds.x - b.bounds.x || a.bounds.y - b.bounds.y));
  };
})();
