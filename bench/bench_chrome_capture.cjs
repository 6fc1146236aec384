// Chrome's own capture, without shotbridge: how long Page.captureScreenshot takes on the MCP
// benchmark's page with the options a capture path could choose, and what the one Chrome flag that
// shortens it costs on an animated page. The floor under every MCP screenshot tool's latency.
//
//     node bench/bench_chrome_capture.cjs [--rounds 30] [--page tests/pages/mcp/big.html]
//         [--out bench/results-chrome-capture.md]
//
// Uses the Playwright pinned in bench/playwright-mcp (`npm ci` there first) only to launch Debian's
// Chromium and open a CDP session; every timing is one CDP round trip.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { createRequire } = require('module');
const { execFileSync } = require('child_process');

const REPO = path.resolve(__dirname, '..');
const { chromium } = createRequire(path.join(REPO, 'bench/playwright-mcp/package.json'))('playwright');
const CHROMIUM = '/usr/bin/chromium';
const SPINNER = '<style>@keyframes s{to{transform:rotate(360deg)}} div{width:200px;height:200px;' +
  'background:red;animation:s 1s linear infinite}</style><div></div>';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const ROUNDS = Number(arg('--rounds', 30));
const PAGE_FILE = arg('--page', 'tests/pages/mcp/big.html');
const PAGE = 'file://' + path.join(REPO, PAGE_FILE);
const OUT = arg('--out', path.join(REPO, 'bench/results-chrome-capture.md'));

const clip = { x: 0, y: 0, width: 1920, height: 1080, scale: 2 / 3 };
const VARIANTS = {
  'whole viewport, q80': { format: 'jpeg', quality: 80, fromSurface: true },
  'whole viewport, q60': { format: 'jpeg', quality: 60, fromSurface: true },
  'clip at 2/3 scale (1280 px), q60': { format: 'jpeg', quality: 60, fromSurface: true, clip },
  'clip at 2/3 scale, q60, optimizeForSpeed': { format: 'jpeg', quality: 60, fromSurface: true, clip, optimizeForSpeed: true },
  // What Chrome DevTools MCP's take_screenshot {format: jpeg} sends (through Puppeteer).
  "DevTools MCP's call: whole viewport, jpeg, optimizeForSpeed": { format: 'jpeg', optimizeForSpeed: true },
};
// A headless window rendered at the images' width, as `shotctl mcp` sets it up for a 1920 px
// window (client/browser.py render_dpr): the viewport at its own pixels needs no clip.
const OWN_PIXELS = {
  'whole viewport at its own pixels (1276 px), q60, optimizeForSpeed: what we ask for':
    { format: 'jpeg', quality: 60, fromSurface: true, optimizeForSpeed: true },
  'clip of the viewport at scale 1, q60, optimizeForSpeed': {
    format: 'jpeg', quality: 60, fromSurface: true, optimizeForSpeed: true,
    clip: { x: 0, y: 0, width: 1920, height: 1080, scale: 1 },
  },
};
const FLAGS = {
  'default flags': { args: [], variants: VARIANTS },
  '--disable-frame-rate-limit': { args: ['--disable-frame-rate-limit'], variants: VARIANTS },
  'device pixel ratio 0.6646 (ours)': {
    args: ['--force-device-scale-factor=0.6646', '--window-size=1918,1220'], variants: OWN_PIXELS, window: true,
  },
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))];

/** CPU seconds (user + system) of `pid` and all its descendants, from /proc. */
function treeCpuSeconds(pid) {
  const parent = new Map();
  const ticks = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(name), Number(fields[1]));
      ticks.set(Number(name), Number(fields[11]) + Number(fields[12]));
    } catch {
      // the process ended while we looked
    }
  }
  let total = 0;
  for (const [p, t] of ticks) {
    for (let q = p; q > 1; q = parent.get(q) ?? 0) {
      if (q === pid) {
        total += t;
        break;
      }
    }
  }
  return total / 100; // USER_HZ
}

/** The browser process started with this profile (the root of its process tree). */
function browserPid(profile) {
  const mine = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n)).filter((n) => {
    try {
      return fs.readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(`--user-data-dir=${profile}`);
    } catch {
      return false;
    }
  }).map(Number);
  return Math.min(...mine);
}

async function measure({ args: flags, variants: VARIANTS, window }) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-capture-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', ...flags],
    // The window sets the viewport (1920×1080 CSS px) where the device pixel ratio is forced.
    viewport: window ? null : { width: 1920, height: 1080 },
  });
  try {
    const page = context.pages()[0] ?? await context.newPage();
    await page.goto(PAGE);
    const cdp = await context.newCDPSession(page);
    const times = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, []]));
    /** @type {Record<string, number>} */
    const failed = {};
    for (const params of Object.values(VARIANTS)) await cdp.send('Page.captureScreenshot', params).catch(() => {}); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const names = Object.keys(VARIANTS);
      for (let k = 0; k < names.length; k++) {
        const name = names[(k + round) % names.length]; // rotate the order every round
        const t0 = performance.now();
        // Chrome now and then answers "Unable to capture screenshot": counted, not timed.
        const ok = await cdp.send('Page.captureScreenshot', VARIANTS[name]).then(() => true, () => false);
        if (ok) times[name].push(performance.now() - t0);
        else failed[name] = (failed[name] ?? 0) + 1;
      }
    }
    // An animated page: frames per second and the browser's CPU time over 5 s.
    await page.setContent(SPINNER);
    await page.waitForTimeout(1000);
    const pid = browserPid(profile);
    const cpu0 = treeCpuSeconds(pid);
    const fps = await page.evaluate(() => new Promise((resolve) => {
      let n = 0;
      const t0 = performance.now();
      const tick = () => (performance.now() - t0 < 5000 ? (n++, requestAnimationFrame(tick)) : resolve(n / 5));
      requestAnimationFrame(tick);
    }));
    const cpu = treeCpuSeconds(pid) - cpu0;
    return { times, failed, fps, cpu };
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

(async () => {
  const results = {};
  for (const [name, flags] of Object.entries(FLAGS)) results[name] = await measure(flags);
  const load = os.loadavg().map((x) => x.toFixed(1)).join(' / ');
  const lines = [
    '# Chrome\'s own capture (bench/bench_chrome_capture.cjs)',
    '',
    `\`node bench/bench_chrome_capture.cjs --rounds ${ROUNDS}\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ` +
      `${os.arch()} × ${os.cpus().length} CPUs (load average ${load} at the end), ` +
      `${execFileSync(CHROMIUM, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim()}, ` +
      'headless, 1920×1080 viewport, ' +
      `\`${PAGE_FILE}\`. Each row: one CDP \`Page.captureScreenshot\` round trip, ` +
      `${ROUNDS} rounds after a warm-up, variants in an order that rotates every round.`,
    '',
    '| flags | capture options | p50 ms | p95 ms | refused by Chrome |',
    '|---|---|---:|---:|---:|',
  ];
  for (const [flags, r] of Object.entries(results)) {
    for (const [variant, ts] of Object.entries(r.times)) {
      lines.push(`| ${flags} | ${variant} | ${median(ts).toFixed(1)} | ${p95(ts).toFixed(1)} | ${r.failed[variant] ?? 0} |`);
    }
  }
  lines.push('', '| flags | animated page: frames/s | browser CPU s over 5 s |', '|---|---:|---:|');
  for (const [flags, r] of Object.entries(results)) lines.push(`| ${flags} | ${r.fps.toFixed(0)} | ${r.cpu.toFixed(1)} |`);
  const report = lines.join('\n') + '\n';
  fs.writeFileSync(OUT, report);
  process.stdout.write(report);
})();
