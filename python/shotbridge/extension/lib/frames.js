// Frames: discover elements in every frame of a tab (same-origin and cross-origin iframes, nested)
// and route selector work to the frame an element lives in.
//
// A frame is named by its path (its index in each ancestor's window.frames, see page/selector.js):
// every frame computes its own path, and each parent reports its iframes' indices, content boxes
// and selectors. A cross-origin frame cannot read its parent's layout, so offsets always come from
// the parent side: an element's top-page bounds are its bounds in its frame plus the content-box
// positions of every iframe above it, clipped to what of each iframe is visible.
//
// Selectors: a ">>>" step that lands on an iframe continues in that iframe's document
// ("#pay >>> button.pay"), as it continues in a shadow root for a shadow host.

import { Code, ShotError } from './errors.js';
import { callPage, callPageAll } from './page.js';
// Pure helpers of the page library (reading order, crowding hints): they register on
// globalThis.__shotbridge and touch no DOM at load time, so the worker can use the same code.
import '../page/reading-order.js';
import '../page/discover.js';

const L = /** @type {any} */ (globalThis).__shotbridge;
const MAX_DEPTH = 8;

/**
 * @typedef {{x: number, y: number, width: number, height: number}} Rect
 * @typedef {{x: number, y: number}} Point
 */

const round = (/** @type {number} */ n) => Math.round(n * 100) / 100;

/** @param {Rect} r @param {Point} off */
const shift = (r, off) => ({ x: round(r.x + off.x), y: round(r.y + off.y), width: r.width, height: r.height });

/** @param {Rect} a @param {Rect | null} b (null: no limit) @returns {Rect | null} */
function intersect(a, b) {
  if (!b) return a;
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const w = Math.min(a.x + a.width, b.x + b.width) - x;
  const h = Math.min(a.y + a.height, b.y + b.height) - y;
  return w > 0 && h > 0 ? { x: round(x), y: round(y), width: round(w), height: round(h) } : null;
}

const js = (/** @type {string} */ v) => JSON.stringify(v);

/**
 * `L[name](args)` in the frame at `path` ([] is the top frame).
 * @param {number} tabId
 * @param {number[]} path
 * @param {string} name
 * @param {any} args
 */
export async function callIn(tabId, path, name, args) {
  if (!path.length) return callPage(tabId, name, args);
  const all = await callPageAll(tabId, 'inFrame', { path, name, args }, { allFrames: true });
  const hit = all.find((f) => f.value && f.value.here);
  if (hit) return hit.value.value;
  const failed = all.find((f) => f.error);
  throw new ShotError(Code.NOT_FOUND, `The frame at [${path.join(', ')}] did not answer${failed ? ` (${failed.error})` : ''}; it may have navigated or be closed.`);
}

/**
 * Walks `path` from the top frame: each answer that says `enter` (an iframe) moves into that
 * frame, adding its content box to the offset. Returns the last answer with the frame it came
 * from, the offset of that frame's viewport in the top page and its visible box there.
 * @param {number} tabId
 * @param {string} name page function answering {enter: {index, box, rest?}} or its result
 * @param {(rest: string | null) => any} argsFor arguments for a frame given the rest of a path
 * @param {Rect | null} viewport the top frame's viewport (the first clip)
 */
async function walk(tabId, name, argsFor, viewport) {
  /** @type {number[]} */
  let path = [];
  let offset = { x: 0, y: 0 };
  let clip = viewport;
  /** @type {string[]} */
  const chain = [];
  let rest = null;
  for (let depth = 0; depth <= MAX_DEPTH; depth++) {
    const out = await callIn(tabId, path, name, argsFor(rest));
    if (!out || !out.enter || out.enter.index < 0 || depth === MAX_DEPTH) return { out, path, offset, clip, chain, rest };
    const box = shift(out.enter.box, offset);
    clip = intersect(box, clip) ?? { x: box.x, y: box.y, width: 0, height: 0 };
    offset = { x: box.x, y: box.y };
    path = [...path, out.enter.index];
    if (out.enter.selector) chain.push(out.enter.selector);
    rest = out.enter.rest ?? null;
  }
  throw new ShotError(Code.INTERNAL, 'frames nested too deep');
}

/**
 * `locate` for a selector that may cross iframes: bounds and aim point in top-page viewport px,
 * the aim point inside what is visible of every iframe above the element.
 * @param {number} tabId
 * @param {string} selector
 * @param {boolean} scrollIntoView
 */
export async function locateDeep(tabId, selector, scrollIntoView) {
  let res = await walk(tabId, 'locate', (rest) => ({ selector: rest ?? selector, scroll_into_view: scrollIntoView }), null);
  // Scrolling inside a frame can scroll the frames above it too: measure again, still.
  if (scrollIntoView && res.path.length) res = await walk(tabId, 'locate', (rest) => ({ selector: rest ?? selector }), null);
  const { out, path, offset, chain } = res;
  if (out?.enter) return { error: { code: Code.NOT_FOUND, message: `"${selector}" steps into an iframe whose document cannot be reached.` } };
  if (!path.length || !out || out.error) return out;
  const top = await callPage(tabId, 'pageState', null);
  const clip = intersect(res.clip ?? { x: 0, y: 0, width: 0, height: 0 }, { x: 0, y: 0, ...top.viewport });
  const bounds = shift(out.bounds, offset);
  const seen = clip && intersect(bounds, clip);
  const point = seen ? { x: round(seen.x + seen.width / 2), y: round(seen.y + seen.height / 2) } : null;
  const area = bounds.width * bounds.height;
  return {
    ...out,
    ...top,
    frame: chain,
    element: { ...out.element, bounds: shift(out.element.bounds, offset), frame: chain },
    bounds,
    point,
    in_viewport: !!seen && seen.width * seen.height > 0.5 * area,
    covered_by: out.covered_by ? { ...out.covered_by, bounds: shift(out.covered_by.bounds, offset), frame: chain } : null,
  };
}

/**
 * Is the top-page point (x, y) on the element a ">>>" path names, in whatever frame it is?
 * @param {number} tabId
 * @param {string} selector
 * @param {number} x
 * @param {number} y
 */
export async function pointOnDeep(tabId, selector, x, y) {
  if (!selector.includes('>>>')) return callPage(tabId, 'pointOn', { selector, x, y });
  const { out, path, offset, rest } = await walk(tabId, 'locate', (r) => ({ selector: r ?? selector }), null);
  if (!out || out.error) return false;
  if (!path.length) return callPage(tabId, 'pointOn', { selector, x, y });
  // The last frame resolved the rest of the path; pointOn there takes the same rest.
  return callIn(tabId, path, 'pointOn', { selector: rest, x: x - offset.x, y: y - offset.y });
}

/**
 * What is under a top-page point, in the innermost frame there (bounds in top-page px).
 * @param {number} tabId
 * @param {number} x
 * @param {number} y
 */
export async function elementAtDeep(tabId, x, y) {
  /** @type {number[]} */
  let path = [];
  let offset = { x: 0, y: 0 };
  /** @type {string[]} */
  const chain = [];
  let out = await callPage(tabId, 'elementAt', { x, y });
  const top = out;
  for (let depth = 0; out?.enter && depth < MAX_DEPTH; depth++) {
    chain.push(out.hit?.selector || '');
    offset = { x: offset.x + out.enter.box.x, y: offset.y + out.enter.box.y };
    path = [...path, out.enter.index];
    const inner = await callIn(tabId, path, 'elementAt', { x: x - offset.x, y: y - offset.y }).catch(() => null);
    if (!inner) break;
    out = inner;
  }
  if (!path.length || out === top) return top;
  const hit = out.hit ? { ...out.hit, bounds: shift(out.hit.bounds, offset), frame: chain } : null;
  return { ...top, hit, enter: undefined };
}

/**
 * `focused` / `selectFocused`, in the frame that holds the focus (followed down from the top).
 * @param {number} tabId
 * @param {'focused' | 'selectFocused'} name
 */
export async function inFocusedFrame(tabId, name) {
  /** @type {number[]} */
  let path = [];
  /** @type {string[]} */
  const chain = [];
  let out = await callPage(tabId, name, null);
  const top = out;
  for (let depth = 0; out?.enter && out.enter.index >= 0 && depth < MAX_DEPTH; depth++) {
    chain.push(out.enter.selector);
    path = [...path, out.enter.index];
    out = await callIn(tabId, path, name, null);
  }
  if (name === 'focused' && path.length && out) {
    return { ...top, focused: out.focused ? { ...out.focused, frame: chain } : null, enter: undefined };
  }
  return out;
}

/**
 * @typedef {{target: string, selector: string | null, max: number, include_offscreen: boolean,
 *   text_rects?: boolean, covered?: boolean, after_frame?: boolean, known?: string | null}} DiscoverAllArgs
 */

/**
 * The frame answers kept for discover calls that name what they hold (`known`): by tab and
 * question, each frame's last answer by token. A worker that restarted holds none, and asks again.
 * @type {Map<string, Map<string, any>>}
 */
const heldAnswers = new Map();
const HELD_TABS = 16;

/**
 * discover in every frame, joined: one list in reading order over the top page, with each
 * frame's elements offset into top-page px, clipped to the visible part of their iframes, and
 * named by `frame` (the iframe selectors from the top), a ">>>" path and a frameLocator chain.
 * With `known` (the token of the answer the host holds), an unchanged page answers
 * `{same: known, reused}`; every other answer carries its `token`.
 * @param {number} tabId
 * @param {DiscoverAllArgs} args
 */
export async function discoverAll(tabId, args) {
  const answers = await answersOf(tabId, args);
  if (!Array.isArray(answers)) return answers; // nothing changed since the answer the host holds
  const token = answers.map((a) => a.value?.token).filter(Boolean).sort().join(',');
  const joined = joinAnswers(answers, args);
  return joined.error ? joined : { ...joined, token };
}

/**
 * Every frame's answer, or `{same, reused}` when each is one the host holds (page/sent.js).
 * @param {number} tabId
 * @param {DiscoverAllArgs} args
 * @returns {Promise<import('./page.js').FrameValue[] | {same: string, reused: boolean}>}
 */
async function answersOf(tabId, args) {
  const known = args.known ? args.known.split(',') : [];
  const ask = (/** @type {string[] | undefined} */ k) => callPageAll(tabId, 'discover', { ...args, known: k, frames: true }, { allFrames: true });
  if (args.known === null || args.known === undefined) return ask(undefined);
  const key = JSON.stringify([tabId, args.target, args.selector, args.max, args.include_offscreen, args.text_rects, args.covered]);
  const answers = await ask(known);
  const said = answers.map((a) => a.value?.same);
  if (known.length && said.every(Boolean) && said.sort().join(',') === known.slice().sort().join(',')) {
    return { same: args.known, reused: answers.every((a) => a.value.reused === true) };
  }
  // Some frames changed: the others' answers come from what this worker kept of them.
  const held = heldAnswers.get(key);
  const full = answers.map((a) => {
    if (!a.value?.same) return a;
    const value = held?.get(a.value.same);
    return value && { ...a, value: { ...value, reused: a.value.reused } };
  });
  const out = full.every(Boolean) ? /** @type {import('./page.js').FrameValue[]} */ (full) : await ask(undefined);
  heldAnswers.delete(key);
  heldAnswers.set(key, new Map(out.filter((a) => a.value?.token).map((a) => [a.value.token, a.value])));
  if (heldAnswers.size > HELD_TABS) heldAnswers.delete(heldAnswers.keys().next().value);
  return out;
}

/**
 * The frames' answers joined into one list (see discoverAll).
 * @param {import('./page.js').FrameValue[]} answers
 * @param {DiscoverAllArgs} args
 */
function joinAnswers(answers, args) {
  const topAnswer = answers.find((f) => f.frameId === 0);
  if (!topAnswer) throw new ShotError(Code.INTERNAL, 'page script returned nothing');
  if (topAnswer.error) throw new ShotError(Code.INTERNAL, topAnswer.error);
  const top = topAnswer.value;
  if (top.error || !top.child_frames?.length) return strip(top);

  /** @type {Map<string, any>} */
  const byPath = new Map();
  for (const a of answers) if (a.value && Array.isArray(a.value.frame_path)) byPath.set(a.value.frame_path.join('/'), a.value);

  const viewport = { x: 0, y: 0, width: top.viewport.width, height: top.viewport.height };
  const joined = {
    /** @type {any[]} */
    elements: top.elements.map((/** @type {any} */ e) => ({ ...e })),
    /** @type {any[]} */
    hidden: [...(top.hidden || [])],
    /** @type {Rect[]} text in frames too: badges keep off it (top-page px, clipped to the frame) */
    texts: [...(top.text_rects || [])],
    total: top.total_found,
  };
  /** @type {any[]} */
  const frames = [];
  /** @type {{value: any, offset: Point, clip: Rect | null, chain: string[], loc: string | null}[]} */
  const queue = [{ value: top, offset: { x: 0, y: 0 }, clip: args.include_offscreen ? null : viewport, chain: [], loc: '' }];
  while (queue.length) {
    const parent = /** @type {(typeof queue)[number]} */ (queue.shift());
    for (const child of parent.value.child_frames || []) {
      const value = byPath.get([...parent.value.frame_path, child.index].join('/'));
      const box = shift(child.box, parent.offset);
      const clip = intersect(box, parent.clip);
      const chain = [...parent.chain, child.selector];
      const info = { frame: chain, bounds: box, url: value?.url ?? null, labelled: 0 };
      frames.push(info);
      if (!value || !clip || chain.length > MAX_DEPTH) continue;
      const loc = parent.loc !== null && child.css ? `${parent.loc}frameLocator(${js(child.css)}).` : null;
      queue.push({ value, offset: { x: box.x, y: box.y }, clip, chain, loc });
      info.labelled = joinFrame(value, child, { box, clip, chain, loc }, args.include_offscreen, joined);
    }
  }
  const { elements, hidden, texts, total } = joined;
  const ordered = L.readingOrder(elements.map((e) => ({ e, bounds: e.bounds }))).map((/** @type {any} */ o) => o.e);
  const kept = ordered.slice(0, args.max);
  return {
    ...strip(top),
    elements: kept,
    total_found: total,
    hidden: hidden.slice(0, 20),
    frames: frames.map((f) => ({ ...f, labelled: kept.filter((e) => e.frame === f.frame).length })),
    notes: L.crowding(kept.map((e) => e.bounds), args.max, Math.max(total, ordered.length)),
    ...(args.text_rects ? { text_rects: texts } : {}),
    reused: answers.every((a) => a.value?.reused === true),
  };
}

/**
 * One frame's answer added to the joined lists: its hidden controls, text boxes and elements,
 * offset into top-page px and clipped to the visible part of its iframe.
 * @param {any} value the frame's discover answer
 * @param {any} child its iframe as the parent frame reported it (covered_by: a modal over it)
 * @param {{box: Rect, clip: Rect, chain: string[], loc: string | null}} at the iframe in top-page
 *   px, its visible part, its selectors from the top and frameLocator chain (null: none)
 * @param {boolean} includeOffscreen
 * @param {{elements: any[], hidden: any[], texts: Rect[], total: number}} joined
 * @returns {number} how many of its elements were listed
 */
function joinFrame(value, child, { box, clip, chain, loc }, includeOffscreen, joined) {
  let labelled = 0;
  for (const h of value.hidden || []) joined.hidden.push({ ...h, frame: chain });
  for (const t of value.text_rects || []) {
    const r = joined.texts.length < 2000 && intersect(shift(t, { x: box.x, y: box.y }), clip);
    if (r) joined.texts.push(r);
  }
  joined.total += value.total_found;
  for (const e of value.elements) {
    const bounds = intersect(shift(e.bounds, { x: box.x, y: box.y }), clip);
    if (!bounds) continue;
    if (child.covered_by) {
      // A modal over the iframe: its controls are there but cannot be reached.
      joined.hidden.push({ selector: e.selector, role: e.role, name: e.name, hidden_by: child.covered_by, frame: chain });
      continue;
    }
    const area = e.bounds.width * e.bounds.height;
    joined.elements.push({
      ...e,
      bounds,
      frame: chain,
      // Our own selector syntax: ">>>" steps into the iframe as into a shadow root.
      shadow_selector: [...chain, e.selector || e.shadow_selector].join(' >>> '),
      locator: loc !== null && e.locator ? `${loc}${e.locator}` : '',
      in_viewport: e.in_viewport && (includeOffscreen ? true : bounds.width * bounds.height > 0.5 * area),
    });
    labelled++;
  }
  return labelled;
}

/** A frame's answer without the joining fields. @param {any} v */
function strip(v) {
  const { frame_path: _p, child_frames: _c, ...rest } = v;
  return rest;
}
