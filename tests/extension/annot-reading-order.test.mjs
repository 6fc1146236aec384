import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

createRequire(import.meta.url)('../../extension/page/reading-order.js');
const { readingOrder } = globalThis.__shotbridge;

const el = (name, x, y, width = 50, height = 20) => ({ name, bounds: { x, y, width, height } });
const names = (items) => readingOrder(items).map((i) => i.name);

test('a row of mixed heights stays one row (centred short items after a tall one)', () => {
  // Toolbar: a 60 px tall "New" button, a centred 20 px link, a 40 px search box; the next row below.
  const order = names([
    el('next-row', 0, 80, 50, 20), el('link', 120, 20, 60, 20), el('search', 200, 10, 100, 40), el('new', 0, 0, 100, 60),
  ]);
  assert.deepEqual(order, ['new', 'link', 'search', 'next-row']);
});

test('a card grid with captions of different lengths reads row by row', () => {
  const order = names([
    el('a', 0, 0, 100, 120), el('b', 120, 0, 100, 90), el('c', 240, 0, 100, 140),
    el('d', 0, 160, 100, 100), el('e', 120, 160, 100, 130),
  ]);
  assert.deepEqual(order, ['a', 'b', 'c', 'd', 'e']);
});

test('items below a short first item but beside a tall neighbour are not pulled up', () => {
  const order = names([el('hero', 0, 0, 800, 400), el('cta', 900, 300, 80, 30), el('footer', 0, 420, 80, 20)]);
  assert.deepEqual(order, ['hero', 'cta', 'footer']);
});
