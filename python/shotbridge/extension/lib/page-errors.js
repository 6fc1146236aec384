// Per-tab buffers of page errors (console.error, uncaught exceptions, unhandled rejections)
// relayed by content/bridge-*.js. Kept in memory and mirrored to chrome.storage.session (debounced)
// so a service-worker restart does not lose them; session storage never touches the disk.
// A buffer keeps the first FIRST errors for good (the first one is usually the bug) and the latest
// ones after them: a flood only ever replaces flood.

const CAP = 200;
const FIRST = 100;
const MAX_TEXT = 2000;
const STORAGE_KEY = 'page_errors';
const PERSIST_DELAY_MS = 1000;
const KINDS = new Set(['console', 'exception', 'rejection']);

/**
 * First `max` UTF-16 units without splitting a surrogate pair; lone surrogates become U+FFFD.
 * @param {string} s
 * @param {number} max
 */
export function cut(s, max) {
  let t = s;
  if (t.length > max) {
    const c = t.charCodeAt(max - 1);
    t = t.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max);
  }
  return t.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/**
 * @typedef {{kind: 'console' | 'exception' | 'rejection', message: string, source: string, line: number, column: number, time: number, trusted: boolean}} PageError
 */

/** @type {Map<number, PageError[]>} */
const buffers = new Map();
/** @type {ReturnType<typeof setTimeout> | null} */
let persistTimer = null;

export const ready = chrome.storage.session
  .get(STORAGE_KEY)
  .then((got) => {
    const saved = got[STORAGE_KEY];
    if (!saved || typeof saved !== 'object') return;
    for (const [id, list] of Object.entries(saved)) {
      if (Array.isArray(list) && !buffers.has(Number(id))) buffers.set(Number(id), trim(list));
    }
  })
  .catch(() => {});

/** `list` without the oldest errors after the first FIRST, once it holds more than CAP. @param {any[]} list */
function trim(list) {
  if (list.length > CAP) list.splice(FIRST, list.length - CAP);
  return list;
}

function schedulePersist() {
  if (persistTimer) return;
  persistTimer = setTimeout(() => {
    persistTimer = null;
    const obj = Object.fromEntries(buffers);
    chrome.storage.session.set({ [STORAGE_KEY]: obj }).catch((e) => console.info('[shotbridge] could not persist page errors:', e?.message));
  }, PERSIST_DELAY_MS);
}

/**
 * Validate and store one entry sent by a content script.
 * @param {number} tabId
 * @param {any} raw
 */
export function record(tabId, raw) {
  if (!raw || !KINDS.has(raw.kind)) return;
  /** @type {PageError} */
  const entry = {
    kind: raw.kind,
    message: cut(String(raw.message ?? ''), MAX_TEXT),
    source: cut(String(raw.source ?? ''), 500),
    line: Number.isFinite(raw.line) ? raw.line : 0,
    column: Number.isFinite(raw.column) ? raw.column : 0,
    time: Number.isFinite(raw.time) ? raw.time : Date.now(),
    trusted: raw.trusted === true,
  };
  let list = buffers.get(tabId);
  if (!list) buffers.set(tabId, (list = []));
  list.push(entry);
  trim(list);
  schedulePersist();
}

/**
 * @param {number} tabId
 * @param {boolean} clear empty the buffer after reading
 * @returns {PageError[]} oldest first
 */
export function take(tabId, clear) {
  const list = buffers.get(tabId) || [];
  if (clear) {
    buffers.delete(tabId);
    schedulePersist();
  }
  return list.slice();
}

/** @param {number} tabId */
export function forget(tabId) {
  if (buffers.delete(tabId)) schedulePersist();
}
