// navigate: goto/back/forward/reload (or open a new tab) and wait until the load completes.

import { Code, ShotError, messageOf } from './errors.js';
import { resolveTab, tabInfo, track, trackedTabId } from './tabs.js';
import { detachNow, isAttached, withDebugger } from './debugger.js';
import * as dialogs from './dialogs.js';
import { openDialog } from './open-dialogs.js';

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const ALLOWED_SCHEMES = new Set(['http:', 'https:', 'file:', 'about:', 'data:', 'blob:']);

/** @param {string} url a non-blank string (lib/args.js) */
function parseUrl(url) {
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
  // A window opened on about:blank reports that page's own load too, sometimes after we start
  // listening: its "complete" is not the end of a load to somewhere else.
  const blankBefore = (/** @type {chrome.tabs.Tab} */ t) => t.url === 'about:blank' && targetUrl !== null && targetUrl !== 'about:blank';
  /** @type {Parameters<typeof chrome.tabs.onUpdated.addListener>[0]} */
  const onUpdated = (id, info, tab) => {
    if (id !== tabId) return;
    if (info.status === 'loading') sawLoading = true;
    if (info.status === 'loading' || info.url) {
      sawChange = true;
      changed();
    }
    if (info.status === 'complete' && !blankBefore(tab) && (sawLoading || (started && sameTarget(tab)))) resolve(tab);
  };
  chrome.tabs.onUpdated.addListener(onUpdated);
  // Polling backs up the event for loads that finished between our calls.
  const poll = setInterval(async () => {
    if (!started) return;
    const t = await chrome.tabs.get(tabId).catch(() => null);
    if (t && t.status === 'complete' && !blankBefore(t) && (sawLoading || sameTarget(t))) resolve(t);
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
  const url = args.url !== null ? parseUrl(args.url) : null;
  const action = args.action ?? (url !== null ? 'goto' : null);
  if (!['goto', 'back', 'forward', 'reload'].includes(action)) {
    throw new ShotError(Code.BAD_REQUEST, 'navigate needs a url, or action "back", "forward" or "reload"');
  }
  if (action === 'goto' && url === null) throw new ShotError(Code.BAD_REQUEST, 'action "goto" needs a url');

  if (args.new_tab) {
    if (action !== 'goto') throw new ShotError(Code.BAD_REQUEST, 'new_tab only works with a url');
    // The new tab opens in the window of the tracked tab (or the last focused one).
    // It opens blank first so the debugger listens before the page's own scripts run (a page
    // that alerts while loading is then reported, not a 30 s timeout).
    const current = await resolveTab(args.tab_id).catch(() => null);
    const created = await chrome.tabs.create({ url: 'about:blank', active: true, ...(current ? { windowId: current.windowId } : {}) });
    const id = /** @type {number} */ (created.id);
    ctx.watchTab(id);
    await track(id);
    return listening(ctx, id, args.keep_beforeunload, (notes) =>
      load(ctx, id, url, () => chrome.tabs.update(id, { url: /** @type {string} */ (url) }), false, notes));
  }

  const tab = await resolveTab(args.tab_id);
  ctx.watchTab(/** @type {number} */ (tab.id));
  /** @type {string[]} */
  const notes = [];
  // A page that does not answer is dealt with first; it may take a new tab (a new renderer).
  const id = await unblock(ctx, tab, notes);
  const replaced = id !== tab.id;
  if (replaced && (action === 'back' || action === 'forward')) {
    throw new ShotError(Code.NAVIGATION_FAILED, `${notes.join(' ')} Its history went with it: navigate to a url instead.`);
  }
  const target = action === 'goto' ? url : replaced && action === 'reload' ? (tab.url || null) : null;
  const run = {
    goto: () => chrome.tabs.update(id, { url: /** @type {string} */ (url) }),
    back: () => historyStep(id, -1, () => chrome.tabs.goBack(id)),
    forward: () => historyStep(id, 1, () => chrome.tabs.goForward(id)),
    reload: () => (replaced ? chrome.tabs.update(id, { url: /** @type {string} */ (target) }) : chrome.tabs.reload(id)),
  }[/** @type {'goto' | 'back' | 'forward' | 'reload'} */ (action)];
  return listening(ctx, id, args.keep_beforeunload, async (more) => {
    more.unshift(...notes);
    return load(ctx, id, target, run, false, more);
  });
}

/**
 * Run a navigation with the debugger attached: Chrome then reports the dialogs the new page
 * opens while it loads, and beforeunload prompts are accepted (the model asked to leave) unless
 * `keep` (keep_beforeunload) says the model answers them itself. Without a debugger (the user
 * refused it) the navigation runs as before.
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {boolean} keep
 * @param {(notes: string[]) => Promise<{tab: any, dialog?: any}>} fn
 */
async function listening(ctx, tabId, keep, fn) {
  /** @type {string[]} */
  const notes = [];
  const run = () => dialogs.leavingPage(tabId, keep, () => fn(notes));
  let out;
  try {
    out = await withDebugger(tabId, { idleMs: 2000, cancelled: ctx.cancelled }, run);
  } catch (e) {
    if (/** @type {any} */ (e).code !== Code.DEBUGGER_UNAVAILABLE || ctx.done) throw e;
    notes.push('The debugger is not available, so dialogs the page opens while loading cannot be seen.');
    out = await run();
  }
  return { ...out, ...(notes.length ? { notes } : {}) };
}

/**
 * Before leaving a page: a page that does not answer cannot be left in place (Chrome waits for
 * its renderer to unload it, and a same-site URL reuses that renderer). A dialog Chrome reported
 * is dismissed. A busy main thread (or a dialog opened while nobody listened) has its renderer
 * ended with Page.crash when a debugger session attached before it got stuck is at hand; else
 * (measured: a session attached to a stuck renderer never reaches it, so Page.crash does nothing,
 * and Chrome waits on that renderer for any navigation of the tab) the tab is replaced by a new
 * one in its place, which becomes the tracked tab.
 * @param {import('./context.js').CommandContext} ctx
 * @param {chrome.tabs.Tab} tab
 * @param {string[]} notes
 * @returns {Promise<number>} the tab to navigate: `tab`, or the one that replaced it
 */
async function unblock(ctx, tab, notes) {
  const tabId = /** @type {number} */ (tab.id);
  const open = openDialog(tabId);
  if (open && open.type !== 'beforeunload') {
    const dismissed = await dialogs.answer(tabId, { accept: false }, ctx.cancelled).then(() => true, () => false);
    if (dismissed) notes.push(`Dismissed the ${open.type} dialog ${JSON.stringify(open.message)} to leave the page.`);
  }
  if (await dialogs.answers(tabId, 800)) return tabId;
  const why = `Tab ${tabId} was not answering (an endless script, or a dialog opened while shotbridge was not attached)`;
  if (isAttached(tabId)) {
    ctx.step = 'ending the renderer of a page that does not answer (Page.crash)';
    // Page.crash never answers (its renderer is gone); a crashed tab refuses scripts at once.
    await withDebugger(tabId, { idleMs: 0, cancelled: ctx.cancelled },
      (dbg) => Promise.race([dbg.send('Page.crash').catch(() => {}), sleep(300)])).catch(() => {});
    for (let i = 0; i < 3; i++) {
      if (await dialogs.answers(tabId, 250)) {
        notes.push(`${why}; shotbridge ended its renderer (Page.crash) so the navigation could proceed.`);
        return tabId;
      }
    }
  }
  ctx.step = 'replacing a tab that does not answer';
  await detachNow(tabId);
  const tracked = (await trackedTabId()) === tabId;
  const fresh = await chrome.tabs.create({ windowId: tab.windowId, index: tab.index + 1, active: tab.active, url: 'about:blank' });
  const freshId = /** @type {number} */ (fresh.id);
  ctx.watched.delete(tabId);
  ctx.watchTab(freshId);
  if (tracked || ctx.args.tab_id === undefined || ctx.args.tab_id === null) await track(freshId);
  // Closing does not wait on the stuck renderer for long (Chrome ends it).
  await Promise.race([chrome.tabs.remove(tabId).catch(() => {}), sleep(2000)]);
  notes.push(`${why}; shotbridge closed it and opened tab ${freshId} in its place (a new renderer), ` +
    `which is the tracked tab now.`);
  return freshId;
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
async function load(ctx, tabId, targetUrl, start, assumeLoading = false, notes = []) {
  const waiter = loadWaiter(tabId, targetUrl, assumeLoading);
  const dialog = dialogs.whenOpen(tabId);
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
    // A dialog the new page opens while loading stops its load: report it instead of waiting.
    const done = await ctx.guard(Promise.race([waiter.promise, dialog.promise.then((d) => ({ dialog: d }))]));
    if ('dialog' in done) {
      notes.push(dialogs.dialogNote(done.dialog) + (done.dialog.type === 'beforeunload'
        ? ' The navigation waits for the answer: accept=true leaves the page, accept=false stays.'
        : ' The page has not finished loading.'));
      const now = await chrome.tabs.get(tabId);
      return { tab: tabInfo(now, await trackedTabId()), dialog: done.dialog };
    }
    return { tab: tabInfo(done, await trackedTabId()) };
  } catch (e) {
    if (/** @type {any} */ (e).code === Code.TIMEOUT) {
      throw new ShotError(Code.TIMEOUT, `The page did not finish loading within ${ctx.timeoutMs} ms.`);
    }
    throw e;
  } finally {
    dialog.cancel();
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
  // A size out of 200..4000 CSS px reads as the default (lib/args.js).
  const win = await chrome.windows.create({
    url: 'about:blank',
    type: 'popup',
    focused: false,
    width: ctx.args.width,
    height: ctx.args.height,
  });
  const tab = win?.tabs?.[0];
  if (!tab || tab.id === undefined) throw new ShotError(Code.INTERNAL, 'Chrome opened a window without a tab.');
  const id = tab.id;
  ownTabs.add(id);
  ctx.watchTab(id);
  try {
    return { ...(await load(ctx, id, url, () => chrome.tabs.update(id, { url }))), window_id: win.id };
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
  if (!ownTabs.has(id)) throw new ShotError(Code.BAD_REQUEST, `Tab ${id} was not opened by open_tab; shotbridge never closes the user's tabs.`);
  await closeOwn(id);
  return { closed: id };
}
