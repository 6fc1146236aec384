// The requests each tab made, as chrome.webRequest reports them (every type: documents, scripts,
// fetch/XHR, images...), for `network`: method, URL, type, status, timing, size, the error of a
// failed one, and the headers. No bodies: webRequest never shows them (the page hook of
// content/bridge-main.js records fetch/XHR bodies while network capture is on). Kept in memory
// only, the latest CAP per tab; header values are cut, and the MCP server redacts what it shows.

import { resolveTab } from './tabs.js';

const CAP = 300;
const MAX_HEADERS = 60;
const MAX_VALUE = 1000;
const MAX_URL = 2000;

/**
 * @typedef {{name: string, value: string}} Header
 * @typedef {{id: number, request_id: string, method: string, url: string, type: string,
 *   status: number, status_text: string, start: number, end: number | null, size: number | null,
 *   from_cache: boolean, error: string | null, request_headers: Header[],
 *   response_headers: Header[]}} Request
 */

/** @type {Map<number, Request[]>} */
const byTab = new Map();
/** @type {Map<string, Request>} requests still in flight, by Chrome's id */
const open = new Map();
let nextId = 1;

/** @param {chrome.webRequest.HttpHeader[] | undefined} headers @returns {Header[]} */
function keep(headers) {
  return (headers || []).slice(0, MAX_HEADERS).map((h) => ({
    name: String(h.name).slice(0, 200),
    value: String(h.value ?? '').slice(0, MAX_VALUE),
  }));
}

/** @param {Header[]} headers */
function contentLength(headers) {
  const h = headers.find((x) => x.name.toLowerCase() === 'content-length');
  const n = h ? Number(h.value) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/** @param {{tabId: number, requestId: string, method: string, url: string, type: string, timeStamp: number}} d */
function started(d) {
  if (d.tabId < 0) return; // the browser's own or a worker's: no tab
  /** @type {Request} */
  const r = {
    id: nextId++, request_id: d.requestId, method: d.method, url: d.url.slice(0, MAX_URL), type: d.type,
    status: 0, status_text: '', start: d.timeStamp, end: null, size: null, from_cache: false, error: null,
    request_headers: [], response_headers: [],
  };
  let list = byTab.get(d.tabId);
  if (!list) byTab.set(d.tabId, (list = []));
  list.push(r);
  if (list.length > CAP) for (const gone of list.splice(0, list.length - CAP)) open.delete(gone.request_id);
  open.set(d.requestId, r);
}

/** Called once from the service worker's top level. */
export function installListeners() {
  const filter = { urls: ['<all_urls>'] };
  chrome.webRequest.onBeforeRequest.addListener(started, filter);
  chrome.webRequest.onSendHeaders.addListener((d) => {
    const r = open.get(d.requestId);
    if (r) r.request_headers = keep(d.requestHeaders);
  }, filter, ['requestHeaders']);
  chrome.webRequest.onResponseStarted.addListener((d) => {
    const r = open.get(d.requestId);
    if (!r) return;
    r.status = d.statusCode;
    r.status_text = (d.statusLine || '').replace(/^HTTP\/\S+\s+\d+\s*/, '').slice(0, 200);
    r.from_cache = !!d.fromCache;
    r.response_headers = keep(d.responseHeaders);
    r.size = contentLength(r.response_headers);
  }, filter, ['responseHeaders']);
  chrome.webRequest.onCompleted.addListener((d) => {
    const r = open.get(d.requestId);
    if (!r) return;
    r.status = d.statusCode;
    r.end = d.timeStamp;
    open.delete(d.requestId);
  }, filter);
  chrome.webRequest.onErrorOccurred.addListener((d) => {
    const r = open.get(d.requestId);
    if (!r) return;
    r.error = d.error;
    r.end = d.timeStamp;
    open.delete(d.requestId);
  }, filter);
  chrome.tabs.onRemoved.addListener((tabId) => {
    for (const r of byTab.get(tabId) || []) open.delete(r.request_id);
    byTab.delete(tabId);
  });
}

/**
 * One request as listed (no headers), or in full.
 * @param {Request} r
 * @param {boolean} full
 */
function shown(r, full) {
  const { request_id: _, request_headers, response_headers, ...rest } = r;
  const duration = r.end === null ? null : Math.round(r.end - r.start);
  return { ...rest, duration_ms: duration, ...(full ? { request_headers, response_headers } : {}) };
}

/**
 * `network {tab_id?, since_ms?, id?}`: the tab's requests since `since_ms` (epoch ms), oldest
 * first, or the one numbered `id` with its headers.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function network(ctx) {
  const tab = await resolveTab(ctx.args.tab_id);
  const list = byTab.get(/** @type {number} */ (tab.id)) || [];
  if (ctx.args.id !== null) {
    const r = list.find((x) => x.id === ctx.args.id);
    return { tab_id: tab.id, requests: r ? [shown(r, true)] : [] };
  }
  const since = ctx.args.since_ms ?? 0;
  return { tab_id: tab.id, requests: list.filter((r) => r.start >= since).map((r) => shown(r, false)) };
}
