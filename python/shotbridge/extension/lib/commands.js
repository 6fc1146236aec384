// Request dispatch: validates the envelope and the command's arguments (lib/args.js), runs the
// handler under a CommandContext (deadline + tab-closed watch) and always produces exactly one reply.

import { Code, ShotError, toErrorInfo } from './errors.js';
import { CommandContext } from './context.js';
import { parseArgs } from './args.js';
import { resolveTab, tabInfo, track, trackedTabId } from './tabs.js';
import { capture } from './capture.js';
import { closeTab, navigate, openTab } from './navigate.js';
import { discover, pageInfo } from './inspect.js';
import { elementAt, input, resolve } from './input.js';
import { cdp } from './cdp.js';
import { select } from './choose.js';
import { upload, uploadPart } from './upload.js';
import { drag } from './drag.js';
import { waitFor } from './wait.js';
import * as pageErrors from './page-errors.js';
import * as consoleLog from './console-log.js';
import { recordConfig } from './recorder.js';
import * as dialogs from './dialogs.js';
import { openDialog } from './open-dialogs.js';
import { isAttached } from './debugger.js';
import { emulate } from './emulate.js';
import { network } from './network.js';
import { tabClose } from './tabs.js';

export const EXTENSION_VERSION = chrome.runtime.getManifest().version;

/** @typedef {(ctx: CommandContext) => Promise<object>} Handler */

/** @type {Record<string, Handler>} */
const HANDLERS = {
  async ping() {
    return { pong: true, extension_version: EXTENSION_VERSION };
  },

  async list_tabs() {
    const [tabs, tracked] = await Promise.all([chrome.tabs.query({}), trackedTabId()]);
    return {
      tabs: tabs.map((t) => {
        const dialog = t.id !== undefined ? openDialog(t.id) : null;
        return { ...tabInfo(t, tracked), ...(dialog ? { dialog } : {}) };
      }),
    };
  },

  async track(ctx) {
    const tab = await track(ctx.args.tab_id);
    if (!tab) throw new ShotError(Code.NO_TAB, 'No tab to track.');
    return { tab: tabInfo(tab, tab.id ?? null) };
  },

  navigate,
  open_tab: openTab,
  close_tab: closeTab,
  capture,
  discover,
  page_info: pageInfo,
  input,
  element_at: elementAt,
  resolve,
  cdp,
  select,
  upload_part: uploadPart,
  upload,
  drag,
  wait_for: waitFor,
  record_config: recordConfig,
  dialog: dialogs.handleDialog,
  emulate,
  tab_close: tabClose,
  network,

  async errors(ctx) {
    await pageErrors.ready;
    const tab = await resolveTab(ctx.args.tab_id);
    return { errors: pageErrors.take(/** @type {number} */ (tab.id), ctx.args.clear) };
  },

  async console(ctx) {
    const tab = await resolveTab(ctx.args.tab_id);
    return { messages: consoleLog.take(/** @type {number} */ (tab.id)) };
  },
};

// Commands that wait on the page's main thread (chrome.scripting), which a JavaScript dialog or an
// endless script blocks. navigate deals with those itself (it must get out of such pages).
const PAGE_COMMANDS = new Set(['capture', 'discover', 'page_info', 'input', 'element_at', 'resolve', 'select',
  'upload', 'drag', 'wait_for']);

/**
 * Rejects (dialog_open, page_busy) as soon as the page a command waits on is known to be blocked:
 * at once when Chrome reported a dialog in that tab, else once the command has stalled for
 * dialogs.STALL_MS and the tab is diagnosed. Never resolves; stops when the command finishes.
 * @param {CommandContext} ctx
 * @returns {Promise<never>}
 */
async function pageWatch(ctx) {
  const never = /** @type {Promise<never>} */ (new Promise(() => {}));
  if (!PAGE_COMMANDS.has(ctx.cmd)) return never;
  const tab = await resolveTab(ctx.args.tab_id).catch(() => null);
  const tabId = tab?.id;
  if (tabId === undefined) return never;
  // A dialog reported while our debugger still listens is trusted at once (else the diagnosis
  // checks it is still open). A click that opens one reports it in its own result (input.js).
  const known = openDialog(tabId);
  if (known && isAttached(tabId)) throw dialogs.dialogError(known);
  for (;;) {
    await new Promise((r) => setTimeout(r, dialogs.STALL_MS));
    if (ctx.done) return never;
    const why = await dialogs.diagnose(tabId);
    if (ctx.done) return never;
    if (why && 'dialog' in why) throw dialogs.dialogError(why.dialog);
    if (why && 'busy' in why) throw dialogs.busyError(tabId);
  }
}

/**
 * @param {any} msg a decoded message from the host
 * @param {(m: object) => void} [post] sends a partial reply ({id, partial}) ahead of the reply
 * @returns {Promise<object | null>} the reply, or null when `msg` is not a request
 */
export async function handleRequest(msg, post = () => {}) {
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return null;
  const id = msg.id;
  if (typeof id !== 'string' && typeof id !== 'number') {
    console.info('[shotbridge] ignoring message without id');
    return null;
  }
  const cmd = msg.cmd;
  const args = msg.args ?? {};
  const t0 = performance.now();
  /** @type {CommandContext | null} */
  let ctx = null;
  try {
    if (typeof cmd !== 'string' || !Object.hasOwn(HANDLERS, cmd)) {
      throw new ShotError(Code.BAD_REQUEST, `Unknown command: ${JSON.stringify(cmd)}.`);
    }
    if (typeof args !== 'object' || Array.isArray(args)) throw new ShotError(Code.BAD_REQUEST, 'args must be an object');
    ctx = new CommandContext(cmd, parseArgs(cmd, args), (data) => {
      if (!ctx?.done) post({ id, partial: data });
    });
    const result = await Promise.race([HANDLERS[cmd](ctx), ctx.cancelled, pageWatch(ctx)]);
    console.debug(`[shotbridge] ${cmd} ok in ${Math.round(performance.now() - t0)} ms`);
    return { id, ok: true, result };
  } catch (e) {
    const error = toErrorInfo(e);
    console.info(`[shotbridge] ${cmd} failed (${error.code}) in ${Math.round(performance.now() - t0)} ms`);
    if (error.code === Code.INTERNAL) console.info('[shotbridge] internal error:', e);
    return { id, ok: false, error };
  } finally {
    ctx?.finish();
  }
}
