// discover and page_info: thin wrappers that validate arguments and run the page library.

import { Code, ShotError } from './errors.js';
import { callPage } from './page.js';
import { discoverAll } from './frames.js';
import { targetTab } from './tabs.js';

/**
 * @param {import('./context.js').CommandContext} ctx
 */
export async function discover(ctx) {
  const a = ctx.args;
  const target = a.target ?? 'interactive';
  if (!['interactive', 'all_visible', 'custom'].includes(target)) {
    throw new ShotError(Code.BAD_REQUEST, 'target must be "interactive", "all_visible" or "custom"');
  }
  if (target === 'custom' && (typeof a.selector !== 'string' || !a.selector.trim())) {
    throw new ShotError(Code.BAD_REQUEST, 'target "custom" needs a selector');
  }
  const max = a.max ?? 50;
  if (!Number.isInteger(max) || max < 1 || max > 100) throw new ShotError(Code.BAD_REQUEST, 'max must be an integer 1..100');
  const tabId = await targetTab(ctx);
  // Every frame, joined into one list (lib/frames.js).
  const out = await discoverAll(tabId, {
    target,
    selector: target === 'custom' ? a.selector : null,
    max,
    include_offscreen: !!a.include_offscreen,
  });
  if (out.error) throw new ShotError(out.error.code, out.error.message);
  return out;
}

/**
 * @param {import('./context.js').CommandContext} ctx
 */
export async function pageInfo(ctx) {
  const tabId = await targetTab(ctx);
  return callPage(tabId, 'pageInfo', null);
}
