// discover and page_info: thin wrappers that run the page library (lib/args.js read the arguments).

import { Code, ShotError } from './errors.js';
import { callPage } from './page.js';
import { discoverAll } from './frames.js';
import { resolveTab, targetTab } from './tabs.js';
import { isRestrictedUrl } from './restricted.js';

/**
 * @param {import('./context.js').CommandContext} ctx
 */
export async function discover(ctx) {
  const a = ctx.args;
  const tabId = await targetTab(ctx);
  // Every frame, joined into one list (lib/frames.js).
  const out = await discoverAll(tabId, {
    target: a.target,
    selector: a.target === 'custom' ? a.selector : null,
    max: a.max,
    include_offscreen: a.include_offscreen,
    text_rects: a.text_rects, // line boxes of visible text, for badge placement
    covered: a.covered,
    after_frame: a.after_frame,
    known: a.known, // the token of the answer the host holds: an unchanged page says `same`
  });
  if (out.error) throw new ShotError(out.error.code, out.error.message);
  return out;
}

/**
 * page_info never waits for the page to load (the page functions run at once, see lib/page.js),
 * and on pages Chrome does not let extensions script (about:blank, chrome://…) it answers with
 * what the tab itself says instead of failing: no image was asked for, so nothing is refused.
 * @param {import('./context.js').CommandContext} ctx
 */
export async function pageInfo(ctx) {
  const tab = await resolveTab(ctx.args.tab_id);
  const url = tab.url || tab.pendingUrl || '';
  if (!isRestrictedUrl(url)) {
    try {
      return await callPage(await targetTab(ctx), 'pageInfo', null);
    } catch (e) {
      if (/** @type {any} */ (e).code !== Code.RESTRICTED_PAGE) throw e;
    }
  }
  return unscriptable(tab, url);
}

/**
 * What is known of a tab whose document cannot be read: URL, title, load state, size.
 * @param {{title?: string, status?: string, width?: number, height?: number}} tab
 * @param {string} url
 */
export function unscriptable(tab, url) {
  const blank = url === '' || url === 'about:blank';
  return {
    url,
    title: tab.title || '',
    ready_state: tab.status === 'loading' ? 'loading' : 'complete',
    viewport: tab.width && tab.height ? { width: tab.width, height: tab.height } : null,
    restricted: true,
    // about:blank holds nothing; a browser page's content is out of an extension's reach.
    ...(blank ? { blank: true, headings: [], forms: 0, interactive_count: 0 } : {}),
  };
}
