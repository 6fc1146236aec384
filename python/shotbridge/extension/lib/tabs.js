// The tracked tab: the tab commands act on when they name none. By default it follows the active tab
// of the last focused normal window; `track` pins another one. The pin survives a service-worker
// restart (chrome.storage.session) and is dropped when its tab closes, which falls back to the default.

import { Code, ShotError } from './errors.js';
import { assertCapturable } from './restricted.js';

const STORAGE_KEY = 'tracked_tab_id';

/** @type {number | null} explicitly tracked tab (null: follow the active tab) */
let pinnedTabId = null;
/** @type {number | null} last tracked tab we told the host about */
let lastAnnouncedTabId = null;
let lastAnnounced = '';
/** @type {(event: string, data: object) => void} */
let emit = () => {};

/** Resolves once the pin has been read back from session storage. */
export const ready = chrome.storage.session
  .get(STORAGE_KEY)
  .then((got) => {
    const id = got[STORAGE_KEY];
    if (typeof id === 'number' && pinnedTabId === null) pinnedTabId = id;
  })
  .catch((e) => console.info('[shotbridge] could not restore tracked tab:', e?.message));

/** @param {(event: string, data: object) => void} fn sends an event to the host */
export function setEmitter(fn) {
  emit = fn;
}

/**
 * @typedef {{id: number, window_id: number, url: string, title: string, active: boolean, tracked: boolean}} TabInfo
 */

/**
 * @param {chrome.tabs.Tab} tab
 * @param {number | null} trackedId
 * @returns {TabInfo}
 */
export function tabInfo(tab, trackedId) {
  return {
    id: /** @type {number} */ (tab.id),
    window_id: tab.windowId,
    url: tab.url || tab.pendingUrl || '',
    title: tab.title || '',
    active: !!tab.active,
    tracked: tab.id === trackedId,
  };
}

/** Active tab of the last focused normal window, or null (e.g. no windows). */
async function defaultTab() {
  // One call when the last focused window is a normal one (nearly always), else two.
  const [last] = await chrome.tabs.query({ active: true, lastFocusedWindow: true, windowType: 'normal' }).catch(() => []);
  if (last) return last;
  try {
    const win = await chrome.windows.getLastFocused({ windowTypes: ['normal'] });
    const [tab] = await chrome.tabs.query({ active: true, windowId: win.id });
    if (tab) return tab;
  } catch {
    // no focused normal window: fall through to any active tab
  }
  const [tab] = await chrome.tabs.query({ active: true, windowType: 'normal' });
  return tab || null;
}

/** @returns {Promise<chrome.tabs.Tab | null>} the tracked tab now */
export async function trackedTab() {
  await ready;
  if (pinnedTabId !== null) {
    try {
      return await chrome.tabs.get(pinnedTabId);
    } catch {
      await setPinned(null); // closed while the worker slept
    }
  }
  return defaultTab();
}

/** @returns {Promise<number | null>} */
export async function trackedTabId() {
  const tab = await trackedTab();
  return tab?.id ?? null;
}

/**
 * The tab a command acts on: `tabId` if given, else the tracked tab.
 * @param {number | null | undefined} tabId
 * @returns {Promise<chrome.tabs.Tab>}
 */
export async function resolveTab(tabId) {
  if (tabId !== undefined && tabId !== null) {
    if (!Number.isInteger(tabId)) throw new ShotError(Code.BAD_REQUEST, 'tab_id must be an integer');
    try {
      return await chrome.tabs.get(tabId);
    } catch {
      throw new ShotError(Code.NO_TAB, `No tab with id ${tabId}.`);
    }
  }
  const tab = await trackedTab();
  if (!tab) throw new ShotError(Code.NO_TAB, 'No tab to act on: no browser window is open.');
  return tab;
}

/** @param {number | null} tabId */
async function setPinned(tabId) {
  pinnedTabId = tabId;
  try {
    if (tabId === null) await chrome.storage.session.remove(STORAGE_KEY);
    else await chrome.storage.session.set({ [STORAGE_KEY]: tabId });
  } catch (e) {
    console.info('[shotbridge] could not persist tracked tab:', e?.message);
  }
}

/**
 * Pin `tabId` as the tracked tab (null: follow the active tab again).
 * @param {number | null} tabId
 * @returns {Promise<chrome.tabs.Tab | null>}
 */
export async function track(tabId) {
  await ready;
  if (tabId === null) {
    await setPinned(null);
  } else {
    try {
      await chrome.tabs.get(tabId);
    } catch {
      throw new ShotError(Code.NO_TAB, `No tab with id ${tabId}.`);
    }
    await setPinned(tabId);
  }
  const tab = await trackedTab();
  if (tab) announce(tab);
  return tab;
}

/**
 * Send tab_changed when the tracked tab or what it shows changed; deduplicated so a navigation's
 * several onUpdated calls cost one event.
 * @param {chrome.tabs.Tab} tab
 */
function announce(tab) {
  const data = { tab_id: tab.id, url: tab.url || tab.pendingUrl || '', title: tab.title || '' };
  const key = JSON.stringify(data);
  if (tab.id === lastAnnouncedTabId && key === lastAnnounced) return;
  lastAnnouncedTabId = tab.id ?? null;
  lastAnnounced = key;
  emit('tab_changed', data);
}

/** @type {Set<(tabId: number) => void>} */
const removedListeners = new Set();

/**
 * Be told when a tab closes (commands use it to fail fast with tab_closed).
 * @param {(tabId: number) => void} fn
 * @returns {() => void} unsubscribe
 */
export function onTabRemoved(fn) {
  removedListeners.add(fn);
  return () => removedListeners.delete(fn);
}

/** Wire chrome.tabs/windows listeners; called once from the service worker's top level. */
export function installListeners() {
  chrome.tabs.onRemoved.addListener((tabId) => {
    for (const fn of [...removedListeners]) fn(tabId);
    if (tabId === pinnedTabId) {
      void setPinned(null).then(() => trackedTab()).then((t) => t && announce(t));
    }
  });
  chrome.tabs.onUpdated.addListener((tabId, info, tab) => {
    // A committed navigation reports a new url; a finished load reports status "complete" (with
    // the final title). Both are cheap to forward, for the tracked tab only.
    if (!info.url && info.status !== 'complete') return;
    if (pinnedTabId !== null ? tabId !== pinnedTabId : !tab.active) return;
    void trackedTabId().then((id) => id === tabId && announce(tab));
  });
  // In follow-the-active-tab mode, switching tabs or windows changes the tracked tab.
  const followActive = () => {
    if (pinnedTabId !== null) return;
    void trackedTab().then((t) => t && announce(t));
  };
  chrome.tabs.onActivated.addListener(followActive);
  chrome.windows.onFocusChanged.addListener((windowId) => {
    if (windowId !== chrome.windows.WINDOW_ID_NONE) followActive();
  });
}

/**
 * The tab a page command acts on (`args.tab_id` or the tracked one), watched for closing and
 * checked to be a page extensions may script.
 * @param {import('./context.js').CommandContext} ctx
 * @returns {Promise<number>}
 */
export async function targetTab(ctx) {
  const tab = await resolveTab(ctx.args.tab_id);
  const tabId = /** @type {number} */ (tab.id);
  ctx.watchTab(tabId);
  assertCapturable(tab.url || tab.pendingUrl, tabId, ctx.args.tab_id !== undefined && ctx.args.tab_id !== null);
  return tabId;
}

/**
 * Where the tracked tab goes when `closing` closes: the tab Chrome activates in its window, else
 * the active tab of another normal window.
 * @param {chrome.tabs.Tab} closing
 * @param {chrome.tabs.Tab[]} others the other tabs of normal windows
 */
function successor(closing, others) {
  const sameWindow = others.filter((t) => t.windowId === closing.windowId);
  // Chrome activates the tab to the right of a closed active tab, else the one to its left.
  const right = sameWindow.find((t) => t.index > closing.index);
  const left = [...sameWindow].reverse().find((t) => t.index < closing.index);
  return right || left || others.find((t) => t.active) || others[0];
}

/**
 * `tab_close {tab_id?}`: close a tab (the tracked one by default); the tracked tab moves to
 * another tab. The last tab of the user's normal windows is never closed: that would close the
 * browser.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function tabClose(ctx) {
  const tab = await resolveTab(ctx.args.tab_id);
  const id = /** @type {number} */ (tab.id);
  const all = await chrome.tabs.query({ windowType: 'normal' });
  const others = all.filter((t) => t.id !== id);
  if (!others.length && all.some((t) => t.id === id)) {
    throw new ShotError(Code.BAD_REQUEST, `Tab ${id} is the last tab of this browser, and closing it would close the ` +
      'browser: shotbridge does not close it. Navigate it elsewhere instead (interact action="navigate").');
  }
  const wasTracked = (await trackedTabId()) === id;
  const closed = tabInfo(tab, wasTracked ? id : null);
  ctx.step = 'closing the tab';
  await chrome.tabs.remove(id);
  const next = wasTracked && others.length ? successor(tab, others) : null;
  // Pinned, so the next command acts on the tab named here, whatever the user focuses meanwhile.
  const now = next?.id !== undefined ? await track(next.id) : await trackedTab();
  return { closed, tab: now ? tabInfo(now, now.id ?? null) : null };
}
