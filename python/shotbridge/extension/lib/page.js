// Runs the page-side library (extension/page/*.js) in a tab's ISOLATED world via chrome.scripting.
// The library files are injected once per document (they register themselves on
// globalThis.__shotbridge); each call then sends only a tiny self-contained trampoline plus JSON
// args. The isolated world cannot be tampered with by page scripts (own prototypes and globals),
// which matters for the password masks.

import { Code, ShotError, fromChromeError } from './errors.js';
import { pageRules, pageRulesNow } from './secret-rules.js';

export const PAGE_LIB_VERSION = chrome.runtime.getManifest().version;
const PAGE_FILES = [
  'page/lib.js',
  'page/memo.js',
  'page/unchanged.js',
  'page/sent.js',
  'page/secrets.js',
  'page/shadow-roots.js',
  'page/reading-order.js',
  'page/a11y.js',
  'page/selector.js',
  'page/probe.js',
  'page/discover.js',
  'page/page-info.js',
  'page/interact.js',
  'page/actions.js',
  'page/ready.js', // last: marks the library complete
];

/**
 * Serialized into the page by chrome.scripting, so it must not use anything from this module.
 * @param {string} name
 * @param {any} args
 * @param {string} version
 * @param {object} rules secret-rules.json (what counts as a secret)
 */
function trampoline(name, args, version, rules) {
  const lib = /** @type {any} */ (globalThis).__shotbridge;
  if (!lib || lib.version !== version || typeof lib[name] !== 'function') return { needLib: true };
  try {
    if (!lib.secrets || !lib.secrets.setRules(rules)) return { thrown: 'secret rules could not be installed' };
    const value = lib[name](args);
    // Async helpers (waiting for a paint): chrome.scripting waits for a returned promise.
    if (value && typeof value.then === 'function') {
      return value.then((v) => ({ value: v }), (e) => ({ thrown: String((e && e.message) || e) }));
    }
    return { value };
  } catch (e) {
    return { thrown: String((e && e.message) || e) };
  }
}

/**
 * @typedef {{frameId: number, value?: any, error?: string}} FrameValue
 */

// Read-only page functions that answer with what the document holds now. chrome.scripting
// otherwise waits for document_idle, which a page still streaming its HTML never reaches, so
// observing such a page would hang until its timeout. Actions (input, scrolling, locating a
// target) keep waiting: they act on the page once it is there.
const AT_ONCE = new Set(['pageInfo', 'discover', 'readAhead', 'probe', 'thawAnimations', 'nextPaint', 'firstPaint', 'pageState']);

/**
 * Call `__shotbridge[name](args)` in the tab's frames.
 * @param {number} tabId
 * @param {string} name
 * @param {any} args
 * @param {{allFrames?: boolean}} [opts]
 * @returns {Promise<FrameValue[]>} one entry per frame that answered (top frame has frameId 0)
 */
export async function callPageAll(tabId, name, args, opts = {}) {
  const target = opts.allFrames ? { tabId, allFrames: true } : { tabId };
  const injectImmediately = AT_ONCE.has(name);
  let rules = pageRulesNow();
  try {
    rules ??= await pageRules();
  } catch (e) {
    throw new ShotError(Code.INTERNAL, `secret-rules.json could not be read: ${/** @type {Error} */ (e).message}`);
  }
  let results = await exec({ target, injectImmediately, func: trampoline, args: [name, args ?? null, PAGE_LIB_VERSION, rules] });
  const missing = results.filter((r) => r.result?.needLib).map((r) => r.frameId);
  if (missing.length) {
    await exec({ target: { tabId, frameIds: missing }, injectImmediately, files: PAGE_FILES });
    const again = await exec({
      target: { tabId, frameIds: missing },
      injectImmediately,
      func: trampoline,
      args: [name, args ?? null, PAGE_LIB_VERSION, rules],
    });
    results = results.filter((r) => !missing.includes(r.frameId)).concat(again);
  }
  // A frame whose script failed is reported, not thrown: callers decide whether a subframe matters.
  return results.map((r) => {
    const out = r.result;
    if (!out || out.needLib) return { frameId: r.frameId, error: `page library did not load in frame ${r.frameId}` };
    if ('thrown' in out) return { frameId: r.frameId, error: `page script failed: ${out.thrown}` };
    return { frameId: r.frameId, value: out.value };
  });
}

/**
 * Call `__shotbridge[name](args)` in the tab's top frame.
 * @param {number} tabId
 * @param {string} name
 * @param {any} [args]
 */
export async function callPage(tabId, name, args) {
  const [top] = await callPageAll(tabId, name, args);
  if (!top) throw new ShotError(Code.INTERNAL, 'page script returned nothing');
  if (top.error) throw new ShotError(Code.INTERNAL, top.error);
  return top.value;
}

/** @param {chrome.scripting.ScriptInjection<any[], any>} injection */
async function exec(injection) {
  try {
    return await chrome.scripting.executeScript(injection);
  } catch (e) {
    throw fromChromeError(e, Code.INTERNAL);
  }
}
