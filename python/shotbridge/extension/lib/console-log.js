// Per-tab buffers of the page's console warnings and logs (with their level), relayed by
// content/bridge-*.js; errors keep their own buffer (page-errors.js) and their place in the
// recorded session. Memory only, the latest CAP per tab: logs are context, not evidence.

const CAP = 200;
const LEVELS = new Set(['warning', 'info', 'log', 'debug']);

/**
 * @typedef {{level: string, message: string, source: string, line: number, column: number, time: number}} ConsoleMessage
 */

/** @type {Map<number, ConsoleMessage[]>} */
const buffers = new Map();

/**
 * Store one message sent by a content script (already bounded by the relay).
 * @param {number} tabId
 * @param {any} raw
 */
export function record(tabId, raw) {
  if (!raw || !LEVELS.has(raw.level)) return;
  let list = buffers.get(tabId);
  if (!list) buffers.set(tabId, (list = []));
  list.push({
    level: raw.level,
    message: String(raw.message ?? ''),
    source: String(raw.source ?? ''),
    line: Number.isFinite(raw.line) ? raw.line : 0,
    column: Number.isFinite(raw.column) ? raw.column : 0,
    time: Number.isFinite(raw.time) ? raw.time : Date.now(),
  });
  if (list.length > CAP) list.splice(0, list.length - CAP);
}

/** @param {number} tabId @returns {ConsoleMessage[]} oldest first */
export function take(tabId) {
  return (buffers.get(tabId) || []).slice();
}

/** @param {number} tabId */
export function forget(tabId) {
  buffers.delete(tabId);
}
