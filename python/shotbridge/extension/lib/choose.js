// select: choose options of a native <select> (set in the page: its popup is drawn by the browser
// outside the page, so neither a screenshot nor a click can reach it), or of an ARIA combobox or
// listbox by opening it and clicking the option named, with trusted input.

import { Code, ShotError } from './errors.js';
import { withDebugger } from './debugger.js';
import { callPage } from './page.js';
import { click, page, within } from './input.js';
import { finish, pageBefore, pointOf, whereOf } from './aiming.js';

const OPTION_WAIT_MS = 1000;

/**
 * `select {selector | x, y, values, indexes}` → what is selected now.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function select(ctx) {
  const a = ctx.args;
  const { tabId, before } = await pageBefore(ctx, a.expect_url);
  const { where, notes } = await whereOf(tabId, a, before, 'select');
  ctx.step = 'choosing the options';
  const out = await page(tabId, 'selectOptions', { ...where, values: a.values, indexes: a.indexes });
  if (!out.aria) return finish(tabId, before, { action: 'select', ...out }, notes);
  if (a.indexes.length) {
    throw new ShotError(Code.BAD_REQUEST, `${out.aria.role || out.aria.tag} ${out.aria.selector} is no native <select>: name its options in values, not by index.`);
  }
  return finish(tabId, before, { action: 'select', ...(await chooseAria(ctx, tabId, before, out.aria, a)) }, notes);
}

/**
 * Open an ARIA combobox (a listbox is open already) and click each option named in `values`.
 * @param {import('./context.js').CommandContext} ctx
 * @param {number} tabId
 * @param {any} before page state
 * @param {{selector: string, role: string}} box
 * @param {any} a the command's arguments
 */
async function chooseAria(ctx, tabId, before, box, a) {
  const paint = () => within(callPage(tabId, 'nextPaint', { max_ms: 200 }), 400, null);
  const left = { button: 'left', click_count: 1 };
  await withDebugger(tabId, { idleMs: a.debugger_idle_ms, cancelled: ctx.cancelled, failCode: Code.INTERNAL }, async (dbg) => {
    if (box.role !== 'listbox') {
      ctx.step = 'opening the list';
      const opener = await pointOf(tabId, { selector: box.selector, x: null, y: null, from_scroll: null, expect_selector: null }, before, 'select');
      await click(dbg, /** @type {any} */ (opener.point), left, 0);
      await paint();
    }
    for (const name of a.values) {
      ctx.step = `choosing the option "${name}"`;
      const opt = await optionNamed(tabId, name);
      await click(dbg, opt.point, left, 0);
      await paint();
    }
  });
  const now = await page(tabId, 'ariaSelected', { selector: box.selector });
  return { element: box, aria: true, selected: now.selected, shows: now.shows };
}

/**
 * The visible option named `name`, looked for until OPTION_WAIT_MS (a list may render its options
 * a moment after it opens, or after fetching them).
 * @param {number} tabId
 * @param {string} name
 */
async function optionNamed(tabId, name) {
  const t0 = performance.now();
  for (;;) {
    try {
      return await page(tabId, 'ariaOption', { name });
    } catch (e) {
      if (performance.now() - t0 >= OPTION_WAIT_MS) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
