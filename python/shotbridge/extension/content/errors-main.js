// MAIN-world content script (document_start): sees the page's own console and error events, which
// the isolated world cannot. It only relays; content/errors-relay.js (ISOLATED world) forwards to
// the service worker. The event carries a JSON string because objects do not cross worlds.
(() => {
  const EVENT = '__shotbridge_page_error__';
  if (window[EVENT]) return; // injected twice (e.g. re-injection): keep one wrapper
  Object.defineProperty(window, EVENT, { value: true });
  const MAX = 2000;
  const dispatch = window.dispatchEvent.bind(window);
  const CE = window.CustomEvent;
  const stringify = JSON.stringify;

  /** @param {unknown} v */
  function text(v) {
    if (v instanceof Error) return `${v.name}: ${v.message}`;
    if (typeof v === 'string') return v;
    try {
      const s = stringify(v);
      return s === undefined ? String(v) : s;
    } catch {
      return String(v);
    }
  }

  /** @param {object} entry */
  function send(entry) {
    try {
      dispatch(new CE(EVENT, { detail: stringify({ ...entry, time: Date.now() }) }));
    } catch {
      // never break the page
    }
  }

  /** Caller location from a stack trace ("at fn (url:line:col)"). */
  function callerFrom(stack) {
    const lines = String(stack || '').split('\n').slice(1);
    for (const l of lines) {
      const m = /\(?((?:https?|file|blob|data|chrome-extension):[^\s)]+):(\d+):(\d+)\)?\s*$/.exec(l);
      if (m && !l.includes('errors-main.js')) return { source: m[1], line: Number(m[2]), column: Number(m[3]) };
    }
    return { source: '', line: 0, column: 0 };
  }

  const original = console.error;
  console.error = function shotbridgeConsoleError(...args) {
    try {
      const message = args.map(text).join(' ').slice(0, MAX);
      const where = callerFrom(new Error().stack);
      send({ kind: 'console', message, ...where });
    } catch {
      // fall through to the real console.error
    }
    return original.apply(this, args);
  };

  window.addEventListener('error', (e) => {
    if (!(e instanceof ErrorEvent)) return; // resource load errors (img/script 404) bubble here too
    const message = (e.error instanceof Error ? text(e.error) : e.message || 'Script error.').slice(0, MAX);
    send({ kind: 'exception', message, source: e.filename || '', line: e.lineno || 0, column: e.colno || 0 });
  }, true);

  window.addEventListener('unhandledrejection', (e) => {
    const r = e.reason;
    const where = r instanceof Error ? callerFrom(r.stack) : { source: '', line: 0, column: 0 };
    send({ kind: 'rejection', message: ('Unhandled rejection: ' + text(r)).slice(0, MAX), ...where });
  });
})();
