// Capture probe: the page geometry a screenshot is mapped with (devicePixelRatio, viewport, scroll,
// document size, the target element's rect) and the rectangles of secrets to black out. Runs in
// every frame: the top frame answers geometry and masks (including same-origin subframes, offset
// into top-frame coordinates); other frames report whether they hold secrets, so cross-origin
// frames whose layout the top frame cannot see can be masked whole.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  // Password fields, explicit opt-in masks, and fields browsers themselves treat as secrets.
  const SECRET_SELECTOR = [
    'input[type="password" i]',
    '[data-shotbridge-mask]',
    'input[autocomplete~="current-password" i]',
    'input[autocomplete~="new-password" i]',
    'input[autocomplete~="one-time-code" i]',
    'input[autocomplete~="cc-number" i]',
    'input[autocomplete~="cc-csc" i]',
  ].join(', ');
  // page/interact.js uses it too: a focused secret field's value is never reported.
  L.secretSelector = SECRET_SELECTOR;

  /**
   * Collect secret rects of `doc` (and same-origin frames inside it), offset by (ox, oy).
   * @param {Document} doc
   * @param {number} ox
   * @param {number} oy
   * @param {{masks: object[], opaqueFrames: object[]}} out
   * @param {number} depth
   * @param {string} selector what counts as a secret
   */
  function collect(doc, ox, oy, out, depth, selector) {
    for (const root of L.allRoots(doc, true)) {
      for (const el of root.querySelectorAll(selector)) {
        for (const r of el.getClientRects()) {
          if (r.width > 0 && r.height > 0) out.masks.push(L.rect({ x: r.x + ox, y: r.y + oy, width: r.width, height: r.height }));
        }
      }
      for (const frame of root.querySelectorAll('iframe, frame, object, embed')) {
        const fr = frame.getBoundingClientRect();
        if (!(fr.width > 0 && fr.height > 0)) continue;
        /** @type {Document | null} */
        let inner = null;
        try {
          inner = /** @type {HTMLIFrameElement} */ (frame).contentDocument;
        } catch {
          inner = null;
        }
        const whole = L.rect({ x: fr.x + ox, y: fr.y + oy, width: fr.width, height: fr.height });
        if (inner && depth < 8) {
          const cs = (frame.ownerDocument.defaultView || window).getComputedStyle(frame);
          const ix = fr.x + frame.clientLeft + (parseFloat(cs.paddingLeft) || 0);
          const iy = fr.y + frame.clientTop + (parseFloat(cs.paddingTop) || 0);
          collect(inner, ix + ox, iy + oy, out, depth + 1, selector);
        } else {
          out.opaqueFrames.push(whole);
        }
      }
    }
  }

  /** Document size in CSS px (what a full-page capture covers). */
  function documentSize() {
    const de = document.documentElement;
    const b = document.body;
    return {
      width: Math.max(de ? de.scrollWidth : 0, b ? b.scrollWidth : 0, window.innerWidth),
      height: Math.max(de ? de.scrollHeight : 0, b ? b.scrollHeight : 0, window.innerHeight),
    };
  }

  /**
   * The secret selector plus the user's own (`configure` mask_selectors); a bad one is reported,
   * never skipped, since skipping it would leak what it was meant to hide.
   * @param {unknown} extra
   * @returns {{selector: string} | {error: {code: string, message: string}}}
   */
  function secretSelector(extra) {
    const list = Array.isArray(extra) ? extra.filter((s) => typeof s === 'string' && s.trim()) : [];
    for (const sel of list) {
      try {
        document.createDocumentFragment().querySelector(sel);
      } catch {
        return { error: { code: 'invalid_selector', message: `Invalid mask selector "${sel}": expected CSS such as "#card-number" or "[data-private]".` } };
      }
    }
    return { selector: [SECRET_SELECTOR, ...list].join(', ') };
  }

  /**
   * @param {{selector?: string | null, mask_selectors?: string[]}} args
   */
  L.probe = (args) => {
    const secret = secretSelector(args && args.mask_selectors);
    if ('error' in secret) return { isTop: window === window.top, error: secret.error };
    const out = { masks: [], opaqueFrames: [] };
    collect(document, 0, 0, out, 0, secret.selector);
    const isTop = window === window.top;
    // A frame its parent cannot reach into (cross-origin) must be masked whole when it has secrets.
    let reachable = false;
    try {
      reachable = !isTop && window.frameElement !== null;
    } catch {
      reachable = false;
    }
    if (!isTop) return { isTop, hasSecrets: out.masks.length > 0, reachable };

    /** @type {any} */
    let target = null;
    if (args && typeof args.selector === 'string') {
      const res = L.resolveOne(args.selector);
      if (res.error) target = { error: res.error };
      else {
        const r = /** @type {Element} */ (res.element).getBoundingClientRect();
        target = { rect: L.rect(r) };
      }
    }
    return {
      isTop,
      ...L.pageHeader(),
      document: documentSize(),
      target,
      masks: out.masks,
      opaqueFrames: out.opaqueFrames,
      hasSecrets: out.masks.length > 0,
    };
  };
})();
