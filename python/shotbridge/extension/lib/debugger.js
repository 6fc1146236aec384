// chrome.debugger sessions. Attaching costs tens of ms (and shows Chrome's "is debugging this
// browser" bar in headed windows), so a session stays attached for a short idle window after each
// command: bursts of captures reuse it, then it detaches so the bar goes away.

import { Code, ShotError, messageOf } from './errors.js';
import * as status from './status.js';
import { openDialog } from './open-dialogs.js';
import { watchBarTail } from './viewport.js';

// The user pressed Cancel on Chrome's bar: a refusal. No CDP (clicks, typing, element and
// full-page captures) until they lift it in the toolbar popup; plain captures still work
// through captureVisibleTab, which needs no debugger.
export const CANCELLED_MESSAGE = 'The user pressed Cancel on Chrome\'s "started debugging this browser" bar, ' +
  'so shotbridge does not attach its debugger: clicks, typing, key presses and element or full-page ' +
  'captures are off until the user clicks the shotbridge toolbar icon and chooses "Allow debugging again". ' +
  'Plain screenshots of the visible tab still work.';

const PROTOCOL_VERSION = '1.3';
// Chrome keeps its bar up this long after the extension's last session detaches
// (ExtensionDevToolsInfoBarDelegate::kAutoCloseDelay); an attach before then shows no new bar.
const BAR_LINGER_MS = 5000;
/** Date.now() until which the bar of an earlier session may still be up. */
let barUntil = 0;

/**
 * @typedef {{attached: Promise<void>, users: number, idleTimer: ReturnType<typeof setTimeout> | null, gone: boolean}} Session
 */
/** @type {Map<number, Session>} */
const sessions = new Map();

/** Called once from the service worker top level. */
export function installListeners() {
  chrome.debugger.onDetach.addListener((source, reason) => {
    if (source.tabId === undefined) return;
    if (reason === 'canceled_by_user') status.update({ debugging_cancelled: true });
    const s = sessions.get(source.tabId);
    if (!s) return;
    // Detached by Chrome: tab closed, user pressed "Cancel" on the infobar, DevTools took over.
    console.info(`[shotbridge] debugger detached from tab ${source.tabId}: ${reason}`);
    s.gone = true;
    if (s.idleTimer) clearTimeout(s.idleTimer);
    sessions.delete(source.tabId);
    if (reason === 'canceled_by_user') barUntil = 0; // the bar is gone at once
    else lingerBar();
  });
  // A restarted service worker forgets its sessions but Chrome keeps them attached; release them
  // (detach fails harmlessly for sessions that belong to someone else).
  chrome.debugger.getTargets().then((targets) => {
    for (const t of targets) {
      if (t.attached && t.tabId !== undefined && !sessions.has(t.tabId)) chrome.debugger.detach({ tabId: t.tabId }).catch(() => {});
    }
  }, () => {});
}

/**
 * @param {number} tabId
 * @returns {Promise<void>}
 */
async function attach(tabId) {
  try {
    await chrome.debugger.attach({ tabId }, PROTOCOL_VERSION);
  } catch (e) {
    const msg = messageOf(e);
    throw new ShotError(Code.DEBUGGER_UNAVAILABLE, `chrome.debugger could not attach: ${msg}`);
  }
  // Page events carry JavaScript dialogs (dialogs.js). Not awaited to the end: a page blocked by
  // a dialog or an endless script may hold the renderer's half of the answer back.
  const enabled = chrome.debugger.sendCommand({ tabId }, 'Page.enable').catch(() => {});
  await Promise.race([enabled, new Promise((r) => setTimeout(r, 300))]);
}

/**
 * Detach from `tabId` now, whoever uses the session (their next send fails with
 * debugger_unavailable). For a session whose earlier commands wait on a stuck renderer.
 * @param {number} tabId
 */
export async function detachNow(tabId) {
  const s = sessions.get(tabId);
  if (s) {
    s.gone = true;
    if (s.idleTimer) clearTimeout(s.idleTimer);
    sessions.delete(tabId);
  }
  await chrome.debugger.detach({ tabId }).catch(() => {});
}

/**
 * Is a debugger session of ours attached to `tabId` now (so dialog events are being heard)?
 * @param {number} tabId
 */
export function isAttached(tabId) {
  const s = sessions.get(tabId);
  return !!s && !s.gone;
}

/** The last session went: Chrome keeps the bar BAR_LINGER_MS longer. */
function lingerBar() {
  if (sessions.size === 0) barUntil = Date.now() + BAR_LINGER_MS;
}

/**
 * @param {number} tabId
 * @param {Session} s
 * @param {number} idleMs
 */
function detachLater(tabId, s, idleMs) {
  if (s.idleTimer) clearTimeout(s.idleTimer);
  s.idleTimer = setTimeout(() => {
    if (s.users > 0 || sessions.get(tabId) !== s) return;
    // Chrome lets only a session that was attached when a dialog opened answer it (measured:
    // a later one gets "No dialog is showing"), so the session stays while one is open.
    if (openDialog(tabId)) {
      detachLater(tabId, s, Math.max(idleMs, 1000));
      return;
    }
    sessions.delete(tabId);
    lingerBar();
    chrome.debugger.detach({ tabId }).catch(() => {}); // tab may be gone already
    if (sessions.size === 0) watchBarTail(tabId, BAR_LINGER_MS); // a Cancel Chrome will not report
  }, Math.max(0, idleMs));
}

/**
 * `newBar`: this attach made Chrome show its "started debugging this browser" bar (no session of
 * ours was attached and none detached within BAR_LINGER_MS); in a headed window it shrinks the
 * viewport some 100-300 ms later.
 * @typedef {{send: (method: string, params?: object) => Promise<any>, attachMs: number, reused: boolean, newBar: boolean}} DebuggerHandle
 */

/**
 * Run `fn` with the debugger attached to `tabId`.
 * @template T
 * @param {number} tabId
 * @param {{idleMs: number, cancelled: Promise<never>, failCode?: string}} opts `cancelled` ends the
 *   wait early so the session is released on timeout even if Chrome never answers; `failCode` is
 *   the error code of a failed CDP command (default capture_failed, the first user)
 * @param {(dbg: DebuggerHandle) => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withDebugger(tabId, opts, fn) {
  await status.ready;
  if (status.current().debugging_cancelled) throw new ShotError(Code.DEBUGGER_UNAVAILABLE, CANCELLED_MESSAGE);
  let s = sessions.get(tabId);
  const reused = !!s;
  const newBar = !s && sessions.size === 0 && Date.now() >= barUntil;
  if (!s) {
    const created = /** @type {Session} */ ({ attached: attach(tabId), users: 0, idleTimer: null, gone: false });
    s = created;
    sessions.set(tabId, created);
    created.attached.catch(() => {
      if (sessions.get(tabId) === created) sessions.delete(tabId);
    });
  }
  const session = s;
  session.users++;
  if (session.idleTimer) clearTimeout(session.idleTimer);
  const t0 = performance.now();
  try {
    await Promise.race([session.attached, opts.cancelled]);
    const attachMs = performance.now() - t0;
    /** @type {DebuggerHandle} */
    const handle = {
      attachMs,
      reused,
      newBar,
      send: async (method, params) => {
        if (session.gone) throw new ShotError(Code.DEBUGGER_UNAVAILABLE, 'chrome.debugger was detached from the tab.');
        try {
          return await chrome.debugger.sendCommand({ tabId }, method, params);
        } catch (e) {
          const msg = messageOf(e);
          if (/not attached|detached/i.test(msg)) throw new ShotError(Code.DEBUGGER_UNAVAILABLE, `chrome.debugger: ${msg}`);
          throw new ShotError(opts.failCode ?? Code.CAPTURE_FAILED, `${method} failed: ${msg}`);
        }
      },
    };
    return await Promise.race([fn(handle), opts.cancelled]);
  } finally {
    session.users--;
    if (session.users === 0 && !session.gone && sessions.get(tabId) === session) detachLater(tabId, session, opts.idleMs);
  }
}
