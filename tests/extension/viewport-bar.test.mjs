// node --test tests/extension/ : waiting for Chrome's debugging bar after an attach that showed it
// (lib/viewport.js awaitBar). The headed end-to-end case is tests/e2e/test_headed_cancel.py.
import test from 'node:test';
import assert from 'node:assert/strict';

const { awaitBar } = await import('../../extension/lib/viewport.js');

const full = { width: 1280, height: 713, dpr: 1 };
const withBar = { width: 1280, height: 657, dpr: 1 };

test('returns as soon as the bar shrinks the viewport', async () => {
  let reads = 0;
  const read = async () => (++reads >= 3 ? withBar : full);
  assert.equal(await awaitBar(read, full, 5000, 1), true);
  assert.equal(reads, 3);
});

test('gives up after maxMs when nothing changes (another infobar in front)', async () => {
  const t0 = Date.now();
  assert.equal(await awaitBar(async () => full, full, 60, 5), false);
  assert.ok(Date.now() - t0 >= 60);
});

test('a page that cannot be read is not a change', async () => {
  assert.equal(await awaitBar(async () => null, full, 20, 5), false);
});
