// MAIN-world content script (document_start, every frame): sees what only the page's own world
// can — console.error calls, uncaught errors, unhandled rejections and (top frame, while network
// capture is on) fetch/XMLHttpRequest — and hands it to content/bridge-relay.js (ISOLATED world).
//
// The channel is a MessagePort the page cannot reach: it is created here before any page script
// runs and posted to the relay, which takes the first such message and stops it from reaching
// page listeners. Page scripts therefore cannot inject entries; they can only cause real ones
// (and what those say is still page text: the relay validates, bounds and rate-limits it, and
// the host marks it as page-reported). Events are taken only when the browser made them
// (isTrusted): a page's synthetic ErrorEvent is not an error report.
(() => {
  const MARK = '__shotbridge_bridge__';
  if (window[MARK]) return; // injected twice: keep one set of hooks
  Object.defineProperty(window, MARK, { value: true });
  const MAX = 2000;
  const LIMIT = 10_000;
  const channel = new MessageChannel();
  const port = channel.port1;
  const portPost = port.postMessage.bind(port);
  const stringify = JSON.stringify;
  const now = Date.now;
  window.postMessage({ [MARK]: 1 }, '*', [channel.port2]);
  // Switched by the relay (record_config network). null until the relay has heard the service
  // worker's answer: a page's first fetch (a list loaded at start-up) can come before it, so
  // requests are observed meanwhile and the relay keeps or drops them once the state is known.
  let network = null;
  port.onmessage = (e) => {
    if (e.data && typeof e.data.network === 'boolean') network = e.data.network;
  };

  // Dialog reports cannot wait for the port: its messages are tasks on this same main thread,
  // which alert() blocks, so they would arrive only after the dialog closed. A DOM event runs
  // its listeners synchronously, and content/bridge-relay.js (ISOLATED world, injected right
  // after this script, before any page script) hands us a detached node that only it listens on
  // — through a one-off event we take here before the page can listen for it.
  /** @type {Node | null} */
  let dialogNode = null;
  const DIALOG_NODE = '__shotbridge_dialog_node__';
  const addListener = EventTarget.prototype.addEventListener;
  const removeListener = EventTarget.prototype.removeEventListener;
  const dispatch = EventTarget.prototype.dispatchEvent;
  const CustomEventCtor = CustomEvent;
  const apply = Reflect.apply;
  /** @param {Event} e */
  const takeNode = (e) => {
    const node = /** @type {MouseEvent} */ (e).relatedTarget;
    if (dialogNode || !(node instanceof Node) || node.isConnected) return;
    e.stopImmediatePropagation();
    dialogNode = node;
    apply(removeListener, window, [DIALOG_NODE, takeNode, true]);
  };
  apply(addListener, window, [DIALOG_NODE, takeNode, true]);

  // Shadow roots, closed ones included, are watched for secrets from their creation: page/secrets.js
  // (ISOLATED world) hands us a detached node the same way; each new root holds it for one
  // synchronous event, whose listener (in that world) finds the root as the node's root node.
  // Nothing crosses but "this node is now in a new root": a page that forged it could only make
  // more roots watched.
  /** @type {Node | null} */
  let shadowNode = null;
  const SHADOW_NODE = '__shotbridge_shadow_node__';
  /** @param {Event} e */
  const takeShadowNode = (e) => {
    const node = /** @type {MouseEvent} */ (e).relatedTarget;
    if (shadowNode || !(node instanceof Node) || node.isConnected) return;
    e.stopImmediatePropagation();
    e.preventDefault(); // tells page/secrets.js the hook is ours and in place
    shadowNode = node;
    apply(removeListener, window, [SHADOW_NODE, takeShadowNode, true]);
  };
  apply(addListener, window, [SHADOW_NODE, takeShadowNode, true]);
  const hasDom = typeof Element === 'function' && typeof Event === 'function';
  const EventCtor = hasDom ? Event : null;
  const appendChild = hasDom ? Node.prototype.appendChild : null;
  const removeChild = hasDom ? Node.prototype.removeChild : null;
  const attachShadow = hasDom ? Element.prototype.attachShadow : null;
  if (typeof attachShadow === 'function') {
    Element.prototype.attachShadow = {
      attachShadow(init) {
        const root = apply(attachShadow, this, arguments);
        if (shadowNode) {
          try {
            apply(appendChild, root, [shadowNode]);
            apply(dispatch, shadowNode, [new EventCtor('shotbridge-shadow')]);
          } catch {
            // never break the page
          } finally {
            try {
              apply(removeChild, root, [shadowNode]);
            } catch {
              // not there
            }
          }
        }
        return root;
      },
    }.attachShadow;
  }

  /** First `max` UTF-16 units without splitting a surrogate pair. @param {string} s @param {number} max */
  function cut(s, max) {
    if (s.length <= max) return s;
    const c = s.charCodeAt(max - 1);
    return s.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max);
  }

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

  /** @param {'error' | 'network' | 'console'} channelKind @param {object} entry */
  function send(channelKind, entry) {
    try {
      portPost({ kind: channelKind, entry: { ...entry, time: now() } });
    } catch {
      // never break the page
    }
  }

  /** Caller location from a stack trace ("at fn (url:line:col)"). */
  function callerFrom(stack) {
    const lines = String(stack || '').split('\n').slice(1);
    for (const l of lines) {
      const m = /\(?((?:https?|file|blob|data|chrome-extension):[^\s)]+):(\d+):(\d+)\)?\s*$/.exec(l);
      if (m && !l.includes('bridge-main.js')) return { source: m[1], line: Number(m[2]), column: Number(m[3]) };
    }
    return { source: '', line: 0, column: 0 };
  }

  // ---- errors --------------------------------------------------------------------------------

  const original = console.error;
  console.error = function shotbridgeConsoleError(...args) {
    try {
      const message = cut(args.map(text).join(' '), MAX);
      // A console call is the page's own say-so: reported, but never as a browser error.
      send('error', { kind: 'console', message, ...callerFrom(new Error().stack), trusted: false });
    } catch {
      // fall through to the real console.error
    }
    return original.apply(this, args);
  };

  // Warnings and logs, with their level (observe what="console"): a page may log thousands, so
  // past a small budget a call costs one comparison (no formatting, no stack trace).
  const LOG_RATE = 10;
  const LOG_BURST = 50;
  let logTokens = LOG_BURST;
  let logAt = now();
  for (const level of /** @type {const} */ (['warn', 'info', 'log', 'debug'])) {
    const orig = console[level];
    if (typeof orig !== 'function') continue;
    console[level] = {
      [level](...args) {
        try {
          const t = now();
          logTokens = Math.min(LOG_BURST, logTokens + ((t - logAt) / 1000) * LOG_RATE);
          logAt = t;
          if (logTokens >= 1) {
            logTokens -= 1;
            const message = cut(args.map(text).join(' '), MAX);
            const where = level === 'warn' ? callerFrom(new Error().stack) : { source: '', line: 0, column: 0 };
            send('console', { level: level === 'warn' ? 'warning' : level, message, ...where });
          }
        } catch {
          // fall through to the real console method
        }
        return orig.apply(this, args);
      },
    }[level];
  }

  window.addEventListener('error', (e) => {
    if (!e.isTrusted || !(e instanceof ErrorEvent)) return; // synthetic, or a resource load error
    const message = cut(e.error instanceof Error ? text(e.error) : e.message || 'Script error.', MAX);
    send('error', { kind: 'exception', message, source: e.filename || '', line: e.lineno || 0, column: e.colno || 0, trusted: true });
  }, true);

  window.addEventListener('unhandledrejection', (e) => {
    if (!e.isTrusted) return;
    const r = e.reason;
    const where = r instanceof Error ? callerFrom(r.stack) : { source: '', line: 0, column: 0 };
    send('error', { kind: 'rejection', message: cut('Unhandled rejection: ' + text(r), MAX), ...where, trusted: true });
  });

  // ---- dialogs -------------------------------------------------------------------------------
  // alert/confirm/prompt are reported just before they open (so a dialog that opens while no
  // debugger listens can still be named) and again once answered. The original is called with
  // the same receiver and the message already converted once, so a page's toString runs once.

  /** @param {'opened' | 'closed'} phase @param {string} type @param {string} message */
  function dialogReport(phase, type, message) {
    if (!dialogNode) return;
    try {
      apply(dispatch, dialogNode, [new CustomEventCtor('shotbridge-dialog', { detail: stringify({ phase, type, message: cut(message, MAX) }) })]);
    } catch {
      // never break the page
    }
  }

  /** @param {'alert' | 'confirm' | 'prompt'} type */
  function wrapDialog(type) {
    const originalDialog = window[type];
    if (typeof originalDialog !== 'function') return;
    const wrapped = {
      [type](...args) {
        // The arguments as the original converts them, built as literals (no spread or index
        // stores: a page can patch iterators and prototype setters).
        let converted;
        let message;
        try {
          message = args.length === 0 || args[0] === undefined ? '' : `${args[0]}`;
          converted = type === 'prompt' && args.length > 1 && args[1] !== undefined ? [message, `${args[1]}`] : [message];
        } catch {
          return apply(originalDialog, this, args); // let the original throw its own way
        }
        dialogReport('opened', type, message);
        try {
          return apply(originalDialog, this, converted);
        } finally {
          dialogReport('closed', type, message);
        }
      },
    }[type];
    window[type] = wrapped;
  }
  wrapDialog('alert');
  wrapDialog('confirm');
  wrapDialog('prompt');

  // ---- network (top frame; silent unless network capture is on) -----------------------------

  if (window !== window.top) return;

  /** Text of a request body we can read without consuming anything, else null. @param {unknown} body */
  function bodyText(body) {
    if (typeof body === 'string') return cut(body, LIMIT);
    if (body instanceof URLSearchParams) return cut(body.toString(), LIMIT);
    return null; // FormData, Blob, streams: not recorded
  }

  const MAX_HEADERS = 60;
  const MAX_HEADER = 1000;

  /** Name/value pairs, at most MAX_HEADERS, values cut. @param {Iterable<[string, string]>} pairs */
  function headerList(pairs) {
    const out = [];
    for (const [name, value] of pairs) {
      if (out.length >= MAX_HEADERS) break;
      out.push({ name: cut(String(name), 200), value: cut(String(value), MAX_HEADER) });
    }
    return out;
  }

  /** The headers a fetch sends: its init's, else its Request's. @param {unknown} input @param {any} init */
  function fetchHeaders(input, init) {
    const given = init?.headers ?? (input instanceof Request ? input.headers : null);
    return given ? headerList(new Headers(given)) : [];
  }

  /** An XHR's response headers ("name: value" lines). @param {XMLHttpRequest} xhr */
  function xhrHeaders(xhr) {
    const lines = String(xhr.getAllResponseHeaders() || '').trim().split(/[\r\n]+/).filter(Boolean);
    return headerList(lines.map((l) => {
      const i = l.indexOf(':');
      return /** @type {[string, string]} */ ([l.slice(0, i), l.slice(i + 1).trim()]);
    }));
  }

  const isJson = (/** @type {string | null} */ type) => !!type && /\bjson\b|\+json/i.test(type);

  /** First LIMIT characters of a response stream, without reading the rest. @param {Response} res */
  async function head(res) {
    if (!res.body) return '';
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let out = '';
    try {
      while (out.length < LIMIT) {
        const { value, done } = await reader.read();
        if (done) break;
        out += decoder.decode(value, { stream: true });
      }
    } finally {
      reader.cancel().catch(() => {});
    }
    return cut(out, LIMIT);
  }

  const originalFetch = window.fetch;
  window.fetch = function shotbridgeFetch(input, init) {
    const pending = originalFetch.apply(this, arguments);
    if (network === false) return pending;
    const started = now();
    let method = 'GET';
    let url = '';
    let body = null;
    let sent = [];
    try {
      const req = input instanceof Request ? input : null;
      method = String(init?.method || req?.method || 'GET').toUpperCase();
      url = new URL(req ? req.url : String(input), location.href).href;
      body = bodyText(init?.body);
      sent = fetchHeaders(input, init);
    } catch {
      // unusual arguments: the real fetch decides what they mean
    }
    pending.then(
      async (res) => {
        if (network === false) return;
        const type = res.headers.get('content-type');
        let response = null;
        if (isJson(type)) {
          try {
            response = await head(res.clone());
          } catch {
            response = null;
          }
        }
        send('network', { api: 'fetch', method, url, status: res.status, request_body: body, content_type: type,
          response_body: response, time: started, duration_ms: now() - started, request_headers: sent,
          response_headers: headerList(res.headers) });
      },
      (err) => {
        if (network !== false) {
          send('network', { api: 'fetch', method, url, status: 0, request_body: body, request_headers: sent,
            error: cut(String((err && err.message) || err), MAX), time: started, duration_ms: now() - started });
        }
      },
    );
    return pending;
  };

  const XHR = XMLHttpRequest.prototype;
  const open = XHR.open;
  const sendXhr = XHR.send;
  const meta = new WeakMap();
  XHR.open = function (method, url) {
    try {
      meta.set(this, { method: String(method).toUpperCase(), url: new URL(String(url), location.href).href, headers: [] });
    } catch {
      meta.delete(this);
    }
    return open.apply(this, arguments);
  };
  const setHeader = XHR.setRequestHeader;
  XHR.setRequestHeader = function (name, value) {
    const m = meta.get(this);
    if (m && m.headers.length < MAX_HEADERS) m.headers.push({ name: cut(String(name), 200), value: cut(String(value), MAX_HEADER) });
    return setHeader.apply(this, arguments);
  };
  XHR.send = function (body) {
    const m = meta.get(this);
    if (m && network !== false) {
      const started = now();
      const requestBody = bodyText(body);
      this.addEventListener('loadend', () => {
        if (network === false) return;
        let response = null;
        const type = this.getResponseHeader('content-type');
        try {
          if (isJson(type) && (this.responseType === '' || this.responseType === 'text')) {
            response = cut(String(this.responseText), LIMIT);
          } else if (isJson(type) && this.responseType === 'json') {
            response = cut(stringify(this.response), LIMIT);
          }
        } catch {
          response = null;
        }
        send('network', { api: 'xhr', method: m.method, url: m.url, status: this.status, request_body: requestBody,
          content_type: type, response_body: response, time: started, duration_ms: now() - started,
          request_headers: m.headers, response_headers: xhrHeaders(this) });
      });
    }
    return sendXhr.apply(this, arguments);
  };
})();
