// Session recording for the host's timeline: forwards the tracked tab's user actions
// (content/recorder.js), page errors (content/errors-*.js), network entries (content/network-main.js,
// only while network capture is on) and navigations to the host as events `action`,
// `page_error`, `network` and `nav`. Other tabs are ignored; a tab is recorded from when it is the
// tracked one. The host numbers and keeps everything (python/shotbridge/recording.py).

import { Code, ShotError } from './errors.js';
import { trackedTabId, resolveTab } from './tabs.js';

const NETWORK_SCRIPT_ID = 'shotbridge-network';
const NETWORK_FILE = 'content/network-main.js';

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
    void isTracked(tabId, sender.frameId).then((yes) => {
      if (yes) forward(event, /** @type {number} */ (tabId), payload);
    });
  });
  chrome.tabs.onUpdated.addListener((tabId, info, tab) => {
    // A committed navigation (also history.pushState) reports a url; a finished load "complete".
    if (!info.url && info.status !== 'complete') return;
    void isTracked(tabId).then((yes) => {
      if (!yes) return;
      forward('nav', tabId, {
        phase: info.status === 'complete' ? 'complete' : 'commit',
        url: tab.url || info.url || '',
        title: tab.title || '',
        time: Date.now(),
      });
    });
  });
}

/** @returns {Promise<boolean>} whether the network wrapper is registered */
async function networkOn() {
  const found = await chrome.scripting.getRegisteredContentScripts({ ids: [NETWORK_SCRIPT_ID] });
  return found.length > 0;
}

/**
 * `record_config {network?: boolean}` → `{network}`. Turning network capture on registers the
 * MAIN-world wrapper for every new document and injects it into the tracked tab's current one;
 * turning it off unregisters it (pages already wrapped keep the wrapper until they reload, and
 * the host drops what they send).
 * @param {import('./context.js').CommandContext} ctx
 */
export async function recordConfig(ctx) {
  const want = ctx.args.network;
  if (want !== undefined && typeof want !== 'boolean') throw new ShotError(Code.BAD_REQUEST, 'network must be a boolean');
  const on = await networkOn();
  if (want === true && !on) {
    await chrome.scripting.registerContentScripts([{
      id: NETWORK_SCRIPT_ID,
      js: [NETWORK_FILE],
      matches: ['<all_urls>'],
      runAt: 'document_start',
      world: 'MAIN',
      persistAcrossSessions: false,
    }]);
  } else if (want === false && on) {
    await chrome.scripting.unregisterContentScripts({ ids: [NETWORK_SCRIPT_ID] });
  }
  if (want === true) {
    // The current document started before the registration: wrap it now (best effort: restricted
    // pages refuse scripts, and that is fine).
    try {
      const tab = await resolveTab(ctx.args.tab_id);
      await chrome.scripting.executeScript({ target: { tabId: /** @type {number} */ (tab.id) }, files: [NETWORK_FILE], world: 'MAIN' });
    } catch (e) {
      console.info('[shotbridge] network wrapper not injected now:', /** @type {any} */ (e)?.message);
    }
  }
  return { network: await networkOn() };
}
