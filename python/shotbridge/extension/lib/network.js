// The requests of a tab as the page itself reports them, for `network`: the Resource Timing of
// its top frame (the document and every resource: scripts, images, fetch/XHR...) read when asked,
// completed by the page hook of content/bridge-main.js for fetch/XHR while network capture is on
// (method, headers, a fetch that failed: it has no timing entry). No webRequest: that permission
// alone made the user's headed browser answer its first capture late. Limits: a cross-origin
// response without CORS hides its status (0); a page can clear its own timing buffer.

import { resolveTab } from './tabs.js';

const CAP = 300;
const MAX_HEADERS = 60;
const MAX_VALUE = 1000;
const MAX_URL = 2000;
const ANSWER_MS = 3000; // a page blocked by a dialog never answers: list what the hook saw
const TYPES = /** @type {Record<string, string>} */ ({
  xmlhttprequest: 'xmlhttprequest', fetch: 'fetch', script: 'script', img: 'image', image: 'image',
  css: 'stylesheet', link: 'stylesheet', iframe: 'sub_frame', frame: 'sub_frame', beacon: 'ping',
  video: 'media', audio: 'media', track: 'media', object: 'object', embed: 'object',
});

/**
 * @typedef {{name: string, value: string}} Header
 * @typedef {{id: number, method: string, url: string, type: string, status: number,
 *   status_text: string, start: number, end: number | null, duration_ms: number | null,
 *   size: number | null, from_cache: boolean, error: string | null, request_headers: Header[],
 *   response_headers: Header[]}} Request
 * @typedef {{name: string, type: string, start: number, duration: number, status: number,
 *   encoded: number, decoded: number, transfer: number, done: boolean}} Timing
 * @typedef {{api: string, method: string, url: string, status: number, error: string | null,
 *   start: number, end: number, request_headers: Header[], response_headers: Header[]}} Hooked
 */

/** @type {Map<string, number>} a request's key → its id, so it keeps it across calls */
const ids = new Map();
let nextId = 1;
/** @type {Map<number, Hooked[]>} fetch/XHR the page hook reported, by tab */
const hooked = new Map();
/**
 * @type {Map<number, Map<number, Request>>} every request read so far, by tab then id: a
 * document's timing goes with it, so what an earlier page reported stays listed after it.
 */
const listed = new Map();

/** @param {string} key */
function idFor(key) {
  let id = ids.get(key);
  if (id === undefined) {
    ids.set(key, (id = nextId++));
    if (ids.size > 20 * CAP) ids.delete(/** @type {string} */ (ids.keys().next().value));
  }
  return id;
}

/** @param {unknown} headers @returns {Header[]} */
function keep(headers) {
  if (!Array.isArray(headers)) return [];
  return headers.slice(0, MAX_HEADERS).filter((h) => h && typeof h.name === 'string').map((h) => ({
    name: String(h.name).slice(0, 200),
    value: String(h.value ?? '').slice(0, MAX_VALUE),
  }));
}

/**
 * A fetch/XHR the page hook reported (content/bridge-relay.js validated it); kept for the listing.
 * Its `time` is when it ended.
 * @param {number} tabId
 * @param {any} e
 */
export function noteRequest(tabId, e) {
  if (typeof e.url !== 'string' || typeof e.time !== 'number') return;
  const end = e.time;
  const start = end - (Number(e.duration_ms) || 0);
  let list = hooked.get(tabId);
  if (!list) hooked.set(tabId, (list = []));
  list.push({
    api: e.api === 'xhr' ? 'xhr' : 'fetch', method: String(e.method || 'GET'), url: e.url.slice(0, MAX_URL),
    status: Number(e.status) || 0, error: typeof e.error === 'string' ? e.error : null, start, end,
    request_headers: keep(e.request_headers), response_headers: keep(e.response_headers),
  });
  if (list.length > CAP) list.splice(0, list.length - CAP);
}

/** @param {number} tabId */
export function forgetTab(tabId) {
  hooked.delete(tabId);
  listed.delete(tabId);
}

/** Runs in the page (ISOLATED world): its navigation and resource timing, flattened. */
function readTiming() {
  /** @param {any} e @param {string} type */
  const flat = (e, type) => ({
    name: e.name, type, start: performance.timeOrigin + e.startTime, duration: e.duration,
    status: e.responseStatus || 0, encoded: e.encodedBodySize, decoded: e.decodedBodySize,
    transfer: e.transferSize, done: type !== 'main_frame' || e.loadEventEnd > 0,
  });
  const nav = performance.getEntriesByType('navigation').map((e) => flat(e, 'main_frame'));
  const res = performance.getEntriesByType('resource').map((e) => flat(e, /** @type {any} */ (e).initiatorType));
  return [...nav, ...res];
}

/** @param {number} tabId @returns {Promise<Timing[]>} */
async function timings(tabId) {
  const asked = chrome.scripting.executeScript({
    target: { tabId }, world: 'ISOLATED', injectImmediately: true, func: readTiming,
  }).then((r) => /** @type {Timing[]} */ (r?.[0]?.result) || [], () => []); // restricted page: none
  const late = new Promise((ok) => setTimeout(() => ok([]), ANSWER_MS));
  return /** @type {Promise<Timing[]>} */ (Promise.race([asked, late]));
}

/**
 * The hook's report of a fetch/XHR timing entry: same URL, nearest start, not taken yet.
 * @param {Timing} t @param {Hooked[]} list @param {Set<Hooked>} used
 */
function hookOf(t, list, used) {
  let best = null;
  for (const h of list) {
    if (h.url !== t.name || used.has(h)) continue;
    if (!best || Math.abs(h.start - t.start) < Math.abs(best.start - t.start)) best = h;
  }
  return best;
}

/** @param {Timing} t @param {Hooked | null} h @returns {Request} */
function fromTiming(t, h) {
  const cached = t.transfer === 0 && t.decoded > 0;
  return {
    id: idFor(`${t.start}|${t.name}`), method: h?.method || 'GET', url: t.name.slice(0, MAX_URL),
    type: TYPES[t.type] || (t.type === 'main_frame' ? t.type : 'other'), status: t.status || h?.status || 0,
    status_text: '', start: t.start, end: t.done ? t.start + t.duration : null,
    duration_ms: t.done ? t.duration : null, size: t.encoded || cached ? t.encoded : null, from_cache: cached,
    error: h?.error || null, request_headers: h?.request_headers || [], response_headers: h?.response_headers || [],
  };
}

/** A fetch/XHR with no timing entry (it failed before an answer). @param {Hooked} h @returns {Request} */
function fromHook(h) {
  return {
    id: idFor(`hook|${h.start}|${h.url}`), method: h.method, url: h.url,
    type: h.api === 'xhr' ? 'xmlhttprequest' : 'fetch', status: h.status, status_text: '', start: h.start,
    end: h.end, duration_ms: h.end - h.start, size: null, from_cache: false, error: h.error || 'failed',
    request_headers: h.request_headers, response_headers: h.response_headers,
  };
}

/** @param {number} tabId @returns {Promise<Request[]>} what the page reports now */
async function current(tabId) {
  const list = hooked.get(tabId) || [];
  const used = new Set();
  const out = (await timings(tabId)).map((t) => {
    const h = t.type === 'fetch' || t.type === 'xmlhttprequest' ? hookOf(t, list, used) : null;
    if (h) used.add(h);
    return fromTiming(t, h);
  });
  for (const h of list) if (!used.has(h) && h.status === 0) out.push(fromHook(h));
  return out;
}

/** @param {number} tabId @returns {Promise<Request[]>} the latest CAP read so far, oldest first */
async function requestsOf(tabId) {
  let kept = listed.get(tabId);
  if (!kept) listed.set(tabId, (kept = new Map()));
  for (const r of await current(tabId)) kept.set(r.id, r); // a later read knows more (hook, end)
  const all = [...kept.values()].sort((a, b) => a.start - b.start);
  for (const gone of all.splice(0, Math.max(0, all.length - CAP))) kept.delete(gone.id);
  return all;
}

/** One request as listed (no headers), or in full. @param {Request} r @param {boolean} full */
function shown(r, full) {
  const { request_headers, response_headers, ...rest } = r;
  return full ? r : rest;
}

/**
 * `network {tab_id?, since_ms?, id?}`: the tab's requests since `since_ms` (epoch ms), oldest
 * first, or the one numbered `id` with its headers.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function network(ctx) {
  const tab = await resolveTab(ctx.args.tab_id);
  const list = await requestsOf(/** @type {number} */ (tab.id));
  if (ctx.args.id !== null) {
    const r = list.find((x) => x.id === ctx.args.id);
    return { tab_id: tab.id, requests: r ? [shown(r, true)] : [] };
  }
  const since = ctx.args.since_ms ?? 0;
  return { tab_id: tab.id, requests: list.filter((r) => r.start >= since).map((r) => shown(r, false)) };
}
