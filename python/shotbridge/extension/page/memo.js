// Answers kept for the length of one synchronous page call (a discover): names, roles, hidden
// flags, selector matches. Page scripts cannot run while such a call holds the main thread, so
// nothing it reads can change under it; outside one, every helper reads afresh.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  /** @type {Map<string, Map<any, any>> | null} */
  let memo = null;

  /**
   * Run `fn` with a fresh memo (nested calls share the outer one).
   * @template T
   * @param {() => T} fn
   * @returns {T}
   */
  L.withMemo = (fn) => {
    if (memo) return fn();
    memo = new Map();
    try {
      return fn();
    } finally {
      memo = null;
    }
  };

  /**
   * `compute()` once per `key` of `table` within the current memo; every time outside one.
   * @template T
   * @param {string} table
   * @param {any} key
   * @param {() => T} compute
   * @returns {T}
   */
  L.remember = (table, key, compute) => {
    if (!memo) return compute();
    let t = memo.get(table);
    if (!t) memo.set(table, (t = new Map()));
    if (t.has(key)) return t.get(key);
    const value = compute();
    t.set(key, value);
    return value;
  };
})();
