// Capture probe: the page geometry a screenshot is mapped with (devicePixelRatio, viewport, scroll,
// document size, the target element's rect) and the rectangles of secrets to black out. Runs in
// every frame: the top frame answers geometry and masks (including same-origin subframes, offset
// into top-frame coordinates); other frames report whether they hold secrets, so cross-origin
// frames whose layout the top frame cannot see can be masked whole.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  // What a secret is comes from secret-rules.json, through page/secrets.js (L.secrets), which
  // also remembers fields that were ever secret. `extra` is the user's own mask selectors.
  // One random id per document: the capture checks it before and after the pixels are taken, so
  // masks of one document are never applied to another's image.
  if (!L.documentId) {
    const a = new Uint32Array(2);
    crypto.getRandomValues(a);
    L.documentId = `${a[0].toString(36)}${a[1].toString(36)}`;
  }

  // Whether this document is on screen yet. Chrome keeps showing the previous document until the
  // new one first paints (a `paint` entry), but a document with nothing contentful never gets
  // one: it is on screen once it has produced frames and paint holding (≤ ~0.5 s after the
  // navigation) is over. rAF only runs for a rendered document, so two callbacks prove frames.
  let framesSeen = 0;
  const countFrame = () => {
    if (++framesSeen < 2) requestAnimationFrame(countFrame);
  };
  requestAnimationFrame(countFrame);
  const PAINT_HOLDING_MS = 1500;
  const onScreen = () => performance.getEntriesByType('paint').length > 0 ||
    (framesSeen >= 2 && performance.now() > PAINT_HOLDING_MS);

  /**
   * Resolves true once this document is on screen, false after `max_ms` (a hidden or
   * still-loading document): the capture waits for it instead of retrying blindly.
   * @param {{max_ms?: number}} args
   * @returns {Promise<boolean>}
   */
  L.firstPaint = (args) =>
    new Promise((resolve) => {
      const deadline = performance.now() + (args?.max_ms ?? 3000);
      const poll = () => {
        if (onScreen()) resolve(true);
        else if (performance.now() >= deadline) resolve(false);
        else setTimeout(poll, 50);
      };
      poll();
    });

  /**
   * Secret elements of one root: rule matches plus the user's selectors.
   * @param {Document | ShadowRoot} root
   * @param {string} extra joined user selectors ('' for none)
   */
  function secretsIn(root, extra) {
    const found = new Set(L.secrets.inRoot(root));
    if (extra) for (const el of root.querySelectorAll(extra)) found.add(el);
    return found;
  }

  /**
   * @typedef {{masks: object[], opaqueFrames: object[], elements: Element[], perElement: object[][], docs: Document[]}} Found
   */

  /**
   * Collect secret rects of `doc` (and same-origin frames inside it), offset by (ox, oy).
   * @param {Document} doc
   * @param {number} ox
   * @param {number} oy
   * @param {Found} out
   * @param {number} depth
   * @param {string} selector the user's own mask selectors, joined ('' for none)
   */
  function collect(doc, ox, oy, out, depth, selector) {
    out.docs.push(doc);
    for (const root of L.allRoots(doc, true)) {
      for (const el of secretsIn(root, selector)) {
        out.elements.push(el);
        const rects = [];
        for (const r of el.getClientRects()) {
          if (r.width > 0 && r.height > 0) rects.push(L.rect({ x: r.x + ox, y: r.y + oy, width: r.width, height: r.height }));
        }
        out.masks.push(...rects);
        out.perElement.push(rects);
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
   * The user's own (`configure` mask_selectors); a bad one is reported,
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
    return { selector: list.join(', ') };
  }

  /** Animations we paused for a capture, to resume afterwards. @type {Animation[]} */
  let frozen = [];

  /**
   * Pause every running animation of these documents (secrets in motion stay where masked).
   * @param {Document[]} docs
   */
  function freeze(docs) {
    for (const doc of docs) {
      for (const anim of doc.getAnimations()) {
        if (anim.playState === 'running') {
          anim.pause();
          frozen.push(anim);
        }
      }
    }
  }

  // Where a moving secret is painted is not where the page says it is: the compositor runs CSS
  // motion on its own clock and Chrome's capture can show it a frame (or more) away from the
  // paused position (measured: ±39 px on a 2 333 px/s slide in 30 of 40 captures). So the mask of
  // a secret in motion covers its whole path: its rects at SWEEP_STEPS + 1 points of one
  // iteration of every paused animation, joined into one box per element. Seeking is
  // synchronous (no frame is painted in between) and every animation is put back where it was.
  const SWEEP_STEPS = 24;

  /**
   * @param {() => {masks: object[], perElement: object[][]}} measure
   * @returns {object[]} one box per secret element (or every sampled rect if elements came and went)
   */
  function sweep(measure) {
    const saved = frozen.map((a) => a.currentTime);
    /** @type {object[][][]} samples[i][element] = that element's rects at step i */
    const samples = [];
    try {
      for (let i = 0; i <= SWEEP_STEPS; i++) {
        for (const a of frozen) {
          const t = a.effect ? a.effect.getComputedTiming() : null;
          const d = t && Number.isFinite(Number(t.duration)) ? Number(t.duration) : 0;
          a.currentTime = (t ? Number(t.delay) || 0 : 0) + (d * i) / SWEEP_STEPS;
        }
        samples.push(measure().perElement);
      }
    } finally {
      frozen.forEach((a, k) => {
        a.currentTime = saved[k];
      });
    }
    const n = samples[0].length;
    if (!samples.every((s) => s.length === n)) return samples.flat(2);
    /** @type {object[]} */
    const boxes = [];
    for (let e = 0; e < n; e++) {
      const rects = samples.flatMap((s) => s[e]);
      if (rects.length) boxes.push(hull(rects));
    }
    return boxes;
  }

  /** @param {any[]} rects */
  function hull(rects) {
    const x0 = Math.min(...rects.map((r) => r.x));
    const y0 = Math.min(...rects.map((r) => r.y));
    const x1 = Math.max(...rects.map((r) => r.x + r.width));
    const y1 = Math.max(...rects.map((r) => r.y + r.height));
    return L.rect({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 });
  }

  function thaw() {
    const list = frozen;
    frozen = [];
    for (const anim of list) {
      try {
        if (anim.playState === 'paused') anim.play();
      } catch {
        // removed meanwhile
      }
    }
  }

  // Resume what a probe paused, after a capture attempt that ended early.
  L.thawAnimations = () => {
    thaw();
    return true;
  };

  /**
   * Masks and geometry. `freeze` pauses this document's animations first when it holds secrets
   * (the visible-tab path has no debugger to pause them); `thaw` resumes them after the masks
   * are collected.
   * @param {{selector?: string | null, mask_selectors?: string[], freeze?: boolean, thaw?: boolean}} args
   */
  L.probe = (args) => {
    const secret = secretSelector(args && args.mask_selectors);
    if ('error' in secret) return { isTop: window === window.top, error: secret.error };
    const measure = () => {
      /** @type {Found} */
      const found = { masks: [], opaqueFrames: [], elements: [], perElement: [], docs: [] };
      collect(document, 0, 0, found, 0, secret.selector);
      return found;
    };
    let out = measure();
    if (args && args.freeze && out.elements.length) {
      freeze(out.docs);
      out = measure();
      if (frozen.length) out.masks = out.masks.concat(sweep(measure));
    }
    if (args && args.thaw) thaw();
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
      document_id: L.documentId,
      // Chrome keeps showing the previous document until the new one first paints: an image
      // taken before that shows other pixels than these masks describe.
      painted: onScreen(),
      frozen: frozen.length, // animations paused by this probe (freeze)
      // How long this document has been on screen (ms since its first paint; -1: not yet).
      paint_age_ms: (() => {
        const first = performance.getEntriesByType('paint')[0];
        return first ? performance.now() - first.startTime : -1;
      })(),
      document: documentSize(),
      target,
      masks: out.masks,
      opaqueFrames: out.opaqueFrames,
      hasSecrets: out.masks.length > 0,
    };
  };
})();
