// discover: elements worth labelling, in reading order, with their names, states, selectors and
// Playwright locators. Controls a person uses but the DOM hides (an opacity:0 checkbox under a
// switch pill, a clip-hidden radio) are shown on their visible label.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  // Roles that mark an element as meaningful in target=all_visible even without own text.
  const CONTENT_ROLES = new Set(['img', 'heading', 'link', 'button', 'checkbox', 'radio', 'switch',
    'textbox', 'searchbox', 'combobox', 'listbox', 'slider', 'spinbutton', 'tab', 'menuitem', 'option',
    'progressbar', 'meter', 'navigation', 'main', 'banner', 'contentinfo', 'complementary', 'form',
    'dialog', 'alert', 'status', 'region', 'table', 'list', 'listitem', 'paragraph', 'separator']);
  // Elements whose descendants' text is part of their own name: descendants are not listed apart.
  const TEXT_OWNER_ROLES = new Set(['link', 'button', 'heading', 'tab', 'menuitem', 'option',
    'checkbox', 'radio', 'switch', 'img', 'textbox', 'searchbox', 'combobox', 'listbox', 'treeitem',
    'menuitemcheckbox', 'menuitemradio']);
  const SKIP_TAGS = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title',
    'br', 'wbr', 'html', 'body', 'option', 'optgroup', 'source', 'track', 'param']);
  // Scanning every element's computed cursor is linear in the page; beyond this, only the
  // declared controls are considered.
  const POINTER_SCAN_LIMIT = 6000;

  /** @param {Element} el has a non-blank text node child (its "own" text) */
  function hasOwnText(el) {
    return L.rememberDom('ownText', el, () => {
      for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 3 && /\S/.test(n.nodeValue || '')) return true;
      return false;
    });
  }

  /** all_visible lists what has text of its own, a role that means something, or a use. @param {Element} el */
  const isContent = (el) => hasOwnText(el) || CONTENT_ROLES.has(L.role(el)) || L.isInteractive(el);

  /** A checkbox/radio the page hides to draw its own (opacity 0, clipped, 1 px). @param {Element} el */
  function hiddenToggle(el, /** @type {DOMRect} */ rect) {
    if (el.localName !== 'input') return false;
    const type = /** @type {HTMLInputElement} */ (el).type;
    if (type !== 'checkbox' && type !== 'radio') return false;
    if (rect.width <= 2 || rect.height <= 2) return true;
    const cs = getComputedStyle(el);
    if (parseFloat(cs.opacity) === 0 || cs.visibility === 'hidden') return true;
    return /rect\(0/.test(cs.clip) || /inset\(50%\)/.test(cs.clipPath);
  }

  /**
   * A text field the page makes transparent or tiny to take the typing for a widget it draws
   * itself (a terminal's or code editor's textarea at the cursor). @param {Element} el
   */
  function typingSink(el, /** @type {DOMRect} */ rect) {
    if (el.localName !== 'textarea' && !(el.localName === 'input' && L.role(el) === 'textbox')) return false;
    if (L.isDisabled(el) || !rendered(el)) return false;
    // A form's value mirror (aria-hidden, out of the tab order) takes no typing.
    if (el.getAttribute('aria-hidden') === 'true' || /** @type {HTMLElement} */ (el).tabIndex < 0) return false;
    const cs = getComputedStyle(el);
    return cs.visibility !== 'hidden' && (parseFloat(cs.opacity) === 0 || rect.width <= 2 || rect.height <= 2);
  }

  /** Laid out: no display:none (or skipped content) on it or an ancestor. @param {Element} el */
  const rendered = (el) => typeof el.checkVisibility !== 'function' || el.checkVisibility();

  // A checkbox or switch drawn in place of a hidden input is small; a card around it is not.
  const DRAWN_TOGGLE_MAX_AREA = 96 * 96;

  /**
   * The nearest visible ancestor drawn around `el` (the widget it serves, at most `maxArea` px²),
   * or null when `el` is not laid out at all (a closed dialog's field).
   * @param {Element} el
   * @param {DOMRect} rect
   * @param {number} [maxArea]
   */
  function drawnAround(el, rect, maxArea = Infinity) {
    if (!rendered(el)) return null;
    const cx = rect.x + rect.width / 2;
    const cy = rect.y + rect.height / 2;
    let n = L.composedParent(el);
    for (let i = 0; n && i < 8; i++, n = L.composedParent(n)) {
      const r = n.getBoundingClientRect();
      const around = r.left <= cx && cx <= r.right && r.top <= cy && cy <= r.bottom;
      const area = r.width * r.height;
      if (area > maxArea) return null;
      if (around && area >= Math.max(4 * rect.width * rect.height, 64) && L.isVisible(n, r)) return { el: n, rect: r };
    }
    return null;
  }

  /**
   * The visible element standing in for a hidden control: its label; else, when the control is
   * transparent but has a size, the control itself (clicks land on it: `el: null`); else the
   * drawn element around it.
   * @param {Element} el
   * @param {DOMRect} rect
   * @returns {{el: Element | null, rect: DOMRect} | null}
   */
  function proxyOf(el, rect) {
    const labels = [.../** @type {any} */ (el).labels || []];
    const wrap = el.closest('label');
    for (const l of wrap ? [wrap, ...labels] : labels) {
      const r = l.getBoundingClientRect();
      if (L.isVisible(l, r)) return { el: /** @type {Element} */ (l), rect: r };
    }
    if (el.localName === 'input' && rect.width > 2 && rect.height > 2) return { el: null, rect };
    return drawnAround(el, rect, DRAWN_TOGGLE_MAX_AREA);
  }

  /**
   * The element on top of `el` at every sample point, or null when `el` (or `also`, e.g. its
   * label) is reachable somewhere. Elements outside the viewport are never covered.
   * @param {Element} el
   * @param {DOMRect} rect
   * @param {Element[]} also
   */
  function coveredBy(el, rect, also) {
    const x0 = Math.max(rect.left, 0);
    const x1 = Math.min(rect.right, window.innerWidth);
    const y0 = Math.max(rect.top, 0);
    const y1 = Math.min(rect.bottom, window.innerHeight);
    if (x1 - x0 < 1 || y1 - y0 < 1) return null;
    const mine = [el, ...also, .../** @type {any} */ (el).labels || []];
    /** @type {Element | null} */
    let top = null;
    for (const [fx, fy] of [[0.5, 0.5], [0.2, 0.2], [0.8, 0.2], [0.2, 0.8], [0.8, 0.8]]) {
      const hit = L.deepElementFromPoint(x0 + (x1 - x0) * fx, y0 + (y1 - y0) * fy);
      if (!hit) continue;
      if (mine.some((m) => L.composedContains(m, hit))) return null;
      // A shadow host around `el` is hit where its slotted light text is drawn (a kit's checkbox
      // caption): that is the control's own rendering.
      if (L.composedContains(hit, el) && L.shadowRootOf(hit, true)) return null;
      top = top || hit;
    }
    return top;
  }

  /** Candidates for target=interactive: declared controls, then `cursor: pointer` starters. */
  function interactiveCandidates(/** @type {(Document | ShadowRoot)[]} */ roots) {
    const out = L.queryAllDeep(L.INTERACTIVE_SELECTOR, { roots });
    const declared = new Set(out);
    const all = L.queryAllDeep('*', { roots });
    if (all.length <= POINTER_SCAN_LIMIT) {
      for (const el of all) {
        if (declared.has(el) || SKIP_TAGS.has(el.localName) || !L.pointerStarts(el)) continue;
        // A pointer wrapper around a declared control repeats it: the control is the target
        // (also when the control is in the wrapper's shadow root: a kit's button host).
        if (el.querySelector(L.INTERACTIVE_SELECTOR)) continue;
        const sr = L.shadowRootOf(el, true);
        if (sr && sr.querySelector(L.INTERACTIVE_SELECTOR)) continue;
        // A grid draws a header's caption and sort icon inside the header cell: the header
        // (role, name, what a click sorts) is the control.
        const header = el.closest('[role="columnheader"], [role="rowheader"]');
        if (header && !header.querySelector(L.INTERACTIVE_SELECTOR)) {
          out.push(header);
          continue;
        }
        const text = /** @type {HTMLElement} */ (el).innerText;
        if (!el.getAttribute('role') && !(text && text.trim()) && !el.querySelector('svg, img')) continue;
        out.push(el);
      }
    }
    return out;
  }

  // Text rects for badge placement: enough for a dense page, bounded so a huge one stays cheap.
  const TEXT_RECTS_MAX = 2000;
  const TEXT_NODES_MAX = 20000;

  /** The node after `walker`'s current one and its subtree (null at the end). @param {TreeWalker} walker */
  function skipSubtree(walker) {
    for (;;) {
      const next = walker.nextSibling();
      if (next) return next;
      if (!walker.parentNode()) return null;
    }
  }

  /**
   * Line boxes of the visible text in the viewport (viewport CSS px), so the image core can put
   * badges where they hide the least of it. Each text node's Range gives one rect per line.
   * Elements whose box is out of view are skipped with their subtree (a long page costs the
   * visible part only); text that overflows such a box into view is missed, which only means a
   * badge may cover it.
   * @param {(Document | ShadowRoot)[]} roots
   */
  function textRects(roots) {
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    /** @type {{x: number, y: number, width: number, height: number}[]} */
    const out = [];
    /** @type {Map<Element, boolean>} */
    const shown = new Map();
    const range = document.createRange();
    let nodes = 0;
    for (const root of roots) {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
      let n = walker.nextNode();
      while (n) {
        if (++nodes > TEXT_NODES_MAX || out.length >= TEXT_RECTS_MAX) return out;
        if (n.nodeType === 1) {
          const el = /** @type {Element} */ (n);
          const name = el.localName;
          if (SKIP_TAGS.has(name) && name !== 'html' && name !== 'body') {
            n = skipSubtree(walker);
            continue;
          }
          const b = el.getBoundingClientRect();
          const away = b.bottom <= 0 || b.top >= vh || b.right <= 0 || b.left >= vw;
          // A box of no size (display: contents, an inline wrapper) says nothing about its children.
          n = away && (b.width > 0 || b.height > 0) ? skipSubtree(walker) : walker.nextNode();
          continue;
        }
        const parent = n.parentElement;
        if (parent && /\S/.test(n.nodeValue || '')) {
          let visible = shown.get(parent);
          if (visible === undefined) {
            visible = typeof parent.checkVisibility !== 'function' ||
              parent.checkVisibility({ opacityProperty: true, visibilityProperty: true });
            shown.set(parent, visible);
          }
          if (visible) {
            range.selectNodeContents(n);
            for (const r of range.getClientRects()) {
              if (r.width < 1 || r.height < 1 || r.right <= 0 || r.bottom <= 0 || r.left >= vw || r.top >= vh) continue;
              out.push(L.rect(r));
              if (out.length >= TEXT_RECTS_MAX) return out;
            }
          }
        }
        n = walker.nextNode();
      }
    }
    return out;
  }

  /** Where the page is crowded for the labels asked for: a hint naming the region. */
  L.crowding = crowding;
  function crowding(/** @type {{x: number, y: number, width: number, height: number}[]} */ boxes, max, total) {
    const notes = [];
    if (total > max) {
      notes.push(`${total - max} more controls are not labelled (max_annotations=${max}, ${total} found): raise ` +
        'max_annotations (up to 500), use annotation_selector for a part of the page, or capture a region.');
    }
    const cell = 160;
    /** @type {Map<string, number>} */
    const grid = new Map();
    for (const b of boxes) {
      const k = `${Math.floor((b.x + b.width / 2) / cell)},${Math.floor((b.y + b.height / 2) / cell)}`;
      grid.set(k, (grid.get(k) || 0) + 1);
    }
    const dense = [...grid].filter(([, n]) => n >= 16).sort((a, b) => b[1] - a[1]);
    if (dense.length) {
      const [[k, n]] = dense;
      const [cx, cy] = k.split(',').map(Number);
      notes.push(`${n} labels in the ${cell}x${cell} CSS px region at x=${cx * cell}, y=${cy * cell}: labels there are ` +
        'small and close; capture that region (selector or clip) or use annotation_selector to tell them apart.');
    }
    return notes;
  }

  /**
   * The elements `target` asks for, each once (or the selector's error for target "custom").
   * @param {string} target
   * @param {string | null | undefined} selector
   * @param {(Document | ShadowRoot)[]} roots
   * @returns {Element[] | {error: object}}
   */
  function candidatesFor(target, selector, roots) {
    /** @type {Element[]} */
    let candidates;
    if (target === 'custom') {
      try {
        candidates = L.resolveAll(String(selector));
      } catch (e) {
        return { error: L.invalidSelector(String(selector), e) };
      }
    } else if (target === 'interactive') {
      candidates = interactiveCandidates(roots);
    } else {
      candidates = L.queryAllDeep('*', { roots }).filter((el) => !SKIP_TAGS.has(el.localName));
    }
    return [...new Set(candidates)];
  }

  /**
   * @typedef {{el: Element, rect: DOMRect, role: string, proxy: Element | null}} Seen
   * @typedef {{el: Element, role: string, by: Element}} Hidden
   */

  /**
   * The candidates a user can see (a hidden toggle through the label drawn in its place), and the
   * controls covered by something else.
   * @param {Element[]} candidates
   * @param {string} target
   * @param {boolean} includeOffscreen
   * @param {{x: number, y: number, width: number, height: number}} viewportRect
   * @param {boolean} [hitTests] false: skip the covered check (reads that want names, not reachability)
   */
  function* visibleOnes(candidates, target, includeOffscreen, viewportRect, hitTests = true) {
    const proxied = new Set();
    /** @type {{seen: Seen, test: boolean}[]} */
    const shown = [];
    for (const el of candidates) {
      // Content first: it is cheaper than layout, and whatever stands in for a hidden control
      // (the only thing seenAs records) belongs to a control, which is content.
      if (target === 'all_visible' && !isContent(el)) continue;
      const seen = seenAs(el, target, proxied);
      if (!seen) continue;
      const onScreen = L.overlapArea(seen.rect, viewportRect) > 0;
      if (!onScreen && !includeOffscreen) continue;
      shown.push({ seen, test: onScreen && hitTests });
    }
    if (hitTests) yield; // hit tests are the long part on a grid of positioned cells
    const cover = hitTests ? covers(shown, proxied) : new Map();
    /** @type {Seen[]} */
    const kept = [];
    /** @type {Hidden[]} */
    const hidden = [];
    for (const { seen } of shown) {
      const by = cover.get(seen);
      if (by === undefined || by === null) kept.push(seen);
      else if (by && (target !== 'all_visible' || L.isInteractive(seen.el))) hidden.push({ el: seen.el, role: seen.role, by });
    }
    // A label that stands in for its hidden control is not listed again as a text or pointer target.
    return { kept: withoutRows(kept.filter((k) => !proxied.has(k.el))), hidden };
  }

  /**
   * How a candidate is seen: itself when visible, or through the element drawn for it (a hidden
   * toggle's label, a typing sink's widget); null when neither is visible or the stand-in is taken.
   * @param {Element} el
   * @param {string} target
   * @param {Set<Element | null>} proxied stand-ins used so far (added to)
   * @returns {Seen | null}
   */
  function seenAs(el, target, proxied) {
    const rect = el.getBoundingClientRect();
    const sink = typingSink(el, rect);
    if ((sink || hiddenToggle(el, rect)) && target !== 'custom') {
      const p = sink ? drawnAround(el, rect) : proxyOf(el, rect);
      if (!p || proxied.has(p.el)) return null;
      if (p.el) proxied.add(p.el);
      return { el, rect: p.rect, role: L.role(el), proxy: p.el };
    }
    return L.isVisible(el, rect) ? { el, rect, role: L.role(el), proxy: null } : null;
  }

  /**
   * What covers each shown candidate that is hit-tested (null: nothing; false: not tested, it
   * is dropped anyway). Hit tests cost ~0.2 ms each on a grid of positioned cells, so a row
   * holding a listed toggle is not tested: withoutRows drops it, the toggle is the control.
   * @param {{seen: Seen, test: boolean}[]} shown
   * @param {Set<Element | null>} proxied
   * @returns {Map<Seen, Element | null | false>}
   */
  function covers(shown, proxied) {
    /** @type {Map<Seen, Element | null | false>} */
    const out = new Map();
    const test = (/** @type {Seen} */ s) => out.set(s, coveredBy(s.proxy || s.el, s.rect, s.proxy ? [s.el] : []));
    for (const { seen, test: t } of shown) if (t && seen.role !== 'row') test(seen);
    const toggles = shown
      .map(({ seen }) => seen)
      .filter((s) => TOGGLES.has(s.role) && !out.get(s) && !proxied.has(s.el));
    for (const { seen, test: t } of shown) {
      if (!t || seen.role !== 'row') continue;
      if (toggles.some((k) => L.composedContains(seen.el, k.el))) out.set(seen, false);
      else test(seen);
    }
    return out;
  }

  const TOGGLES = new Set(['checkbox', 'radio', 'switch']);

  /**
   * A grid row holding a selection toggle is not a control of its own: a click on the row's
   * middle selects nothing, the toggle does. (A clickable row around other controls stays.)
   * @template {{el: Element, role: string}} K
   * @param {K[]} kept
   * @returns {K[]}
   */
  function withoutRows(kept) {
    const rows = kept.filter((k) => k.role === 'row');
    if (!rows.length) return kept;
    const toggles = kept.filter((k) => TOGGLES.has(k.role));
    const holding = new Set(rows.filter((r) => toggles.some((k) => L.composedContains(r.el, k.el))));
    return kept.filter((k) => !holding.has(k));
  }

  /**
   * all_visible: text inside a button/link/heading belongs to that element's name, so only the
   * owner is listed; containers without own text only repeat their listed children's text.
   * @template {{el: Element, role: string, proxy: Element | null}} K
   * @param {K[]} kept
   * @returns {K[]}
   */
  function ownersOnly(kept) {
    const owners = new Set(kept.filter((k) => TEXT_OWNER_ROLES.has(k.role) || L.isInteractive(k.el) || k.proxy).map((k) => k.proxy || k.el));
    const listed = new Set(kept.map((k) => k.el));
    return kept.filter((k) => {
      for (let p = L.composedParent(k.el); p; p = L.composedParent(p)) if (owners.has(p)) return false;
      if (!hasOwnText(k.el) && !owners.has(k.el) && k.role !== 'img') {
        const t = /** @type {HTMLElement} */ (k.el).innerText || '';
        if (!t.trim()) return true; // e.g. an empty landmark with a role: keep, it has no children listed
        let childListed = false;
        for (const d of k.el.querySelectorAll('*')) if (listed.has(d)) { childListed = true; break; }
        if (childListed) return false;
      }
      return true;
    });
  }

  /**
   * What the host learns of one listed element: names, selectors, locator, state.
   * @param {{el: Element, rect: DOMRect, role: string, proxy: Element | null}} k
   * @param {object} bounds the element's rect, rounded
   * @param {{x: number, y: number, width: number, height: number}} viewportRect
   */
  function describe({ el, rect, role, proxy }, bounds, viewportRect) {
    const name = L.accessibleName(el, role);
    const sel = L.selectors(el);
    /** @type {Record<string, any>} */
    const out = {
      // `selector` is plain CSS whenever one exists; shadow paths live in shadow_selector.
      selector: sel.selector,
      shadow_selector: sel.shadow_selector,
      locator: L.locator(el, { role, name, selector: sel.selector }),
      tag: el.localName,
      role,
      name,
      text: L.visibleText(proxy || el),
      bounds,
      interactionHint: L.interactionHint(el, role),
      in_viewport: L.overlapArea(rect, viewportRect) > 0.5 * rect.width * rect.height,
      state: L.states(el, role),
    };
    if (el.localName === 'input') out.type = /** @type {HTMLInputElement} */ (el).type;
    if (proxy) out.proxy = L.uniqueSelector(proxy);
    return out;
  }

  /**
   * With `frames`, the answer also says where this frame sits (`frame_path`) and where its own
   * iframes are (`child_frames`), so lib/frames.js can join every frame's elements into one list.
   * With `text_rects`, it also lists the line boxes of the visible text (for badge placement).
   * With `after_frame`, it waits for a concurrent capture's frame first (see afterCapture).
   * With `known` (tokens of answers the caller holds), an answer equal to one of them is
   * `{same: token}` (page/sent.js).
   * @param {{target?: string, selector?: string | null, max?: number, include_offscreen?: boolean, frames?: boolean, text_rects?: boolean, covered?: boolean, after_frame?: boolean, known?: string[]}} args
   */
  L.discover = (args) => (args.after_frame ? afterCapture().then(() => discoverBeside(args)) : discoverNow(args));

  // After a capture's probe, when its frame has left the page's main thread: the capture's
  // request reaches Chrome about a millisecond after the probe's answer, and Chrome commits the
  // frame for its new surface at once. Started sooner, the read holds that frame back (2 ms: the
  // dashboard's capture 22 vs 17 ms); later, it holds back the probe after the pixels instead
  // (12 ms: the grid's annotated observe 49 vs 45 ms; 4 and 6 ms measured alike). Not
  // requestAnimationFrame: a frame the page asks for itself is one the capture's frame has to
  // wait behind (an annotated capture of the grid: 44 vs 22 ms).
  const AFTER_PROBE_MS = 5;

  /**
   * Resolves once a capture asked for at the same time is past its frame: AFTER_PROBE_MS after the
   * end of its probe (page/probe.js), or at its probe after the pixels if that comes first. Chrome's capture
   * needs this thread for its frame. Bounded: a capture that never probes (250 ms). The read then
   * runs in a task of its own, so a probe's answer does not wait for it.
   * @returns {Promise<void>}
   */
  function afterCapture() {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        setTimeout(resolve, 0);
      };
      let timer = setTimeout(done, 250);
      const probed = () => {
        clearTimeout(timer);
        timer = setTimeout(done, AFTER_PROBE_MS);
        L.whenCaptureDone(done);
      };
      if (!L.whenCaptureProbed) done();
      else if (L.captureInFlight) probed();
      else L.whenCaptureProbed(probed);
    });
  }

  /** @param {{target?: string, selector?: string | null, max?: number, include_offscreen?: boolean, frames?: boolean, text_rects?: boolean, covered?: boolean}} args */
  function discoverNow(args) {
    const target = args.target || 'interactive';
    // Closed shadow roots too: chrome.dom.openOrClosedShadowRoot lets the extension see them.
    const roots = L.allRoots(document, true);
    // Names and roles are read once per element for this call (the page cannot change during
    // it); selectors are kept until the DOM changes (page/memo.js).
    return L.withDomMemo(roots, () => atOnce(discoverIn(args, target, roots)));
  }

  /**
   * A read's steps run to the end in this task, and its answer.
   * @template T
   * @param {Generator<undefined, T, undefined>} steps
   * @returns {T}
   */
  function atOnce(steps) {
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
    }
  }

  /** The viewport as a rect (CSS px) for overlap tests. */
  const viewportNow = () => ({ x: 0, y: 0, width: window.innerWidth, height: window.innerHeight });

  /** Resolves in a task of its own (a message, not a timer: no clamping when nested). */
  const nextTask = () => new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve(undefined);
    channel.port2.postMessage(null);
  });

  /**
   * The read beside a capture, a step per task: the capture's probe after the pixels (its reply
   * waits for it) runs between two steps instead of after the whole read (the grid's read is
   * 10-15 ms). Each step has its own memo: the page may change between them, as it may while a
   * capture's pixels are taken.
   * @param {{target?: string, selector?: string | null, max?: number, include_offscreen?: boolean, frames?: boolean, text_rects?: boolean, covered?: boolean}} args
   */
  async function discoverBeside(args) {
    const target = args.target || 'interactive';
    // The roots the capture's probe just walked, while that capture is in flight.
    const roots = L.captureRoots || L.allRoots(document, true);
    const steps = discoverIn(args, target, roots);
    for (;;) {
      const step = L.withDomMemo(roots, () => steps.next());
      if (step.done) return step.value;
      await nextTask();
    }
  }

  /**
   * @typedef {{args: DiscoverArgs, target: string, roots: (Document | ShadowRoot)[]}} Ask
   * @typedef {{target?: string, selector?: string | null, max?: number, include_offscreen?: boolean, frames?: boolean, text_rects?: boolean, covered?: boolean, known?: string[]}} DiscoverArgs
   * @typedef {{ordered: {k: Seen, bounds: object}[], hidden: Hidden[], texts: object[] | null, info: Record<string, any>, placed: [Element, DOMRect][], described: Record<string, any>[]}} Geometry
   *   `described`: what the host learns of the first ones in `ordered`, filled as they are asked for
   */

  /**
   * @param {DiscoverArgs} args
   * @param {string} target
   * @param {(Document | ShadowRoot)[]} roots
   */
  function* discoverIn(args, target, roots) {
    const max = args.max || 50;
    const viewport = viewportNow();
    const read = yield* geometry({ args, target, roots }, viewport);
    if (!('ordered' in read)) return read;
    const { ordered, hidden, texts, info, reused } = read;
    const elements = describeFirst(read, max, viewport);
    const answer = {
      ...L.pageHeader(),
      headings: info.headings || [],
      forms: info.forms || 0,
      interactive_count: info.interactive_count || 0,
      elements,
      total_found: ordered.length,
      hidden: hidden.slice(0, 20).map(({ el, role, by }) => ({
        selector: L.uniqueSelector(el),
        role,
        name: L.accessibleName(el, role),
        hidden_by: L.uniqueSelector(by),
      })),
      notes: crowding(elements.map((e) => e.bounds), max, ordered.length),
      ...(texts ? { text_rects: texts } : {}),
      ...(args.frames ? { frame_path: L.framePath(), child_frames: L.childFrames(roots) } : {}),
    };
    const kind = JSON.stringify([target, args.selector ?? null, max, !!args.include_offscreen, args.covered !== false,
      !!args.text_rects, !!args.frames]);
    return { ...L.sameOrNew(kind, answer, args.known), reused };
  }

  /**
   * What the host learns of the first `max` elements of a read. Names, selectors and locators
   * depend on the DOM and its style alone: described once per read, kept with it. States are
   * read afresh every time: a property (`checked`, focus) may change with no mutation or event
   * to say so.
   * @param {Geometry} read
   * @param {number} max
   * @param {{x: number, y: number, width: number, height: number}} viewport
   */
  function describeFirst({ ordered, described }, max, viewport) {
    return ordered.slice(0, max).map(({ k, bounds }, i) => {
      const known = described[i];
      return known ? { ...known, state: L.states(k.el, k.role) } : (described[i] = describe(k, bounds, viewport));
    });
  }

  /** @type {Map<string, {mark: string, read: Geometry}>} the last reads, by what they asked */
  const reads = new Map();

  /**
   * Where the elements asked for are, what covers them and where the text is: the last read of
   * the same question while the page's mark (page/unchanged.js) holds and every element it
   * looked at is still where it was; else read now, a step per yield.
   * @param {Ask} ask
   * @param {{x: number, y: number, width: number, height: number}} viewportRect
   * @returns {Generator<undefined, (Geometry & {reused: boolean}) | {error: object}, undefined>}
   */
  function* geometry(ask, viewportRect, preread = false) {
    const { args, target, roots } = ask;
    const key = JSON.stringify([target, args.selector ?? null, !!args.include_offscreen, args.covered !== false, !!args.text_rects]);
    if (!preread) lookedAt(key, ask);
    const mark = L.pageMark(roots);
    for (const [k, v] of reads) if (v.mark !== mark) reads.delete(k);
    const last = reads.get(key);
    if (last && stillPlaced(last.read)) return { ...last.read, reused: true };
    const read = yield* readGeometry(ask, viewportRect);
    if (!('ordered' in read)) return read;
    // Kept only when nothing was seen to change while it was read (steps run in separate tasks).
    if (mark !== null && L.pageMark(roots) === mark) reads.set(key, { mark, read });
    return { ...read, reused: false };
  }

  // An assistant looks, acts, takes a turn to think (a second or more) and looks again. Once the
  // page changes after a look and then stays quiet (no change seen for PREREAD_QUIET_MS, watched
  // from PREREAD_QUIET_MS after the change), its geometry is read again while the page is idle,
  // so the next look can reuse it. Per look, a page is read again at most PREREADS_PER_LOOK times
  // and watched for quiet at most QUIET_CHECKS times.
  const PREREAD_QUIET_MS = 100;
  const PREREADS_PER_LOOK = 2;
  const QUIET_CHECKS = 20;
  /** @type {Map<string, {args: DiscoverArgs, target: string}>} the questions of the last looks */
  const asked = new Map();
  let prereads = 0;
  let quietChecks = 0;
  let quietTimer = 0;
  let idleCall = 0;

  /** @param {string} key @param {Ask} ask */
  function lookedAt(key, { args, target }) {
    asked.delete(key);
    asked.set(key, { args, target });
    if (asked.size > 2) asked.delete(asked.keys().next().value);
    prereads = PREREADS_PER_LOOK;
    quietChecks = QUIET_CHECKS;
    L.onPageChange(changedSinceLook);
  }

  /** The page changed: wait for it to be quiet again (a read waiting for idle is dropped). */
  function changedSinceLook() {
    clearTimeout(quietTimer);
    cancelIdleCallback(idleCall);
    if (prereads > 0 && quietChecks-- > 0) quietTimer = setTimeout(watchQuiet, PREREAD_QUIET_MS);
  }

  /**
   * Watch again: a change in the next PREREAD_QUIET_MS restarts the wait; none, and the page is
   * read when idle.
   */
  function watchQuiet() {
    L.pageMark(L.allRoots(document, true));
    L.onPageChange(changedSinceLook);
    quietTimer = setTimeout(() => {
      idleCall = requestIdleCallback(preread, { timeout: 1000 });
    }, PREREAD_QUIET_MS);
  }

  function preread() {
    if (L.captureInFlight) {
      changedSinceLook(); // Chrome's capture needs this thread for its frame
      return;
    }
    prereads--;
    readAsked();
  }

  /**
   * An action's effects are painted and it waits to see whether a navigation starts
   * (lib/input.js): the page reads what the last looks asked meanwhile, so a look right after
   * the action reuses that read while nothing changes, instead of reading beside its capture.
   * Answers how many questions were read.
   */
  L.readAhead = () => {
    if (L.captureInFlight || !asked.size) return 0;
    readAsked();
    return asked.size;
  };

  /** Read now what the last looks asked, described as they were, for the next look to reuse. */
  function readAsked() {
    const roots = L.allRoots(document, true);
    const viewport = viewportNow();
    L.withDomMemo(roots, () => {
      for (const { args, target } of asked.values()) {
        const read = atOnce(geometry({ args, target, roots }, viewport, true));
        if ('ordered' in read) describeFirst(read, args.max || 50, viewport);
      }
    });
  }

  /**
   * Every candidate and stand-in is where the read found it. Every candidate, not only the listed
   * ones: one clipped or out of view comes into it when a box scrolls, before the scroll's event.
   * @param {Geometry} read
   */
  function stillPlaced({ placed }) {
    return placed.every(([el, was]) => {
      if (!el.isConnected) return false;
      const r = el.getBoundingClientRect();
      return r.x === was.x && r.y === was.y && r.width === was.width && r.height === was.height;
    });
  }

  /**
   * @param {Ask} ask
   * @param {{x: number, y: number, width: number, height: number}} viewportRect
   * @returns {Generator<undefined, Geometry | {error: object}, undefined>}
   */
  function* readGeometry({ args, target, roots }, viewportRect) {
    const candidates = candidatesFor(target, args.selector, roots);
    if (!Array.isArray(candidates)) return candidates;
    /** @type {[Element, DOMRect][]} */
    const placed = candidates.map((el) => [el, el.getBoundingClientRect()]);
    const found = yield* visibleOnes(candidates, target, !!args.include_offscreen, viewportRect, args.covered !== false);
    yield;
    const kept = target === 'all_visible' ? ownersOnly(found.kept) : found.kept;
    // Order on geometry first: names and unique selectors cost DOM queries, so they are computed
    // only for the `max` elements returned.
    const ordered = L.readingOrder(kept.map((k) => ({ k, bounds: L.rect(k.rect) })));
    const info = L.pageInfo ? L.pageInfo() : {};
    const texts = args.text_rects ? (yield, textRects(roots)) : null;
    for (const { k } of ordered) if (k.proxy) placed.push([k.proxy, k.rect]);
    return { ordered, hidden: found.hidden, texts, info, placed, described: [] };
  }
})();
