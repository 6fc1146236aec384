// node --test tests/extension/ : Page.captureScreenshot asked again when Chrome refuses once.
import test from 'node:test';
import assert from 'node:assert/strict';

const { captureScreenshot } = await import('../../extension/lib/chrome-capture.js');

/** A debugger session whose answers are given in order: an Error is thrown, anything else returned. */
function session(...answers) {
  const calls = [];
  return {
    calls,
    async send(method, params) {
      calls.push([method, params]);
      const a = answers.shift();
      if (a instanceof Error) throw a;
      return a;
    },
  };
}

test('a refused capture is asked again with the same parameters', async () => {
  const dbg = session(new Error('Unable to capture screenshot'), { data: 'AAAA' });
  assert.deepEqual(await captureScreenshot(dbg, { format: 'jpeg' }), { data: 'AAAA' });
  assert.deepEqual(dbg.calls, [['Page.captureScreenshot', { format: 'jpeg' }], ['Page.captureScreenshot', { format: 'jpeg' }]]);
});

test('a second refusal, or any other error, is the caller\'s', async () => {
  const twice = session(new Error('Unable to capture screenshot'), new Error('Unable to capture screenshot'));
  await assert.rejects(captureScreenshot(twice, {}), /Unable to capture/);
  const other = session(new Error('Target closed'));
  await assert.rejects(captureScreenshot(other, {}), /Target closed/);
  assert.equal(other.calls.length, 1);
});
