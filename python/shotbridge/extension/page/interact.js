// Page side of the `input`, `element_at` and `resolve` commands and of capture's `scroll`: what is
// under a point, where an element is now, instant scrolling, and waiting until a frame is painted.
// The trusted input itself is dispatched by the service worker through CDP (lib/input.js); this
// file only looks at the page and moves its scroll position.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  // The element a click on a descendant is meant for: reporting the <span> inside a button tells
  // the model less than the button itself.
  const ACTIONABLE = [
    'a[href]', 'area[href]', 'button', 'input', 'select', 'textarea', 'summary', 'label', 'option',
    '[contenteditable]:not([contenteditable="false" i])', '[onclick]', '[tabindex]:not([tabindex="-1"])',
    ...['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'option', 'combobox',
      'textbox', 'slider', 'searchbox', 'spinbutton', 'treeitem'].map((r) => `[role="${r}"]`),
  ].join(', ');

  /** @param {Element} el */
  function actionable(el) {
    for (let n = /** @type {Element | null} */ (el), depth = 0; n && depth < 8; n = L.composedParent(n), depth++) {
      if (n.matches(ACTIONABLE)) return n;
    }
    return el;
  }

  /**
   * What the model is told it hit. Never a field's value (visibleText skips them), so typing into
   * a password box does not echo it back.
   * @param {Element} el
   */
  function describe(el) {
    const role = L.role(el);
    const r = el.getBoundingClientRect();
    return {
      tag: el.localName,
      role,
      name: L.accessibleName(el, role),
      selector: L.uniqueSelector(el),
      text: L.visibleText(el),
      bounds: L.rect(r),
    };
  }

  const state = () => ({ url: location.href, title: document.title, scroll: L.scroll(), viewport: L.viewport(),
    device_pixel_ratio: window.devicePixelRatio });
  L.pageState = state;

  const TEXT_TYPES = new Set(['', 'text', 'email', 'tel', 'url', 'search', 'password', 'number',
    'date', 'datetime-local', 'month', 'time', 'week']);

  /** Takes typed text: text-like inputs, textareas, contenteditable. @param {Element} el */
  function editable(el) {
    if (el.localName === 'textarea') return !(/** @type {HTMLTextAreaElement} */ (el).readOnly || /** @type {any} */ (el).disabled);
    if (el.localName === 'input') {
      const i = /** @type {HTMLInputElement} */ (el);
      return TEXT_TYPES.has((el.getAttribute('type') || '').toLowerCase()) && !i.readOnly && !i.disabled;
    }
    return /** @type {HTMLElement} */ (el).isContentEditable === true;
  }

  /**
   * @param {{x: number, y: number}} args viewport CSS px
   */
  L.elementAt = (args) => {
    const el = L.deepElementFromPoint(args.x, args.y);
    // Inside an iframe: that frame's document says what is there (lib/frames.js follows `enter`).
    if (el && L.isFrameElement(el)) {
      const index = L.frameIndexOf(el);
      if (index >= 0) return { ...state(), hit: describe(el), enter: { index, box: L.frameBox(el) } };
    }
    return { ...state(), hit: el ? describe(actionable(el)) : null };
  };

  /** The frame `el` (an iframe) as a step of a path: its index, content box and selector. @param {Element} el */
  const frameStep = (el) => ({ index: L.frameIndexOf(el), box: L.frameBox(el), selector: L.uniqueSelector(el) });

  /**
   * Resolve a selector to its first match and, when asked, bring it into view (instantly: smooth
   * scrolling would leave the element moving while we click it).
   * @param {{selector: string, scroll_into_view?: boolean}} args
   */
  L.locate = (args) => {
    const res = L.resolvePath(args.selector);
    if (res.error) return { error: res.error };
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    if (res.enter) {
      // The rest of the path is in an iframe's document: bring the iframe into view and say
      // where its viewport is; lib/frames.js goes on in that frame.
      const f = res.enter.el;
      const fr = f.getBoundingClientRect();
      if (args.scroll_into_view && L.overlapArea(fr, { x: 0, y: 0, width: vw, height: vh }) < 0.5 * fr.width * fr.height) {
        f.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      }
      return { ...state(), enter: { ...frameStep(f), rest: res.enter.rest } };
    }
    const el = /** @type {Element} */ (res.element);
    let r = el.getBoundingClientRect();
    const visibleArea = () => L.overlapArea(r, { x: 0, y: 0, width: vw, height: vh });
    if (args.scroll_into_view && visibleArea() < 0.5 * r.width * r.height) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      r = el.getBoundingClientRect();
    }
    // Aim at the middle of the part that is on screen, so large elements are still hit.
    const x0 = Math.max(r.left, 0);
    const x1 = Math.min(r.right, vw);
    const y0 = Math.max(r.top, 0);
    const y1 = Math.min(r.bottom, vh);
    const onScreen = x1 - x0 >= 1 && y1 - y0 >= 1;
    const point = onScreen ? { x: L.round((x0 + x1) / 2), y: L.round((y0 + y1) / 2) } : null;
    let covered_by = null;
    if (point) {
      const top = L.deepElementFromPoint(point.x, point.y);
      // A control drawn under its own <label> (custom checkboxes) is still reached through it.
      const labels = [.../** @type {any} */ (el).labels || []];
      if (top && !L.composedContains(el, top) && !labels.some((l) => L.composedContains(l, top))) {
        covered_by = describe(actionable(top));
      }
    }
    return {
      ...state(),
      element: describe(el),
      bounds: L.rect(r),
      in_viewport: visibleArea() > 0.5 * r.width * r.height,
      visible: L.isVisible(el, r),
      point,
      covered_by,
      count: L.resolveAll(args.selector).length,
    };
  };

  /**
   * Is `point` on `selector`'s first match (or inside it)? Used to tell whether a labelled element
   * is still where the screenshot showed it.
   * @param {{selector: string, x: number, y: number}} args
   */
  L.pointOn = (args) => {
    const res = L.resolveOne(args.selector);
    if (res.error) return false;
    const hit = L.deepElementFromPoint(args.x, args.y);
    const el = /** @type {Element} */ (res.element);
    // A control drawn under its own <label> (custom switches) is reached through the label.
    const labels = [.../** @type {any} */ (el).labels || []];
    return !!hit && [el, ...labels].some((t) => L.composedContains(t, hit));
  };

  /**
   * Scroll the window: to a y offset, the top, the bottom, or a selector (centred).
   * @param {{y?: number, x?: number, to?: 'top' | 'bottom', selector?: string}} args
   */
  L.scrollTo = (args) => {
    if (args.selector) {
      const res = L.resolveOne(args.selector);
      if (res.error) return { error: res.error };
      /** @type {Element} */ (res.element).scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
    } else if (args.to === 'top') {
      window.scrollTo({ top: 0, left: window.scrollX, behavior: 'instant' });
    } else if (args.to === 'bottom') {
      const se = document.scrollingElement || document.documentElement;
      window.scrollTo({ top: se.scrollHeight, left: window.scrollX, behavior: 'instant' });
    } else {
      window.scrollTo({ top: args.y ?? window.scrollY, left: args.x ?? window.scrollX, behavior: 'instant' });
    }
    return state();
  };

  /** The focused element (across shadow roots), described; with its value when not a secret. */
  L.focused = () => {
    let el = document.activeElement;
    for (let depth = 0; el && el.shadowRoot && el.shadowRoot.activeElement && depth < 32; depth++) {
      el = el.shadowRoot.activeElement;
    }
    if (!el || el === document.body || el === document.documentElement) return { ...state(), focused: null };
    // Focus is inside an iframe: that frame knows the focused field (lib/frames.js follows it).
    if (L.isFrameElement(el) && L.frameIndexOf(el) >= 0) return { ...state(), focused: null, enter: frameStep(el) };
    const out = /** @type {any} */ (describe(el));
    out.editable = editable(el);
    // Without the secrets module a field's value is never told (fail closed).
    const secret = L.secrets ? L.secrets.isSecret(el) : el.localName === 'input' || el.localName === 'textarea';
    if (!secret && (el.localName === 'input' || el.localName === 'textarea')) {
      out.value = L.clean(/** @type {HTMLInputElement} */ (el).value, 200);
    } else if (secret) {
      out.value_hidden = true;
    }
    return { ...state(), focused: out };
  };

  /** Select the focused field's content so the text typed next replaces it. */
  L.selectFocused = () => {
    const el = /** @type {any} */ (document.activeElement);
    if (!el) return false;
    if (L.isFrameElement(el) && L.frameIndexOf(el) >= 0) return { enter: frameStep(el) };
    if (typeof el.select === 'function' && (el.localName === 'input' || el.localName === 'textarea')) {
      el.select();
      return true;
    }
    if (el.isContentEditable) {
      const range = document.createRange();
      range.selectNodeContents(el);
      const sel = window.getSelection();
      sel?.removeAllRanges();
      sel?.addRange(range);
      return true;
    }
    return false;
  };

  /**
   * Resolves after two animation frames (the second one starts after the first was painted), or
   * after `max_ms` when the page is hidden and frames do not come.
   * @param {{max_ms?: number}} args
   */
  L.nextPaint = (args) =>
    new Promise((resolve) => {
      const done = () => resolve(state());
      const timer = setTimeout(done, args?.max_ms ?? 200);
      requestAnimationFrame(() => requestAnimationFrame(() => {
        clearTimeout(timer);
        done();
      }));
    });
})();
