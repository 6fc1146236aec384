// ISOLATED-world half of the page bridge (document_start, every frame). Takes the MessagePort that
// content/bridge-main.js posts before any page script runs — the first one only, and hidden from
// page listeners — then validates, bounds and rate-limits what comes through it before it goes to
// the service worker. Nothing a page dispatches on window (CustomEvents, synthetic errors, later
// look-alike messages) is read. Network entries pass only while network capture is on.
(() => {
  const L = /** @type {any} */ (globalThis.__shotbridge = /** @type {any} */ (globalThis).__shotbridge || {});
  if (L.bridgeRelay) return;
  L.bridgeRelay = true;
  const MARK = '__shotbridge_bridge__';
  const MAX_TEXT = 2000;
  const MAX_URL = 2000;
  const MAX_BODY = 10_000;
  const ERROR_KINDS = new Set(['console', 'exception', 'rejection']);
  /**
   * Per-kind token buckets: a page can report at most `rate` entries/s after a `burst`. Console
   * calls (the page's say-so) have their own, so a console flood never hides a real exception.
   */
  const BUDGET = { console: { rate: 5, burst: 30 }, exception: { rate: 5, burst: 30 }, network: { rate: 20, burst: 100 },
    log: { rate: 10, burst: 50 } };
  /** @type {Record<keyof typeof BUDGET, {tokens: number, at: number}>} */
  const buckets = /** @type {any} */ (Object.fromEntries(Object.entries(BUDGET).map(([k, v]) => [k, { tokens: v.burst, at: performance.now() }])));
  /** @type {MessagePort | null} */
  let port = null;
  /** @type {boolean | null} null until the service worker says: entries wait in `early` */
  let network = null;
  /** @type {object[]} network entries of this document from before the state was known */
  const early = [];
  const MAX_EARLY = 50;

  /** First `max` UTF-16 units on a code-point boundary, lone surrogates made U+FFFD. */
  function cut(/** @type {unknown} */ v, /** @type {number} */ max) {
    let s = typeof v === 'string' ? v : '';
    if (s.length > max) {
      const c = s.charCodeAt(max - 1);
      s = s.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max);
    }
    return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  }
  const int = (/** @type {unknown} */ v, /** @type {number} */ hi) =>
    (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.min(hi, Math.round(v))) : 0);
  const optText = (/** @type {unknown} */ v, /** @type {number} */ max) => (typeof v === 'string' ? cut(v, max) : null);

  /** @param {keyof typeof BUDGET} kind */
  function allow(kind) {
    const b = buckets[kind];
    const t = performance.now();
    b.tokens = Math.min(BUDGET[kind].burst, b.tokens + ((t - b.at) / 1000) * BUDGET[kind].rate);
    b.at = t;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** @param {any} e */
  function errorEntry(e) {
    if (!e || !ERROR_KINDS.has(e.kind)) return null;
    return {
      kind: e.kind,
      message: cut(e.message, MAX_TEXT),
      source: cut(e.source, 500),
      line: int(e.line, 1e9),
      column: int(e.column, 1e9),
      time: int(e.time, 1e15) || Date.now(),
      trusted: e.trusted === true && e.kind !== 'console',
      reported_by: 'page',
    };
  }

  const LOG_LEVELS = new Set(['warning', 'info', 'log', 'debug']);

  /** A console warning or log (not an error: those are errorEntry's). @param {any} e */
  function consoleEntry(e) {
    if (!e || !LOG_LEVELS.has(e.level)) return null;
    return {
      level: e.level,
      message: cut(e.message, MAX_TEXT),
      source: cut(e.source, 500),
      line: int(e.line, 1e9),
      column: int(e.column, 1e9),
      time: int(e.time, 1e15) || Date.now(),
    };
  }

  // Credentials never leave the page: the recording is kept (and may be saved) by the host.
  const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'x-auth-token']);

  /** Up to 60 headers of strings, values cut to 1000 characters. @param {unknown} list */
  function headers(list) {
    if (!Array.isArray(list)) return [];
    return list.slice(0, 60).filter((h) => h && typeof h.name === 'string' && typeof h.value === 'string')
      .map((h) => ({
        name: cut(h.name, 200),
        value: CREDENTIAL_HEADERS.has(h.name.toLowerCase()) ? '<redacted>' : cut(h.value, 1000),
      }));
  }

  /** @param {any} e */
  function networkEntry(e) {
    if (!e || (e.api !== 'fetch' && e.api !== 'xhr')) return null;
    const method = cut(e.method, 16).toUpperCase();
    if (!/^[A-Z-]{1,16}$/.test(method)) return null;
    return {
      api: e.api,
      method,
      url: cut(e.url, MAX_URL),
      status: int(e.status, 999),
      request_body: optText(e.request_body, MAX_BODY),
      response_body: optText(e.response_body, MAX_BODY),
      content_type: optText(e.content_type, 200),
      duration_ms: int(e.duration_ms, 3_600_000),
      error: optText(e.error, MAX_TEXT),
      request_headers: headers(e.request_headers),
      response_headers: headers(e.response_headers),
      time: int(e.time, 1e15) || Date.now(),
      trusted: false, // the page's own fetch/XHR could be wrapped by the page itself
      reported_by: 'page',
    };
  }

  const DIALOG_TYPES = new Set(['alert', 'confirm', 'prompt']);
  const MAX_DIALOG_TEXT = 300;

  /**
   * A dialog report from content/bridge-main.js, validated and bounded, or null.
   * @param {unknown} detail JSON text {phase, type, message}
   * @returns {{phase: 'opened' | 'closed', type: 'alert' | 'confirm' | 'prompt', message: string} | null}
   */
  function dialogEntry(detail) {
    if (typeof detail !== 'string' || detail.length > 20_000) return null;
    let d;
    try {
      d = JSON.parse(detail);
    } catch {
      return null;
    }
    if (!d || typeof d !== 'object' || (d.phase !== 'opened' && d.phase !== 'closed') || !DIALOG_TYPES.has(d.type)) return null;
    return { phase: d.phase, type: d.type, message: cut(d.message, MAX_DIALOG_TEXT) };
  }
  L.dialogEntry = dialogEntry; // for tests/extension

  /** @param {object} msg */
  function toWorker(msg) {
    try {
      chrome.runtime.sendMessage(msg).catch(() => {});
    } catch {
      // extension reloaded: this content script is orphaned
    }
  }

  /** @param {MessageEvent} e */
  function onPortMessage(e) {
    const d = e.data;
    if (!d || typeof d !== 'object') return;
    if (d.kind === 'error') {
      const entry = errorEntry(d.entry);
      if (entry && allow(entry.kind === 'console' ? 'console' : 'exception')) toWorker({ type: 'shotbridge:page_error', entry });
    } else if (d.kind === 'console') {
      const entry = consoleEntry(d.entry);
      if (entry && allow('log')) toWorker({ type: 'shotbridge:console', entry });
    } else if (d.kind === 'network' && network !== false) {
      const entry = networkEntry(d.entry);
      if (entry && network === null) {
        if (early.length < MAX_EARLY) early.push(entry);
      } else if (entry && allow('network')) toWorker({ type: 'shotbridge:network', entry });
    }
  }

  /** @param {boolean} on */
  function setNetwork(on) {
    network = on;
    if (port) port.postMessage({ network: on });
    // The first answer decides on what the page fetched before it: sent on, or dropped here.
    const held = early.splice(0);
    if (on) for (const entry of held) if (allow('network')) toWorker({ type: 'shotbridge:network', entry });
  }

  window.addEventListener('message', (e) => {
    if (port || e.source !== window || !e.data || e.data[MARK] !== 1 || e.ports.length !== 1) return;
    e.stopImmediatePropagation(); // the page never sees the port
    port = e.ports[0];
    port.onmessage = onPortMessage;
    port.postMessage({ network });
  }, true);

  // Dialogs: reported synchronously (a port message would wait behind the dialog it reports, on
  // this same main thread) through a detached node that only the two halves of the bridge hold.
  // It is handed over by a one-off event dispatched now, before any page script exists to hear it.
  const BUDGET_DIALOG = { rate: 2, burst: 10 };
  let dialogTokens = BUDGET_DIALOG.burst;
  let dialogAt = performance.now();
  let dialogOpen = false; // an 'opened' went to the worker and its 'closed' has not
  try {
    const node = document.createElement('span');
    node.addEventListener('shotbridge-dialog', (e) => {
      const entry = dialogEntry(/** @type {CustomEvent} */ (e).detail);
      if (!entry) return;
      if (entry.phase === 'opened') {
        const t = performance.now();
        dialogTokens = Math.min(BUDGET_DIALOG.burst, dialogTokens + ((t - dialogAt) / 1000) * BUDGET_DIALOG.rate);
        dialogAt = t;
        if (dialogTokens < 1) return;
        dialogTokens -= 1;
        dialogOpen = true;
      } else if (!dialogOpen) return;
      else dialogOpen = false;
      // Sent before the page blocks in the dialog: the message leaves this process at once.
      toWorker({ type: 'shotbridge:dialog', entry });
    });
    window.dispatchEvent(new MouseEvent('__shotbridge_dialog_node__', { relatedTarget: node }));
  } catch {
    // no document (unusual frame): dialogs are then seen through the debugger only
  }

  // Network capture state: asked once, then pushed by the service worker on every change.
  try {
    chrome.runtime.sendMessage({ type: 'shotbridge:record_state' }).then((s) => {
      if (s && typeof s.network === 'boolean') setNetwork(s.network);
    }, () => {});
    chrome.runtime.onMessage.addListener((msg, sender) => {
      if (sender.id === chrome.runtime.id && msg && msg.type === 'shotbridge:record_state' && typeof msg.network === 'boolean') {
        setNetwork(msg.network);
      }
    });
  } catch {
    // orphaned content script
  }
})();
