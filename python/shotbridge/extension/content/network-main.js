// MAIN-world script, registered only while network capture is on (lib/recorder.js): wraps the
// page's fetch and XMLHttpRequest to note method, URL, status, the request body (≤10 KB of text)
// and the first 10 KB of JSON response bodies. No debugger is needed. Entries go to the ISOLATED
// world (content/recorder.js) as a JSON string, since objects do not cross worlds.
(() => {
  const FLAG = '__shotbridge_network_wrapped__';
  if (window[FLAG]) return;
  Object.defineProperty(window, FLAG, { value: true });
  const EVENT = '__shotbridge_network__';
  const LIMIT = 10_000;
  const dispatch = window.dispatchEvent.bind(window);
  const CE = window.CustomEvent;
  const stringify = JSON.stringify;
  const now = () => Date.now();

  /** @param {object} entry */
  function send(entry) {
    try {
      dispatch(new CE(EVENT, { detail: stringify(entry) }));
    } catch {
      // never break the page
    }
  }

  /** Text of a request body we can read without consuming anything, else null. @param {unknown} body */
  function bodyText(body) {
    if (typeof body === 'string') return body.slice(0, LIMIT);
    if (body instanceof URLSearchParams) return body.toString().slice(0, LIMIT);
    return null; // FormData, Blob, streams: not recorded
  }

  const isJson = (/** @type {string | null} */ type) => !!type && /\bjson\b|\+json/i.test(type);

  /** First LIMIT characters of a response stream, without reading the rest. @param {Response} res */
  async function head(res) {
    if (!res.body) return '';
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let text = '';
    try {
      while (text.length < LIMIT) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    } finally {
      reader.cancel().catch(() => {});
    }
    return text.slice(0, LIMIT);
  }

  const originalFetch = window.fetch;
  window.fetch = async function shotbridgeFetch(input, init) {
    const started = now();
    let method = 'GET';
    let url = '';
    let body = null;
    try {
      const req = input instanceof Request ? input : null;
      method = String(init?.method || req?.method || 'GET').toUpperCase();
      url = new URL(req ? req.url : String(input), location.href).href;
      body = bodyText(init?.body);
    } catch {
      // unusual arguments: the real fetch decides what they mean
    }
    const pending = originalFetch.apply(this, arguments);
    pending.then(
      async (res) => {
        const type = res.headers.get('content-type');
        let response = null;
        if (isJson(type)) {
          try {
            response = await head(res.clone());
          } catch {
            response = null;
          }
        }
        send({ api: 'fetch', method, url, status: res.status, request_body: body, content_type: type,
          response_body: response, time: started, duration_ms: now() - started });
      },
      (err) => send({ api: 'fetch', method, url, status: 0, request_body: body, error: String(err && err.message || err),
        time: started, duration_ms: now() - started }),
    );
    return pending;
  };

  const XHR = XMLHttpRequest.prototype;
  const open = XHR.open;
  const sendXhr = XHR.send;
  const meta = new WeakMap();
  XHR.open = function (method, url) {
    try {
      meta.set(this, { method: String(method).toUpperCase(), url: new URL(String(url), location.href).href });
    } catch {
      meta.delete(this);
    }
    return open.apply(this, arguments);
  };
  XHR.send = function (body) {
    const m = meta.get(this);
    if (m) {
      const started = now();
      const requestBody = bodyText(body);
      this.addEventListener('loadend', () => {
        let response = null;
        const type = this.getResponseHeader('content-type');
        try {
          if (isJson(type) && (this.responseType === '' || this.responseType === 'text')) {
            response = String(this.responseText).slice(0, LIMIT);
          } else if (isJson(type) && this.responseType === 'json') {
            response = stringify(this.response).slice(0, LIMIT);
          }
        } catch {
          response = null;
        }
        send({ api: 'xhr', method: m.method, url: m.url, status: this.status, request_body: requestBody,
          content_type: type, response_body: response, time: started, duration_ms: now() - started });
      });
    }
    return sendXhr.apply(this, arguments);
  };
})();
