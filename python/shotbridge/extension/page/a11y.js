// Roles, accessible names and interaction hints: a pragmatic subset of ARIA/accname, enough to
// label elements for an AI assistant (not a full accessibility-tree computation).
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  const TEXT_INPUTS = new Set(['', 'text', 'email', 'tel', 'url', 'search', 'password', 'number',
    'date', 'datetime-local', 'month', 'time', 'week']);
  const INPUT_ROLES = /** @type {Record<string, string>} */ ({
    button: 'button', submit: 'button', reset: 'button', image: 'button',
    checkbox: 'checkbox', radio: 'radio', range: 'slider', search: 'searchbox', number: 'spinbutton',
    color: 'button', file: 'button',
  });
  const TAG_ROLES = /** @type {Record<string, string>} */ ({
    button: 'button', textarea: 'textbox', summary: 'button', nav: 'navigation', main: 'main',
    header: 'banner', footer: 'contentinfo', aside: 'complementary', article: 'article',
    form: 'form', table: 'table', ul: 'list', ol: 'list', li: 'listitem', option: 'option',
    dialog: 'dialog', progress: 'progressbar', meter: 'meter', h1: 'heading', h2: 'heading',
    h3: 'heading', h4: 'heading', h5: 'heading', h6: 'heading', p: 'paragraph', hr: 'separator',
    fieldset: 'group', details: 'group', menu: 'list', output: 'status', label: '',
  });
  // Roles whose accessible name comes from their content (accname "name from content").
  const NAME_FROM_CONTENT = new Set(['button', 'link', 'tab', 'menuitem', 'option', 'heading',
    'checkbox', 'radio', 'switch', 'cell', 'row', 'treeitem', 'tooltip', 'menuitemcheckbox',
    'menuitemradio', 'listitem', 'columnheader', 'rowheader', 'gridcell']);

  /** @param {Element} el */
  L.role = (el) => {
    const explicit = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
    if (explicit) return explicit;
    const tag = el.localName;
    if (tag === 'a' || tag === 'area') return el.hasAttribute('href') ? 'link' : '';
    if (tag === 'input') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (type === 'hidden' || type === 'password') return ''; // html-aam: password has no role
      if (INPUT_ROLES[type]) return INPUT_ROLES[type];
      return el.hasAttribute('list') ? 'combobox' : 'textbox';
    }
    if (tag === 'select') {
      const sel = /** @type {HTMLSelectElement} */ (el);
      return sel.multiple || sel.size > 1 ? 'listbox' : 'combobox';
    }
    if (tag === 'img') return el.getAttribute('alt') === '' ? 'presentation' : 'img';
    if (tag === 'section') return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : '';
    if (el.hasAttribute('contenteditable') && /** @type {HTMLElement} */ (el).isContentEditable) return 'textbox';
    if (tag === 'td') return 'cell';
    if (tag === 'th') return 'columnheader';
    if (tag === 'tr') return 'row';
    if (tag === 'svg') return el.querySelector(':scope > title') || el.hasAttribute('aria-label') ? 'img' : '';
    return TAG_ROLES[tag] || '';
  };

  /** @param {Element} el */
  function textOf(el) {
    const h = /** @type {HTMLElement} */ (el);
    // innerText follows rendering (skips hidden text); fall back for SVG and friends.
    return L.clean(typeof h.innerText === 'string' ? h.innerText : el.textContent, 200);
  }

  /** Hidden from the accessibility tree: aria-hidden, or not rendered. @param {Element} el */
  function a11yHidden(el) {
    if (el.getAttribute('aria-hidden') === 'true') return true;
    if (el.localName === 'title' || el.localName === 'desc') return false; // svg children: no boxes
    const cs = getComputedStyle(el);
    return cs.display === 'none' || cs.visibility === 'hidden';
  }

  const PSEUDO_DEPTH = 2;

  /**
   * Text a `::before`/`::after` rule draws (CSS generated content is part of the name from
   * content, as Chromium's tree has it: a picker's "Normal", an arrow before a caption).
   * @param {Element} el
   * @param {'::before' | '::after'} pseudo
   */
  function generated(el, pseudo) {
    return L.remember(pseudo, el, () => pseudoText(el, pseudo));
  }

  /** @param {Element} el @param {'::before' | '::after'} pseudo */
  function pseudoText(el, pseudo) {
    const cs = getComputedStyle(el, pseudo);
    const c = cs.content;
    if (!c || c === 'none' || c === 'normal') return '';
    // A box of its own (inline-block, block) is a separate word in the name.
    let out = cs.display === 'inline' ? '' : ' ';
    // Quoted strings and attr() references, the parts of `content` that make text.
    for (const m of c.matchAll(/"((?:[^"\\]|\\.)*)"|attr\(\s*([\w-]+)\s*\)/g)) {
      out += m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : el.getAttribute(m[2]) || '';
    }
    return cs.display === 'inline' ? out : `${out} `;
  }

  /**
   * accname "name from content": text nodes, img alt, svg <title>, aria-label of descendants,
   * skipping what is hidden (a subset of accname 1.2 step 2F that covers icon controls).
   * @param {Node} node
   * @param {number} depth
   * @returns {string}
   */
  function contentName(node, depth = 0) {
    if (depth > 20) return '';
    if (node.nodeType === 3) return node.nodeValue || '';
    if (node.nodeType !== 1) return '';
    const el = /** @type {Element} */ (node);
    if (depth > 0) {
      if (a11yHidden(el)) return '';
      const aria = L.clean(el.getAttribute('aria-label'));
      if (aria) return ` ${aria} `;
      const tag = el.localName;
      if (tag === 'img' || tag === 'area' || (tag === 'input' && el.getAttribute('type') === 'image')) {
        return ` ${el.getAttribute('alt') || el.getAttribute('title') || ''} `;
      }
      if (tag === 'input' || tag === 'textarea' || tag === 'select') return '';
    }
    // A field's content is its value (a textarea's text is its default value): never a name,
    // even when aria-labelledby points at the field itself.
    if (el.localName === 'textarea' || el.localName === 'select' || el.localName === 'input') return '';
    if (el.localName === 'svg') {
      const title = [...el.children].find((c) => c.localName === 'title');
      return title ? ` ${title.textContent || ''} ` : '';
    }
    if (['script', 'style', 'template', 'noscript'].includes(el.localName)) return '';
    if (el.localName === 'br' || el.localName === 'wbr') return ' '; // a line break point, as the tree has it
    const block = depth > 0 && /^(div|p|li|h[1-6]|br|tr|td|th|section)$/.test(el.localName);
    // A shadow host's rendered content is its shadow tree (slots pull light children in).
    const sr = L.shadowRootOf ? L.shadowRootOf(el, true) : el.shadowRoot;
    /** @type {Node[]} */
    let kids = [...(sr ? sr.childNodes : el.childNodes)];
    if (el.localName === 'slot') {
      const assigned = /** @type {HTMLSlotElement} */ (el).assignedNodes();
      if (assigned.length) kids = assigned;
    }
    // Generated text sits on a control or the parts just inside it (an icon, a caption): deeper
    // down, reading every element's pseudo styles costs more than it finds.
    const pseudo = depth <= PSEUDO_DEPTH;
    let out = pseudo ? generated(el, '::before') : '';
    for (const k of kids) out += contentName(k, depth + 1);
    if (pseudo) out += generated(el, '::after');
    if (!out.trim() && depth > 0) out = el.getAttribute('title') || '';
    return block ? ` ${out} ` : out;
  }

  /** Name of an aria-labelledby / label reference: its content, hidden or not (accname 2B). */
  function refName(/** @type {Element} */ ref) {
    return L.clean(ref.getAttribute('aria-label')) || L.clean(contentName(ref, 0), 200);
  }

  /**
   * @param {Element} el
   * @param {string} [role] precomputed L.role(el)
   */
  L.accessibleName = (el, role = L.role(el)) => {
    const byRole = L.remember('name', el, () => new Map());
    let name = byRole.get(role);
    if (name === undefined) byRole.set(role, (name = nameOf(el, role)));
    return name;
  };

  /** @param {Element} el @param {string} role */
  function nameOf(el, role) {
    const root = /** @type {Document | ShadowRoot} */ (el.getRootNode());
    const labelledby = (el.getAttribute('aria-labelledby') || '').trim();
    if (labelledby) {
      const parts = labelledby.split(/\s+/).map((id) => {
        const ref = root.getElementById ? root.getElementById(id) : document.getElementById(id);
        return ref && ref !== el ? refName(ref) : '';
      });
      const t = L.clean(parts.join(' '));
      if (t) return t;
    }
    const aria = L.clean(el.getAttribute('aria-label'));
    if (aria) return aria;
    const tag = el.localName;
    if (tag === 'input' || tag === 'textarea' || tag === 'select' || tag === 'meter' || tag === 'progress') {
      const labels = /** @type {any} */ (el).labels;
      if (labels && labels.length) {
        const t = L.clean([...labels].map((l) => L.clean(contentName(l, 0))).join(' '));
        if (t) return t;
      }
    }
    if (tag === 'input') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (type === 'button' || type === 'submit' || type === 'reset') {
        const v = L.clean(/** @type {HTMLInputElement} */ (el).value);
        if (v) return v;
        if (type !== 'button') return type === 'submit' ? 'Submit' : 'Reset';
      }
      if (type === 'image') {
        const alt = L.clean(el.getAttribute('alt'));
        if (alt) return alt;
      }
    }
    if (tag === 'img' || tag === 'area') {
      const alt = L.clean(el.getAttribute('alt'));
      if (alt) return alt;
    }
    if (tag === 'svg') {
      const title = [...el.children].find((c) => c.localName === 'title');
      if (title && L.clean(title.textContent)) return L.clean(title.textContent);
    }
    if (tag === 'fieldset') {
      const legend = [...el.children].find((c) => c.localName === 'legend');
      if (legend) return L.clean(contentName(legend, 0));
    }
    if (NAME_FROM_CONTENT.has(role) || tag === 'button' || tag === 'a' || tag === 'summary' || tag === 'label' ||
      tag === 'td' || tag === 'th' || (!role && L.isInteractive(el))) {
      const t = L.clean(contentName(el, 0));
      if (t) return t;
    }
    const placeholder = L.clean(el.getAttribute('placeholder') || el.getAttribute('aria-placeholder'));
    if (placeholder) return placeholder;
    const title = L.clean(el.getAttribute('title'));
    if (title) return title;
    if (tag === 'video' || tag === 'audio') return L.clean(el.getAttribute('src')?.split('/').pop() || tag);
    return '';
  }

  // What people can act on. Roles that make an element a control on their own.
  const CONTROL_ROLES = ['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'combobox', 'textbox', 'slider', 'searchbox', 'spinbutton', 'treeitem',
    'gridcell', 'listbox', 'scrollbar'];
  L.CONTROL_ROLES = new Set(CONTROL_ROLES);
  L.INTERACTIVE_SELECTOR = [
    'button', 'input:not([type="hidden" i])', 'select', 'textarea', 'a[href]', 'area[href]', 'summary',
    'video[controls]', 'audio[controls]',
    ...CONTROL_ROLES.filter((r) => r !== 'gridcell' && r !== 'listbox' && r !== 'scrollbar').map((r) => `[role="${r}"]`),
    '[role="listbox"]', '[onclick]', '[tabindex]:not([tabindex^="-"])', '[contenteditable]:not([contenteditable="false" i])',
  ].join(', ');

  /**
   * An element a person can act on: a native control, a control role, a click handler attribute,
   * keyboard-focusable (tabindex ≥ 0), editable, media with controls, or `cursor: pointer` that
   * starts here (not inherited from a clickable ancestor) on an element with a role or own text.
   * Listeners added with addEventListener are invisible to the isolated world: the cursor is the
   * page's own promise that a click does something.
   * @param {Element} el
   */
  L.isInteractive = (el) => {
    // A label is not a control of its own: discover shows it in place of a hidden control.
    if (el.localName === 'label') return false;
    if (el.matches(L.INTERACTIVE_SELECTOR)) return true;
    return L.pointerStarts(el);
  };

  /** Computed cursor, read once per element in a call (candidates ask for each parent again). */
  const cursorOf = (/** @type {Element} */ el) => L.remember('cursor', el, () => getComputedStyle(el).cursor);

  /** `cursor: pointer` set on this element, not inherited from its parent. @param {Element} el */
  L.pointerStarts = (el) => {
    if (!(el instanceof HTMLElement) && !(el instanceof SVGElement)) return false;
    if (cursorOf(el) !== 'pointer') return false;
    const parent = L.composedParent(el);
    if (parent && cursorOf(parent) === 'pointer') return false;
    // Inside a native control (span in a button): the control is the target.
    if (parent && parent.closest && parent.closest('a[href], button, label, summary, [role="button"], [role="link"]')) return false;
    return true;
  };

  /** Disabled natively (incl. a disabled fieldset) or by aria-disabled on it or an ancestor. */
  L.isDisabled = (/** @type {Element} */ el) => {
    try {
      if (el.matches(':disabled')) return true;
    } catch {
      /* not a form element */
    }
    for (let n = /** @type {Element | null} */ (el); n; n = L.composedParent(n)) {
      if (n.getAttribute('aria-disabled') === 'true') return true;
    }
    return false;
  };

  /** The element focused now, through shadow roots. */
  function deepActive() {
    let a = document.activeElement;
    for (let i = 0; a && a.shadowRoot && a.shadowRoot.activeElement && i < 32; i++) a = a.shadowRoot.activeElement;
    return a;
  }

  const CHECKABLE = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);

  /**
   * States a person sees: only the ones that apply are present (checked for checkables,
   * expanded/selected when the element declares them; the boolean flags only when true).
   * @param {Element} el
   * @param {string} role
   * @returns {Record<string, boolean | string>}
   */
  L.states = (el, role) => {
    /** @type {Record<string, boolean | string>} */
    const s = {};
    const tag = el.localName;
    const input = /** @type {HTMLInputElement} */ (el);
    if (tag === 'input' && (input.type === 'checkbox' || input.type === 'radio')) {
      s.checked = input.indeterminate ? 'mixed' : input.checked;
    } else if (CHECKABLE.has(role) || el.hasAttribute('aria-checked')) {
      const a = el.getAttribute('aria-checked');
      s.checked = a === 'mixed' ? 'mixed' : a === 'true';
    } else if (el.hasAttribute('aria-pressed')) {
      const a = el.getAttribute('aria-pressed');
      s.pressed = a === 'mixed' ? 'mixed' : a === 'true';
    }
    if (el.hasAttribute('aria-expanded')) s.expanded = el.getAttribute('aria-expanded') === 'true';
    else if (tag === 'summary' && el.parentElement?.localName === 'details') {
      s.expanded = /** @type {HTMLDetailsElement} */ (el.parentElement).open;
    }
    if (el.hasAttribute('aria-selected')) s.selected = el.getAttribute('aria-selected') === 'true';
    else if (tag === 'option') s.selected = /** @type {HTMLOptionElement} */ (el).selected;
    if (el.hasAttribute('aria-current') && el.getAttribute('aria-current') !== 'false') s.current = el.getAttribute('aria-current') || 'true';
    if (L.isDisabled(el)) s.disabled = true;
    if (/** @type {any} */ (el).required || el.getAttribute('aria-required') === 'true') s.required = true;
    if (
      ((tag === 'input' || tag === 'textarea') && /** @type {any} */ (el).readOnly) ||
      el.getAttribute('aria-readonly') === 'true'
    ) {
      s.readonly = true;
    }
    if (deepActive() === el) s.focused = true;
    return s;
  };

  /**
   * How an assistant would interact with the element: `none` for disabled controls and for
   * containers, `text` for content (headings, paragraphs, cells) that a click does nothing on.
   * @param {Element} el
   * @param {string} role
   * @returns {'clickable' | 'editable' | 'selectable' | 'toggleable' | 'navigable' | 'none' | 'text'}
   */
  L.interactionHint = (el, role) => {
    const tag = el.localName;
    if (L.isDisabled(el)) return 'none';
    if (!L.isInteractive(el) && !L.CONTROL_ROLES.has(role) && !(tag === 'label' && el.hasAttribute('for'))) {
      return L.visibleText(el) || role === 'img' || role === 'heading' ? 'text' : 'none';
    }
    if (tag === 'textarea' || /** @type {HTMLElement} */ (el).isContentEditable) return 'editable';
    if (tag === 'input') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (type === 'checkbox' || type === 'radio') return 'toggleable';
      if (TEXT_INPUTS.has(type)) return /** @type {any} */ (el).readOnly ? 'none' : 'editable';
      if (type === 'range') return 'selectable';
      return 'clickable';
    }
    if (tag === 'select' || tag === 'option') return 'selectable';
    if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role)) return 'toggleable';
    if (['textbox', 'searchbox'].includes(role)) return 'editable';
    if (['option', 'listbox', 'combobox', 'slider'].includes(role)) return 'selectable';
    if (role === 'link' || (tag === 'a' && el.hasAttribute('href'))) return 'navigable';
    return 'clickable';
  };

  /** Visible text of the element itself (≤100 chars); never a form field's value. */
  L.visibleText = (/** @type {Element} */ el) => {
    const tag = el.localName;
    if (tag === 'input') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      return type === 'button' || type === 'submit' || type === 'reset'
        ? L.clean(/** @type {HTMLInputElement} */ (el).value)
        : '';
    }
    if (tag === 'textarea' || tag === 'select') return '';
    return L.clean(textOf(el));
  };
})();
