// Stable, unique CSS selectors and Playwright locators for elements, and the reverse (resolve a
// selector to elements). Elements inside shadow roots have no document CSS selector: they get a
// `shadow_selector` "host-selector >>> inner-selector" (one ">>>" per shadow boundary, as
// Puppeteer's pierce syntax) that resolveAll understands, and a Playwright locator.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  /** Identifier escaping (ids, tag names). @param {string} v */
  const esc = (v) => CSS.escape(v);
  /** Quoted attribute value: only quotes, backslashes and line breaks need escaping. @param {string} v */
  const str = (v) => '"' + v.replace(/["\\]/g, '\\$&').replace(/\r?\n|\r|\f/g, '\\a ') + '"';

  /**
   * @param {Document | ShadowRoot} root
   * @param {string} sel
   * @param {Element} el
   */
  function matchesOnly(root, sel, el) {
    return onlyMatch(root, sel) === el;
  }

  /**
   * The one element `sel` matches in `root`, or null (none, several, invalid CSS). Selectors
   * repeat across the elements of one discover (a row's anchor under each of its cells).
   * @param {Document | ShadowRoot} root
   * @param {string} sel
   * @returns {Element | null}
   */
  function onlyMatch(root, sel) {
    const seen = L.rememberDom('onlyMatch', root, () => new Map());
    let only = seen.get(sel);
    if (only !== undefined) return only;
    try {
      const found = root.querySelectorAll(sel);
      only = found.length === 1 ? found[0] : null;
    } catch {
      only = null;
    }
    seen.set(sel, only);
    return only;
  }

  /**
   * Ids that frameworks generate (React useId ":r1:", Radix "radix-:r2:", Headless UI, Ember,
   * MUI, long hex/digit runs, UUIDs): they change between renders or builds, so never anchors.
   * @param {string} id
   */
  L.generatedId = (id) =>
    /[:]/.test(id) ||
    /^(radix-|headlessui-|ember\d|ext-gen|mui-\d|react-select-\d|rc_|__)/i.test(id) ||
    /\d{4,}/.test(id) ||
    /^[a-z]{1,4}-\d+-/i.test(id) || // a library's instance counter ("ag-80-input"): grows as rows re-render
    /(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}/i.test(id) ||
    /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id) ||
    id.split(/[-_.]/).some(randomToken);

  /**
   * A run of letters and digits mixed as a random string is (Math.random().toString(36),
   * nanoid): ≥ 5 characters switching between letters and digits at least three times ("l3b99l",
   * "x7k2p9"), or twice with ≥ 2 of each ("kx33ab"); or 8 and more hex digits. A word with a
   * number ("h264", "col12", "mp3player", "utf8") is not random, and a random run of letters
   * only looks like a word and is not caught.
   * @param {string} t
   */
  function randomToken(t) {
    if (t.length < 5 || !/^[a-z0-9]+$/i.test(t)) return false;
    if (/^[0-9a-f]{8,}$/i.test(t)) return true; // a hash or UUID slice, even one that drew no digit
    const runs = (t.match(/[a-z]+|\d+/gi) || []).length;
    const digits = t.replace(/\D/g, '').length;
    return runs >= 4 || (runs >= 3 && digits >= 2 && t.length - digits >= 2);
  }

  const TEST_ATTRS = ['data-testid', 'data-test-id', 'data-test', 'data-cy', 'data-qa'];
  /** Attributes that name an element for people or tests, most stable first. */
  const NAMING_ATTRS = ['name', 'aria-label', 'placeholder', 'title', 'alt', 'for', 'type', 'href', 'role', 'value',
    // Where a grid puts it: its column's id and the row's and column's place (not the data).
    'col-id', 'aria-rowindex', 'aria-colindex'];
  /** Inputs whose value is their visible caption, not data: the only ones named by `value`. */
  const CAPTION_INPUTS = new Set(['submit', 'button', 'reset']);

  /**
   * Whether `el`'s value attribute may name it. A field's value is data, and a page may mirror
   * what is typed into the attribute (or render a password into it): never in a selector.
   * @param {Element} el
   */
  const valueIsCaption = (el) =>
    el.localName === 'input' && CAPTION_INPUTS.has((el.getAttribute('type') || '').trim().toLowerCase());

  /** Stable, self-describing selectors for `el` alone (uniqueness not checked). @param {Element} el */
  function ownCandidates(el) {
    return L.rememberDom('ownCandidates', el, () => candidatesOf(el));
  }

  // A caption that announces the element's own state ("Toggle row selection (unchecked)",
  // "Details (expanded)") changes with it: a selector built on it stops matching after the first click.
  const STATE_WORDS = /\b(?:un)?(?:checked|selected)\b|\b(?:expanded|collapsed|pressed)\b/i;
  const STATE_ATTRS = ['aria-checked', 'aria-pressed', 'aria-expanded', 'aria-selected'];

  /**
   * Whether `value` (an aria-label or title of `el`) names a state `el` can toggle.
   * @param {Element} el
   * @param {string} value
   */
  L.statesItself = (el, value) => STATE_WORDS.test(value) &&
    ((el.localName === 'input' && /^(checkbox|radio)$/i.test(el.getAttribute('type') || '')) ||
      STATE_ATTRS.some((a) => el.hasAttribute(a)));

  /** @param {Element} el */
  function candidatesOf(el) {
    const tag = esc(el.localName);
    /** @type {string[]} */
    const out = [];
    for (const a of TEST_ATTRS) {
      const v = el.getAttribute(a);
      if (v) out.push(`[${a}=${str(v)}]`);
    }
    if (el.id && !L.generatedId(el.id)) out.push(`#${esc(el.id)}`);
    for (const a of NAMING_ATTRS) {
      const v = el.getAttribute(a);
      if (v == null || v === '' || v.length > 80 || (a === 'href' && /^javascript:/i.test(v))) continue;
      if ((a === 'aria-label' || a === 'title') && L.statesItself(el, v)) continue;
      if (a === 'value' && !valueIsCaption(el)) continue;
      out.push(`${tag}[${a}=${str(v)}]`);
    }
    const classes = [...el.classList].filter((c) => /^[a-z][\w-]{1,30}$/i.test(c) && !/\d{3,}|^(css|sc|jsx|svelte)-/.test(c));
    if (classes.length) out.push(`${tag}.${classes.slice(0, 2).map(esc).join('.')}`);
    const name = el.getAttribute('name');
    const type = el.getAttribute('type');
    if (name && type) out.push(`${tag}[type=${str(type)}][name=${str(name)}]`);
    return out;
  }

  /**
   * Positional step "tag:nth-of-type(k)" (k only when needed) of `n` among its siblings.
   * @param {Element} n
   */
  function positional(n) {
    let step = esc(n.localName);
    const parent = n.parentNode;
    if (parent) {
      const same = [...parent.children].filter((c) => c.localName === n.localName);
      if (same.length > 1) step += `:nth-of-type(${same.indexOf(n) + 1})`;
    }
    return step;
  }

  /**
   * Selector unique within `el`'s own root (document or shadow root), or '' when none is found:
   * a stable attribute of the element; else one under the nearest uniquely named ancestor; else
   * a path of positional steps from such an ancestor (or the root).
   * @param {Element} el
   * @param {(sel: string) => boolean} [unique] extra check (e.g. Playwright's piercing CSS)
   */
  function localSelector(el, unique = () => true) {
    const root = /** @type {Document | ShadowRoot} */ (el.getRootNode());
    const ok = (/** @type {string} */ sel) => matchesOnly(root, sel, el) && unique(sel);
    const own = ownCandidates(el);
    for (const c of own) if (ok(c)) return c;
    // Under a named ancestor: "#settings button[aria-label=Close]", then "... > tag:nth-of-type".
    const steps = [positional(el)];
    for (let n = el.parentElement; n; n = n.parentElement) {
      const anchors = anchorsOf(n, root);
      for (const a of anchors) {
        for (const c of own) if (ok(`${a} ${c}`)) return `${a} ${c}`;
        const path = `${a} > ${steps.join(' > ')}`;
        if (ok(path)) return path;
      }
      steps.unshift(positional(n));
      if (n.parentNode === root) break;
    }
    const full = steps.join(' > ');
    const rooted = root instanceof Document ? `html > ${full.replace(/^html > /, '')}` : full;
    if (ok(full)) return full;
    return ok(rooted) ? rooted : full;
  }

  /**
   * The first two of `n`'s own selectors that name it alone in `root` (cells of one row share it).
   * @param {Element} n
   * @param {Document | ShadowRoot} root
   */
  function anchorsOf(n, root) {
    return L.rememberDom('anchors', n, () => {
      const out = [];
      for (const c of ownCandidates(n)) {
        if (matchesOnly(root, c, n) && out.push(c) === 2) break;
      }
      return out;
    });
  }

  /** Open and closed shadow roots up from `el` (innermost last). @param {Element} el */
  function hosts(el) {
    const out = [];
    for (let root = el.getRootNode(); root instanceof ShadowRoot; root = root.host.getRootNode()) out.unshift(root.host);
    return out;
  }

  /** The element sits inside a closed shadow root (Playwright and page scripts cannot reach it). */
  function inClosedShadow(/** @type {Element} */ el) {
    for (let root = el.getRootNode(); root instanceof ShadowRoot; root = root.host.getRootNode()) {
      if (root.mode === 'closed') return true;
    }
    return false;
  }

  /**
   * `selector`: plain CSS for document.querySelector, '' for elements inside shadow roots (no
   * such CSS exists). `shadow_selector`: "host >>> inner" (one ">>>" per shadow boundary) that our
   * interact/resolveAll understand, for those elements only.
   * @param {Element} el
   * @returns {{selector: string, shadow_selector: string}}
   */
  L.selectors = (el) => L.rememberDom('selectors', el, () => selectorsOf(el));

  /** @param {Element} el */
  function selectorsOf(el) {
    const hs = hosts(el);
    if (!hs.length) return { selector: localSelector(el), shadow_selector: '' };
    return { selector: '', shadow_selector: [...hs.map((h) => localSelector(h)), localSelector(el)].join(' >>> ') };
  }

  /** Back-compatible: the CSS selector, or the ">>>" path inside shadow roots. @param {Element} el */
  L.uniqueSelector = (el) => {
    const s = L.selectors(el);
    return s.selector || s.shadow_selector;
  };

  // ---- Playwright locators, checked unique on this page with Playwright's rules (open shadow
  // roots pierced by CSS, role and label queries over the whole page).

  /** Elements under `scope` (its light subtree and every open shadow root below). @param {Element | Document} scope */
  function deepUnder(scope, /** @type {string} */ sel) {
    const seen = L.rememberDom('deepUnder', scope, () => new Map());
    let found = seen.get(sel);
    if (!found) seen.set(sel, (found = deepQuery(openRootsUnder(scope), sel)));
    return found;
  }

  /** `scope`, its open shadow root and every open shadow root below. @param {Element | Document} scope */
  function openRootsUnder(scope) {
    return L.rememberDom('openRoots', scope, () => {
      /** @type {(Document | Element | ShadowRoot)[]} */
      const roots = [scope];
      if (scope instanceof Element && scope.shadowRoot) roots.push(scope.shadowRoot);
      for (let i = 0; i < roots.length; i++) {
        for (const e of roots[i].querySelectorAll('*')) if (e.shadowRoot) roots.push(e.shadowRoot);
      }
      return roots;
    });
  }

  /** @param {(Document | Element | ShadowRoot)[]} roots @param {string} sel @returns {Element[]} */
  function deepQuery(roots, sel) {
    /** @type {Element[]} */
    const out = [];
    try {
      for (const r of roots) for (const e of r.querySelectorAll(sel)) out.push(e);
    } catch {
      return [];
    }
    return roots.length > 1 ? [...new Set(out)] : out;
  }

  /** Hidden for Playwright's role/label queries: not rendered or aria-hidden. */
  function pwHidden(/** @type {Element} */ el) {
    return L.remember('pwHidden', el, () => pwHiddenNow(el));
  }

  function pwHiddenNow(/** @type {Element} */ el) {
    for (let n = /** @type {Element | null} */ (el); n; n = L.composedParent(n)) {
      if (n.getAttribute('aria-hidden') === 'true') return true;
    }
    return typeof el.checkVisibility === 'function' ? !el.checkVisibility({ visibilityProperty: true }) : false;
  }

  const js = (/** @type {string} */ v) => JSON.stringify(v);
  // Roles where our role matches Playwright's and the name is what a person reads.
  const PW_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem', 'heading']);

  /** Every element on the page (open shadow roots included). */
  const allElements = () => deepUnder(document, '*');

  /** The page's elements of `role`, in document order. @param {string} role */
  function withRole(role) {
    const index = L.remember('roles', document, () => {
      /** @type {Map<string, Element[]>} */
      const byRole = new Map();
      for (const e of allElements()) {
        const r = L.role(e);
        const list = byRole.get(r);
        if (list) list.push(e);
        else byRole.set(r, [e]);
      }
      return byRole;
    });
    return index.get(role) || [];
  }

  /** The page's form fields (what getByLabel looks among), in document order. */
  const fields = () => L.rememberDom('fields', document, () => allElements().filter((e) => /^(input|textarea|select)$/.test(e.localName)));

  /**
   * A Playwright locator string for `el` that matches only it, or '' (closed shadow roots are
   * out of Playwright's reach). getByTestId > getByRole(role, {name}) > getByLabel > locator(css).
   * @param {Element} el
   * @param {{role: string, name: string, selector: string}} info
   */
  L.locator = (el, info) => {
    if (inClosedShadow(el)) return '';
    const testid = el.getAttribute('data-testid');
    if (testid && deepUnder(document, `[data-testid=${str(testid)}]`).length === 1) return `getByTestId(${js(testid)})`;
    const { role, name } = info;
    const isPassword = el.localName === 'input' && /** @type {HTMLInputElement} */ (el).type === 'password';
    // Implicit roles only from native elements Playwright maps the same way (not contenteditable).
    const roleKnown = el.hasAttribute('role') || /^(button|a|input|select|textarea|h[1-6]|option)$/.test(el.localName);
    if (name && PW_ROLES.has(role) && roleKnown && !isPassword) {
      const same = withRole(role).filter((e) => !pwHidden(e) && L.accessibleName(e, role) === name);
      if (same.length === 1 && same[0] === el) return `getByRole(${js(role)}, { name: ${js(name)}, exact: true })`;
    }
    if (name && /^(input|textarea|select)$/.test(el.localName)) {
      const same = fields().filter((e) => !pwHidden(e) && L.accessibleName(e) === name);
      if (same.length === 1 && same[0] === el && (/** @type {any} */ (el).labels?.length || el.hasAttribute('aria-label'))) {
        return `getByLabel(${js(name)}, { exact: true })`;
      }
    }
    const bySelector = L.rememberDom('cssLocator', el, () => new Map());
    let css = bySelector.get(info.selector);
    if (css === undefined) bySelector.set(info.selector, (css = cssLocator(el, info.selector)));
    return css;
  };

  /**
   * A `locator(css)` (or host-chained) Playwright locator for `el`, or ''. Playwright's CSS
   * pierces open shadow roots, so uniqueness is counted across them.
   * @param {Element} el
   * @param {string} selector its plain CSS selector ('' inside shadow roots)
   */
  function cssLocator(el, selector) {
    const deepUnique = (/** @type {string} */ sel) => {
      const found = deepUnder(document, sel);
      return found.length === 1 && found[0] === el;
    };
    const hs = hosts(el);
    if (!hs.length) {
      const css = deepUnique(selector) ? selector : localSelector(el, deepUnique);
      return deepUnique(css) ? `locator(${js(css)})` : '';
    }
    const inner = localSelector(el, deepUnique);
    if (deepUnique(inner)) return `locator(${js(inner)})`;
    // Chain from the host: locator(host).locator(inner) searches the host's light and shadow trees.
    const host = hs[hs.length - 1];
    const hostCss = localSelector(host, (sel) => deepUnder(document, sel).length === 1);
    const found = deepUnder(host, localSelector(el));
    if (deepUnder(document, hostCss).length === 1 && found.length === 1 && found[0] === el) {
      return `locator(${js(hostCss)}).locator(${js(localSelector(el))})`;
    }
    return '';
  }

  /**
   * Elements matching `selector` (">>>" pierces shadow roots, closed ones too where allowed).
   * Throws a SyntaxError for invalid CSS.
   * @param {string} selector
   * @returns {Element[]}
   */
  L.resolveAll = (selector) => {
    const parts = selector.split('>>>').map((s) => s.trim());
    if (parts.some((p) => !p)) throw new SyntaxError(`'${selector}' is not a valid selector`);
    /** @type {(Document | ShadowRoot)[]} */
    let scopes = [document];
    /** @type {Element[]} */
    let found = [];
    parts.forEach((part, i) => {
      found = scopes.flatMap((s) => [...s.querySelectorAll(part)]);
      if (i < parts.length - 1) {
        scopes = /** @type {ShadowRoot[]} */ (found.map((el) => L.shadowRootOf(el, true)).filter(Boolean));
      }
    });
    return found;
  };

  // ---- Frames. A frame is named by its path: its index in each ancestor's `window.frames`, top
  // first. A cross-origin frame may read `parent`, `length` and `parent[i]` of its ancestors (and
  // compare windows), so every frame knows its own path without help, and a parent knows each
  // iframe's index: the service worker joins the two (lib/frames.js).

  const FRAME_TAGS = new Set(['iframe', 'frame']);
  L.isFrameElement = (/** @type {Element} */ el) => FRAME_TAGS.has(el.localName);

  /** This frame's path from the top frame ([] in the top frame). @returns {number[]} */
  L.framePath = () => {
    const path = [];
    let w = /** @type {Window} */ (window);
    for (let depth = 0; w !== w.parent && depth < 16; depth++) {
      const p = w.parent;
      let idx = -1;
      for (let i = 0; i < p.length; i++) {
        if (p[i] === w) {
          idx = i;
          break;
        }
      }
      path.unshift(idx);
      w = p;
    }
    return path;
  };

  /** Index of an iframe element's window in this window's frames, or -1. @param {Element} el */
  L.frameIndexOf = (el) => {
    const win = /** @type {HTMLIFrameElement} */ (el).contentWindow;
    if (!win) return -1;
    for (let i = 0; i < window.length; i++) if (window[i] === win) return i;
    return -1;
  };

  /** The iframe's content box (where its document's viewport sits), viewport CSS px. @param {Element} el */
  L.frameBox = (el) => {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    const px = (/** @type {string} */ v) => parseFloat(v) || 0;
    const h = /** @type {HTMLElement} */ (el);
    return L.rect({
      x: r.x + h.clientLeft + px(cs.paddingLeft),
      y: r.y + h.clientTop + px(cs.paddingTop),
      width: Math.max(0, h.clientWidth - px(cs.paddingLeft) - px(cs.paddingRight)),
      height: Math.max(0, h.clientHeight - px(cs.paddingTop) - px(cs.paddingBottom)),
    });
  };

  /**
   * Visible iframes of this document (open and closed shadow roots too): where their viewport
   * sits, how to name them, and whatever covers them (a modal over a payment iframe).
   * @param {(Document | ShadowRoot)[]} [roots]
   */
  L.childFrames = (roots) => {
    const out = [];
    for (const el of L.queryAllDeep('iframe, frame', { roots: roots || L.allRoots(document, true) })) {
      const rect = el.getBoundingClientRect();
      if (!L.isVisible(el, rect)) continue;
      const index = L.frameIndexOf(el);
      if (index < 0) continue;
      const sel = L.selectors(el);
      const box = L.frameBox(el);
      // What is on top at the middle of the visible part of the frame (null: the frame itself).
      const x0 = Math.max(box.x, 0);
      const x1 = Math.min(box.x + box.width, window.innerWidth);
      const y0 = Math.max(box.y, 0);
      const y1 = Math.min(box.y + box.height, window.innerHeight);
      let covered_by = null;
      if (x1 - x0 >= 1 && y1 - y0 >= 1) {
        const hit = L.deepElementFromPoint((x0 + x1) / 2, (y0 + y1) / 2);
        if (hit && !L.composedContains(el, hit)) covered_by = L.uniqueSelector(hit);
      }
      out.push({ index, box, selector: sel.selector || sel.shadow_selector, css: sel.selector, covered_by });
    }
    return out;
  };

  /**
   * Run `L[name](args)` only in the frame at `path` (every frame is asked; the others answer
   * null), so a call can be routed to a cross-origin frame without knowing its extension frameId.
   * @param {{path: number[], name: string, args: any}} req
   */
  L.inFrame = (req) => {
    const here = L.framePath();
    if (here.length !== req.path.length || here.some((v, i) => v !== req.path[i])) return null;
    const value = L[req.name](req.args);
    if (value && typeof value.then === 'function') return value.then((v) => ({ here: true, value: v }));
    return { here: true, value };
  };

  /**
   * Resolve a ">>>" path in this document. When a step lands on an iframe and steps remain, the
   * rest belongs to that frame's document: answer where to go ({enter}) instead of an element.
   * @param {string} selector
   * @returns {{element?: Element, enter?: {el: Element, rest: string}, error?: {code: string, message: string}}}
   */
  L.resolvePath = (selector) => {
    const parts = selector.split('>>>').map((s) => s.trim());
    if (parts.some((p) => !p)) return { error: L.invalidSelector(selector, new SyntaxError('empty step around >>>')) };
    /** @type {(Document | ShadowRoot)[]} */
    let scopes = [document];
    for (let i = 0; i < parts.length; i++) {
      let found;
      try {
        found = scopes.flatMap((s) => [...s.querySelectorAll(parts[i])]);
      } catch (e) {
        return { error: L.invalidSelector(selector, e) };
      }
      if (!found.length) return { error: { code: 'not_found', message: `No element matches selector "${selector}".` } };
      if (i === parts.length - 1) return { element: found[0] };
      const shadows = /** @type {ShadowRoot[]} */ (found.map((el) => L.shadowRootOf(el, true)).filter(Boolean));
      const frame = found.find(L.isFrameElement);
      if (!shadows.length && frame) return { enter: { el: frame, rest: parts.slice(i + 1).join(' >>> ') } };
      scopes = shadows;
    }
    return { error: { code: 'not_found', message: `No element matches selector "${selector}".` } };
  };

  /**
   * Outcome of resolving a user selector to its first match, as plain data.
   * @param {string} selector
   * @returns {{element?: Element, error?: {code: string, message: string}}}
   */
  L.resolveOne = (selector) => {
    let found;
    try {
      found = L.resolveAll(selector);
    } catch (e) {
      return { error: L.invalidSelector(selector, e) };
    }
    if (!found.length) return { error: { code: 'not_found', message: `No element matches selector "${selector}".` } };
    return { element: found[0] };
  };

  /**
   * @param {string} selector
   * @param {unknown} err
   */
  L.invalidSelector = (selector, err) => ({
    code: 'invalid_selector',
    message:
      `Invalid CSS selector "${selector}"` +
      (err instanceof Error && err.message ? ` (${err.message.replace(/^.*?: /, '')})` : '') +
      '. Use CSS syntax, e.g. "#login", ".btn.primary", "button[type=submit]", "form > input:nth-of-type(2)".',
  });
})();
