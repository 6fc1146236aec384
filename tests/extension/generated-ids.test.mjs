import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

// page/selector.js is a classic script that registers on globalThis.__shotbridge.
createRequire(import.meta.url)('../../extension/page/selector.js');
const { generatedId } = globalThis.__shotbridge;

test('framework, counter and random ids are generated', () => {
  for (const id of [':r1:', 'radix-:r2:', 'headlessui-menu-3', 'ember1234', 'mui-12', 'row-20240611',
    'a3f9c21e', '1b4e28ba-2fa1-11d2-883f-0016d3cca427', 'new-l3b99l', 'todo-k3j9xq', 'ag-80-input',
    'todo-abcdefab', 'x7k2p9', 'kx33ab']) {
    assert.equal(generatedId(id), true, id);
  }
});

test('ids people write are kept', () => {
  for (const id of ['save', 'toggle-all', 'sl-tab-1', 'ql-picker-options-0', 'h264-settings', 'step3',
    'utf8-name', 'b2b-signup', 'mp3player', 'col12', 'main-nav', 'user-menu', 'r30', 'tz', 'quick']) {
    assert.equal(generatedId(id), false, id);
  }
});
