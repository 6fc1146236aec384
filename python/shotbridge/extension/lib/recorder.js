// Session recording for the host's timeline: forwards the tracked tab's user actions
// (content/recorder.js), page errors and network entries (content/bridge-*.js; network only while
// network capture is on) and navigations to the host as events `action`, `page_error`, `network`
// and `nav`. Other tabs are ignored; a tab is recorded from when it is the tracked one. The host
// numbers and keeps everything (python/shotbridge/host/recording.py). A navigation within the same
// document carries `by_page: true` when the page made it with no gesture before it (a pushState
// loop): the host keeps it as context, never as a step.

import { trackedTabId } from './tabs.js';
import { forgetTab, noteRequest } from './network.js';

const STATE_KEY = 'record_state';

/** Network capture on/off; mirrored to chrome.storage.session for service-worker restarts. */
let network = false;
const ready = chrome.storage.session.get(STATE_KEY).then((got) => {
  network = got?.[STATE_KEY]?.network === true;
}, () => {});

/** @type {(event: string, data: object) => void} */
let emit = () => {};

/** @param {(event: string, data: object) => void} fn sends an event to the host */
export function setEmitter(fn) {
  emit = fn;
}

/** @param {number | undefined} tabId @param {number | undefined} frameId */
async function isTracked(tabId, frameId = 0) {
  if (tabId === undefined || frameId !== 0) return false;
  try {
    return (await trackedTabId()) === tabId;
  } catch {
    return false;
  }
}

/** @param {string} event @param {number} tabId @param {object} data */
function forward(event, tabId, data) {
  emit(event, { ...data, tab_id: tabId });
}

/** Wire listeners; called once from the service worker's top level. */
export function installListeners() {
  chrome.runtime.onMessage.addListener((msg, sender) => {
    if (sender.id !== chrome.runtime.id || !msg || typeof msg.type !== 'string') return;
    const kinds = { 'shotbridge:action': 'action', 'shotbridge:network': 'network', 'shotbridge:page_error': 'page_error' };
    const event = kinds[/** @type {keyof typeof kinds} */ (msg.type)];
    if (!event) return;
    const payload = msg.type === 'shotbridge:action' ? msg.action : msg.entry;
    if (!payload || typeof payload !== 'object') return;
    const tabId = sender.tab?.id;
    // Every tab's top-frame fetch/XHR also completes its own `network` listing.
    if (event === 'network' && network && tabId !== undefined && sender.frameId === 0) noteRequest(tabId, payload);
    void Promise.all([ready, isTracked(tabId, sender.frameId)]).then(([, yes]) => {
      // A page that kept its hooks after network capture was turned off still sends nothing on.
      if (yes && (event !== 'network' || network)) forward(event, /** @type {number} */ (tabId), payload);
    });
  });
  // content/bridge-relay.js asks at document start whether network capture is on.
  chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
    if (sender.id !== chrome.runtime.id || !msg || msg.type !== 'shotbridge:record_state') return undefined;
    ready.then(() => sendResponse({ network }));
    return true;
  });
  chrome.tabs.onRemoved.addListener(forgetTab);
  chrome.tabs.onUpdated.addListener((tabId, info, tab) => {
    // A committed navigation (also history.pushState) reports a url; a finished load "complete".
    if (!info.url && info.status !== 'complete') return;
    const nav = {
      phase: info.status === 'complete' ? 'complete' : 'commit',
      // The URL this event is about: by the time it is dispatched a pushState loop has moved on.
      url: info.url || tab.url || '',
      title: tab.title || '',
      time: Date.now(),
    };
    // Asked at once, forwarded in turn: the navigations keep their order, and a burst of them
    // waits one answer, not one per navigation.
    const tracked = isTracked(tabId);
    const verdict = tracked.then((yes) => (yes ? navVerdict(tabId, nav.url) : {}));
    const queued = (navQueues.get(tabId) || Promise.resolve()).then(async () => {
      if (await tracked) forward('nav', tabId, { ...nav, ...(await verdict) });
    });
    navQueues.set(tabId, queued);
    void queued.finally(() => {
      if (navQueues.get(tabId) === queued) navQueues.delete(tabId);
    });
  });
}

/** @type {Map<number, Promise<void>>} */
const navQueues = new Map();
// A page that keeps its main thread busy (a loop of pushState calls) delays the answer; past this
// the navigation is recorded as it always was, a step: a page has to freeze for this long to
// make each one (an alert() open as long has the same effect).
const VERDICT_WAIT_MS = 5000;

/**
 * Whether the tab's document made this URL change on its own (content/recorder.js saw the
 * navigation start with no gesture before it): `{same_document, by_page}`, or `{}` when no
 * document of the tab claims it (a new document's load, or no answer in time).
 * @param {number} tabId
 * @param {string} url
 * @returns {Promise<{same_document?: boolean, by_page?: boolean}>}
 */
async function navVerdict(tabId, url) {
  /** @type {Promise<any>} */
  const asked = chrome.tabs.sendMessage(tabId, { type: 'shotbridge:nav_verdict', url }, { frameId: 0 }).catch(() => null);
  const timeout = new Promise((resolve) => setTimeout(() => resolve(null), VERDICT_WAIT_MS));
  const answer = await Promise.race([asked, timeout]);
  if (!answer || answer.known !== true) return {};
  return { same_document: true, by_page: answer.by_page === true };
}

/** Tell every document's bridge the new state (pages that cannot be reached just miss it). */
async function broadcast() {
  const tabs = await chrome.tabs.query({});
  await Promise.all(tabs.map((t) => t.id === undefined ? null
    : chrome.tabs.sendMessage(t.id, { type: 'shotbridge:record_state', network }).catch(() => {})));
}

/**
 * `record_config {network?: boolean}` → `{network}`. The page bridge (content/bridge-main.js)
 * wraps fetch and XMLHttpRequest from document start in the top frame but reports nothing while
 * network capture is off; this switches every open page and every later one.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function recordConfig(ctx) {
  const want = ctx.args.network; // null: leave it as it is
  await ready;
  if (want !== null && want !== network) {
    network = want;
    await chrome.storage.session.set({ [STATE_KEY]: { network } }).catch(() => {});
    await broadcast();
  }
  return { network };
}
