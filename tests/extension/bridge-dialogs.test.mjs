// node --test tests/extension/ : alert/confirm/prompt are reported by the page bridge just before
// they open (content/bridge-main.js -> content/bridge-relay.js -> the service worker) through a
// channel the page cannot forge, with the originals' behaviour and return values kept.
// Both content scripts run here, in manifest order, in one small fake window.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const EXT = new URL('../../python/shotbridge/extension/', import.meta.url);
const MAIN = readFileSync(new URL('content/bridge-main.js', EXT), 'utf8');
const RELAY = readFileSync(new URL('content/bridge-relay.js', EXT), 'utf8');

class FakeNode extends EventTarget {
  isConnected = false;
}
class MouseEvent extends Event {
  /** @param {string} type @param {{relatedTarget?: EventTarget}} init */
  constructor(type, init = {}) {
    super(type, init);
    this.relatedTarget = init.relatedTarget ?? null;
  }
}

/** A fresh fake page with both halves of the bridge loaded; `sent` collects worker messages. */
function loadPage() {
  /** @type {any[]} */
  const sent = [];
  /** @type {{type: string, args: unknown[], sentBefore: number, self: unknown}[]} */
  const shown = [];
  const win = new EventTarget();
  const dialog = (type, answer) => function (...args) {
    // As Chrome's: the message becomes a string (a throwing toString throws from here).
    if (args.length && args[0] !== undefined) String(args[0]);
    shown.push({ type, args, sentBefore: sent.filter((m) => m.type === 'shotbridge:dialog').length, self: this });
    return answer;
  };
  Object.assign(win, {
    Node: FakeNode,
    MouseEvent,
    CustomEvent,
    EventTarget,
    MessageChannel: class {
      // inert ports: a real MessageChannel would keep node's event loop alive
      port1 = { postMessage() {}, onmessage: null };
      port2 = {};
    },
    console,
    performance,
    document: { createElement: () => new FakeNode() },
    postMessage() {},
    fetch: async () => ({}),
    XMLHttpRequest: class {},
    alert: dialog('alert', undefined),
    confirm: dialog('confirm', true),
    prompt: dialog('prompt', 'typed'),
    chrome: {
      runtime: {
        id: 'ext',
        sendMessage: async (msg) => {
          sent.push(msg);
          return undefined;
        },
        onMessage: { addListener() {} },
      },
    },
  });
  win.window = win;
  win.top = win;
  vm.createContext(win);
  vm.runInContext(MAIN, win);
  vm.runInContext(RELAY, win);
  const run = (/** @type {string} */ code) => vm.runInContext(code, win);
  return { sent, shown, run, win };
}

/** Objects made in the fake page's realm, as plain objects of this one (for deepStrictEqual). */
const plain = (v) => JSON.parse(JSON.stringify(v));
const dialogMessages = (sent) => plain(sent.filter((m) => m.type === 'shotbridge:dialog').map((m) => m.entry));

test('an alert is reported to the service worker before it opens, and once answered', () => {
  const { sent, shown, run } = loadPage();
  assert.equal(run("alert('Session expired')"), undefined);
  assert.equal(shown.length, 1);
  assert.deepEqual(plain(shown[0].args), ['Session expired']);
  assert.equal(shown[0].sentBefore, 1, 'the report left before the dialog blocked the page');
  assert.deepEqual(dialogMessages(sent), [
    { phase: 'opened', type: 'alert', message: 'Session expired' },
    { phase: 'closed', type: 'alert', message: 'Session expired' },
  ]);
});

test('confirm and prompt keep their return values, receiver and arguments', () => {
  const { sent, shown, run } = loadPage();
  assert.equal(run("confirm('Leave?')"), true);
  assert.equal(run("prompt('Name?', 'Ada')"), 'typed');
  assert.equal(run("window.prompt('Name?')"), 'typed');
  assert.deepEqual(plain(shown.map((s) => s.args)), [['Leave?'], ['Name?', 'Ada'], ['Name?']]);
  assert.ok(shown.every((s) => s.self === run('globalThis')));
  assert.deepEqual(dialogMessages(sent).filter((e) => e.phase === 'opened').map((e) => e.type), ['confirm', 'prompt', 'prompt']);
});

test("a message object's toString runs once, and a throwing one throws as the original would", () => {
  const { shown, run } = loadPage();
  assert.equal(run("let n = 0; alert({ toString() { n++; return 'hi'; } }); n"), 1);
  assert.deepEqual(plain(shown[0].args), ['hi']);
  assert.equal(run('alert(); alert(undefined); shownArgs = 0'), 0);
  assert.deepEqual(plain(shown.slice(1).map((s) => s.args)), [[''], ['']]);
  assert.throws(() => run("alert({ toString() { throw new Error('page says no'); } })"), /page says no/);
});

test('a page patching dispatchEvent, iterators or Array setters does not trip the wrapper', () => {
  const { sent, run } = loadPage();
  run(`Array.prototype[Symbol.iterator] = function* () { throw new Error('tripped'); };
       Object.defineProperty(Array.prototype, '0', { set() { throw new Error('tripped'); }, configurable: true });
       JSON.stringify = () => { throw new Error('tripped'); };`);
  // This fake page shares node's own EventTarget: patched only while the page calls confirm.
  const dispatch = EventTarget.prototype.dispatchEvent;
  try {
    run("EventTarget.prototype.dispatchEvent = () => { throw new Error('tripped'); }");
    assert.equal(run("confirm('Still reported?')"), true);
  } finally {
    EventTarget.prototype.dispatchEvent = dispatch;
  }
  assert.deepEqual(dialogMessages(sent)[0], { phase: 'opened', type: 'confirm', message: 'Still reported?' });
});

test('a page cannot forge a dialog report without opening a dialog', () => {
  const { sent, run } = loadPage();
  run(`const fake = document.createElement('span');
       window.dispatchEvent(new MouseEvent('__shotbridge_dialog_node__', { relatedTarget: fake }));
       fake.dispatchEvent(new CustomEvent('shotbridge-dialog', { detail: JSON.stringify({ phase: 'opened', type: 'alert', message: 'forged' }) }));
       window.dispatchEvent(new CustomEvent('shotbridge-dialog', { detail: JSON.stringify({ phase: 'opened', type: 'alert', message: 'forged' }) }));`);
  assert.deepEqual(dialogMessages(sent), []);
  run("alert('real')"); // the real channel still works
  assert.equal(dialogMessages(sent)[0].message, 'real');
});

test('the relay validates and bounds dialog reports', () => {
  const { win } = loadPage();
  const entry = (detail) => plain(win.__shotbridge.dialogEntry(detail));
  assert.equal(entry({ phase: 'opened', type: 'alert', message: 'x' }), null, 'not JSON text');
  assert.equal(entry('{'), null);
  assert.equal(entry(JSON.stringify({ phase: 'opened', type: 'beforeunload', message: 'x' })), null);
  assert.equal(entry(JSON.stringify({ phase: 'shown', type: 'alert', message: 'x' })), null);
  assert.equal(entry(JSON.stringify({ phase: 'opened', type: 'alert', message: 'x'.repeat(25_000) })), null);
  const long = entry(JSON.stringify({ phase: 'opened', type: 'prompt', message: 'y'.repeat(1000), extra: 1 }));
  assert.deepEqual(long, { phase: 'opened', type: 'prompt', message: 'y'.repeat(300) });
  assert.deepEqual(entry(JSON.stringify({ phase: 'closed', type: 'confirm', message: 7 })), { phase: 'closed', type: 'confirm', message: '' });
});

test('a page calling alert in a loop is rate-limited, and unmatched closes are dropped', () => {
  const { sent, run } = loadPage();
  run("for (let i = 0; i < 50; i++) alert('again ' + i)");
  const entries = dialogMessages(sent);
  const opened = entries.filter((e) => e.phase === 'opened').length;
  assert.ok(opened >= 10 && opened < 15, `opened ${opened}`);
  assert.equal(entries.filter((e) => e.phase === 'closed').length, opened);
});
