// JavaScript dialogs (alert, confirm, prompt, beforeunload) and pages that stop answering.
//
// A dialog blocks the page's main thread: every chrome.scripting call into the tab waits until
// someone answers it, and so does a page stuck in an endless script. Chrome tells a debugger
// client about dialogs (Page.javascriptDialogOpening / Closed once Page.enable ran, which
// debugger.js does on every attach), so this module keeps the open dialog of each tab from those
// events, and `diagnose` tells a slow page from a dialog from a busy main thread: the dispatcher
// asks it when a page command has not answered within STALL_MS.

import { Code, ShotError, messageOf } from './errors.js';
import { isAttached, withDebugger } from './debugger.js';
import { targetTab } from './tabs.js';
import { openDialog, openDialogs as open } from './open-dialogs.js';

/** A page command that has not answered for this long gets its tab diagnosed. */
export const STALL_MS = 1000;
/** How long the page's main thread gets to answer a trivial script before it counts as busy. */
const ANSWER_MS = 1000;

/** @typedef {import('./open-dialogs.js').DialogInfo} DialogInfo */

/**
 * Dialogs each tab's page said it was opening (content/bridge-main.js wraps alert/confirm/prompt):
 * seen even when no debugger was attached, but not answerable through CDP. Keyed by frame.
 * @type {Map<number, Map<number, DialogInfo>>}
 */
const reported = new Map();
/** @type {Map<number, number>} when each tab's page last answered a ping (Date.now()) */
const lastAnswer = new Map();
/** @type {Map<number, Set<(d: DialogInfo) => void>>} who waits for a dialog to open in a tab */
const openWaiters = new Map();
/** @type {Map<number, number>} tabs whose beforeunload prompts are accepted at once (count of navigations asking) */
const leaving = new Map();

/** Called once from the service worker top level. */
export function installListeners() {
  chrome.debugger.onEvent.addListener((source, method, params) => {
    const tabId = source.tabId;
    if (tabId === undefined) return;
    if (method === 'Page.javascriptDialogOpening') opened(tabId, /** @type {any} */ (params));
    else if (method === 'Page.javascriptDialogClosed') open.delete(tabId);
  });
  chrome.tabs.onRemoved.addListener((tabId) => {
    open.delete(tabId);
    leaving.delete(tabId);
    reported.delete(tabId);
    lastAnswer.delete(tabId);
  });
  // A new document in the tab: whatever its old page said is over. (Not on a bare URL change: a
  // history.pushState just before an alert must not forget the alert.)
  chrome.tabs.onUpdated.addListener((tabId, change) => {
    if (change.status === 'loading') reported.delete(tabId);
  });
  chrome.runtime.onMessage.addListener((msg, sender) => {
    if (sender.id !== chrome.runtime.id || !msg || msg.type !== 'shotbridge:dialog') return;
    const tabId = sender.tab?.id;
    if (tabId !== undefined) pageReport(tabId, sender.frameId ?? 0, sender.url ?? '', msg.entry);
  });
}

/**
 * A dialog report relayed by content/bridge-relay.js (already validated and bounded there).
 * @param {number} tabId
 * @param {number} frameId
 * @param {string} url
 * @param {any} entry {phase: 'opened' | 'closed', type, message}
 */
function pageReport(tabId, frameId, url, entry) {
  if (!entry || !['alert', 'confirm', 'prompt'].includes(entry.type) || typeof entry.message !== 'string') return;
  let frames = reported.get(tabId);
  if (entry.phase === 'closed') {
    frames?.delete(frameId);
    if (frames && !frames.size) reported.delete(tabId);
    return;
  }
  if (entry.phase !== 'opened') return;
  if (!frames) reported.set(tabId, (frames = new Map()));
  frames.set(frameId, {
    type: entry.type,
    message: entry.message.slice(0, 300),
    default_prompt: '',
    url,
    opened_at: Date.now(), // the service worker's clock: the page's is not trusted
    reported_by: 'page',
  });
}

/**
 * The newest dialog `tabId`'s page reported opening since it last answered, or null.
 * @param {number} tabId
 * @returns {DialogInfo | null}
 */
export function pageReported(tabId) {
  const frames = reported.get(tabId);
  if (!frames) return null;
  const since = lastAnswer.get(tabId) ?? 0;
  /** @type {DialogInfo | null} */
  let newest = null;
  for (const d of frames.values()) if (d.opened_at > since && (!newest || d.opened_at > newest.opened_at)) newest = d;
  return newest;
}

/**
 * @param {number} tabId
 * @param {{type: string, message?: string, defaultPrompt?: string, url?: string}} params
 */
function opened(tabId, params) {
  const info = /** @type {DialogInfo} */ ({
    type: params.type,
    message: params.message ?? '',
    default_prompt: params.defaultPrompt ?? '',
    url: params.url ?? '',
    opened_at: Date.now(),
  });
  if (info.type === 'beforeunload' && (leaving.get(tabId) ?? 0) > 0) {
    // A navigation the model asked for: leave the page, as a user who clicked "Leave" would.
    chrome.debugger.sendCommand({ tabId }, 'Page.handleJavaScriptDialog', { accept: true })
      .catch((e) => console.info('[shotbridge] could not accept beforeunload:', messageOf(e)));
    return;
  }
  open.set(tabId, info);
  for (const fn of [...(openWaiters.get(tabId) ?? [])]) fn(info);
}

/**
 * Resolves when a dialog opens in `tabId` (at once if one is open); `cancel` stops waiting.
 * @param {number} tabId
 * @returns {{promise: Promise<DialogInfo>, cancel: () => void}}
 */
export function whenOpen(tabId) {
  /** @type {(d: DialogInfo) => void} */
  let fn = () => {};
  const promise = /** @type {Promise<DialogInfo>} */ (new Promise((resolve) => {
    fn = resolve;
  }));
  const now = open.get(tabId);
  if (now) fn(now);
  let set = openWaiters.get(tabId);
  if (!set) openWaiters.set(tabId, (set = new Set()));
  set.add(fn);
  return {
    promise,
    cancel: () => {
      set.delete(fn);
      if (!set.size && openWaiters.get(tabId) === set) openWaiters.delete(tabId);
    },
  };
}

/**
 * While `fn` runs, beforeunload prompts in `tabId` are accepted as soon as they open (unless
 * `keep` says the model wants to answer them itself).
 * @template T
 * @param {number} tabId
 * @param {boolean} keep
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function leavingPage(tabId, keep, fn) {
  if (keep) return fn();
  leaving.set(tabId, (leaving.get(tabId) ?? 0) + 1);
  try {
    return await fn();
  } finally {
    const n = (leaving.get(tabId) ?? 1) - 1;
    if (n > 0) leaving.set(tabId, n);
    else leaving.delete(tabId);
  }
}

/** @param {DialogInfo} d */
function quoted(d) {
  const text = d.message.length > 200 ? `${d.message.slice(0, 200)}…` : d.message;
  return JSON.stringify(text).replace(/^"|"$/g, "'");
}

/**
 * The sentence every result carries while a dialog is open.
 * @param {DialogInfo} d
 */
export function dialogNote(d) {
  const how = d.type === 'prompt'
    ? 'use interact action="dialog" with accept=true (and prompt_text) or accept=false'
    : 'use interact action="dialog" with accept=true or accept=false';
  const article = d.type === 'alert' ? 'an' : 'a';
  return `The page shows ${article} ${d.type} dialog: ${quoted(d)} — it blocks the page until answered; ${how}.`;
}

/** @param {DialogInfo} d */
export function dialogError(d) {
  if (d.reported_by === 'page') {
    const article = d.type === 'alert' ? 'an' : 'a';
    return new ShotError(Code.DIALOG_OPEN,
      `The page shows ${article} ${d.type} dialog: ${quoted(d)} (it opened while shotbridge was not attached, ` +
      'so it cannot be answered through the debugger): answer it in the browser, or navigate/reload the tab ' +
      '(interact action="navigate" gets out).');
  }
  return new ShotError(Code.DIALOG_OPEN, dialogNote(d));
}

/** @param {number} tabId */
export function busyError(tabId) {
  return new ShotError(Code.PAGE_BUSY,
    `The page in tab ${tabId} is busy: its main thread has not answered for ${(2 * ANSWER_MS) / 1000} s ` +
    '(a long-running or endless script, or a dialog that opened while shotbridge was not attached). ' +
    'Navigate elsewhere or reload (interact action="navigate" works on a busy page: shotbridge ends the ' +
    'stuck renderer, or puts a new tab in its place), or open a new tab (new_tab=true).');
}

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Does the tab's main thread run a trivial script within `ms`?
 * @param {number} tabId
 * @param {number} ms
 * @returns {Promise<boolean>}
 */
export async function answers(tabId, ms = ANSWER_MS) {
  // injectImmediately: a loading document answers too (only a blocked main thread does not).
  const asked = Date.now();
  const ping = chrome.scripting.executeScript({ target: { tabId }, func: () => 1, injectImmediately: true })
    .then(() => true, () => true); // a refusal (error page, restricted) is an answer too
  const ok = await Promise.race([ping, sleep(ms).then(() => false)]);
  if (ok) {
    // A dialog the page reported before the ping was sent is over (an open one blocks the ping).
    lastAnswer.set(tabId, asked);
    const frames = reported.get(tabId);
    for (const [frameId, d] of frames ?? []) if (d.opened_at < asked) frames?.delete(frameId);
    if (frames && !frames.size) reported.delete(tabId);
  }
  return ok;
}

/**
 * Why a tab's page does not answer: a dialog, a busy main thread, or nothing (it answers now).
 * @param {number} tabId
 * @returns {Promise<{dialog: DialogInfo} | {busy: true} | null>}
 */
export async function diagnose(tabId) {
  const known = open.get(tabId);
  if (known && isAttached(tabId)) return { dialog: known };
  // Two pings in a row: the first may wait behind one of shotbridge's own long page tasks (the
  // command being diagnosed); a page that also misses the second has been stuck for ANSWER_MS * 2.
  for (let i = 0; i < 2; i++) {
    if (await answers(tabId)) {
      open.delete(tabId); // closed while nobody was attached to hear it
      return null; // (answers() also retired what the page reported)
    }
    if (open.get(tabId)) break;
  }
  // A dialog heard while the ping waited names the cause. Attaching now would not help (measured
  // in Chromium: Page.enable does not re-report a dialog that opened before it,
  // Page.handleJavaScriptDialog answers "No dialog is showing" for it, and a session attached to
  // a renderer that is already stuck never reaches it, not even with Page.crash).
  const d = open.get(tabId);
  if (d) return { dialog: d };
  // Opened while no debugger listened: the page itself said so just before it blocked.
  const said = pageReported(tabId);
  if (said) return { dialog: said };
  return { busy: true };
}

/**
 * Page.handleJavaScriptDialog on `tabId`.
 * @param {number} tabId
 * @param {{accept: boolean, promptText?: string}} how
 * @param {Promise<never>} cancelled
 * @returns {Promise<DialogInfo | null>} the dialog answered (null if Chrome never reported it)
 */
export async function answer(tabId, how, cancelled) {
  const before = open.get(tabId) ?? null;
  await withDebugger(tabId, { idleMs: 2000, cancelled, failCode: Code.NO_DIALOG }, async (dbg) => {
    try {
      await dbg.send('Page.handleJavaScriptDialog', how);
    } catch (e) {
      if (e instanceof ShotError && e.code === Code.NO_DIALOG) {
        open.delete(tabId);
        throw new ShotError(Code.NO_DIALOG,
          `No JavaScript dialog is open in tab ${tabId}, so there is nothing to accept or dismiss. ` +
          '(A dialog that opened while shotbridge was not attached cannot be answered through the ' +
          'debugger; such a page is reported as dialog_open or busy: answer it in the browser, or ' +
          'navigate or reload it.)');
      }
      throw e;
    }
  });
  open.delete(tabId);
  return before;
}

/** @param {number} ms */
function settleMs(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * dialog {accept, prompt_text?, tab_id?}: accept or dismiss the JavaScript dialog open in the tab.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function handleDialog(ctx) {
  const { accept, prompt_text: promptText } = ctx.args;
  const tabId = await targetTab(ctx);
  ctx.step = 'Page.handleJavaScriptDialog';
  /** @type {{accept: boolean, promptText?: string}} */
  const how = { accept };
  if (typeof promptText === 'string') how.promptText = promptText;
  // OK without typing returns what the prompt shows (its default), as it does for a user; Chrome
  // would return "" when promptText is left out.
  const showing = openDialog(tabId);
  if (accept && how.promptText === undefined && showing?.type === 'prompt') how.promptText = showing.default_prompt;
  const handled = await answer(tabId, how, ctx.cancelled);
  // Give the page a moment to run what follows the dialog (its return value lands in script).
  await settleMs(50);
  /** @type {string[]} */
  const notes = [];
  const nextOpen = whenOpen(tabId);
  const next = await Promise.race([nextOpen.promise, settleMs(150).then(() => null)]);
  nextOpen.cancel();
  if (next) notes.push(dialogNote(next));
  else if (!(await answers(tabId))) notes.push(busyError(tabId).message);
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  return {
    action: 'dialog',
    accepted: accept,
    dialog: handled,
    prompt_text: handled?.type === 'prompt' && accept ? (promptText ?? handled.default_prompt) : null,
    url: tab?.url ?? '',
    title: tab?.title ?? '',
    ...(next ? { open_dialog: next } : {}),
    notes,
  };
}
