// cdp {method, params, allow}: one raw Chrome DevTools Protocol command on the tracked tab. Opt-in:
// it can do anything the page's DevTools can (read cookies, run script in the page), so the host
// only sends it when the user enabled it (`shotctl config allow-cdp on`, checked and logged by the
// host on every call), and this side insists on the explicit `allow: true` so no caller reaches it
// by accident. Methods that return the page's pixels never run here: the host serves
// Page.captureScreenshot through its masked pipeline and refuses the others; this list is the
// second lock on that door.

import { Code, ShotError } from './errors.js';
import { withDebugger } from './debugger.js';
import { resolveTab } from './tabs.js';
import { assertCapturable } from './restricted.js';

// Commands that would break the shared debugger session the other commands rely on.
const REFUSED = new Set(['Target.attachToTarget', 'Target.detachFromTarget', 'Target.closeTarget', 'Browser.close']);
// Commands that return pixels or renderings without the secret masks.
const UNMASKED = new Set(['Page.captureScreenshot', 'Page.captureSnapshot', 'Page.startScreencast', 'Page.screencastFrameAck', 'Page.printToPDF', 'Tracing.start']);
const UNMASKED_DOMAINS = new Set(['HeadlessExperimental', 'LayerTree']);

/**
 * Why `method` may not run raw here, or null. Pure (unit-tested).
 * @param {string} method
 * @returns {string | null}
 */
export function refusal(method) {
  if (REFUSED.has(method)) return `${method} is not allowed: it would break shotbridge's own debugger session.`;
  if (UNMASKED.has(method) || UNMASKED_DOMAINS.has(method.split('.')[0])) {
    return `${method} is not allowed raw: it returns the page's pixels without the secret masks (the host takes masked screenshots).`;
  }
  return null;
}

/**
 * @param {import('./context.js').CommandContext} ctx
 */
export async function cdp(ctx) {
  // lib/args.js checked `allow: true`, the method's form and params' type.
  const { method, params } = ctx.args;
  const why = refusal(method);
  if (why) throw new ShotError(Code.BAD_REQUEST, why);
  const tab = await resolveTab(ctx.args.tab_id);
  const tabId = /** @type {number} */ (tab.id);
  ctx.watchTab(tabId);
  assertCapturable(tab.url || tab.pendingUrl, tabId, ctx.args.tab_id !== undefined && ctx.args.tab_id !== null);
  ctx.step = `${method}`;
  const idleMs = ctx.args.debugger_idle_ms;
  // A failing method is the caller's problem (wrong params, unknown domain): bad_request with
  // Chrome's own message.
  const result = await withDebugger(tabId, { idleMs, cancelled: ctx.cancelled, failCode: Code.BAD_REQUEST },
    (dbg) => dbg.send(method, params ?? {}));
  return { method, tab_id: tabId, result: result ?? {} };
}
