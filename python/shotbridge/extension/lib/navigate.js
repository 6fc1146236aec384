// navigate: goto/back/forward/reload (or open a new tab) and wait until the load completes.

import { Code, ShotError, messageOf } from './errors.js';
import { resolveTab, tabInfo, track, trackedTabId } from './tabs.js';

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const ALLOWED_SCHEMES = new Set(['http:', 'https:', 'file:', 'about:', 'data:', 'blob:']);

/** @param {unknown} url */
function parseUrl(url) {
  if (typeof url !== 'string' || !url.trim()) throw new ShotError(Code.BAD_REQUEST, 'url must be a non-empty string');
  let u;
  try {
    u = new URL(url.trim());
  } catch {
    throw new ShotError(Code.BAD_REQUEST, `Not a valid absolute URL: "${url}" (include the scheme, e.g. http://127.0.0.1:8000/).`);
  }
  if (!ALLOWED_SCHEMES.has(u.protocol)) {
    throw new ShotError(Code.BAD_REQUEST, `Cannot navigate to a ${u.protocol} URL; use http, https, file, about, data or blob.`);
  }
  return u.href;
}

/**
 * Resolves with the tab once a load that started after `begin()` completes. Listening starts
 * before the navigation is issued so a fast load is not missed.
 * @param {number} tabId
 * @param {string | null} targetUrl expected final URL for goto (for same-document navigations,
 *   which finish without a "loading" phase)
 * @param {boolean} [assumeLoading] the tab is known to be loading already (just created)
 */
function loadWaiter(tabId, targetUrl, assumeLoading = false) {
  let sawLoading = assumeLoading;
  let sawChange = assumeLoading;
  let started = false;
  /** @type {() => void} */
  let changed = () => {};
  const changedPromise = new Promise((r) => { changed = () => r(undefined); });
  /** @type {(tab: chrome.tabs.Tab) => void} */
  let resolve = () => {};
  const promise = /** @type {Promise<chrome.tabs.Tab>} */ (new Promise((r) => { resolve = r; }));
  const sameTarget = (/** @type {chrome.tabs.Tab} */ t) => targetUrl !== null && (t.url === targetUrl || t.url === targetUrl.replace(/\/$/, ''));
  /** @type {Parameters<typeof chrome.tabs.onUpdated.addListener>[0]} */
  const onUpdated = (id, info, tab) => {
    if (id !== tabId) return;
    if (info.status === 'loading') sawLoading = true;
    if (info.status === 'loading' || info.url) {
      sawChange = true;
      changed();
    }
    if (info.status === 'complete' && (sawLoading || (started && sameTarget(tab)))) resolve(tab);
  };
  chrome.tabs.onUpdated.addListener(onUpdated);
  // Polling backs up the event for loads that finished between our calls.
  const poll = setInterval(async () => {
    if (!started) return;
    const t = await chrome.tabs.get(tabId).catch(() => null);
    if (t && t.status === 'complete' && (sawLoading || sameTarget(t))) resolve(t);
  }, 250);
  return {
    promise,
    /** Resolves on the first sign of navigation (loading, or a same-document URL change). */
    changed: changedPromise,
    get sawChange() {
      return sawChange;
    },
    begin() {
      started = true;
    },
    dispose() {
      clearInterval(poll);
      chrome.tabs.onUpdated.removeListener(onUpdated);
    },
  };
}

/**
 * @param {import('./context.js').CommandContext} ctx
 */
export async function navigate(ctx) {
  const args = ctx.args;
  const url = args.url !== undefined && args.url !== null ? parseUrl(args.url) : null;
  const action = args.action ?? (url !== null ? 'goto' : null);
  if (!['goto', 'back', 'forward', 'reload'].includes(action)) {
    throw new ShotError(Code.BAD_REQUEST, 'navigate needs a url, or action "back", "forward" or "reload"');
  }
  if (action === 'goto' && url === null) throw new ShotError(Code.BAD_REQUEST, 'action "goto" needs a url');

  if (args.new_tab) {
    if (action !== 'goto') throw new ShotError(Code.BAD_REQUEST, 'new_tab only works with a url');
    // The new tab opens in the window of the tracked tab (or the last focused one).
    const current = await resolveTab(args.tab_id).catch(() => null);
    const created = await chrome.tabs.create({ url: /** @type {string} */ (url), active: true, ...(current ? { windowId: current.windowId } : {}) });
    const id = /** @type {number} */ (created.id);
    ctx.watchTab(id);
    await track(id);
    return { tab: await load(ctx, id, url, async () => {}, true) };
  }

  const tab = await resolveTab(args.tab_id);
  const id = /** @type {number} */ (tab.id);
  ctx.watchTab(id);
  const run = {
    goto: () => chrome.tabs.update(id, { url: /** @type {string} */ (url) }),
    back: () => historyStep(id, -1, () => chrome.tabs.goBack(id)),
    forward: () => historyStep(id, 1, () => chrome.tabs.goForward(id)),
    reload: () => chrome.tabs.reload(id),
  }[/** @type {'goto' | 'back' | 'forward' | 'reload'} */ (action)];
  return { tab: await load(ctx, id, action === 'goto' ? url : null, run) };
}

/**
 * chrome.tabs.goBack/goForward skip history entries the user never interacted with (Chrome's
 * history-manipulation intervention), so in automated sessions they often report "Cannot find a
 * next page in history" although the page has one. Fall back to the page's own history.go(),
 * which does not skip entries; load() then verifies that something actually navigated.
 * @param {number} tabId
 * @param {number} delta
 * @param {() => Promise<unknown>} viaTabsApi
 */
async function historyStep(tabId, delta, viaTabsApi) {
  try {
    await viaTabsApi();
    return;
  } catch (e) {
    if (!/Cannot find a next page in history/i.test(messageOf(e))) throw e;
  }
  await chrome.scripting.executeScript({
    target: { tabId },
    func: (/** @type {number} */ d) => history.go(d),
    args: [delta],
  });
  return 'verify';
}

/**
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {string | null} targetUrl
 * @param {() => Promise<unknown>} start
 * @param {boolean} [assumeLoading]
 */
async function load(ctx, tabId, targetUrl, start, assumeLoading = false) {
  const waiter = loadWaiter(tabId, targetUrl, assumeLoading);
  try {
    let how;
    try {
      how = await ctx.guard(start());
    } catch (e) {
      if (/** @type {any} */ (e).code) throw e; // timeout / tab_closed from the context
      throw new ShotError(Code.NAVIGATION_FAILED, messageOf(e));
    }
    waiter.begin();
    if (how === 'verify' && !waiter.sawChange) {
      // history.go() is silent when there is no such entry: give it a moment to start.
      const moved = await ctx.guard(Promise.race([waiter.changed.then(() => true), sleep(1500).then(() => false)]));
      if (!moved) throw new ShotError(Code.NAVIGATION_FAILED, 'Cannot find a page in history to go to.');
    }
    const tab = await ctx.guard(waiter.promise);
    return tabInfo(tab, await trackedTabId());
  } catch (e) {
    if (/** @type {any} */ (e).code === Code.TIMEOUT) {
      throw new ShotError(Code.TIMEOUT, `The page did not finish loading within ${ctx.timeoutMs} ms.`);
    }
    throw e;
  } finally {
    waiter.dispose();
  }
}

// ---- a tab of our own, for one-off captures (shotctl capture URL) ----------------------------

/** Tabs opened by open_tab; close_tab closes only these, never one of the user's. */
const ownTabs = new Set();

/**
 * open_tab {url, width?, height?}: open `url` in a new unfocused popup window of its own (the
 * user's windows, tabs and focus stay as they are; a popup window is never the tracked tab, which
 * follows normal windows) and wait for it to load. A window rather than a background tab because
 * Chrome does not paint background tabs, so neither capture path could read one.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function openTab(ctx) {
  const url = parseUrl(ctx.args.url);
  const size = (/** @type {unknown} */ v, /** @type {number} */ d) => (Number.isInteger(v) && /** @type {number} */ (v) >= 200 && /** @type {number} */ (v) <= 4000 ? /** @type {number} */ (v) : d);
  const win = await chrome.windows.create({
    url: 'about:blank',
    type: 'popup',
    focused: false,
    width: size(ctx.args.width, 1280),
    height: size(ctx.args.height, 800),
  });
  const tab = win?.tabs?.[0];
  if (!tab || tab.id === undefined) throw new ShotError(Code.INTERNAL, 'Chrome opened a window without a tab.');
  const id = tab.id;
  ownTabs.add(id);
  ctx.watchTab(id);
  try {
    return { tab: await load(ctx, id, url, () => chrome.tabs.update(id, { url })), window_id: win.id };
  } catch (e) {
    await closeOwn(id);
    throw e;
  }
}

/** @param {number} tabId */
async function closeOwn(tabId) {
  ownTabs.delete(tabId);
  await chrome.tabs.remove(tabId).catch(() => {}); // the window closes with its only tab
}

/**
 * close_tab {tab_id}: close a tab open_tab opened.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function closeTab(ctx) {
  const id = ctx.args.tab_id;
  if (!Number.isInteger(id)) throw new ShotError(Code.BAD_REQUEST, 'close_tab needs tab_id');
  if (!ownTabs.has(id)) throw new ShotError(Code.BAD_REQUEST, `Tab ${id} was not opened by open_tab; shotbridge never closes the user's tabs.`);
  await closeOwn(id);
  return { closed: id };
}
