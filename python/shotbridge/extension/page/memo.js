// Answers kept for the length of one synchronous page call (a discover): names, roles, hidden
// flags. Page scripts cannot run while such a call holds the main thread, so nothing it reads can
// change under it; outside one, every helper reads afresh.
//
// Answers that depend on the DOM alone (tags, attributes, the tree: selectors and what they
// match) are kept across calls, until a MutationObserver sees any change in the document or one
// of its shadow roots, or the set of shadow roots changes (attaching one is no mutation).
// Positions, visibility and state are never kept across calls.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  /** @typedef {Map<string, Map<any, any>>} Store */

  /** @type {Store | null} this call's answers */
  let memo = null;
  /** @type {Store} DOM-only answers, valid while the observer has seen no change */
  let dom = new Map();
  /** The current call checked that `dom` is still valid. */
  let domChecked = false;
  /** @type {(Document | ShadowRoot)[]} */
  let watched = [];
  let changed = true;
  /** Counts the DOM changes seen (each drop of `dom`): equal counts, the same DOM. */
  let generation = 0;
  /** @type {MutationObserver | null} */
  let observer = null;
  const WATCH = { subtree: true, childList: true, attributes: true, characterData: true };

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
      domChecked = false;
    }
  };

  /**
   * `L.withMemo`, where DOM-only answers may also come from earlier calls.
   * @template T
   * @param {(Document | ShadowRoot)[]} roots the document and every shadow root in it
   * @param {() => T} fn
   * @returns {T}
   */
  L.withDomMemo = (roots, fn) =>
    L.withMemo(() => {
      checkDom(roots);
      domChecked = true;
      return fn();
    });

  /**
   * Drop the DOM answers if anything under `roots` changed since they were read; watch for the
   * next change (disconnected at the first one: a page that keeps changing pays for one record).
   * @param {(Document | ShadowRoot)[]} roots
   */
  function checkDom(roots) {
    if (!observer) {
      observer = new MutationObserver(() => {
        changed = true;
        generation++;
        dom = new Map(); // let go of removed elements now, not at the next call
        /** @type {MutationObserver} */ (observer).disconnect();
        L.domChanged?.(); // page/unchanged.js
      });
    }
    if (observer.takeRecords().length) changed = true;
    if (!changed && roots.length === watched.length && roots.every((r, i) => r === watched[i])) return;
    observer.disconnect();
    generation++;
    dom = new Map();
    watched = roots.slice();
    for (const r of watched) observer.observe(r, WATCH);
    changed = false;
  }

  /**
   * A number that stays the same while nothing under `roots` changes (and they stay the same set).
   * @param {(Document | ShadowRoot)[]} roots
   */
  L.domGeneration = (roots) => {
    checkDom(roots);
    return generation;
  };

  /**
   * `compute()` once per `key` of `table` within the current memo; every time outside one.
   * @template T
   * @param {string} table
   * @param {any} key
   * @param {() => T} compute
   * @returns {T}
   */
  L.remember = (table, key, compute) => (memo ? lookup(memo, table, key, compute) : compute());

  /**
   * `compute()` once per `key` of `table` while the DOM stays unchanged, for what depends on
   * the DOM alone; every time outside a `withDomMemo` call.
   * @template T
   * @param {string} table
   * @param {any} key
   * @param {() => T} compute
   * @returns {T}
   */
  L.rememberDom = (table, key, compute) => (domChecked ? lookup(dom, table, key, compute) : L.remember(table, key, compute));

  /**
   * @template T
   * @param {Store} store
   * @param {string} table
   * @param {any} key
   * @param {() => T} compute
   * @returns {T}
   */
  function lookup(store, table, key, compute) {
    let t = store.get(table);
    if (!t) store.set(table, (t = new Map()));
    if (t.has(key)) return t.get(key);
    const value = compute();
    t.set(key, value);
    return value;
  }
})();
