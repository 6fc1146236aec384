// Once secret, always secret. Decides which fields are secrets from the ONE shared rule list
// (extension/secret-rules.json: input types, autocomplete tokens, CSS properties) and remembers
// every field that ever matched, for the life of the document: a password box switched to
// type=text by a "show password" toggle stays masked and redacted.
//
// Runs in the ISOLATED world of every frame, as a document_start content script (so the type
// changes a page makes before any capture are seen) and in the page library chrome.scripting
// injects. The rules come from the service worker: with every page-library call (lib/page.js
// passes them) and, for content scripts, by one message at start. Until they arrive every text
// field counts as secret (fail closed).
(() => {
  const L = /** @type {any} */ (globalThis.__shotbridge = /** @type {any} */ (globalThis).__shotbridge || {});
  if (L.secrets) return;

  /** @typedef {{input_types: string[], autocomplete: string[], css_properties: string[]}} SecretRules */

  /** @type {SecretRules | null} */
  let rules = null;
  /** Fields that were a secret at some moment: they stay one. */
  const ever = new WeakSet();
  /** Attribute values a field had before the page changed them (type, autocomplete). */
  /** @type {WeakMap<Element, {type: Set<string>, autocomplete: Set<string>}>} */
  const history = new WeakMap();
  /** Roots already observed (the document, shadow roots met by a probe). */
  const watched = new WeakSet();
  const FIELDS = 'input, textarea, select, [data-shotbridge-mask]';

  /** @param {Element} el */
  const isField = (el) => el.localName === 'input' || el.localName === 'textarea' || el.localName === 'select';

  /** @param {string} v */
  const tokens = (v) => String(v || '').toLowerCase().split(/\s+/).filter(Boolean);

  /** @param {Element} el @param {string} attr @param {string | null} old */
  function remember(el, attr, old) {
    if (old === null || (attr !== 'type' && attr !== 'autocomplete')) return;
    let h = history.get(el);
    if (!h) history.set(el, (h = { type: new Set(), autocomplete: new Set() }));
    h[attr].add(old.toLowerCase());
  }

  /** @param {SecretRules} r @param {string} type @param {string} autocomplete */
  function attrsSecret(r, type, autocomplete) {
    if (type && r.input_types.includes(type)) return true;
    return tokens(autocomplete).some((t) => r.autocomplete.includes(t));
  }

  /** @param {SecretRules} r @param {Element} el */
  function styleSecret(r, el) {
    if (!r.css_properties.length) return false;
    const view = el.ownerDocument.defaultView;
    if (!view) return false;
    const cs = view.getComputedStyle(el);
    return r.css_properties.some((p) => {
      const v = cs.getPropertyValue(p).trim();
      return v !== '' && v !== 'none' && v !== 'normal';
    });
  }

  /**
   * Whether `el` is (or ever was) a secret. Without rules yet, every form field is (fail closed),
   * but it is not remembered as one.
   * @param {Element} el
   */
  function isSecret(el) {
    if (ever.has(el)) return true;
    if (el.hasAttribute('data-shotbridge-mask')) {
      ever.add(el);
      return true;
    }
    if (!isField(el)) return false;
    if (!rules) return true;
    const type = el.localName === 'input' ? (el.getAttribute('type') || '').toLowerCase() : '';
    const h = history.get(el);
    const now = attrsSecret(rules, type, el.getAttribute('autocomplete') || '') ||
      (!!h && ([...h.type].some((t) => rules.input_types.includes(t)) ||
        [...h.autocomplete].some((a) => attrsSecret(/** @type {SecretRules} */ (rules), '', a)))) ||
      (el.localName !== 'select' && styleSecret(rules, el));
    if (now) ever.add(el);
    return now;
  }

  /** @param {Node} root a document or shadow root to watch for type/autocomplete changes */
  function watch(root) {
    if (watched.has(root)) return;
    watched.add(root);
    new MutationObserver((records) => {
      for (const m of records) {
        const el = /** @type {Element} */ (m.target);
        if (!(el instanceof Element) || !isField(el)) continue;
        remember(el, /** @type {string} */ (m.attributeName), m.oldValue);
        // A style or class change may just have turned -webkit-text-security off: look now too.
        if (rules) isSecret(el);
      }
    }).observe(root, {
      subtree: true,
      attributes: true,
      attributeOldValue: true,
      attributeFilter: ['type', 'autocomplete', 'style', 'class'],
    });
  }

  /** @param {unknown} r */
  function validRules(r) {
    const list = (/** @type {unknown} */ v) => Array.isArray(v) && v.every((s) => typeof s === 'string');
    const o = /** @type {any} */ (r);
    return !!o && list(o.input_types) && list(o.autocomplete) && list(o.css_properties);
  }

  /**
   * Secret fields under `root` (one document or shadow root, not descending into others).
   * @param {Document | ShadowRoot} root
   */
  function inRoot(root) {
    watch(root);
    return [...root.querySelectorAll(FIELDS)].filter(isSecret);
  }

  L.secrets = {
    /** @param {unknown} r the parsed secret-rules.json */
    setRules(r) {
      if (!validRules(r)) return false;
      const o = /** @type {any} */ (r);
      const low = (/** @type {string[]} */ a) => a.map((s) => s.toLowerCase());
      rules = { input_types: low(o.input_types), autocomplete: low(o.autocomplete), css_properties: low(o.css_properties) };
      return true;
    },
    hasRules: () => rules !== null,
    rules: () => rules,
    isSecret,
    inRoot,
    watch,
  };

  // Content-script half: watch from document_start, and ask the service worker for the rules.
  watch(document);
  try {
    if (typeof chrome !== 'undefined' && chrome.runtime && chrome.runtime.sendMessage && !rules) {
      chrome.runtime.sendMessage({ type: 'shotbridge:secret_rules' }).then((r) => {
        if (!rules) L.secrets.setRules(r);
      }, () => {});
    }
  } catch {
    // orphaned content script (extension reloaded): fields stay fail-closed
  }
  // A field the user types into is judged on the spot (CSS-only secrets such as PIN boxes).
  for (const type of ['focusin', 'input']) {
    addEventListener(type, (e) => {
      const el = e.composedPath()[0];
      if (el instanceof Element && rules) isSecret(el);
    }, true);
  }
})();
