// For tests of the page library in a real Chromium: the library loaded, as lib/page.js injects
// it, into an isolated world of a page (Debian's Chromium, driven by the test-only Playwright).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const EXT = new URL('../../python/shotbridge/extension/', import.meta.url);
// Test-only npm packages (scripts/setup.sh installs them); Debian's Chromium, never a download.
export const { chromium } = createRequire(new URL('../e2e/package.json', import.meta.url))('playwright');

/** The page library as lib/page.js injects it, plus what page/ready.js reads from chrome.runtime. */
function library() {
  const pageJs = readFileSync(new URL('lib/page.js', EXT), 'utf8');
  const files = [...pageJs.slice(pageJs.indexOf('PAGE_FILES')).matchAll(/'(page\/[\w-]+\.js)'/g)].map((m) => m[1]);
  const rules = JSON.parse(readFileSync(new URL('secret-rules.json', EXT), 'utf8'));
  return [
    'globalThis.chrome = { runtime: { getManifest: () => ({ version: "test" }) } };',
    ...files.map((f) => readFileSync(new URL(f, EXT), 'utf8')),
    `globalThis.__shotbridge.secrets.setRules(${JSON.stringify(rules)});`,
  ];
}

/** A headless Chromium, closed when the test ends. @param {import('node:test').TestContext} t */
export async function launch(t) {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true });
  t.after(() => browser.close());
  return browser;
}

/**
 * A page of `html` with the library in an isolated world; `run(js)` evaluates there (one task
 * per call, promises awaited).
 * @param {any} browser
 * @param {string} html
 */
export async function openPage(browser, html) {
  const page = await browser.newPage();
  await page.setContent(html);
  const cdp = await page.context().newCDPSession(page);
  const { frameTree } = await cdp.send('Page.getFrameTree');
  const world = await cdp.send('Page.createIsolatedWorld', { frameId: frameTree.frame.id, worldName: 'test' });
  const run = async (/** @type {string} */ expression) => {
    const r = await cdp.send('Runtime.evaluate', { contextId: world.executionContextId, expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error(r.exceptionDetails.exception?.description || r.exceptionDetails.text);
    return r.result.value;
  };
  for (const source of library()) await run(source);
  return { page, run };
}
