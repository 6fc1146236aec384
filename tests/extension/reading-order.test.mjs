import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

// page/reading-order.js is a classic script that registers on globalThis.__shotbridge.
createRequire(import.meta.url)('../../extension/page/reading-order.js');
const { readingOrder } = globalThis.__shotbridge;

const el = (name, x, y, width = 50, height = 20) => ({ name, bounds: { x, y, width, height } });
const names = (items) => readingOrder(items).map((i) => i.name);

test('top to bottom, then left to right', () => {
  assert.deepEqual(names([el('c', 0, 100), el('b', 200, 0), el('a', 0, 0)]), ['a', 'b', 'c']);
});

test('tops within the tolerance form one row', () => {
  // "Save" is 4 px higher than "First" but to its right: same row, left first.
  assert.deepEqual(names([el('save', 400, 100), el('first', 10, 104), el('link', 200, 100, 80, 18)]), ['first', 'link', 'save']);
});

test('vertical overlap above half the taller height joins a row', () => {
  assert.deepEqual(names([el('right', 300, 0, 50, 40), el('left', 0, 15, 50, 40)]), ['left', 'right']);
});

test('a tall sidebar does not swallow the content next to it', () => {
  const order = names([el('sidebar', 0, 0, 200, 800), el('p1', 300, 100), el('p2', 300, 300), el('head', 300, 0)]);
  assert.deepEqual(order, ['sidebar', 'head', 'p1', 'p2']);
});

test('input is not mutated and empty input works', () => {
  const items = [el('b', 0, 50), el('a', 0, 0)];
  readingOrder(items);
  assert.deepEqual(items.map((i) => i.name), ['b', 'a']);
  assert.deepEqual(readingOrder([]), []);
});
