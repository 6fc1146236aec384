// Reading order for discovered elements: top to bottom, then left to right within a row. Pure
// function of the rectangles so it is unit-tested under node (tests/extension/).
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  /**
   * Two boxes are on one row when their tops differ by less than `tolerance` CSS px or they overlap
   * vertically by more than half the taller one's height (a tall sidebar must not swallow the
   * page).
   * @param {{y: number, height: number}} a row anchor
   * @param {{y: number, height: number}} b
   * @param {number} tolerance
   */
  function sameRow(a, b, tolerance) {
    if (Math.abs(a.y - b.y) < tolerance) return true;
    const overlap = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
    return overlap > 0.5 * Math.max(a.height, b.height);
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
    /** @type {{anchor: T['bounds'], items: T[]}[]} */
    const rows = [];
    for (const it of byTop) {
      const row = rows[rows.length - 1];
      if (row && sameRow(row.anchor, it.bounds, tolerance)) row.items.push(it);
      else rows.push({ anchor: it.bounds, items: [it] });
    }
    return rows.flatMap((r) => r.items.sort((a, b) => a.bounds.x - b.bounds.x || a.bounds.y - b.bounds.y));
  };
})();
