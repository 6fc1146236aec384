// Key descriptions for CDP Input.dispatchKeyEvent. Pages look at `key`, `code` and (older code)
// `keyCode`, and Chrome only runs a key's default action (Enter submitting a form, Tab moving focus,
// Backspace deleting) when the event carries the right windowsVirtualKeyCode and, for keys that
// produce characters, `text`. So every key needs all of them, not just a name.

import { Code, ShotError } from './errors.js';

/**
 * @typedef {{key: string, code: string, keyCode: number, text?: string, location?: number}} KeyDef
 */

/** CDP modifier bits (Input.dispatchKeyEvent / dispatchMouseEvent `modifiers`). */
export const MODIFIER_BITS = Object.freeze({ Alt: 1, Control: 2, Meta: 4, Shift: 8 });

/** @type {Record<string, KeyDef>} */
const MODIFIER_KEYS = {
  Alt: { key: 'Alt', code: 'AltLeft', keyCode: 18, location: 1 },
  Control: { key: 'Control', code: 'ControlLeft', keyCode: 17, location: 1 },
  Meta: { key: 'Meta', code: 'MetaLeft', keyCode: 91, location: 1 },
  Shift: { key: 'Shift', code: 'ShiftLeft', keyCode: 16, location: 1 },
};

/** @type {Record<string, string>} spellings models use for modifiers */
const MODIFIER_ALIASES = {
  alt: 'Alt', option: 'Alt', control: 'Control', ctrl: 'Control', meta: 'Meta', cmd: 'Meta',
  command: 'Meta', super: 'Meta', win: 'Meta', shift: 'Shift',
};

/** @type {Record<string, KeyDef>} */
const NAMED = {
  // Enter's text is "\r": that is what makes Chrome fire keypress and submit the form.
  Enter: { key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' },
  Tab: { key: 'Tab', code: 'Tab', keyCode: 9 },
  Escape: { key: 'Escape', code: 'Escape', keyCode: 27 },
  Backspace: { key: 'Backspace', code: 'Backspace', keyCode: 8 },
  Delete: { key: 'Delete', code: 'Delete', keyCode: 46 },
  Insert: { key: 'Insert', code: 'Insert', keyCode: 45 },
  ' ': { key: ' ', code: 'Space', keyCode: 32, text: ' ' },
  ArrowLeft: { key: 'ArrowLeft', code: 'ArrowLeft', keyCode: 37 },
  ArrowUp: { key: 'ArrowUp', code: 'ArrowUp', keyCode: 38 },
  ArrowRight: { key: 'ArrowRight', code: 'ArrowRight', keyCode: 39 },
  ArrowDown: { key: 'ArrowDown', code: 'ArrowDown', keyCode: 40 },
  Home: { key: 'Home', code: 'Home', keyCode: 36 },
  End: { key: 'End', code: 'End', keyCode: 35 },
  PageUp: { key: 'PageUp', code: 'PageUp', keyCode: 33 },
  PageDown: { key: 'PageDown', code: 'PageDown', keyCode: 34 },
  ContextMenu: { key: 'ContextMenu', code: 'ContextMenu', keyCode: 93 },
  ...MODIFIER_KEYS,
};

/** @type {Record<string, string>} alternative names → canonical key names */
const ALIASES = {
  return: 'Enter', esc: 'Escape', space: ' ', spacebar: ' ', del: 'Delete', ins: 'Insert',
  left: 'ArrowLeft', up: 'ArrowUp', right: 'ArrowRight', down: 'ArrowDown',
  arrowleft: 'ArrowLeft', arrowup: 'ArrowUp', arrowright: 'ArrowRight', arrowdown: 'ArrowDown',
  pageup: 'PageUp', pagedown: 'PageDown', pgup: 'PageUp', pgdn: 'PageDown', home: 'Home', end: 'End',
  enter: 'Enter', tab: 'Tab', escape: 'Escape', backspace: 'Backspace', delete: 'Delete',
  insert: 'Insert', contextmenu: 'ContextMenu',
};

// US layout punctuation: [key, shifted key, code, keyCode].
const PUNCTUATION = [
  ['-', '_', 'Minus', 189], ['=', '+', 'Equal', 187], ['[', '{', 'BracketLeft', 219],
  [']', '}', 'BracketRight', 221], ['\\', '|', 'Backslash', 220], [';', ':', 'Semicolon', 186],
  ["'", '"', 'Quote', 222], [',', '<', 'Comma', 188], ['.', '>', 'Period', 190],
  ['/', '?', 'Slash', 191], ['`', '~', 'Backquote', 192],
];
const DIGIT_SHIFTED = ')!@#$%^&*(';

/**
 * The key for one name: "Enter", "a", "A", "F5", "ArrowDown", "/", "Space", …
 * @param {string} name
 * @param {boolean} shift Shift is held: letters and punctuation produce their shifted character
 * @returns {KeyDef}
 */
export function keyDef(name, shift) {
  if (NAMED[name]) return NAMED[name];
  const alias = ALIASES[name.toLowerCase()];
  if (alias) return NAMED[alias];
  if (/^[a-zA-Z]$/.test(name)) {
    const upper = name.toUpperCase();
    // "A" means Shift+a, as on a keyboard.
    const ch = shift || name === upper ? upper : name.toLowerCase();
    return { key: ch, code: `Key${upper}`, keyCode: upper.charCodeAt(0), text: ch };
  }
  if (/^[0-9]$/.test(name)) {
    const ch = shift ? DIGIT_SHIFTED[Number(name)] : name;
    return { key: ch, code: `Digit${name}`, keyCode: 48 + Number(name), text: ch };
  }
  const fn = /^f([1-9]|1[0-2])$/i.exec(name);
  if (fn) return { key: `F${fn[1]}`, code: `F${fn[1]}`, keyCode: 111 + Number(fn[1]) };
  for (const [plain, shifted, code, keyCode] of PUNCTUATION) {
    if (name === plain || name === shifted) {
      const ch = shift || name === shifted ? shifted : plain;
      return { key: /** @type {string} */ (ch), code: /** @type {string} */ (code), keyCode: /** @type {number} */ (keyCode), text: /** @type {string} */ (ch) };
    }
  }
  throw new ShotError(Code.BAD_REQUEST,
    `Unknown key "${name}". Use a key name (Enter, Tab, Escape, Backspace, Delete, ArrowUp/Down/Left/Right, ` +
    'Home, End, PageUp, PageDown, Space, F1-F12), a single letter, digit or punctuation character, ' +
    'optionally with modifiers: "Control+A", "Shift+Tab". To enter text use action "type".');
}

/**
 * @param {string} name
 * @returns {string | null} canonical modifier name, or null when `name` is no modifier
 */
export function modifierName(name) {
  return MODIFIER_ALIASES[name.toLowerCase()] ?? null;
}

/**
 * Parse "Control+Shift+K" (plus any extra `modifiers`) into the modifiers to hold and the key.
 * "+" alone and "Control++" mean the plus key.
 * @param {string} combo
 * @param {string[]} [extraModifiers]
 * @returns {{modifiers: string[], key: string}}
 */
export function parseCombo(combo, extraModifiers = []) {
  if (typeof combo !== 'string' || !combo) throw new ShotError(Code.BAD_REQUEST, 'keypress needs key, e.g. "Enter" or "Control+A"');
  const parts = combo === '+' ? ['+'] : combo.endsWith('++') ? [...combo.slice(0, -2).split('+'), '+'] : combo.split('+');
  const key = /** @type {string} */ (parts.pop());
  /** @type {string[]} */
  const modifiers = [];
  for (const m of [...extraModifiers, ...parts]) {
    const canonical = typeof m === 'string' ? modifierName(m.trim()) : null;
    if (!canonical) throw new ShotError(Code.BAD_REQUEST, `Unknown modifier "${m}": use Alt, Control, Meta or Shift.`);
    if (!modifiers.includes(canonical)) modifiers.push(canonical);
  }
  if (!key) throw new ShotError(Code.BAD_REQUEST, `No key in "${combo}".`);
  return { modifiers, key };
}

/** @param {string[]} modifiers canonical names */
export function modifierBits(modifiers) {
  return modifiers.reduce((bits, m) => bits | (MODIFIER_BITS[/** @type {keyof typeof MODIFIER_BITS} */ (m)] ?? 0), 0);
}

// macOS Chrome does not turn synthetic Cmd+key events into editing commands (its key bindings
// live in the Cocoa layer CDP bypasses); the `commands` field asks for them explicitly.
/** @type {Record<string, string>} */
const MAC_COMMANDS = { a: 'selectAll', c: 'copy', x: 'cut', v: 'paste', z: 'undo' };

/**
 * The Input.dispatchKeyEvent calls for one key press with modifiers held: modifiers down, the key
 * down and up, modifiers up (in reverse).
 * @param {string} combo e.g. "Enter", "Control+A"
 * @param {string[]} [extraModifiers]
 * @param {boolean} [mac] running on macOS
 * @returns {object[]} CDP params, in order
 */
export function keyPressEvents(combo, extraModifiers = [], mac = false) {
  const { modifiers, key } = parseCombo(combo, extraModifiers);
  const events = [];
  let bits = 0;
  for (const m of modifiers) {
    const d = MODIFIER_KEYS[m];
    bits |= MODIFIER_BITS[/** @type {keyof typeof MODIFIER_BITS} */ (m)];
    events.push({ type: 'rawKeyDown', modifiers: bits, key: d.key, code: d.code, windowsVirtualKeyCode: d.keyCode, location: d.location });
  }
  const shift = modifiers.includes('Shift');
  // "Control+A" means the A key with Control, as shortcuts are written, not Control+Shift+a.
  const chord = modifiers.some((m) => m !== 'Shift');
  const d = keyDef(chord && !shift && /^[A-Z]$/.test(key) ? key.toLowerCase() : key, shift);
  // Like a real keyboard: with Control, Alt or Meta held a key produces no character (Control+A
  // selects all instead of typing "a"); keys without text are "rawKeyDown".
  const text = bits & ~MODIFIER_BITS.Shift ? undefined : d.text;
  const common = { modifiers: bits, key: d.key, code: d.code, windowsVirtualKeyCode: d.keyCode, ...(d.location ? { location: d.location } : {}) };
  const command = mac && modifiers.length === 1 && modifiers[0] === 'Meta' ? MAC_COMMANDS[key.toLowerCase()] : undefined;
  events.push(text !== undefined
    ? { type: 'keyDown', ...common, text, unmodifiedText: text }
    : { type: 'rawKeyDown', ...common, ...(command ? { commands: [command] } : {}) });
  events.push({ type: 'keyUp', ...common });
  for (const m of [...modifiers].reverse()) {
    const md = MODIFIER_KEYS[m];
    bits &= ~MODIFIER_BITS[/** @type {keyof typeof MODIFIER_BITS} */ (m)];
    events.push({ type: 'keyUp', modifiers: bits, key: md.key, code: md.code, windowsVirtualKeyCode: md.keyCode, location: md.location });
  }
  return events;
}
