// emulate: a tab seen as another device — viewport size, device scale factor, mobile, touch, user
// agent, prefers-color-scheme and prefers-reduced-motion — through CDP's Emulation domain. Chrome
// drops every override when the debugger detaches, so an emulated tab holds its debugger session
// (a withDebugger call whose body waits) until `emulate {reset}`, the tab closes or the debugger is
// taken away; the host sends the reset when the client that asked goes away. In a headed window the
// user sees the emulated page (and Chrome's debugging bar) in their own tab meanwhile.

import { Code, ShotError } from './errors.js';
import { withDebugger } from './debugger.js';
import { HEADLESS } from './viewport.js';
import { targetTab } from './tabs.js';

const FIELDS = /** @type {const} */ (['preset', 'width', 'height', 'device_scale_factor', 'mobile', 'touch',
  'user_agent', 'color_scheme', 'reduced_motion']);

/**
 * @typedef {{preset?: string, width?: number, height?: number, device_scale_factor?: number,
 *   mobile?: boolean, touch?: boolean, user_agent?: string, color_scheme?: string,
 *   reduced_motion?: string}} Emulation
 * @typedef {{settings: Emulation, send: (method: string, params?: object) => Promise<any>,
 *   release: () => void}} Held
 */

/** @type {Map<number, Held>} tabs under emulation, each holding its debugger session */
const held = new Map();

/** @param {number | undefined} tabId whether the tab is emulated now (captures then use CDP) */
export function isEmulated(tabId) {
  return tabId !== undefined && held.has(tabId);
}

/** Forget a tab whose session Chrome ended (tab closed, debugger detached or cancelled). */
function drop(/** @type {number} */ tabId) {
  held.get(tabId)?.release();
  held.delete(tabId);
}

/** Called once from the service worker's top level. */
export function installListeners() {
  chrome.tabs.onRemoved.addListener(drop);
  chrome.debugger.onDetach.addListener((source) => {
    if (source.tabId !== undefined) drop(source.tabId);
  });
}

/**
 * Attach to `tabId` and keep the session until the returned release is called.
 * @param {number} tabId
 * @returns {Promise<Held>}
 */
async function hold(tabId) {
  /** @type {() => void} */
  let release = () => {};
  const released = new Promise((r) => { release = () => r(undefined); });
  const never = /** @type {Promise<never>} */ (new Promise(() => {}));
  /** @type {Promise<import('./debugger.js').DebuggerHandle>} */
  const handle = new Promise((resolve, reject) => {
    withDebugger(tabId, { idleMs: 0, cancelled: never, failCode: Code.BAD_REQUEST }, async (dbg) => {
      resolve(dbg);
      await released;
    }).catch(reject);
  });
  const dbg = await handle;
  return { settings: {}, send: dbg.send, release };
}

/**
 * A new held session for `tabId`, registered.
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 */
async function holdTab(ctx, tabId) {
  const h = await ctx.guard(hold(tabId));
  held.set(tabId, h);
  return h;
}

/**
 * The tab's settings after this command: the old ones with the given ones over them.
 * @param {Emulation} old
 * @param {Record<string, any>} args
 * @returns {Emulation}
 */
export function merged(old, args) {
  if (args.reset) return {};
  /** @type {Record<string, any>} */
  const out = { ...old };
  for (const k of FIELDS) if (args[k] !== null && args[k] !== undefined) out[k] = args[k];
  // Single settings after a preset: the device is no longer the named one.
  if (args.preset === null && FIELDS.some((k) => k !== 'preset' && k !== 'color_scheme' &&
    k !== 'reduced_motion' && args[k] !== null && args[k] !== undefined)) delete out.preset;
  return out;
}

/**
 * Apply `e` in full: what it leaves out goes back to the browser's own.
 * @param {(method: string, params?: object) => Promise<any>} send
 * @param {Emulation} e
 */
async function apply(send, e) {
  const metrics = e.width || e.height || e.device_scale_factor || e.mobile;
  if (metrics) {
    await send('Emulation.setDeviceMetricsOverride', {
      width: e.width ?? 0, height: e.height ?? 0, deviceScaleFactor: e.device_scale_factor ?? 0,
      mobile: !!e.mobile,
    });
  } else {
    await send('Emulation.clearDeviceMetricsOverride');
  }
  await send('Emulation.setTouchEmulationEnabled', e.touch ? { enabled: true, maxTouchPoints: 5 } : { enabled: false });
  if (e.user_agent) await send('Emulation.setUserAgentOverride', { userAgent: e.user_agent });
  await send('Emulation.setEmulatedMedia', {
    features: [
      { name: 'prefers-color-scheme', value: e.color_scheme ?? '' },
      { name: 'prefers-reduced-motion', value: e.reduced_motion ?? '' },
    ],
  });
}

// Evaluated in the page (main world, through CDP): what the page sees now.
const PAGE_MEDIA = `({width: innerWidth, height: innerHeight, device_pixel_ratio: devicePixelRatio,
  dark: matchMedia('(prefers-color-scheme: dark)').matches,
  reduced_motion: matchMedia('(prefers-reduced-motion: reduce)').matches,
  touch_points: navigator.maxTouchPoints})`;

/** @param {(method: string, params?: object) => Promise<any>} send */
async function pageMedia(send) {
  try {
    const r = await send('Runtime.evaluate', { expression: PAGE_MEDIA, returnByValue: true });
    return r?.result?.value ?? null;
  } catch {
    return null; // a page between two documents: the settings are applied all the same
  }
}

/**
 * `emulate {tab_id?, width?, …, reset?}` → `{tab_id, url, emulation, page, headed}`.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function emulate(ctx) {
  const tabId = await targetTab(ctx);
  ctx.step = 'attaching the debugger';
  const old = held.get(tabId);
  const settings = merged(old?.settings ?? {}, ctx.args);
  if (!old && !Object.keys(settings).length) return reply(ctx, tabId, {}, null);
  let h = old ?? await holdTab(ctx, tabId);
  ctx.step = 'applying the emulation';
  if (h.settings.user_agent && !settings.user_agent) {
    await h.send('Emulation.setUserAgentOverride', { userAgent: '' }).catch(() => {});
  }
  try {
    await ctx.guard(apply(h.send, settings));
  } catch (e) {
    // Our own detach (a stuck page's recovery) took the session, and Chrome tells nobody: the
    // overrides went with it, so attach again and apply them all.
    if (!old || /** @type {any} */ (e).code !== Code.DEBUGGER_UNAVAILABLE) throw e;
    drop(tabId);
    h = await holdTab(ctx, tabId);
    await ctx.guard(apply(h.send, settings));
  }
  h.settings = settings;
  const media = await ctx.guard(pageMedia(h.send));
  if (!Object.keys(settings).length) drop(tabId); // reset: the session may go (Chrome clears all)
  return reply(ctx, tabId, settings, media);
}

/**
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {Emulation} settings
 * @param {object | null} media
 */
async function reply(ctx, tabId, settings, media) {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab) throw new ShotError(Code.TAB_CLOSED, `Tab ${tabId} was closed during ${ctx.cmd}.`);
  return { tab_id: tabId, url: tab.url || '', emulation: settings, page: media, headed: !HEADLESS };
}
