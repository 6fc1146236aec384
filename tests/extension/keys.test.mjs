// node --test tests/extension/ : key descriptions for Input.dispatchKeyEvent and full-page tiling.
import test from 'node:test';
import assert from 'node:assert/strict';

// lib/keys.js and lib/tiles.js use no chrome.* at module load, so node can load them.
const { keyPressEvents, parseCombo, keyDef } = await import('../../extension/lib/keys.js');
const { planTiles } = await import('../../extension/lib/tiles.js');

test('Enter carries "\\r" as text so forms submit', () => {
  const [down, up] = keyPressEvents('Enter');
  assert.deepEqual(down, { type: 'keyDown', modifiers: 0, key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, text: '\r', unmodifiedText: '\r' });
  assert.equal(up.type, 'keyUp');
});

test('keys without text are rawKeyDown', () => {
  for (const [name, code, vk] of [['Tab', 'Tab', 9], ['Escape', 'Escape', 27], ['Backspace', 'Backspace', 8],
    ['ArrowDown', 'ArrowDown', 40], ['Home', 'Home', 36], ['End', 'End', 35], ['PageUp', 'PageUp', 33], ['PageDown', 'PageDown', 34]]) {
    const [down] = keyPressEvents(name);
    assert.equal(down.type, 'rawKeyDown', name);
    assert.equal(down.code, code);
    assert.equal(down.windowsVirtualKeyCode, vk);
    assert.equal(down.text, undefined);
  }
});

test('Control+A: modifier down, key without text, modifier up', () => {
  const ev = keyPressEvents('Control+A');
  assert.deepEqual(ev.map((e) => [e.type, e.key, e.modifiers]), [
    ['rawKeyDown', 'Control', 2], ['rawKeyDown', 'a', 2], ['keyUp', 'a', 2], ['keyUp', 'Control', 0],
  ]);
  assert.equal(ev[1].code, 'KeyA');
  assert.equal(ev[1].windowsVirtualKeyCode, 65);
});

test('Shift changes the character; aliases and extra modifiers are understood', () => {
  const ev = keyPressEvents('a', ['shift']);
  assert.deepEqual([ev[1].type, ev[1].key, ev[1].text, ev[1].modifiers], ['keyDown', 'A', 'A', 8]);
  assert.deepEqual(parseCombo('ctrl+shift+k'), { modifiers: ['Control', 'Shift'], key: 'k' });
  assert.deepEqual(parseCombo('Control++'), { modifiers: ['Control'], key: '+' });
  assert.equal(keyDef('esc', false).key, 'Escape');
  assert.equal(keyDef('1', true).text, '!');
});

test('Cmd+A gets the selectAll command on macOS only', () => {
  assert.deepEqual(keyPressEvents('Meta+a', [], true)[1].commands, ['selectAll']);
  assert.equal(keyPressEvents('Meta+a', [], false)[1].commands, undefined);
});

test('unknown keys and modifiers are clear errors', () => {
  assert.throws(() => keyPressEvents('Hyper+x'), /Unknown modifier "Hyper"/);
  assert.throws(() => keyPressEvents('Enterr'), /Unknown key "Enterr"/);
});

test('tiles fit the caps and cover the page', () => {
  for (const [width, height, dpr] of [[1280, 6000, 1], [1280, 6000, 2], [1920, 16384, 1], [800, 900, 2]]) {
    const { scale, bands } = planTiles(width, height, dpr, { max_width: 1280, max_long_edge: 1568 });
    assert.ok(width * scale <= 1280 + 1e-9, `${width}@${dpr}`);
    for (const b of bands) assert.ok(b.height * scale <= 1568 + 1e-9);
    assert.equal(bands.reduce((n, b) => n + b.height, 0), height);
    bands.forEach((b, i) => i && assert.equal(b.y, bands[i - 1].y + bands[i - 1].height));
  }
  // A 6000 px page, 1280 wide at DPR 2: rendered 1:1 (not at 2x) in 4 bands of 1568 CSS px.
  const { scale, bands } = planTiles(1280, 6000, 2, { max_width: 1280, max_long_edge: 1568 });
  assert.equal(scale, 1);
  assert.equal(bands.length, 4);
});
