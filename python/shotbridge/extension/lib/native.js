// The native-messaging port to the local host (dev.shotbridge.host). One port per service worker;
// while it is open Chrome keeps the MV3 worker alive. When it drops (host exited, not installed) we
// reconnect with exponential backoff so a host started later is picked up without user action.
// The toolbar icon and popup (lib/status.js) show whether the host answered, and why not.

import * as status from './status.js';

export const HOST_NAME = 'dev.shotbridge.host';
const BACKOFF_START_MS = 500;
const BACKOFF_MAX_MS = 30_000;
// A port that stays open this long after hello counts as a working host (resets the backoff).
const HEALTHY_AFTER_MS = 3_000;
// Chrome refuses browser->host messages over 64 MiB; leave room for the JSON envelope.
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024 - 64 * 1024;

/** @type {chrome.runtime.Port | null} */
let port = null;
let backoffMs = BACKOFF_START_MS;
/** @type {ReturnType<typeof setTimeout> | null} */
let retryTimer = null;
/** @type {ReturnType<typeof setTimeout> | null} */
let healthyTimer = null;

/** @type {(msg: any) => void} */
let onMessage = () => {};
/** @type {() => Promise<object>} */
let makeHello = async () => ({});

/**
 * @param {{onMessage: (msg: any) => void, hello: () => Promise<object>}} opts
 */
export function configure(opts) {
  onMessage = opts.onMessage;
  makeHello = opts.hello;
}

export function isConnected() {
  return port !== null;
}

/** Open the port unless it is open (idempotent: called from several startup hooks). */
export function connect() {
  if (port || retryTimer) return;
  let p;
  try {
    p = chrome.runtime.connectNative(HOST_NAME);
  } catch (e) {
    console.info('[shotbridge] connectNative failed:', e?.message);
    status.update({ connection: 'error', last_error: String(e?.message || e) });
    scheduleReconnect();
    return;
  }
  port = p;
  p.onMessage.addListener((msg) => {
    markHealthy();
    onMessage(msg);
  });
  p.onDisconnect.addListener(() => {
    // Reading lastError also keeps Chrome from logging "Unchecked runtime.lastError".
    const why = chrome.runtime.lastError?.message || 'host closed the port';
    console.info('[shotbridge] native port disconnected:', why);
    const { reason } = status.explainDisconnect(why);
    status.update({ connection: 'not_connected', reason, last_error: why });
    if (port === p) port = null;
    if (healthyTimer) clearTimeout(healthyTimer);
    healthyTimer = null;
    scheduleReconnect();
  });
  void makeHello().then((data) => {
    if (port !== p) return;
    post({ event: 'hello', data });
    healthyTimer = setTimeout(markHealthy, HEALTHY_AFTER_MS);
    setTimeout(() => { if (port === p) markHealthy(); }, 300); // the icon should not wait 3 s
  });
}

function markHealthy() {
  backoffMs = BACKOFF_START_MS;
  // Chrome closes the port at once when the host is missing or exits; one that stays open (or
  // answers) has a host behind it.
  if (port && status.current().connection !== 'connected') status.update({ connection: 'connected', reason: '', last_error: '' });
}

function scheduleReconnect() {
  if (retryTimer) return;
  const delay = backoffMs;
  backoffMs = Math.min(backoffMs * 2, BACKOFF_MAX_MS);
  console.debug(`[shotbridge] reconnecting in ${delay} ms`);
  retryTimer = setTimeout(() => {
    retryTimer = null;
    connect();
  }, delay);
}

/**
 * Send one message to the host; dropped (with a log line) when no port is open.
 * @param {object} msg
 * @returns {boolean} whether it was handed to Chrome
 */
export function post(msg) {
  if (!port) {
    console.debug('[shotbridge] no native port; dropping', 'event' in msg ? msg.event : 'reply');
    return false;
  }
  try {
    port.postMessage(msg);
    return true;
  } catch (e) {
    console.info('[shotbridge] postMessage failed:', e?.message);
    return false;
  }
}

/**
 * @param {string} event
 * @param {object} data
 */
export function sendEvent(event, data) {
  post({ event, data });
}
