// The arguments of every command the host sends, read in one place: per command a table of its
// fields (type, default, bounds, and the message a refusal carries) and the rules that join
// fields. python/shotbridge/wire/extension.py declares the same commands; the extension's unit
// tests hold these tables to the JSON Schema exported from those models
// (tests/extension/wire-schema.json), so the two sides cannot drift apart unnoticed.
//
// Reading rules: a missing or null field takes its default; a field marked `required` has none
// (with `nullable`, null is a value there and only a missing key is refused); unknown fields are
// dropped. `coerce: 'truthy'` reads any value as true or false; `coerce: 'fallback'` replaces a
// value out of bounds with the default; `clampMax` cuts a larger number down instead of refusing.

import { Code, ShotError } from './errors.js';

/**
 * @typedef {'integer' | 'number' | 'string' | 'boolean' | 'object' | 'array' | 'shape'} FieldType
 * @typedef {{type: FieldType, message: string, default?: unknown, required?: boolean,
 *   nullable?: boolean, min?: number, max?: number, above?: number, values?: unknown[],
 *   items?: 'string', nonBlank?: string, pattern?: RegExp, shape?: (v: any) => boolean,
 *   coerce?: 'truthy' | 'fallback', clampMax?: number}} Field
 * @typedef {{fields: Record<string, Field>, check?: (a: Record<string, any>) => void}} CommandArgs
 */

export const DEFAULT_TIMEOUT_MS = 10_000;
export const MAX_TIMEOUT_MS = 300_000;

const bad = (/** @type {string} */ m) => new ShotError(Code.BAD_REQUEST, m);
const isNum = (/** @type {unknown} */ v) => typeof v === 'number' && Number.isFinite(v);
const isObject = (/** @type {unknown} */ v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonBlank = (/** @type {unknown} */ v) => typeof v === 'string' && v.trim() !== '';

/** @type {Field} */
const TIMEOUT_MS = {
  type: 'number', above: 0, default: DEFAULT_TIMEOUT_MS, clampMax: MAX_TIMEOUT_MS,
  message: 'timeout_ms must be a positive number',
};
/** @type {Field} */
const TAB_ID = { type: 'integer', nullable: true, default: null, message: 'tab_id must be an integer' };
/** @type {(message: string) => Field} */
const idleMs = (message) => ({ type: 'number', min: 0, max: 60_000, default: 2000, message });
/** @type {(message: string) => Field} */
const truthy = (message) => ({ type: 'boolean', coerce: 'truthy', default: false, message });
const tileCaps = (/** @type {any} */ t) => isObject(t) && Number.isInteger(t.max_width) && t.max_width >= 16 &&
  Number.isInteger(t.max_long_edge) && t.max_long_edge >= 16;

/** @type {Record<string, CommandArgs>} */
export const COMMAND_ARGS = {
  ping: { fields: { timeout_ms: TIMEOUT_MS } },
  list_tabs: { fields: { timeout_ms: TIMEOUT_MS } },
  track: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: { ...TAB_ID, required: true, default: undefined,
        message: 'track needs tab_id (an integer, or null to follow the active tab)' },
    },
  },
  navigate: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: TAB_ID,
      url: { type: 'string', nonBlank: 'url must be a non-empty string', nullable: true, default: null,
        message: 'url must be a non-empty string' },
      action: { type: 'string', values: ['goto', 'back', 'forward', 'reload'], nullable: true, default: null,
        message: 'navigate needs a url, or action "back", "forward" or "reload"' },
      new_tab: truthy('new_tab is read as true or false'),
      keep_beforeunload: { type: 'boolean', default: false, message: 'keep_beforeunload must be true or false' },
    },
  },
  open_tab: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      url: { type: 'string', required: true, nonBlank: 'url must be a non-empty string', message: 'url must be a non-empty string' },
      width: { type: 'integer', min: 200, max: 4000, coerce: 'fallback', default: 1280, message: 'width in CSS px' },
      height: { type: 'integer', min: 200, max: 4000, coerce: 'fallback', default: 800, message: 'height in CSS px' },
    },
  },
  close_tab: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: { type: 'integer', required: true, message: 'close_tab needs tab_id' },
    },
  },
  capture: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: TAB_ID,
      method: { type: 'string', values: ['auto', 'cdp', 'visible'], default: 'auto', message: 'method must be "auto", "cdp" or "visible"' },
      format: { type: 'string', values: ['jpeg', 'png'], default: 'jpeg', message: 'format must be "jpeg" or "png"' },
      quality: { type: 'integer', min: 1, max: 100, default: 90, message: 'quality must be an integer 1..100' },
      scale: { type: 'number', above: 0, max: 4, nullable: true, default: null, message: 'scale must be a number in (0, 4]' },
      selector: { type: 'string', nonBlank: 'selector must be a non-empty string', nullable: true, default: null,
        message: 'selector must be a non-empty string' },
      full_page: { type: 'boolean', default: false, message: 'full_page must be a boolean' },
      max_height_css: { type: 'integer', min: 1, default: 16384, message: 'max_height_css must be a positive integer' },
      debugger_idle_ms: idleMs('debugger_idle_ms must be a number 0..60000'),
      scroll: {
        type: 'shape', nullable: true, default: null,
        shape: (sc) => sc === 'top' || sc === 'bottom' || (isObject(sc) && (isNum(sc.y) || nonBlank(sc.selector))),
        message: 'scroll must be "top", "bottom", {y: number} or {selector: string}',
      },
      tile: { type: 'shape', shape: tileCaps, nullable: true, default: null,
        message: 'tile must be {max_width, max_long_edge} in output px (each at least 16)' },
      fit: { type: 'shape', shape: tileCaps, nullable: true, default: null,
        message: 'fit must be {max_width, max_long_edge} in output px (each at least 16)' },
      fit_quality: { type: 'integer', min: 1, max: 100, nullable: true, default: null, message: 'fit_quality must be an integer 1..100' },
      mask_selectors: { type: 'array', items: 'string', default: [], message: 'mask_selectors must be a list of CSS selectors' },
      early_pixels: truthy('early_pixels is read as true or false'),
    },
    check(a) {
      if (a.full_page && a.selector !== null) throw bad('use either selector or full_page, not both');
      if (a.tile !== null && !a.full_page) throw bad('tile only applies to full_page captures');
    },
  },
  discover: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: TAB_ID,
      target: { type: 'string', values: ['interactive', 'all_visible', 'custom'], default: 'interactive',
        message: 'target must be "interactive", "all_visible" or "custom"' },
      selector: { type: 'string', nullable: true, default: null, message: 'selector must be a string' },
      max: { type: 'integer', min: 1, max: 500, default: 50, message: 'max must be an integer 1..500' },
      include_offscreen: truthy('include_offscreen is read as true or false'),
      text_rects: truthy('text_rects is read as true or false'),
      covered: { ...truthy('covered is read as true or false'), default: true },
      after_frame: truthy('after_frame is read as true or false'),
      known: { type: 'string', nullable: true, default: null, message: 'known must be a string' },
    },
    check(a) {
      if (a.target === 'custom' && !nonBlank(a.selector)) throw bad('target "custom" needs a selector');
    },
  },
  page_info: { fields: { timeout_ms: TIMEOUT_MS, tab_id: TAB_ID } },
  input: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: TAB_ID,
      action: { type: 'string', required: true, values: ['click', 'hover', 'type', 'keypress', 'scroll'],
        message: 'action must be one of click, hover, type, keypress, scroll' },
      x: { type: 'number', nullable: true, default: null, message: 'x and y must be numbers (CSS px of the viewport)' },
      y: { type: 'number', nullable: true, default: null, message: 'x and y must be numbers (CSS px of the viewport)' },
      from_scroll: { type: 'shape', shape: (p) => isObject(p) && isNum(p.x) && isNum(p.y), nullable: true, default: null,
        message: 'from_scroll must be {x, y}' },
      selector: { type: 'string', nonBlank: 'selector must be a non-empty string', nullable: true, default: null,
        message: 'selector must be a string' },
      expect_selector: { type: 'string', nullable: true, default: null, message: 'expect_selector must be a string' },
      expect_url: { type: 'string', nullable: true, default: null, message: 'expect_url must be a string' },
      text: { type: 'string', nullable: true, default: null, message: 'text must be a string' },
      clear: truthy('clear is read as true or false'),
      key: { type: 'string', nullable: true, default: null, message: 'key must be a string' },
      modifiers: { type: 'array', items: 'string', default: [], message: 'modifiers must be a list such as ["Control", "Shift"]' },
      button: { type: 'string', values: ['left', 'right', 'middle'], default: 'left', message: 'button must be "left", "right" or "middle"' },
      click_count: { type: 'integer', values: [1, 2, 3], default: 1, message: 'click_count must be 1, 2 or 3' },
      delta_x: { type: 'number', default: 0, message: 'delta_x and delta_y must be numbers (CSS px)' },
      delta_y: { type: 'number', default: 0, message: 'delta_x and delta_y must be numbers (CSS px)' },
      to: { type: 'shape', shape: (t) => t === 'top' || t === 'bottom' || (isObject(t) && isNum(t.y)), nullable: true,
        default: null, message: 'to must be "top", "bottom" or {y}' },
      debugger_idle_ms: idleMs('debugger_idle_ms must be a number 0..60000'),
      expect_viewport: {
        type: 'shape', nullable: true, default: null,
        shape: (v) => isObject(v) && isNum(v.width) && isNum(v.height) && isNum(v.dpr),
        message: 'expect_viewport must be {width, height, dpr}',
      },
      screenshot_id: { type: 'integer', nullable: true, default: null, message: 'screenshot_id must be an integer' },
    },
    check: checkInput,
  },
  select: { fields: { ...aimed('select'), values: { type: 'array', items: 'string', default: [], message: 'values must be a list of option values, labels or names' },
    indexes: { type: 'shape', shape: (v) => Array.isArray(v) && v.every((i) => Number.isInteger(i) && i >= 0), default: [],
      message: 'indexes must be a list of option indexes (integers from 0)' } },
  check: (a) => checkAimed('select', a, a.values.length + a.indexes.length > 0, 'values (option values, labels or names) or indexes') },
  upload_part: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      upload_id: { type: 'string', required: true, nonBlank: 'upload_id must be a non-empty string', message: 'upload_id must be a non-empty string' },
      index: { type: 'integer', required: true, min: 0, message: 'index must be an integer from 0' },
      data: { type: 'string', required: true, message: 'data must be base64 text' },
    },
  },
  upload: {
    fields: {
      ...aimed('upload'),
      upload_id: { type: 'string', required: true, nonBlank: 'upload_id must be a non-empty string', message: 'upload_id must be a non-empty string' },
      parts: { type: 'integer', required: true, min: 0, message: 'parts must be an integer from 0' },
      files: { type: 'shape', required: true, shape: (v) => Array.isArray(v) && v.length > 0 && v.every((f) => isObject(f) &&
        typeof f.name === 'string' && typeof f.mime === 'string' && Number.isInteger(f.size) && f.size >= 0 && typeof f.path === 'string'),
      message: 'files must be a non-empty list of {name, mime, size, path}' },
    },
    check: (a) => checkAimed('upload', a, true, ''),
  },
  drag: {
    fields: {
      ...aimed('drag'),
      to: { type: 'shape', required: true, shape: dragEnd,
        message: 'to must be {selector} or {x, y} (CSS px of the viewport), with expect_selector for a label' },
      steps: { type: 'integer', min: 1, max: 100, default: 10, message: 'steps must be an integer 1..100' },
    },
    check: (a) => checkAimed('drag', a, true, ''),
  },
  wait_for: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: TAB_ID,
      text: { type: 'string', nonBlank: 'text must be a non-empty string', nullable: true, default: null, message: 'text must be a string' },
      selector: { type: 'string', nonBlank: 'selector must be a non-empty string', nullable: true, default: null, message: 'selector must be a string' },
      url: { type: 'string', nonBlank: 'url must be a non-empty string', nullable: true, default: null, message: 'url must be a string' },
      network: { type: 'boolean', default: false, message: 'network must be true or false' },
      gone: { type: 'boolean', default: false, message: 'gone must be true or false' },
      wait_ms: { type: 'integer', min: 0, max: 60_000, default: 5000, message: 'wait_ms must be an integer 0..60000' },
    },
    check(a) {
      const n = [a.text !== null, a.selector !== null, a.url !== null, a.network].filter(Boolean).length;
      if (n !== 1) throw bad('wait_for needs exactly one of text, selector, url or network');
      if (a.network && a.gone) throw bad('gone applies to text, selector or url, not network');
    },
  },
  element_at: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: TAB_ID,
      x: { type: 'number', required: true, message: 'element_at needs x and y (CSS px of the viewport)' },
      y: { type: 'number', required: true, message: 'element_at needs x and y (CSS px of the viewport)' },
    },
  },
  resolve: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: TAB_ID,
      selector: { type: 'string', required: true, nonBlank: 'resolve needs a selector', message: 'resolve needs a selector' },
      scroll_into_view: truthy('scroll_into_view is read as true or false'),
    },
  },
  cdp: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      allow: {
        type: 'boolean', required: true, values: [true],
        message: 'Raw CDP is off. The user enables it with `shotctl config allow-cdp on` (and `shotctl mcp --allow-cdp` for the MCP server).',
      },
      method: { type: 'string', required: true, pattern: /^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*$/,
        message: 'method must be a CDP method name such as "Page.captureScreenshot".' },
      params: { type: 'object', nullable: true, default: null, message: 'params must be an object' },
      tab_id: TAB_ID,
      debugger_idle_ms: { type: 'number', default: 2000, message: 'debugger_idle_ms must be a number' },
    },
  },
  record_config: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      network: { type: 'boolean', nullable: true, default: null, message: 'network must be a boolean' },
    },
  },
  dialog: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      accept: { type: 'boolean', required: true, message: 'dialog needs accept: true (OK / Leave) or false (Cancel / Stay)' },
      prompt_text: { type: 'string', nullable: true, default: null, message: 'prompt_text must be a string' },
      tab_id: TAB_ID,
    },
  },
  errors: { fields: { timeout_ms: TIMEOUT_MS, tab_id: TAB_ID, clear: truthy('clear is read as true or false') } },
  emulate: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: TAB_ID,
      preset: { type: 'string', nullable: true, default: null, message: 'preset must be a string' },
      width: { type: 'integer', min: 100, max: 4000, nullable: true, default: null, message: 'width must be an integer from 100 to 4000 (CSS px)' },
      height: { type: 'integer', min: 100, max: 4000, nullable: true, default: null, message: 'height must be an integer from 100 to 4000 (CSS px)' },
      device_scale_factor: { type: 'number', above: 0, max: 5, nullable: true, default: null,
        message: 'device_scale_factor must be a number above 0, at most 5' },
      mobile: { type: 'boolean', nullable: true, default: null, message: 'mobile must be true or false' },
      touch: { type: 'boolean', nullable: true, default: null, message: 'touch must be true or false' },
      user_agent: { type: 'string', nullable: true, default: null, message: 'user_agent must be a string' },
      color_scheme: { type: 'string', values: ['light', 'dark', 'no-preference'], nullable: true, default: null,
        message: 'color_scheme must be "light", "dark" or "no-preference"' },
      reduced_motion: { type: 'string', values: ['reduce', 'no-preference'], nullable: true, default: null,
        message: 'reduced_motion must be "reduce" or "no-preference"' },
      reset: { type: 'boolean', default: false, message: 'reset must be true or false' },
    },
  },
  tab_close: { fields: { timeout_ms: TIMEOUT_MS, tab_id: TAB_ID } },
  console: { fields: { timeout_ms: TIMEOUT_MS, tab_id: TAB_ID } },
  network: {
    fields: {
      timeout_ms: TIMEOUT_MS,
      tab_id: TAB_ID,
      since_ms: { type: 'number', nullable: true, default: null, message: 'since_ms must be a number (epoch ms)' },
      id: { type: 'integer', nullable: true, default: null, message: 'id must be an integer' },
    },
  },
};

/**
 * The fields of an action aimed at one element, like input's: a selector, or x/y mapped from a
 * screenshot (with its scroll, URL and a label's selector).
 * @param {string} cmd
 * @returns {Record<string, Field>}
 */
function aimed(cmd) {
  return {
    timeout_ms: TIMEOUT_MS,
    tab_id: TAB_ID,
    selector: { type: 'string', nonBlank: 'selector must be a non-empty string', nullable: true, default: null, message: 'selector must be a string' },
    x: { type: 'number', nullable: true, default: null, message: `${cmd}: x and y must be numbers (CSS px of the viewport)` },
    y: { type: 'number', nullable: true, default: null, message: `${cmd}: x and y must be numbers (CSS px of the viewport)` },
    from_scroll: { type: 'shape', shape: (p) => isObject(p) && isNum(p.x) && isNum(p.y), nullable: true, default: null,
      message: 'from_scroll must be {x, y}' },
    expect_selector: { type: 'string', nullable: true, default: null, message: 'expect_selector must be a string' },
    expect_url: { type: 'string', nullable: true, default: null, message: 'expect_url must be a string' },
    expect_viewport: {
      type: 'shape', nullable: true, default: null,
      shape: (v) => isObject(v) && isNum(v.width) && isNum(v.height) && isNum(v.dpr),
      message: 'expect_viewport must be {width, height, dpr}',
    },
    debugger_idle_ms: idleMs('debugger_idle_ms must be a number 0..60000'),
  };
}

/**
 * A drag's end: a selector or x/y, each field of its type when present.
 * @param {any} t
 */
function dragEnd(t) {
  if (!isObject(t)) return false;
  const opt = (/** @type {string} */ k, /** @type {(v: unknown) => boolean} */ ok) => t[k] === undefined || t[k] === null || ok(t[k]);
  const typed = opt('selector', nonBlank) && opt('x', isNum) && opt('y', isNum) && opt('expect_selector', (v) => typeof v === 'string');
  return typed && (nonBlank(t.selector) || (isNum(t.x) && isNum(t.y)));
}

/**
 * An aimed action needs exactly one target, and what it acts with.
 * @param {string} cmd
 * @param {Record<string, any>} a
 * @param {boolean} has whether the action's own argument is there
 * @param {string} needs what that argument is, for the refusal
 */
function checkAimed(cmd, a, has, needs) {
  if ((a.x === null) !== (a.y === null)) throw bad(`${cmd}: give both x and y, or neither`);
  if (a.x !== null && a.selector !== null) throw bad(`${cmd}: use either x/y or selector, not both`);
  if (a.x === null && a.selector === null) throw bad(`${cmd} needs a selector or x/y`);
  if (!has) throw bad(`${cmd} needs ${needs}`);
}

/**
 * The rules of `input` that join fields: where it aims, and what each action needs.
 * @param {Record<string, any>} a
 */
function checkInput(a) {
  if ((a.x === null) !== (a.y === null)) throw bad('give both x and y, or neither');
  if (a.x !== null && a.selector !== null) throw bad('use either x/y or selector, not both');
  if (a.action === 'type' && a.text === null) throw bad('type needs text');
  if (a.action === 'keypress' && !a.key) throw bad('keypress needs key, e.g. "Enter" or "Control+A"');
  if ((a.action === 'click' || a.action === 'hover') && a.x === null && a.selector === null) {
    throw bad(`${a.action} needs x/y or a selector`);
  }
  if (a.action === 'scroll' && a.to === null && a.selector === null && a.x === null && a.delta_x === 0 && a.delta_y === 0) {
    throw bad('scroll needs delta_x/delta_y (at x/y or the viewport centre), to ("top", "bottom", {y}), or a selector or x/y to bring into view');
  }
}

/**
 * Does `v` (present, not null) fit `f`'s type and bounds?
 * @param {Field} f
 * @param {any} v
 */
function fits(f, v) {
  const typed = {
    integer: () => Number.isInteger(v),
    number: () => isNum(v),
    string: () => typeof v === 'string' && (!f.pattern || f.pattern.test(v)),
    boolean: () => typeof v === 'boolean',
    object: () => isObject(v),
    array: () => Array.isArray(v) && (f.items !== 'string' || v.every((x) => typeof x === 'string')),
    shape: () => !!f.shape?.(v),
  }[f.type]();
  if (!typed) return false;
  if (f.values && !f.values.includes(v)) return false;
  if (f.min !== undefined && v < f.min) return false;
  if (f.max !== undefined && v > f.max) return false;
  return f.above === undefined || v > f.above;
}

/**
 * One field's value as the command reads it, or a bad_request refusal.
 * @param {Field} f
 * @param {unknown} v the value sent (undefined when the key is missing)
 */
export function readField(f, v) {
  const absent = v === undefined || (v === null && !(f.nullable && f.required));
  if (absent) {
    if (f.required) throw bad(f.message);
    return Array.isArray(f.default) ? [...f.default] : f.default;
  }
  if (v === null) return null; // a required field that takes null
  if (f.coerce === 'truthy') return !!v;
  if (!fits(f, v)) {
    if (f.coerce === 'fallback') return f.default;
    throw bad(f.message);
  }
  if (f.nonBlank && !(/** @type {string} */ (v)).trim()) throw bad(f.nonBlank);
  return f.clampMax !== undefined ? Math.min(/** @type {number} */ (v), f.clampMax) : v;
}

/**
 * The arguments of `cmd` as its handler reads them: every declared field (defaults filled in),
 * nothing else. Throws bad_request naming the first field that does not fit.
 * @param {string} cmd a key of COMMAND_ARGS
 * @param {Record<string, any>} args
 * @returns {Record<string, any>}
 */
export function parseArgs(cmd, args) {
  const spec = COMMAND_ARGS[cmd];
  if (!spec) throw new ShotError(Code.INTERNAL, `${cmd} has no argument table in lib/args.js`);
  /** @type {Record<string, any>} */
  const a = {};
  for (const [name, f] of Object.entries(spec.fields)) a[name] = readField(f, args[name]);
  spec.check?.(a);
  return a;
}
