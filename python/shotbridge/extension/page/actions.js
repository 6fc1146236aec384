// Page side of the `select`, `upload`, `drag` and `wait_for` commands (lib/choose.js, lib/upload.js,
// lib/drag.js, lib/wait.js): choosing options, setting files, watching a drag start, and checking a
// wait's condition. Trusted mouse input stays in the service worker (CDP); what these do without
// it (a native <select>'s choice, a file input's files) is what Playwright does in the page too.
// The tool's actions are recorded through content/recorder.js (L.recordAction), described like
// the user's, so the generated scripts replay them.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  /** @param {string} code @param {string} message */
  const fail = (code, message) => ({ error: { code, message } });
  const MAX_LISTED = 20;

  /**
   * The element an action names: a selector's first match, or what is on top at a viewport point.
   * @param {{selector?: string | null, x?: number | null, y?: number | null}} a
   * @returns {{el?: Element, error?: {code: string, message: string}}}
   */
  function target(a) {
    if (a.selector) {
      const res = L.resolveOne(a.selector);
      return res.error ? { error: res.error } : { el: res.element };
    }
    const el = L.deepElementFromPoint(a.x, a.y);
    return el ? { el } : fail('not_found', `Nothing is at (${a.x}, ${a.y}) in the viewport.`);
  }

  /** A control reached through its <label>, or the <select> of an <option>. @param {Element} el */
  function control(el) {
    if (el.localName === 'label' && /** @type {HTMLLabelElement} */ (el).control) return /** @type {Element} */ (/** @type {HTMLLabelElement} */ (el).control);
    if (el.localName === 'option' || el.localName === 'optgroup') return el.closest('select') || el;
    return el.closest('select, input[type=file i], label') === el ? el : (el.closest('select') || el);
  }

  /** @param {Element} el */
  const short = (el) => ({ tag: el.localName, role: L.role(el), name: L.accessibleName(el, L.role(el)), selector: L.uniqueSelector(el) });
  const norm = (/** @type {string} */ s) => s.replace(/\s+/g, ' ').trim();
  /** @param {HTMLOptionElement} o */
  const optionOf = (o) => ({ value: o.value, label: norm(o.label || o.textContent || ''), index: o.index });

  /**
   * The options `values` (value, then label, then label ignoring case) and `indexes` name.
   * @param {HTMLSelectElement} sel
   * @param {string[]} values
   * @param {number[]} indexes
   */
  function chosen(sel, values, indexes) {
    const opts = [...sel.options];
    /** @type {HTMLOptionElement[]} */
    const out = [];
    for (const v of values) {
      const o = opts.find((x) => x.value === v) || opts.find((x) => norm(x.label || x.textContent || '') === norm(v)) ||
        opts.find((x) => norm(x.label || x.textContent || '').toLowerCase() === norm(v).toLowerCase());
      if (!o) return { missing: `no option has the value or label ${JSON.stringify(v)}` };
      out.push(o);
    }
    for (const i of indexes) {
      if (!opts[i]) return { missing: `there is no option at index ${i} (it has ${opts.length})` };
      out.push(opts[i]);
    }
    return { options: out };
  }

  /**
   * Choose options of a native <select> (replacing its selection, as Playwright's selectOption
   * does), fire input and change as a choice in its popup would; an ARIA combobox/listbox is
   * described instead, for the worker to open and click.
   * @param {{selector?: string | null, x?: number | null, y?: number | null, values: string[], indexes: number[]}} a
   */
  L.selectOptions = (a) => {
    const t = target(a);
    if (t.error) return t;
    const el = control(/** @type {Element} */ (t.el));
    if (el.localName !== 'select') return { aria: { ...short(el), role: L.role(el) } };
    const sel = /** @type {HTMLSelectElement} */ (el);
    const what = `the <select> ${L.uniqueSelector(sel)}`;
    if (sel.disabled) return fail('bad_request', `${what} is disabled.`);
    const pick = chosen(sel, a.values, a.indexes);
    if (pick.missing) {
      const list = [...sel.options].slice(0, MAX_LISTED).map((o) => `${JSON.stringify(o.value)} (${JSON.stringify(norm(o.label || o.textContent || ''))})`);
      return fail('bad_request', `In ${what} ${pick.missing}; its options: ${list.join(', ')}${sel.options.length > MAX_LISTED ? ', …' : ''}.`);
    }
    const options = /** @type {HTMLOptionElement[]} */ (pick.options);
    if (options.length > 1 && !sel.multiple) return fail('bad_request', `${what} takes one option, not ${options.length}.`);
    const off = options.find((o) => o.disabled);
    if (off) return fail('bad_request', `In ${what} the option ${JSON.stringify(optionOf(off).label)} is disabled.`);
    for (const o of sel.options) o.selected = options.includes(o);
    sel.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    const now = [...sel.selectedOptions].map(optionOf);
    const values = now.map((o) => o.value);
    L.recordAction?.('select', sel, { value: values[0] ?? '', option: now[0]?.label ?? '', ...(sel.multiple ? { values } : {}) });
    return { element: short(sel), selected: now, multiple: sel.multiple };
  };

  /**
   * The visible option named `name` of the open ARIA listbox (exact name first, then ignoring
   * case, then containing it), and where to click it.
   * @param {{name: string}} a
   */
  L.ariaOption = (a) => {
    const want = norm(a.name).toLowerCase();
    const visible = [...document.querySelectorAll('[role=option]')].filter((o) => L.isVisible(o, o.getBoundingClientRect()));
    const name = (/** @type {Element} */ o) => norm(L.accessibleName(o, 'option') || o.textContent || '').toLowerCase();
    const o = visible.find((x) => name(x) === want) || visible.find((x) => name(x).includes(want));
    if (!o) {
      const names = visible.slice(0, MAX_LISTED).map((x) => JSON.stringify(norm(L.accessibleName(x, 'option') || x.textContent || '')));
      return fail('bad_request', names.length ? `No visible option is named ${JSON.stringify(a.name)}; the open list shows ${names.join(', ')}.`
        : `No option named ${JSON.stringify(a.name)} is visible: the list did not open (a filtering combobox may need text typed first), or its options lack role="option".`);
    }
    o.scrollIntoView({ block: 'nearest', behavior: 'instant' });
    const r = o.getBoundingClientRect();
    return { point: { x: L.round(r.left + r.width / 2), y: L.round(r.top + r.height / 2) }, option: short(o) };
  };

  /**
   * What an ARIA combobox or listbox shows as chosen now.
   * @param {{selector: string}} a
   */
  L.ariaSelected = (a) => {
    const res = L.resolveOne(a.selector);
    if (res.error) return { selected: [] };
    const el = /** @type {Element} */ (res.element);
    const list = el.getAttribute('role') === 'listbox' ? el : document.getElementById(el.getAttribute('aria-controls') || '');
    const picked = list ? [...list.querySelectorAll('[role=option][aria-selected=true]')].map((o) => norm(L.accessibleName(o, 'option') || o.textContent || '')) : [];
    const shown = el.localName === 'input' ? String(/** @type {HTMLInputElement} */ (el).value) : norm(/** @type {HTMLElement} */ (el).innerText || '');
    return { selected: picked.map((label) => ({ label })), shows: L.clean(shown, 200) };
  };

  /** @param {string} b64 */
  function bytesOf(b64) {
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  /**
   * Put files on an <input type=file>: File objects built from the bytes the host read, set
   * through a DataTransfer, then input and change (Playwright's setInputFiles with buffers does the
   * same). Only this input of this page receives them.
   * @param {{selector?: string | null, x?: number | null, y?: number | null, b64: string,
   *   files: {name: string, mime: string, size: number, path: string}[]}} a
   */
  L.setFiles = (a) => {
    const t = target(a);
    if (t.error) return t;
    const el = control(/** @type {Element} */ (t.el));
    const input = /** @type {HTMLInputElement} */ (el.localName === 'input' ? el : el.querySelector('input[type=file i]') || el);
    if (input.localName !== 'input' || input.type !== 'file') {
      return fail('bad_request', `${input.localName} ${L.uniqueSelector(input)} is not an <input type="file">; aim at the file input or its <label>.`);
    }
    const what = `the file input ${L.uniqueSelector(input)}`;
    if (input.disabled) return fail('bad_request', `${what} is disabled.`);
    if (a.files.length > 1 && !input.multiple) return fail('bad_request', `${what} takes one file, not ${a.files.length}.`);
    if (input.webkitdirectory) return fail('bad_request', `${what} asks for a folder; pass files to an input without webkitdirectory.`);
    const all = bytesOf(a.b64);
    const dt = new DataTransfer();
    let at = 0;
    for (const f of a.files) {
      dt.items.add(new File([all.subarray(at, at + f.size)], f.name, { type: f.mime }));
      at += f.size;
    }
    input.files = dt.files;
    input.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    input.dispatchEvent(new Event('change', { bubbles: true }));
    L.recordAction?.('upload', input, { files: a.files.map((f) => f.path) });
    return { element: short(input), files: [...(input.files || [])].map((f) => ({ name: f.name, size: f.size, type: f.type })), accept: input.accept || null };
  };

  /** @type {{from: Element | null, to: Element | null, toTarget: object | null, started: boolean, stop: () => void} | null} */
  let drag = null;

  /**
   * Before a drag: remember the elements at both ends (the drop may rebuild the list) and watch
   * for an HTML5 dragstart, which tells the worker to drive the drop with CDP drag events.
   * @param {{from: {x: number, y: number}, to: {x: number, y: number}}} a
   */
  L.dragPrepare = (a) => {
    drag?.stop();
    const onStart = () => {
      if (drag) drag.started = true;
    };
    window.addEventListener('dragstart', onStart, true);
    const to = L.deepElementFromPoint(a.to.x, a.to.y);
    // The drop target as it is before the drop (a column that receives the card shows its text).
    const d = { from: L.deepElementFromPoint(a.from.x, a.from.y), to, toTarget: to && L.describeTarget ? L.describeTarget(to) : null,
      started: false, stop: () => window.removeEventListener('dragstart', onStart, true) };
    drag = d;
    // Press and release land on different elements (or on a slider's thumb): that is no click.
    L.recordMuted = true;
    return { from: d.from ? short(d.from) : null, to: d.to ? short(d.to) : null };
  };

  L.dragStarted = () => !!drag?.started;

  /**
   * After a drag: stop watching and record it (both ends' elements and points).
   * @param {{from: {x: number, y: number}, to: {x: number, y: number}, by_points: boolean}} a
   */
  L.dragDone = (a) => {
    const d = drag;
    drag = null;
    L.recordMuted = false;
    if (!d) return { html5: false };
    d.stop();
    if (d.from) {
      L.recordAction?.('drag', d.from, { to: d.toTarget,
        from_point: a.from, to_point: a.to, by_points: a.by_points });
    }
    return { html5: d.started };
  };

  /**
   * One look at a wait's condition: a text (case-insensitive, in the rendered text) or a
   * selector's visible matches, present or (gone) absent.
   * @param {{text?: string | null, selector?: string | null, gone: boolean}} a
   */
  L.waitCheck = (a) => {
    if (a.selector) {
      let all;
      try {
        all = L.resolveAll(a.selector);
      } catch (e) {
        return { error: L.invalidSelector(a.selector, e) };
      }
      const shown = all.filter((el) => L.isVisible(el, el.getBoundingClientRect()));
      return { found: shown.length, first: shown[0] ? short(shown[0]) : null, url: location.href };
    }
    const want = norm(a.text || '').toLowerCase();
    const lines = (document.body?.innerText || '').split('\n').map(norm);
    const hits = lines.filter((line) => line.toLowerCase().includes(want));
    return { found: hits.length, first: hits[0] ? { text: L.clean(hits[0], 120) } : null, url: location.href };
  };

  /**
   * Record a wait that was met, so a replay waits for the same thing.
   * @param {{wait: object}} a
   */
  L.recordWait = (a) => {
    if (document.body) L.recordAction?.('wait', document.body, { wait: a.wait });
    return true;
  };
})();
