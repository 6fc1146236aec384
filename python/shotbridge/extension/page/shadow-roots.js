// Every shadow root of a document, closed ones included, kept current instead of found again by
// each capture. Finding them means asking chrome.dom of every element that may host one (only an
// extension can see a closed root); on a data grid of thousands of divs that walk was most of the
// work before Chrome's capture. A walk of the whole document is done once, then only what changed
// is looked at:
// - a new element (a MutationObserver on the document and on every root found): itself and what
//   is below it are walked at the next call, so roots that came with it (declarative ones too) are
//   found;
// - a root attached to an element already there: attachShadow fires no mutation, so
//   content/bridge-main.js (MAIN world) hooks it from document start in every frame, and
//   page/secrets.js hands each new root to `L.rootAttached`, whichever same-origin frame's
//   attachShadow the page called (a document's cache is shared by every frame of our world).
// The cache is trusted only while that holds: not while the parser runs (it attaches declarative
// roots to elements it has already inserted) and only when every same-origin window that can
// reach the document had the hook from its start (a tab loaded before the extension has none).
// Otherwise every call walks the whole document, as before.
(() => {
  const L = /** @type {any} */ (globalThis.__shotbridge = /** @type {any} */ (globalThis).__shotbridge || {});
  if (L.shadowRoots) return;

  // The only elements a shadow root can be attached to, by script or by the parser (the DOM
  // standard's "valid shadow host name"), besides custom elements (a hyphen in the name). Asking
  // Chrome about a closed root is an extension-API call per element (≈ 1.3 µs, 1.4 ms on a
  // 1 000-element grid); for any other element the answer is known to be none.
  const SHADOW_HOSTS = new Set(['article', 'aside', 'blockquote', 'body', 'div', 'footer', 'h1', 'h2', 'h3', 'h4',
    'h5', 'h6', 'header', 'main', 'nav', 'p', 'section', 'span']);
  const HTML_NS = 'http://www.w3.org/1999/xhtml';
  // A document's cache, as a property of its wrapper in our isolated world: the page cannot see it,
  // and our scripts in the document's other same-origin frames find the same object.
  const KEY = '__shotbridgeShadowRoots';
  // More new elements than this between two calls: one whole walk is cheaper than remembering them.
  const MAX_PENDING = 5000;
  const OBSERVE = { childList: true, subtree: true };

  /** Whether `el` may host a shadow root at all. @param {Element} el */
  L.canHostShadow = (el) => el.namespaceURI === HTML_NS && (SHADOW_HOSTS.has(el.localName) || el.localName.includes('-'));

  /**
   * Shadow root of `el`; closed ones only where Chrome lets extensions see them (chrome.dom).
   * @param {Element} el
   * @param {boolean} [closed]
   * @returns {ShadowRoot | null}
   */
  L.shadowRootOf = (el, closed) => {
    if (el.shadowRoot) return el.shadowRoot;
    const dom = closed && typeof chrome !== 'undefined' ? chrome.dom : undefined;
    if (!dom || !dom.openOrClosedShadowRoot || !L.canHostShadow(el)) return null;
    try {
      return dom.openOrClosedShadowRoot(/** @type {HTMLElement} */ (el)) || null;
    } catch {
      return null;
    }
  };

  /**
   * `root` and every shadow root below it, parents before children: the whole walk.
   * @param {Document | ShadowRoot} root
   * @param {boolean} [closed] include closed shadow roots
   * @returns {(Document | ShadowRoot)[]}
   */
  L.walkRoots = (root, closed) => {
    const out = [root];
    for (let i = 0; i < out.length; i++) {
      for (const el of out[i].querySelectorAll('*')) {
        const sr = L.shadowRootOf(el, closed);
        if (sr) out.push(sr);
      }
    }
    return out;
  };

  /**
   * @typedef {{roots: Set<ShadowRoot>, pending: Set<Element>, observer: MutationObserver, whole: boolean}} Cache
   * `whole` false: too much changed to follow, the next call walks the document again.
   */

  /** @param {Cache} cache @param {Element} el */
  function remember(cache, el) {
    if (!cache.whole) return;
    cache.pending.add(el);
    if (cache.pending.size > MAX_PENDING) {
      cache.whole = false;
      cache.pending.clear();
    }
  }

  /** @param {Cache} cache @param {MutationRecord[]} records */
  function noteAdded(cache, records) {
    for (const m of records) for (const n of m.addedNodes) if (n.nodeType === 1) remember(cache, /** @type {Element} */ (n));
  }

  /** A root attached to an element (page/secrets.js calls this from the attachShadow hook). @param {ShadowRoot} root */
  L.rootAttached = (root) => {
    const cache = /** @type {Cache | undefined} */ (/** @type {any} */ (root.host.ownerDocument)[KEY]);
    if (cache) remember(cache, root.host);
  };

  /** @param {Document} doc @param {Element} el */
  const inDocument = (doc, el) => el.isConnected && el.ownerDocument === doc;

  /** Walk what was added since the last call; drop roots no longer in the document. @param {Document} doc @param {Cache} cache */
  function catchUp(doc, cache) {
    noteAdded(cache, cache.observer.takeRecords());
    const added = [...cache.pending];
    cache.pending.clear();
    for (const el of added) {
      if (!inDocument(doc, el)) continue;
      for (const sub of [el, ...el.querySelectorAll('*')]) {
        const sr = L.shadowRootOf(sub, true);
        if (sr) add(cache, sr);
      }
    }
    for (const root of cache.roots) if (!inDocument(doc, root.host)) cache.roots.delete(root);
  }

  /** Add `root` and every root below it (already-known ones are kept as they are). @param {Cache} cache @param {ShadowRoot} root */
  function add(cache, root) {
    if (cache.roots.has(root)) return;
    for (const r of L.walkRoots(root, true)) {
      cache.roots.add(/** @type {ShadowRoot} */ (r));
      cache.observer.observe(r, OBSERVE);
    }
  }

  /** Walk `doc` whole and keep what it found. @param {Document} doc */
  function build(doc) {
    const old = /** @type {Cache | undefined} */ (/** @type {any} */ (doc)[KEY]);
    old?.observer.disconnect();
    const roots = L.walkRoots(doc, true);
    /** @type {Cache} */
    const cache = { roots: new Set(), pending: new Set(), observer: new MutationObserver((r) => noteAdded(cache, r)), whole: true };
    for (const r of roots) {
      cache.observer.observe(r, OBSERVE);
      if (r !== doc) cache.roots.add(/** @type {ShadowRoot} */ (r));
    }
    /** @type {any} */ (doc)[KEY] = cache;
    return roots;
  }

  /**
   * Every same-origin window that can reach `win`'s document had the attachShadow hook from its
   * start: the frame tree it is in, and the windows that opened it (cross-origin ones cannot
   * touch the document; reading our world's flag of one throws).
   * @param {Window} win
   */
  function hookedAround(win) {
    /** @type {Window[]} */
    const seen = [win];
    for (let i = 0; i < seen.length && i < 1000; i++) {
      const w = seen[i];
      let hooked;
      try {
        hooked = /** @type {any} */ (w).__shotbridge?.shadowHooked === true;
      } catch {
        hooked = null; // another origin
      }
      if (hooked === false) return false;
      /** @type {(Window | null)[]} */
      const next = [w.parent, w.opener];
      for (let f = 0; f < w.frames.length; f++) next.push(w.frames[f]);
      for (const n of next) if (n && !seen.includes(n)) seen.push(n);
    }
    return seen.length < 1000;
  }

  /** @param {Document} doc */
  const trusted = (doc) => doc.readyState !== 'loading' && !!doc.defaultView && hookedAround(doc.defaultView);

  /**
   * `doc` and every shadow root in it, closed ones included, parents before children.
   * @param {Document} doc
   * @returns {(Document | ShadowRoot)[]}
   */
  L.shadowRoots = (doc) => {
    if (!trusted(doc)) return L.walkRoots(doc, true);
    const cache = /** @type {Cache | undefined} */ (/** @type {any} */ (doc)[KEY]);
    if (!cache || !cache.whole) return build(doc);
    catchUp(doc, cache);
    if (!cache.whole) return build(doc);
    return [doc, ...cache.roots];
  };
})();
