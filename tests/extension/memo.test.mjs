// node --test tests/extension/ : page/memo.js keeps an answer for one call, and a DOM-only answer
// across calls only while no mutation was seen and the page's roots are the same.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const EXT = new URL('../../python/shotbridge/extension/', import.meta.url);

/** page/memo.js in a fresh context with a MutationObserver the test drives. */
function loadMemo() {
  const page = { callbacks: [], pending: 0, observed: [] };
  class MutationObserver {
    /** @param {() => void} cb */
    constructor(cb) {
      page.callbacks.push(cb);
    }
    /** @param {object} root */
    observe(root) {
      page.observed.push(root);
    }
    disconnect() {
      page.observed = [];
    }
    takeRecords() {
      const n = page.pending;
      page.pending = 0;
      return new Array(n).fill({ type: 'attributes' });
    }
  }
  const context = { MutationObserver };
  context.globalThis = context;
  vm.runInNewContext(readFileSync(new URL('page/memo.js', EXT), 'utf8'), context);
  const L = context.__shotbridge;
  let computed = 0;
  /** One discover-like call over `roots` reading a DOM-only and a per-call answer for `key`. */
  const call = (roots, key = 'k') =>
    L.withDomMemo(roots, () => ({
      dom: L.rememberDom('sel', key, () => ++computed),
      again: L.rememberDom('sel', key, () => ++computed),
      call: L.remember('name', key, () => ++computed),
    }));
  return { L, page, call, count: () => computed };
}

test('an answer is kept within a call and computed afresh outside one', () => {
  const { L } = loadMemo();
  let n = 0;
  const inCall = L.withMemo(() => [L.remember('t', 'a', () => ++n), L.remember('t', 'a', () => ++n)]);
  assert.deepEqual(inCall, [1, 1]);
  assert.equal(L.remember('t', 'a', () => ++n), 2);
  assert.equal(L.rememberDom('t', 'a', () => ++n), 3, 'outside a call nothing is kept');
  assert.equal(L.withMemo(() => L.remember('t', 'a', () => ++n)), 4, 'a new call starts empty');
});

test('DOM-only answers last across calls until a mutation is delivered', () => {
  const { page, call } = loadMemo();
  const roots = [{ doc: 1 }];
  const first = call(roots);
  assert.equal(first.dom, first.again);
  const second = call(roots);
  assert.equal(second.dom, first.dom, 'unchanged page: the selector answer is reused');
  assert.notEqual(second.call, first.call, 'per-call answers are never reused');
  assert.deepEqual(page.observed, roots);
  page.callbacks.forEach((cb) => cb());
  assert.notEqual(call(roots).dom, first.dom, 'a mutation drops what was kept');
});

test('a mutation not yet delivered (pending records) drops the kept answers too', () => {
  const { page, call } = loadMemo();
  const roots = [{ doc: 1 }];
  const first = call(roots);
  page.pending = 1;
  const second = call(roots);
  assert.notEqual(second.dom, first.dom);
  assert.equal(call(roots).dom, second.dom, 'and the new answers are kept from then on');
});

test('a new or different shadow root drops the kept answers and is watched', () => {
  const { page, call } = loadMemo();
  const doc = { doc: 1 };
  const first = call([doc]);
  const shadow = { shadow: 1 };
  const second = call([doc, shadow]);
  assert.notEqual(second.dom, first.dom, 'attaching a shadow root is no mutation, yet it counts');
  assert.deepEqual(page.observed, [doc, shadow]);
  assert.notEqual(call([doc, { shadow: 2 }]).dom, second.dom);
});
