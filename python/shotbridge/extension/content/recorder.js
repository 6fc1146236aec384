// ISOLATED-world content script (document_start, top frame): records what the user does — click,
// typing (one entry per field with its final value), select/checkbox changes, form submit and
// Enter — with the target's best locators at that moment (network entries arrive through
// content/bridge-relay.js). The service worker keeps only the tracked tab's entries (lib/recorder.js).
//
// The page library (page/lib.js, a11y.js, selector.js) is listed before this file in the manifest,
// so `__shotbridge` has role/name/selector helpers here. Only what a person or the tool did is
// recorded, never what the page made up: events must be trusted (isTrusted), and the trusted
// events a page can still cause are tied to a gesture — a submit (requestSubmit() and a script's
// button.click() submit with isTrusted true) counts once per trusted click or Enter, typing only
// when a trusted beforeinput came first (execCommand's input events are trusted, but have none),
// and a same-document navigation (pushState) is a step only once per gesture (or a browser
// back/forward); the service worker asks for that verdict (`shotbridge:nav_verdict`).
// Values of password and other secret fields are never read: they are recorded as "<redacted>".
(() => {
  const L = /** @type {any} */ (globalThis).__shotbridge;
  if (!L || L.recorderInstalled) return;
  L.recorderInstalled = true;

  const REDACTED = '<redacted>';
  const MAX_VALUE = 500;
  const TYPING_QUIET_MS = 700; // a field counts as "typed into" once input stops this long
  // A submit this soon after a trusted click/Enter is that gesture's (a click handler may
  // validate first); a same-document navigation this soon is the gesture's result (an app may
  // wait for its server). The generator ties a navigation to an action within the same 3 s.
  const SUBMIT_AFTER_GESTURE_MS = 1000;
  const NAV_AFTER_GESTURE_MS = 3000;
  const MAX_NAV_VERDICTS = 2000;
  const TEXT_TYPES = new Set(['', 'text', 'email', 'tel', 'url', 'search', 'password', 'number',
    'date', 'datetime-local', 'month', 'time', 'week']);
  // Fields document.execCommand can type into (date/time fields it cannot, and typing into them
  // fires no beforeinput): only there must a trusted beforeinput vouch for an input event.
  const SCRIPT_TYPABLE = new Set(['', 'text', 'email', 'tel', 'url', 'search', 'password', 'number']);
  // Roles Playwright's getByRole understands for the elements users act on.
  const ROLE_CANDIDATES = 'button, a[href], input, select, textarea, summary, [role], [contenteditable]';

  /** @param {object} msg */
  function send(msg) {
    try {
      chrome.runtime.sendMessage(msg).catch(() => {});
    } catch {
      // extension reloaded: this content script is orphaned
    }
  }

  /**
   * Secret by the shared rules (page/secrets.js), or ever was one on this page. Without that
   * module every form field counts as secret: a value is never recorded by mistake.
   * @param {Element} el
   */
  function isSecret(el) {
    if (L.secrets) return L.secrets.isSecret(el);
    return el.localName === 'input' || el.localName === 'textarea' || el.localName === 'select';
  }

  /** @param {Element} el */
  function scriptTypable(el) {
    if (el.localName === 'input') return SCRIPT_TYPABLE.has((el.getAttribute('type') || '').toLowerCase());
    return true; // textarea, contenteditable
  }

  /** @param {Element} el */
  function isTextField(el) {
    if (el.localName === 'textarea') return true;
    if (el.localName === 'input') return TEXT_TYPES.has((el.getAttribute('type') || '').toLowerCase());
    return /** @type {HTMLElement} */ (el).isContentEditable === true;
  }

  /** Elements a click on a descendant is meant for (a <span> inside a button → the button). */
  const ACTIONABLE = 'a[href], button, input, select, textarea, summary, label, [role=button], [role=link], ' +
    '[role=checkbox], [role=radio], [role=tab], [role=menuitem], [role=option], [role=switch], [onclick], [data-testid]';

  /** @param {EventTarget | null} t */
  function targetOf(t) {
    let el = t instanceof Element ? t : null;
    for (let n = el, depth = 0; n && depth < 8; n = L.composedParent(n), depth++) {
      if (n.matches(ACTIONABLE)) return n;
    }
    return el;
  }

  /** Label text of a form field (first <label>), for getByLabel. @param {Element} el */
  function labelOf(el) {
    const labels = /** @type {any} */ (el).labels;
    if (labels && labels.length) return L.clean(labels[0].innerText || labels[0].textContent, 100);
    const ref = el.getAttribute('aria-labelledby');
    if (ref) {
      const node = document.getElementById(ref.trim().split(/\s+/)[0]);
      if (node) return L.clean(node.textContent, 100);
    }
    return '';
  }

  /**
   * How many elements on the page share this role+name / label / test id: a locator is only
   * offered to the generator when it is unique now (Playwright's strict mode would refuse it).
   * @param {Element} el
   * @param {string} role
   * @param {string} name
   * @param {string} label
   */
  function uniqueness(el, role, name, label) {
    let sameRole = 0;
    let sameLabel = 0;
    for (const other of document.querySelectorAll(ROLE_CANDIDATES)) {
      const r = L.role(other);
      if (role && name && r === role && L.accessibleName(other, r) === name) sameRole++;
      if (label && labelOf(other) === label) sameLabel++;
    }
    const testid = el.getAttribute('data-testid');
    let sameTestid = 0;
    if (testid) {
      try {
        sameTestid = document.querySelectorAll(`[data-testid="${CSS.escape(testid)}"]`).length;
      } catch {
        sameTestid = 2;
      }
    }
    return { role: sameRole === 1, label: sameLabel === 1, testid: sameTestid === 1 };
  }

  /** Everything the generator needs to find `el` again. @param {Element} el */
  function describe(el) {
    const role = L.role(el);
    const name = L.accessibleName(el, role);
    const label = labelOf(el);
    const placeholder = el.getAttribute('placeholder') || '';
    return {
      selector: L.uniqueSelector(el),
      tag: el.localName,
      type: (el.getAttribute('type') || '').toLowerCase(),
      role,
      name,
      // Playwright computes names like browsers do; a name we only got from the placeholder or a
      // truncated text is a weak match, so the generator does not rely on it.
      name_from_placeholder: !!name && name === L.clean(placeholder) && !label && !el.getAttribute('aria-label'),
      label,
      placeholder: L.clean(placeholder),
      testid: el.getAttribute('data-testid') || '',
      text: L.visibleText(el),
      unique: uniqueness(el, role, name, label),
    };
  }

  // The tool's select, upload, drag and wait (page/actions.js) use no trusted input events that
  // this file would see: it records them through here, described like the user's actions.
  L.describeTarget = describe;
  /** @param {string} kind @param {Element} el @param {Record<string, any>} extra */
  L.recordAction = (kind, el, extra) => {
    flushAll();
    const hide = kind === 'select' && isSecret(el);
    record(kind, el, hide ? { ...extra, value: REDACTED, option: REDACTED, values: undefined, secret: true } : extra);
  };

  /** @param {Element} el */
  function valueOf(el) {
    if (isSecret(el)) return REDACTED;
    const v = /** @type {HTMLElement} */ (el).isContentEditable && !('value' in el)
      ? /** @type {HTMLElement} */ (el).innerText
      : /** @type {HTMLInputElement} */ (el).value;
    return L.cut(String(v ?? ''), MAX_VALUE);
  }

  /** @param {string} kind @param {Element} el @param {object} [extra] */
  function record(kind, el, extra = {}) {
    let target;
    try {
      target = describe(el);
    } catch (e) {
      target = { selector: '', tag: el.localName, error: String(e && e.message) };
    }
    send({
      type: 'shotbridge:action',
      action: { kind, ...extra, target, url: location.href, title: document.title, time: Date.now() },
    });
  }

  // ---- gestures: what lets a page-caused trusted event count ------------------------------------

  /** When the last trusted click/Enter happened, until a submit uses it (0: none pending). */
  let submitGesture = 0;
  /** When the last trusted gesture happened, until a same-document navigation uses it. */
  let navGesture = 0;

  /** A trusted gesture (click, key, choice) just happened. @param {boolean} submits */
  function gesture(submits) {
    const t = performance.now();
    navGesture = t;
    if (submits) submitGesture = t;
  }

  // Some routers change the URL on mousedown, before the click.
  window.addEventListener('pointerdown', (e) => {
    if (e.isTrusted) gesture(false);
  }, true);

  /** Whether a gesture noted at `at` (0: used up) is recent enough to count. */
  function fresh(/** @type {number} */ at, /** @type {number} */ window_) {
    return at > 0 && performance.now() - at <= window_;
  }

  // ---- typing: one "fill" per field with its final value ----------------------------------------

  /** The field a trusted beforeinput was just aimed at: its input event is real typing. @type {Element | null} */
  let typedInto = null;

  /** @type {Map<Element, ReturnType<typeof setTimeout>>} */
  const typing = new Map();

  /** @param {Element} el */
  function flushTyping(el) {
    const timer = typing.get(el);
    if (timer === undefined) return;
    clearTimeout(timer);
    typing.delete(el);
    record('fill', el, { value: valueOf(el), secret: isSecret(el) });
  }

  function flushAll() {
    for (const el of [...typing.keys()]) flushTyping(el);
  }

  // Keys, IME commits, paste, drop and the tool's Input.insertText all fire a trusted beforeinput;
  // document.execCommand('insertText') fires only a (trusted) input: the page typing for itself.
  window.addEventListener('beforeinput', (e) => {
    if (!e.isTrusted) return;
    const el = e.composedPath()[0] || e.target;
    typedInto = el instanceof Element ? el : null;
  }, true);

  window.addEventListener('input', (e) => {
    if (!e.isTrusted) return;
    const el = /** @type {Element} */ (e.composedPath()[0] || e.target);
    const typed = el === typedInto;
    typedInto = null;
    if (!(el instanceof Element) || !isTextField(el) || (!typed && scriptTypable(el))) return;
    gesture(false);
    const previous = typing.get(el);
    if (previous !== undefined) clearTimeout(previous);
    typing.set(el, setTimeout(() => flushTyping(el), TYPING_QUIET_MS));
  }, true);

  window.addEventListener('change', (e) => {
    if (!e.isTrusted) return;
    const el = /** @type {Element} */ (e.composedPath()[0] || e.target);
    if (!(el instanceof Element)) return;
    if (isTextField(el)) {
      flushTyping(el); // change on blur: the typing is done
      return;
    }
    if (el.localName === 'select') {
      const sel = /** @type {HTMLSelectElement} */ (el);
      gesture(false);
      flushAll();
      const secret = isSecret(el); // a card-expiry <select> is a secret too
      record('select', el, secret ? { value: REDACTED, option: REDACTED, secret }
        : { value: L.cut(sel.value, MAX_VALUE), option: L.clean(sel.selectedOptions[0]?.textContent || '') });
    }
    // checkbox/radio: the click that toggled them is recorded (replaying it toggles them again)
  }, true);

  /** @type {Element | null} */
  let lastLabelControl = null;
  let lastLabelTime = 0;

  window.addEventListener('click', (e) => {
    // A drag's release (page/actions.js) is no click: the drag is recorded as one step.
    if (!e.isTrusted || L.recordMuted) return;
    const el = targetOf(e.composedPath()[0] || e.target);
    if (!el) return;
    // A click on a <label> also fires a click on its control: only the user's counts.
    if (el === lastLabelControl && performance.now() - lastLabelTime < 100) return;
    lastLabelControl = el.localName === 'label' ? /** @type {HTMLLabelElement} */ (el).control : null;
    lastLabelTime = performance.now();
    gesture(true);
    flushAll();
    const input = /** @type {HTMLInputElement} */ (el);
    const checkable = el.localName === 'input' && (input.type === 'checkbox' || input.type === 'radio');
    // detail 0: a click the browser made up (Enter's implicit submit); position: where in the
    // element it landed, so a canvas/map click replays at the same spot.
    // In the padding box, as Playwright's `position`. On the element itself: the offset the page
    // saw (offsetX/Y, from the exact point; clientX/Y are whole px, so a box at y 120.88 put the
    // replay a pixel off). Else (a click on a child) from client coordinates, to 0.01 px.
    const box = el.getBoundingClientRect();
    const at = (/** @type {number} */ v) => Math.round(v * 100) / 100;
    const position = (e.composedPath()[0] || e.target) === el
      ? { x: e.offsetX, y: e.offsetY }
      : { x: at(e.clientX - box.left - el.clientLeft), y: at(e.clientY - box.top - el.clientTop) };
    record('click', el, { ...(checkable ? { checked: input.checked } : {}), detail: e.detail, position });
  }, true);

  window.addEventListener('keydown', (e) => {
    if (!e.isTrusted) return;
    const enter = e.key === 'Enter' && !e.isComposing;
    gesture(enter);
    if (!enter) return;
    const el = /** @type {Element} */ (e.composedPath()[0] || e.target);
    if (!(el instanceof Element)) return;
    flushAll();
    record('press', el, { key: 'Enter' });
  }, true);

  window.addEventListener('submit', (e) => {
    const form = /** @type {Element} */ (e.target);
    if (!e.isTrusted || !(form instanceof Element)) return;
    // requestSubmit() and a script's button.click() make trusted submits too: only the first
    // submit after a person's (or the tool's) click or Enter is theirs.
    if (!fresh(submitGesture, SUBMIT_AFTER_GESTURE_MS)) return;
    submitGesture = 0;
    flushAll();
    // Submits follow a click or Enter (recorded already); the generator uses this to know a
    // navigation or request came from the form, and does not replay it on its own.
    record('submit', form, { via: (/** @type {SubmitEvent} */ (e)).submitter ? 'submitter' : 'script' });
  }, true);

  // Leaving the page: whatever was typed last still counts.
  window.addEventListener('pagehide', flushAll, true);

  // ---- same-document navigations: the user's, or the page's own ----------------------------------

  /**
   * URL → whether the page changed it on its own (no gesture led to it), for every navigation
   * this document started (pushState/replaceState, fragments, Navigation API, traversals).
   * @type {Map<string, boolean>}
   */
  const navVerdicts = new Map();

  /** @param {any} e the Navigation API's NavigateEvent */
  function onNavigate(e) {
    if (!e.isTrusted || !e.destination) return;
    const url = String(e.destination.url);
    if (url === location.href) return; // no URL change, nothing the tab will report
    // Back/forward from the browser (or the tool) says userInitiated; a page's history.back() not.
    let byPage = !(e.navigationType === 'traverse' && e.userInitiated);
    if (byPage && fresh(navGesture, NAV_AFTER_GESTURE_MS)) {
      navGesture = 0; // one navigation per gesture: a click's route change, not a page's loop
      byPage = false;
    }
    navVerdicts.delete(url);
    navVerdicts.set(url, byPage);
    if (navVerdicts.size > MAX_NAV_VERDICTS) navVerdicts.delete(navVerdicts.keys().next().value);
  }

  const navigation = /** @type {any} */ (globalThis).navigation;
  if (navigation) navigation.addEventListener('navigate', onNavigate);
  // Back into this document from the back/forward cache: that return was not one of its own.
  window.addEventListener('pageshow', (e) => {
    if (e.persisted) navVerdicts.clear();
  }, true);

  // The service worker asks after each URL change of the tab: this document answers only for
  // navigations it made itself (a new document knows none: its load is a navigation of its own).
  try {
    chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
      if (sender.id !== chrome.runtime.id || !msg || msg.type !== 'shotbridge:nav_verdict') return undefined;
      const byPage = navVerdicts.get(String(msg.url));
      sendResponse(byPage === undefined ? { known: false } : { known: true, by_page: byPage });
      return undefined;
    });
  } catch {
    // orphaned content script
  }
})();
