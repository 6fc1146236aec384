// Page-side library, shared DOM helpers. Injected with chrome.scripting (ISOLATED world) as classic
// scripts that register on globalThis.__shotbridge; extension/lib/page.js calls into it. No imports:
// these files run in the page, not in the service worker. page/ready.js (injected last) sets
// `version`, so a half-loaded library is never used.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  /** @param {number} n */
  L.round = (n) => Math.round(n * 100) / 100;

  /**
   * @param {{x: number, y: number, width: number, height: number} | DOMRect} r
   * @returns {{x: number, y: number, width: number, height: number}}
   */
  L.rect = (r) => ({ x: L.round(r.x), y: L.round(r.y), width: L.round(r.width), height: L.round(r.height) });

  /** Intersection area of two {x,y,width,height} rects. */
  L.overlapArea = (a, b) => {
    const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
    const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
    return w > 0 && h > 0 ? w * h : 0;
  };

  L.viewport = () => ({ width: window.innerWidth, height: window.innerHeight });
  L.scroll = () => ({ x: window.scrollX, y: window.scrollY });
  /** What every page answer carries: where the page is and how it maps to pixels. */
  L.pageHeader = () => ({
    url: location.href,
    title: document.title,
    ready_state: document.readyState,
    device_pixel_ratio: window.devicePixelRatio,
    viewport: L.viewport(),
    scroll: L.scroll(),
  });

  /**
   * The document (or root) and every shadow root below it, parents before children. A document's
   * closed roots come from page/shadow-roots.js, which keeps them current between captures.
   * @param {Document | ShadowRoot} root
   * @param {boolean} [closed] include closed shadow roots
   * @returns {(Document | ShadowRoot)[]}
   */
  L.allRoots = (root, closed) =>
    closed && root.nodeType === Node.DOCUMENT_NODE ? L.shadowRoots(root) : L.walkRoots(root, closed);

  /**
   * querySelectorAll across the document and its shadow roots. Throws SyntaxError on a bad selector.
   * @param {string} selector
   * @param {{closed?: boolean, roots?: (Document | ShadowRoot)[]}} [opts]
   * @returns {Element[]}
   */
  L.queryAllDeep = (selector, opts = {}) => {
    const roots = opts.roots || L.allRoots(document, opts.closed);
    const out = [];
    for (const r of roots) for (const el of r.querySelectorAll(selector)) out.push(el);
    return out;
  };

  /** Parent in the composed tree (crosses shadow boundaries upward). */
  L.composedParent = (/** @type {Node} */ n) =>
    n.parentElement || (n.parentNode instanceof ShadowRoot ? n.parentNode.host : null);

  /** `node` is `ancestor` or inside it, across shadow boundaries. */
  L.composedContains = (/** @type {Element} */ ancestor, /** @type {Node | null} */ node) => {
    for (let n = node; n; n = L.composedParent(n)) if (n === ancestor) return true;
    return false;
  };

  /**
   * Element actually on top at a viewport point, descending into shadow roots.
   * @param {number} x
   * @param {number} y
   */
  L.deepElementFromPoint = (x, y) => {
    let hit = document.elementFromPoint(x, y);
    for (let depth = 0; hit && depth < 32; depth++) {
      const sr = L.shadowRootOf(hit, true);
      if (!sr) break;
      const inner = sr.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };

  /**
   * Rendered and not transparent. `rect` is the element's bounding rect.
   * @param {Element} el
   * @param {DOMRect} rect
   */
  L.isVisible = (el, rect) => {
    if (!(rect.width > 0 && rect.height > 0)) return false;
    // checkVisibility covers display:none / content-visibility on ancestors and (with the options)
    // opacity:0 and visibility:hidden, including inherited ones.
    if (
      typeof el.checkVisibility === 'function' &&
      !el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true, opacityProperty: true, visibilityProperty: true })
    ) {
      return false;
    }
    const cs = getComputedStyle(el);
    return cs.visibility === 'visible' && parseFloat(cs.opacity) !== 0;
  };

  /**
   * True when another element hides `el` at every sample point of its visible part. Elements
   * entirely outside the viewport cannot be hit-tested and count as not covered.
   * @param {Element} el
   * @param {DOMRect} rect
   */
  L.isCovered = (el, rect) => {
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    const x0 = Math.max(rect.left, 0);
    const x1 = Math.min(rect.right, vw);
    const y0 = Math.max(rect.top, 0);
    const y1 = Math.min(rect.bottom, vh);
    if (x1 - x0 < 1 || y1 - y0 < 1) return false;
    const labels = /** @type {any} */ (el).labels || [];
    const fractions = [[0.5, 0.5], [0.2, 0.2], [0.8, 0.2], [0.2, 0.8], [0.8, 0.8]];
    let tested = 0;
    for (const [fx, fy] of fractions) {
      const hit = L.deepElementFromPoint(x0 + (x1 - x0) * fx, y0 + (y1 - y0) * fy);
      if (!hit) continue;
      tested++;
      if (L.composedContains(el, hit)) return false;
      // A control drawn under its own <label> (custom checkboxes) is still reachable through it.
      for (const label of labels) if (L.composedContains(label, hit)) return false;
    }
    return tested > 0;
  };

  /**
   * The first `max` UTF-16 units of `s`, never ending inside a surrogate pair, and with any lone
   * surrogate replaced by U+FFFD: page text is cut and sent on as valid Unicode.
   * @param {string} s
   * @param {number} max
   */
  L.cut = (s, max) => {
    let t = String(s);
    if (t.length > max) {
      const end = max > 0 && /[\uD800-\uDBFF]/.test(t[max - 1]) ? max - 1 : max;
      t = t.slice(0, Math.max(0, end));
    }
    return t.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  };

  /** Collapse whitespace and cut to `max` characters (on a code-point boundary). */
  L.clean = (/** @type {string | null | undefined} */ s, max = 100) => {
    const t = (s || '').replace(/\s+/g, ' ').trim();
    return t.length > max ? L.cut(t, max - 1) + '…' : L.cut(t, max);
  };
})();
