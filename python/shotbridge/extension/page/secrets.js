// Once secret, always secret. Decides which fields are secrets from the ONE shared rule list
// (extension/secret-rules.json: input types, autocomplete tokens, CSS properties, reveal-toggle
// attributes) and remembers every element that ever matched, for the life of the document: a
// password box switched to type=text by a "show password" toggle stays masked and redacted.
//
// Runs in the ISOLATED world of every frame (about:blank and srcdoc ones too), as a
// document_start content script, so the type changes a page makes before any capture are seen,
// and again in the page library chrome.scripting injects. It watches the document and every
// shadow root from its creation: content/bridge-main.js (MAIN world, where the page's own
// attachShadow runs) puts a node only the two of us hold into each new root for one synchronous
// event, open and closed roots alike. The rules come from the service worker: with every
// page-library call (lib/page.js passes them) and, for content scripts, by one message at start.
// Until they arrive every text field counts as secret (fail closed).
//
// Besides fields, a component host is a secret as a whole box when it declares a secret input
// type (`<sl-input type="password">`) or a reveal toggle (`password-toggle`): its inner field may
// be in a root we met late, and the host says what it holds.
(() => {
  const L = /** @type {any} */ (globalThis.__shotbridge = /** @type {any} */ (globalThis).__shotbridge || {});
  if (L.secrets) return;

  /** @typedef {{input_types: string[], autocomplete: string[], css_properties: string[], reveal_attributes: string[]}} SecretRules */

  /** @type {SecretRules | null} */
  let rules = null;
  /** Elements that were a secret at some moment: they stay one. */
  const ever = new WeakSet();
  /** The same elements, findable again when no attribute says so any more. @type {Set<WeakRef<Element>>} */
  const everRefs = new Set();
  /** Attribute values an element had before the page changed them (type, autocomplete). */
  /** @type {WeakMap<Element, {type: Set<string>, autocomplete: Set<string>}>} */
  const history = new WeakMap();
  /** Roots already observed (the document, every shadow root). */
  const watched = new WeakSet();
  const FIELDS = 'input, textarea, select, [data-shotbridge-mask], [type]';
  const WATCHED_ATTRS = ['type', 'autocomplete', 'style', 'class'];

  /** @param {Element} el */
  const isField = (el) => el.localName === 'input' || el.localName === 'textarea' || el.localName === 'select';

  /** @param {string} v */
  const tokens = (v) => String(v || '').toLowerCase().split(/\s+/).filter(Boolean);

  /** @param {Element} el */
  function mark(el) {
    if (ever.has(el)) return;
    ever.add(el);
    if (typeof WeakRef === 'function') everRefs.add(new WeakRef(el));
  }

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

  /** @param {SecretRules} r @param {Element} el a native form field */
  function fieldSecret(r, el) {
    const type = el.localName === 'input' ? (el.getAttribute('type') || '').toLowerCase() : '';
    const h = history.get(el);
    return attrsSecret(r, type, el.getAttribute('autocomplete') || '') ||
      (!!h && ([...h.type].some((t) => r.input_types.includes(t)) ||
        [...h.autocomplete].some((a) => attrsSecret(r, '', a)))) ||
      (el.localName !== 'select' && styleSecret(r, el));
  }

  /**
   * A component that declares (or once declared) a secret input type, or has a reveal toggle.
   * @param {SecretRules} r @param {Element} el any element but a native field
   */
  function hostSecret(r, el) {
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (type && r.input_types.includes(type)) return true;
    const h = history.get(el);
    if (h && [...h.type].some((t) => r.input_types.includes(t))) return true;
    return r.reveal_attributes.some((a) => el.hasAttribute(a));
  }

  /**
   * Whether `el` is (or ever was) a secret. Without rules yet, every form field is (fail closed),
   * but it is not remembered as one.
   * @param {Element} el
   */
  function isSecret(el) {
    if (ever.has(el)) return true;
    if (el.hasAttribute('data-shotbridge-mask')) {
      mark(el);
      return true;
    }
    if (!rules) return isField(el);
    const now = isField(el) ? fieldSecret(rules, el) : hostSecret(rules, el);
    if (now) mark(el);
    return now;
  }

  /** @param {MutationRecord[]} records */
  function onMutations(records) {
    for (const m of records) {
      const el = /** @type {Element} */ (m.target);
      if (!el || el.nodeType !== 1) continue;
      remember(el, /** @type {string} */ (m.attributeName), m.oldValue);
      // A style or class change may just have turned -webkit-text-security off: look now too.
      if (rules && (isField(el) || m.attributeName === 'type')) isSecret(el);
    }
  }

  /** One observer for every watched root (a page may have thousands of components). */
  /** @type {MutationObserver | null} */
  let observer = null;

  /** @param {Node} root a document or shadow root to watch for type/autocomplete changes */
  function watch(root) {
    if (watched.has(root)) return;
    watched.add(root);
    if (!observer) observer = new MutationObserver(onMutations);
    observer.observe(root, {
      subtree: true,
      attributes: true,
      attributeOldValue: true,
      attributeFilter: WATCHED_ATTRS,
    });
    if (parsing()) watchParsed(root);
  }

  // Roots are found with page/shadow-roots.js (L.shadowRootOf, L.walkRoots), injected right after
  // this file both as a content script and in the page library; only callbacks that run later use it.
  // Declarative shadow roots (<template shadowrootmode>) are made by the parser, not by
  // attachShadow. While the document is parsed, each inserted element is checked for one: the
  // parser runs our observers (a microtask checkpoint) before each of its scripts, so a root is
  // watched before the page's code can touch what is in it. Stopped once parsing is done.
  /** @type {MutationObserver | null} */
  let parserObserver = null;
  const parsing = () => typeof document !== 'undefined' && document.readyState === 'loading';

  /** @param {Node} root */
  function watchParsed(root) {
    if (!parserObserver) {
      /** @param {Node | null} n */
      const check = (n) => {
        const sr = n && n.nodeType === 1 ? L.shadowRootOf(/** @type {Element} */ (n), true) : null;
        if (sr) watch(sr);
      };
      parserObserver = new MutationObserver((records) => {
        for (const m of records) {
          // The parser may pause between a host and its <template>: the host is then met again
          // as the parent of its next child, or as the sibling before the next element.
          check(m.target);
          for (const n of m.addedNodes) {
            check(n);
            check(n.previousSibling);
          }
        }
      });
    }
    parserObserver.observe(root, { childList: true, subtree: true });
  }

  /** @param {unknown} r */
  function validRules(r) {
    const list = (/** @type {unknown} */ v) => Array.isArray(v) && v.every((s) => typeof s === 'string');
    const o = /** @type {any} */ (r);
    return !!o && list(o.input_types) && list(o.autocomplete) && list(o.css_properties) &&
      (o.reveal_attributes === undefined || list(o.reveal_attributes));
  }

  /** CSS for every element that may be a secret now (remembered ones are found apart). */
  function candidates() {
    const reveal = rules ? rules.reveal_attributes.filter((a) => /^[a-z][a-z0-9-]*$/.test(a)) : [];
    return [FIELDS, ...reveal.map((a) => `[${a}]`)].join(', ');
  }

  /**
   * What the isolated world of the frame that owns `root` remembers, when that is another frame
   * (a same-origin iframe the top frame reaches into): that frame watched its document from its
   * start, this one only from now. Its answer can only add masks, never remove one.
   * @param {Document | ShadowRoot} root
   * @returns {Element[]}
   */
  function fromOwnFrame(root) {
    try {
      const doc = root.nodeType === 9 ? /** @type {Document} */ (root) : root.ownerDocument;
      const view = doc && doc.defaultView;
      if (!view || view === /** @type {any} */ (globalThis).window) return [];
      const other = /** @type {any} */ (view).__shotbridge && /** @type {any} */ (view).__shotbridge.secrets;
      if (!other || other === L.secrets || typeof other.inRoot !== 'function') return [];
      if (rules && typeof other.setRules === 'function' && !other.hasRules()) other.setRules(rules);
      const list = other.inRoot(root);
      return Array.isArray(list) ? list.filter((el) => el && el.nodeType === 1 && el.getRootNode() === root) : [];
    } catch {
      return [];
    }
  }

  /**
   * Secret elements under `root` (one document or shadow root, not descending into others):
   * those the rules name now, and every one that ever was a secret.
   * @param {Document | ShadowRoot} root
   */
  function inRoot(root) {
    watch(root);
    const found = new Set([...root.querySelectorAll(candidates())].filter(isSecret));
    for (const ref of everRefs) {
      const el = ref.deref();
      if (!el) everRefs.delete(ref);
      else if (el.getRootNode() === root) found.add(el);
    }
    for (const el of fromOwnFrame(root)) found.add(el);
    return [...found];
  }

  L.secrets = {
    /** @param {unknown} r the parsed secret-rules.json */
    setRules(r) {
      if (!validRules(r)) return false;
      const o = /** @type {any} */ (r);
      const low = (/** @type {string[]} */ a) => a.map((s) => s.toLowerCase());
      rules = {
        input_types: low(o.input_types),
        autocomplete: low(o.autocomplete),
        css_properties: low(o.css_properties),
        reveal_attributes: low(o.reveal_attributes || []),
      };
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

  // Shadow roots from their creation. The MAIN-world hook cannot hand a root across worlds, but
  // it can put this detached node into the new root and fire an event at it; here the node's
  // root is that shadow root (closed ones too). The node reaches bridge-main.js through a one-off
  // event fired now, before any page script exists to take it; a page that fired the event
  // itself could only make us watch more roots, never fewer.
  try {
    const node = document.createElement('span');
    node.addEventListener('shotbridge-shadow', () => {
      const root = node.getRootNode();
      if (root !== node && root.nodeType === 11 && 'host' in root) {
        watch(root);
        L.rootAttached?.(root); // page/shadow-roots.js keeps the document's roots current
      }
    });
    // bridge-main.js cancels the event when it takes the node: from then on every root this
    // frame's attachShadow makes reaches us (it hooked attachShadow before any page script).
    L.shadowHooked = !window.dispatchEvent(new MouseEvent('__shotbridge_shadow_node__', { relatedTarget: node, cancelable: true }));
    // Parsing done: one walk for any declarative root the observers missed, then they stop.
    const walk = () => {
      if (parserObserver) parserObserver.disconnect();
      parserObserver = null;
      for (const root of L.walkRoots(document, true)) watch(root);
    };
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', walk, { once: true });
  } catch {
    // no document (unusual frame) or a fake one in tests
  }
})();
