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

  // A capture probes just before it asks Chrome for a frame and again once it has the pixels:
  // a label read asked for beside it (discover's after_frame) waits for the second probe.
  /** @type {(() => void)[]} */
  let probeWaiters = [];
  /** @type {(() => void)[]} */
  let doneWaiters = [];
  /** A capture has probed before its pixels and not yet after them. */
  L.captureInFlight = false;
  /** @type {(Document | ShadowRoot)[] | null} the document's roots its probe walked, until the capture is done */
  L.captureRoots = null;
  /** Call `fn` at the end of the next probe before a capture. @param {() => void} fn */
  L.whenCaptureProbed = (fn) => probeWaiters.push(fn);
  /** Call `fn` at the next probe after a capture's pixels (or its end). @param {() => void} fn */
  L.whenCaptureDone = (fn) => doneWaiters.push(fn);
  function captureProbed() {
    L.captureInFlight = true;
    const waiting = probeWaiters;
    probeWaiters = [];
    for (const fn of waiting) fn();
  }
  function captureDone() {
    L.captureInFlight = false;
    L.captureRoots = null;
    const waiting = doneWaiters;
    doneWaiters = [];
    for (const fn of waiting) fn();
  }

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
   * @typedef {{masks: object[], opaqueFrames: object[], elements: Element[], perElement: object[][], docs: Document[],
   *   roots: (Document | ShadowRoot)[]}} Found
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
      out.roots.push(root);
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

  // Script moves secrets too: timers, requestAnimationFrame, a scrolled container, a toggled
  // transition. Chrome offers no reversible way to stop a page's script clock (measured: CDP
  // virtual time leaves Date and performance.now on a virtual clock for good and still runs rAF;
  // Debugger.pause inside rAF stalls the screenshot; a frozen lifecycle state is ignored for a
  // visible page). So from the probe before the pixels to the one after, every state the page
  // takes is measured: after each task that mutates the DOM (MutationObserver), each scroll,
  // each new transition or animation (paused at once, like those found first), each layout
  // shift, and every POLL_MS between them (what no event announces: a style sheet's rule changed
  // by script). The masks then cover each secret's box around all of them. A timer, not
  // requestAnimationFrame: a frame requested by the watch, or a scroll listener added for each
  // capture, held Chrome's capture back by a frame (45 vs 26 ms).
  const WATCH_MAX_MS = 60_000; // a capture that never came back (worker gone) stops the watch
  const POLL_MS = 4;

  /**
   * @typedef {{measure: () => Found, boxes: Map<Element, any[]>, first: Map<Element, string>,
   *   paths: Map<string, object>, frames: Map<string, object>, moved: boolean, expired: boolean, stop: () => void}} Watch
   */
  /** @type {Watch | null} */
  let watch = null;

  /** @param {any} r */
  const keyOf = (r) => `${r.x},${r.y},${r.width},${r.height}`;

  /**
   * Add one measurement (and the path of any animation that started since) to the watch.
   * @param {Watch} w
   * @param {Found} [now] a measurement just taken (in this same task), instead of a new one
   */
  function record(w, now) {
    const found = now || w.measure();
    const before = frozen.length;
    freeze(found.docs);
    if (frozen.length > before) {
      w.moved = true;
      for (const r of sweep(w.measure)) w.paths.set(keyOf(r), r);
    }
    found.elements.forEach((el, i) => {
      const rects = found.perElement[i];
      const key = rects.map(keyOf).join(' ');
      if (!w.first.has(el)) w.first.set(el, key);
      else if (w.first.get(el) !== key) w.moved = true;
      if (rects.length) w.boxes.set(el, (w.boxes.get(el) || []).concat(rects));
    });
    for (const r of found.opaqueFrames) w.frames.set(keyOf(r), r);
  }

  /** @type {WeakMap<Document, (() => void) | null>} */
  const scrollWatchers = new WeakMap();
  /**
   * Send each scroll in `doc` (of the window or any box) to `fn` (null: to nobody). The listener
   * stays on the document once added: adding and removing a scroll listener around each capture
   * held Chrome's capture back by a frame (measured 42 vs 27 ms).
   * @param {Document} doc
   * @param {(() => void) | null} fn
   */
  function onScroll(doc, fn) {
    if (!scrollWatchers.has(doc)) {
      doc.addEventListener('scroll', () => scrollWatchers.get(doc)?.(), { capture: true, passive: true });
    }
    scrollWatchers.set(doc, fn);
  }

  /**
   * Call `fn` at each layout shift (a box moved with no DOM change: a late image or font).
   * @param {() => void} fn
   * @returns {PerformanceObserver | null}
   */
  function layoutShifts(fn) {
    try {
      const po = new PerformanceObserver(fn);
      po.observe({ type: 'layout-shift' });
      return po;
    } catch {
      return null; // not supported here: the poll still sees the new place
    }
  }

  /**
   * Start measuring every state of the secrets of `docs` until stopWatch().
   * @param {() => Found} measure
   * @param {Found} found its result just now (same task): the roots and documents to watch
   */
  function startWatch(measure, found) {
    stopWatch();
    /** @type {Watch} */
    const w = { measure, boxes: new Map(), first: new Map(), paths: new Map(), frames: new Map(), moved: false, expired: false, stop: () => {} };
    const onChange = () => {
      if (watch === w && !w.expired) record(w);
    };
    const observer = new MutationObserver(onChange);
    const opts = { attributes: true, childList: true, characterData: true, subtree: true };
    const listened = [];
    for (const root of found.roots) observer.observe(root, opts);
    for (const doc of found.docs) {
      for (const type of ['transitionrun', 'animationstart', 'resize']) {
        doc.addEventListener(type, onChange, { capture: true, passive: true });
        listened.push([doc, type]);
      }
      onScroll(doc, onChange);
    }
    const shifts = layoutShifts(onChange);
    let poll = 0;
    const tick = () => {
      if (watch !== w || w.expired) return;
      onChange();
      poll = setTimeout(tick, POLL_MS);
    };
    poll = setTimeout(tick, POLL_MS);
    // Left on, the watch would keep the page's animations paused: it ends itself, and the probe
    // after the pixels then refuses the image (it can no longer vouch for the masks).
    const timer = setTimeout(() => {
      w.expired = true;
      w.stop();
      thaw();
    }, WATCH_MAX_MS);
    w.stop = () => {
      observer.disconnect();
      for (const [doc, type] of listened) doc.removeEventListener(type, onChange, { capture: true });
      shifts?.disconnect();
      for (const doc of found.docs) onScroll(doc, null);
      clearTimeout(poll);
      clearTimeout(timer);
    };
    watch = w;
    record(w, found);
  }

  /**
   * Stop the watch. Its boxes: one per secret around every place it was seen, and the paths of
   * animations that began meanwhile; its frames: every place a frame it cannot see into took.
   */
  function stopWatch() {
    const w = watch;
    watch = null;
    if (!w) return null;
    w.stop();
    const boxes = [...w.boxes.values()].map(hull).concat([...w.paths.values()]);
    return { boxes, frames: [...w.frames.values()], moved: w.moved, expired: w.expired };
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
    captureDone();
    stopWatch();
    thaw();
    return true;
  };

  /**
   * The secrets of this document and its same-origin frames, measured (again, paused where they
   * were, when `freeze` paused animations) and, with `thaw`, joined with every place the watch
   * saw them take since the probe before.
   * @param {{freeze?: boolean, thaw?: boolean} | undefined} args
   * @param {string} selector the secrets' CSS selector
   * @param {boolean} isTop
   */
  function secretsNow(args, selector, isTop) {
    const measure = () => {
      /** @type {Found} */
      const found = { masks: [], opaqueFrames: [], elements: [], perElement: [], docs: [], roots: [] };
      collect(document, 0, 0, found, 0, selector);
      return found;
    };
    let out = measure();
    if (args && args.freeze && out.elements.length) {
      freeze(out.docs);
      // Paused where they were: measured again, with the path of each paused animation.
      if (frozen.length) {
        out = measure();
        out.masks = out.masks.concat(sweep(measure));
      }
    }
    // The top frame measures its own and its same-origin frames' secrets (and the cross-origin
    // frames it may have to mask whole), so it alone watches them move.
    const watching = !!(args && args.freeze && isTop && (out.elements.length || out.opaqueFrames.length));
    if (watching) startWatch(measure, out);
    /** @type {{boxes: object[], frames: object[], moved: boolean, expired: boolean} | null} */
    let watched = null;
    if (args && args.thaw) {
      watched = stopWatch();
      thaw();
      if (watched) {
        out.masks = out.masks.concat(watched.boxes);
        out.opaqueFrames = out.opaqueFrames.concat(watched.frames);
      }
    }
    return { out, watching, watched };
  }

  /** The element a capture clips to, or why it cannot: {rect} | {error} | null without a selector. */
  function targetOf(/** @type {unknown} */ selector) {
    if (typeof selector !== 'string') return null;
    const res = L.resolveOne(selector);
    if (res.error) return { error: res.error };
    return { rect: L.rect(/** @type {Element} */ (res.element).getBoundingClientRect()) };
  }

  /**
   * Masks and geometry. `freeze` pauses this document's animations first when it holds secrets
   * (the visible-tab path has no debugger to pause them); `thaw` resumes them after the masks
   * are collected.
   * @param {{selector?: string | null, mask_selectors?: string[], freeze?: boolean, thaw?: boolean}} args
   */
  L.probe = (args) => {
    const began = performance.now();
    if (args && args.thaw) captureDone();
    try {
      return probeNow(args, began);
    } finally {
      // At its end: a read waiting for this probe counts its delay from here, so a long probe
      // (a moving secret swept) does not leave the read to start just as Chrome needs the frame.
      if (args && args.freeze) captureProbed();
    }
  };

  /**
   * @param {{selector?: string | null, mask_selectors?: string[], freeze?: boolean, thaw?: boolean} | undefined} args
   * @param {number} began when the probe began (performance.now())
   */
  function probeNow(args, began) {
    const secret = secretSelector(args && args.mask_selectors);
    if ('error' in secret) return { isTop: window === window.top, error: secret.error };
    const isTop = window === window.top;
    // A frame its parent cannot reach into (cross-origin) must be masked whole when it has secrets.
    let reachable = false;
    try {
      reachable = !isTop && window.frameElement !== null;
    } catch {
      reachable = false;
    }
    // One its parent reaches into is measured, paused and watched by the parent's probe.
    if (reachable) return { isTop, hasSecrets: false, reachable };
    const { out, watching, watched } = secretsNow(args, secret.selector, isTop);
    // This document's roots (not its frames'), for a label read beside this capture: labels
    // only, so roots a page attaches in the few ms before that read are missed at worst.
    if (args && args.freeze) L.captureRoots = out.roots.filter((r) => (r.nodeType === 9 ? r : r.ownerDocument) === document);
    if (!isTop) return { isTop, hasSecrets: out.masks.length > 0, reachable };
    const first = performance.getEntriesByType('paint')[0];
    return {
      isTop,
      ...L.pageHeader(),
      document_id: L.documentId,
      // Chrome keeps showing the previous document until the new one first paints: an image
      // taken before that shows other pixels than these masks describe.
      painted: onScreen(),
      hidden: document.visibilityState === 'hidden',
      frozen: frozen.length, // animations paused by this probe (freeze)
      // How long this document has been on screen (ms since its first paint; -1: not yet).
      paint_age_ms: first ? performance.now() - first.startTime : -1,
      document: documentSize(),
      target: targetOf(args && args.selector),
      masks: out.masks,
      opaqueFrames: out.opaqueFrames,
      hasSecrets: out.masks.length > 0,
      // From the probe before the pixels: whether a secret moved (or began an animation), and
      // whether the watch ran out before this probe (then its masks cannot be vouched for).
      moved: !!watched?.moved,
      watch_expired: !!watched?.expired,
      // The watch began with this probe. Chrome's CDP capture renders a new frame, after it; a
      // visible-area capture reads the last frame shown, which may predate it, so that path
      // lets two frames pass first (nextPaint).
      watching,
      // For the benchmark's stages: when the page began this probe (wall clock) and its cost.
      ran_at: Math.round((performance.timeOrigin + began) * 10) / 10,
      ran_ms: Math.round((performance.now() - began) * 10) / 10,
    };
  }
})();
