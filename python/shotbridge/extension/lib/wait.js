// wait_for: until a text or an element appears (or, with gone, disappears), the tab's URL matches,
// or the network is quiet — bounded, and answering what it saw either way. The page is looked at
// every POLL_MS (a page being replaced does not answer: the next look does); network quiet is
// CDP's view of the tab's requests, since a page cannot see its own requests in flight.

import { withDebugger } from './debugger.js';
import { Code, ShotError } from './errors.js';
import { callPage } from './page.js';
import { targetTab } from './tabs.js';
import { within } from './input.js';

const POLL_MS = 100;
const QUIET_MS = 500; // no request in flight this long: the network is quiet (Playwright's networkidle)
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A URL pattern: with "*" a glob ("**" any text, "*" any text without "/"), else a substring.
 * @param {string} url
 * @param {string} pattern
 */
export function urlMatches(url, pattern) {
  if (!pattern.includes('*')) return url.includes(pattern);
  const esc = pattern.split('**').map((part) => part.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*'));
  return new RegExp(`^${esc.join('.*')}$`).test(url);
}

/**
 * One look at the condition: `{met, seen}`.
 * @param {number} tabId
 * @param {any} a
 */
async function look(tabId, a) {
  if (a.url !== null) {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (!tab) throw new ShotError(Code.TAB_CLOSED, `Tab ${tabId} was closed.`);
    const url = tab.pendingUrl || tab.url || '';
    return { met: urlMatches(url, a.url) !== a.gone, seen: { url } };
  }
  const seen = await within(callPage(tabId, 'waitCheck', { text: a.text, selector: a.selector, gone: a.gone }), 1000, null);
  if (seen?.error) throw new ShotError(seen.error.code, seen.error.message);
  if (!seen) return { met: false, seen: null };
  return { met: a.gone ? seen.found === 0 : seen.found > 0, seen };
}

/**
 * `wait_for {text | selector | url | network, gone, wait_ms}` → `{met, waited_ms, seen}`.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function waitFor(ctx) {
  const a = ctx.args;
  const tabId = await targetTab(ctx);
  const t0 = performance.now();
  ctx.step = 'waiting';
  const out = a.network ? await networkQuiet(ctx, tabId, a.wait_ms) : await poll(tabId, a, t0);
  const waited_ms = Math.round(performance.now() - t0);
  if (out.met) {
    const wait = { ...(a.text !== null ? { text: a.text } : {}), ...(a.selector !== null ? { selector: a.selector } : {}),
      ...(a.url !== null ? { url: a.url } : {}), ...(a.network ? { network: true } : {}), gone: a.gone, timeout_ms: a.wait_ms };
    await within(callPage(tabId, 'recordWait', { wait }), 1000, null);
  }
  return { action: 'wait', ...out, waited_ms };
}

/** @param {number} tabId @param {any} a @param {number} t0 */
async function poll(tabId, a, t0) {
  for (;;) {
    const got = await look(tabId, a);
    if (got.met || performance.now() - t0 >= a.wait_ms) return got;
    await sleep(POLL_MS);
  }
}

/**
 * Quiet: no request of the tab in flight for QUIET_MS (requests that started before the wait
 * are seen only once they finish).
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {number} waitMs
 */
async function networkQuiet(ctx, tabId, waitMs) {
  /** @type {Map<string, string>} */
  const inflight = new Map();
  let lastChange = performance.now();
  /** @type {Parameters<typeof chrome.debugger.onEvent.addListener>[0]} */
  const on = (source, method, params) => {
    if (source.tabId !== tabId) return;
    const p = /** @type {any} */ (params);
    if (method === 'Network.requestWillBeSent') inflight.set(p.requestId, p.request?.url ?? '');
    else if (method === 'Network.loadingFinished' || method === 'Network.loadingFailed') inflight.delete(p.requestId);
    else return;
    lastChange = performance.now();
  };
  chrome.debugger.onEvent.addListener(on);
  try {
    return await withDebugger(tabId, { idleMs: 2000, cancelled: ctx.cancelled, failCode: Code.INTERNAL }, async (dbg) => {
      await dbg.send('Network.enable', {});
      const t0 = performance.now();
      for (;;) {
        const quiet = inflight.size === 0 && performance.now() - lastChange >= QUIET_MS;
        if (quiet || performance.now() - t0 >= waitMs) {
          return { met: quiet, seen: { in_flight: [...inflight.values()].slice(0, 5), in_flight_count: inflight.size } };
        }
        await sleep(50);
      }
    });
  } finally {
    chrome.debugger.onEvent.removeListener(on);
  }
}
