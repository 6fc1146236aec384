// Stable, unique CSS selectors for elements, and the reverse (resolve a selector to one element).
// Elements inside shadow roots get "host-selector >>> inner-selector" (one ">>>" per shadow
// boundary, as Puppeteer's pierce syntax); resolveSelector understands the same form.
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
    try {
      const found = root.querySelectorAll(sel);
      return found.length === 1 && found[0] === el;
    } catch {
      return false;
    }
  }

  /**
   * Positional path from the root, each step "tag:nth-of-type(k)" (k only when needed); it stops
   * early at an ancestor that has a unique id.
   * @param {Element} el
   * @param {Document | ShadowRoot} root
   */
  function cssPath(el, root) {
    const steps = [];
    for (let n = /** @type {Element | null} */ (el); n && n.parentNode; n = n.parentElement) {
      if (n !== el && n.id && matchesOnly(root, `#${esc(n.id)}`, n)) {
        steps.unshift(`#${esc(n.id)}`);
        break;
      }
      let step = esc(n.localName);
      const parent = n.parentNode;
      if (parent) {
        const same = [...parent.children].filter((c) => c.localName === n.localName);
        if (same.length > 1) step += `:nth-of-type(${same.indexOf(n) + 1})`;
      }
      steps.unshift(step);
      if (n.parentNode === root) break;
    }
    return steps.join(' > ');
  }

  /**
   * Selector unique within `el`'s own root (document or shadow root).
   * Priority: [data-testid] > #id > tag[aria-label] > tag[name] (form fields) > CSS path.
   * @param {Element} el
   */
  function localSelector(el) {
    const root = /** @type {Document | ShadowRoot} */ (el.getRootNode());
    const tag = esc(el.localName);
    /** @type {string[]} */
    const candidates = [];
    const testid = el.getAttribute('data-testid');
    if (testid) candidates.push(`[data-testid=${str(testid)}]`, `${tag}[data-testid=${str(testid)}]`);
    if (el.id) candidates.push(`#${esc(el.id)}`);
    const aria = el.getAttribute('aria-label');
    if (aria) candidates.push(`${tag}[aria-label=${str(aria)}]`);
    const name = el.getAttribute('name');
    if (name && /^(input|select|textarea|button)$/.test(el.localName)) candidates.push(`${tag}[name=${str(name)}]`);
    for (const c of candidates) if (matchesOnly(root, c, el)) return c;
    return cssPath(el, root);
  }

  /** @param {Element} el */
  L.uniqueSelector = (el) => {
    const parts = [localSelector(el)];
    for (let root = el.getRootNode(); root instanceof ShadowRoot; root = root.host.getRootNode()) {
      parts.unshift(localSelector(root.host));
    }
    return parts.join(' >>> ');
  };

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
