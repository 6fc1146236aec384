// Per-tab ring buffers of page errors (console.error, uncaught exceptions, unhandled rejections)
// relayed by content/errors-*.js. Kept in memory and mirrored to chrome.storage.session (debounced)
// so a service-worker restart does not lose them; session storage never touches the disk.

const CAP = 200;
const MAX_TEXT = 2000;
const STORAGE_KEY = 'page_errors';
const PERSIST_DELAY_MS = 1000;
const KINDS = new Set(['console', 'exception', 'rejection']);

/**
 * @typedef {{kind: 'console' | 'exception' | 'rejection', message: string, source: string, line: number, column: number, time: number}} PageError
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
      if (Array.isArray(list) && !buffers.has(Number(id))) buffers.set(Number(id), list.slice(-CAP));
    }
  })
  .catch(() => {});

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
    message: String(raw.message ?? '').slice(0, MAX_TEXT),
    source: String(raw.source ?? '').slice(0, 500),
    line: Number.isFinite(raw.line) ? raw.line : 0,
    column: Number.isFinite(raw.column) ? raw.column : 0,
    time: Number.isFinite(raw.time) ? raw.time : Date.now(),
  };
  let list = buffers.get(tabId);
  if (!list) buffers.set(tabId, (list = []));
  list.push(entry);
  if (list.length > CAP) list.splice(0, list.length - CAP);
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
