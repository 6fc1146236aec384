// What label discovery costs in the page: the extension's page library (extension/page/*.js, in
// the order lib/page.js injects it) run in an isolated world of every frame of each corpus page,
// with the arguments the host sends for an annotated capture and for its read after a capture.
// The time is measured inside the page around `discover` (what holds the page's main thread, and
// so delays Chrome's capture). --profile adds the top functions by self and total time (CDP
// Profiler); --extension measures another build (e.g. a `git archive` of an older commit).
//
//     node bench/bench_discover.cjs [--runs 30] [--pages grid,dashboard] [--profile] [--out FILE]
//                                   [--extension DIR]
//
// Uses the Playwright pinned in bench/playwright-mcp (`npm ci` there first) only to launch Debian's
// Chromium at 1920×1080 and open a CDP session; bench/pages/ needs `npm ci` too.
'use strict';

const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const { createRequire } = require('module');

const REPO = path.resolve(__dirname, '..');
const { chromium } = createRequire(path.join(REPO, 'bench/playwright-mcp/package.json'))('playwright');
const PAGES_DIR = path.join(REPO, 'bench/pages');
const CHROMIUM = '/usr/bin/chromium';
const CORPUS = ['dashboard', 'article', 'grid', 'components', 'frames', 'motion'];
// What the host asks for, plus what lib/frames.js adds (frames: true).
const ANNOTATED = { target: 'interactive', max: 50, include_offscreen: false, text_rects: true, frames: true };
const KINDS = {
  // host/screenshot.py `_discover_args`: the labels of an annotated capture (observe, --annotate);
  // a look at a page that has not changed since the last one reuses that one's geometry
  annotated: { args: ANNOTATED },
  // the same, on a page just changed (an attribute set on <html> in every frame before each call):
  // the first look after an action, read in full
  'annotated, page changed': { args: ANNOTATED, changed: true },
  // host/after_capture.py `_discover`: the read after every kept capture (diff memory, recorder);
  // the next call waits for it in the page
  'after capture': { args: { target: 'all_visible', max: 100, covered: false, frames: true } },
};

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(arg('--runs', 30));
const PAGES = arg('--pages', CORPUS.join(',')).split(',');
const PROFILE = process.argv.includes('--profile');
const OUT = arg('--out', '');
// Another build of the extension (e.g. `git archive` of an older commit) to compare with.
const EXT = path.resolve(arg('--extension', path.join(REPO, 'python/shotbridge/extension')));

const pct = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.round(q * (s.length - 1)))];
};

/** The page library, each file named so a profile says where its time went. */
function librarySource() {
  const pageJs = fs.readFileSync(path.join(EXT, 'lib/page.js'), 'utf8');
  const files = [...pageJs.slice(pageJs.indexOf('PAGE_FILES')).matchAll(/'(page\/[\w-]+\.js)'/g)].map((m) => m[1]);
  const version = JSON.parse(fs.readFileSync(path.join(EXT, 'manifest.json'), 'utf8')).version;
  const rules = JSON.parse(fs.readFileSync(path.join(EXT, 'secret-rules.json'), 'utf8'));
  const pageRules = { input_types: rules.input_types, autocomplete: rules.autocomplete,
    css_properties: rules.css_properties, reveal_attributes: rules.reveal_attributes };
  // What ready.js reads; no chrome.dom here, so closed shadow roots stay unseen (the corpus has none).
  const stub = `globalThis.chrome = { runtime: { getManifest: () => ({ version: ${JSON.stringify(version)} }) } };`;
  return {
    files: [stub, ...files.map((f) => `${fs.readFileSync(path.join(EXT, f), 'utf8')}\n//# sourceURL=${f}\n`)],
    setup: `globalThis.__shotbridge.secrets.setRules(${JSON.stringify(pageRules)}); ${JSON.stringify(version)}`,
  };
}

/** bench/pages/ on two origins (the second is the frames page's cross-origin widget). */
function serve() {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };
  const handler = (req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.join(PAGES_DIR, path.normalize(rel));
    if (!file.startsWith(PAGES_DIR) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(rel === '/favicon.ico' ? 204 : 404).end();
      return;
    }
    res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  };
  const servers = [http.createServer(handler), http.createServer(handler)];
  return Promise.all(servers.map((s) => new Promise((ok) => s.listen(0, '127.0.0.1', ok)))).then(() => ({
    bases: servers.map((s) => `http://127.0.0.1:${s.address().port}`),
    close: () => servers.forEach((s) => s.close()),
  }));
}

/** Every frame id of the page (same-site frames share the page's process and CDP session). */
function frameIds(tree) {
  return [tree.frame.id, ...(tree.childFrames || []).flatMap(frameIds)];
}

/** An isolated world with the page library in each frame: its execution context ids. */
async function injectAll(cdp, lib) {
  const { frameTree } = await cdp.send('Page.getFrameTree');
  const contexts = [];
  for (const frameId of frameIds(frameTree)) {
    const { executionContextId } = await cdp.send('Page.createIsolatedWorld', { frameId, worldName: 'shotbridge-bench' });
    for (const source of lib.files) await evaluate(cdp, executionContextId, source);
    await evaluate(cdp, executionContextId, lib.setup);
    contexts.push(executionContextId);
  }
  return contexts;
}

async function evaluate(cdp, contextId, expression) {
  const r = await cdp.send('Runtime.evaluate', { contextId, expression, returnByValue: true });
  if (r.exceptionDetails) throw new Error(r.exceptionDetails.exception?.description || r.exceptionDetails.text);
  return r.result.value;
}

const call = (args) => `(() => { const t = performance.now(); const v = globalThis.__shotbridge.discover(${JSON.stringify(args)});
  return { ms: performance.now() - t, elements: v.elements.length, total: v.total_found, texts: (v.text_rects || []).length }; })()`;

let changes = 0;
const CHANGE = () => `document.documentElement.setAttribute('data-bench-change', '${++changes}')`;

/**
 * One discover as the extension runs it: every frame in turn (they share one main thread), each
 * frame changed first (untimed) for a `changed` kind.
 */
async function discoverOnce(cdp, contexts, { args, changed }) {
  const frames = [];
  if (changed) for (const id of contexts) await evaluate(cdp, id, CHANGE());
  for (const id of contexts) frames.push(await evaluate(cdp, id, call(args)));
  return { ms: frames.reduce((s, f) => s + f.ms, 0), frames };
}

/** Self and total (inclusive) time per function over a profile, top `n` of each. */
function topTimes(profile, n) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const c of node.children || []) parent.set(c, node.id);
  const keyOf = (node) => {
    const cf = node.callFrame;
    return `${cf.functionName || '(anonymous)'} ${cf.url ? `${path.basename(cf.url)}:${cf.lineNumber + 1}` : ''}`.trim();
  };
  const self = new Map();
  const total = new Map();
  const add = (map, key, ms) => map.set(key, (map.get(key) || 0) + ms);
  let sum = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const name = node.callFrame.functionName;
    if (name === '(idle)' || name === '(program)') continue;
    const ms = (profile.timeDeltas[i] || 0) / 1000;
    sum += ms;
    add(self, keyOf(node), ms);
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const key = keyOf(byId.get(id));
      if (!seen.has(key)) add(total, key, ms);
      seen.add(key);
    }
  }
  const top = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  return { total: sum, self: top(self), inclusive: top(total) };
}

async function profileRuns(cdp, contexts, runs, kind) {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 50 });
  await cdp.send('Profiler.start');
  for (let i = 0; i < runs; i++) await discoverOnce(cdp, contexts, kind);
  const { profile } = await cdp.send('Profiler.stop');
  await cdp.send('Profiler.disable');
  return topTimes(profile, 30);
}

async function benchPage(browser, url, lib) {
  const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
  try {
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForTimeout(1500); // as bench_mcp.py: the page settles (grids render, fonts load)
    const cdp = await page.context().newCDPSession(page);
    const contexts = await injectAll(cdp, lib);
    const out = {};
    for (const [name, kind] of Object.entries(KINDS)) {
      for (let i = 0; i < 3; i++) await discoverOnce(cdp, contexts, kind);
      const times = [];
      let last;
      for (let i = 0; i < RUNS; i++) {
        last = await discoverOnce(cdp, contexts, kind);
        times.push(last.ms);
      }
      const profile = PROFILE ? await profileRuns(cdp, contexts, RUNS, kind) : null;
      out[name] = { p50: pct(times, 0.5), p95: pct(times, 0.95), frames: last.frames, profile };
    }
    return out;
  } finally {
    await page.close();
  }
}

function report(results) {
  const lines = [
    `Discover in the page, ${RUNS} runs per page and kind after 3 warm-ups, at 1920×1080 (ms, summed over the page's frames):`,
    '',
    '| page | annotated, page unchanged p50 / p95 | annotated, page changed p50 / p95 | labels (of found) | text rects | after capture p50 / p95 | elements (of found) |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  const counts = (r) => r.frames.map((f) => `${f.elements} of ${f.total}`).join(' + ');
  const ms = (r) => `${r.p50.toFixed(1)} / ${r.p95.toFixed(1)}`;
  for (const [name, { annotated: a, 'annotated, page changed': f, 'after capture': c }] of results) {
    const texts = a.frames.reduce((s, f) => s + f.texts, 0);
    lines.push(`| ${name} | ${ms(a)} | ${ms(f)} | ${counts(a)} | ${texts} | ${ms(c)} | ${counts(c)} |`);
  }
  for (const [name, kinds] of results) {
    for (const [kind, r] of Object.entries(kinds)) {
      if (!r.profile) continue;
      lines.push('', `${name}, ${kind}: ${r.profile.total.toFixed(0)} ms sampled over ${RUNS} runs; ms per run, self | total (inclusive)`, '');
      for (let i = 0; i < r.profile.self.length; i++) {
        const [sf, sms] = r.profile.self[i];
        const [tf, tms] = r.profile.inclusive[i] || ['', 0];
        lines.push(`  ${(sms / RUNS).toFixed(2).padStart(6)}  ${sf.padEnd(40)} | ${(tms / RUNS).toFixed(2).padStart(6)}  ${tf}`);
      }
    }
  }
  return lines.join('\n');
}

async function main() {
  const lib = librarySource();
  const server = await serve();
  const [base, cross] = server.bases;
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  const results = new Map();
  try {
    for (const name of PAGES) {
      const url = `${base}/${name}.html${name === 'frames' ? `?cross=${cross}` : ''}`;
      results.set(name, await benchPage(browser, url, lib));
      process.stderr.write(`${name} done\n`);
    }
  } finally {
    await browser.close();
    server.close();
  }
  const text = `${report(results)}\n\n${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)} at the end.\n`;
  process.stdout.write(text);
  if (OUT) fs.writeFileSync(OUT, text);
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
module.exports = { librarySource, serve, injectAll, evaluate, CHROMIUM, chromium };
