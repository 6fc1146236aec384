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
    'menuitemradio', 'listitem']);

  /** @param {Element} el */
  L.role = (el) => {
    const explicit = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
    if (explicit) return explicit;
    const tag = el.localName;
    if (tag === 'a' || tag === 'area') return el.hasAttribute('href') ? 'link' : '';
    if (tag === 'input') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (type === 'hidden') return '';
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
    return TAG_ROLES[tag] || '';
  };

  /** @param {Element} el */
  function textOf(el) {
    const h = /** @type {HTMLElement} */ (el);
    // innerText follows rendering (skips hidden text); fall back for SVG and friends.
    return L.clean(typeof h.innerText === 'string' ? h.innerText : el.textContent, 200);
  }

  /**
   * @param {Element} el
   * @param {string} [role] precomputed L.role(el)
   */
  L.accessibleName = (el, role = L.role(el)) => {
    const root = /** @type {Document | ShadowRoot} */ (el.getRootNode());
    const labelledby = (el.getAttribute('aria-labelledby') || '').trim();
    if (labelledby) {
      const parts = labelledby.split(/\s+/).map((id) => {
        const ref = root.getElementById ? root.getElementById(id) : document.getElementById(id);
        return ref ? textOf(ref) : '';
      });
      const t = L.clean(parts.join(' '));
      if (t) return t;
    }
    const aria = L.clean(el.getAttribute('aria-label'));
    if (aria) return aria;
    const labels = /** @type {any} */ (el).labels;
    if (labels && labels.length) {
      const t = L.clean([...labels].map(textOf).join(' '));
      if (t) return t;
    }
    const tag = el.localName;
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
    if (NAME_FROM_CONTENT.has(role) || tag === 'button' || tag === 'a' || tag === 'summary') {
      const t = L.clean(textOf(el));
      if (t) return t;
    }
    const placeholder = L.clean(el.getAttribute('placeholder') || el.getAttribute('aria-placeholder'));
    if (placeholder) return placeholder;
    return L.clean(el.getAttribute('title'));
  };

  /**
   * How an assistant would interact with the element.
   * @param {Element} el
   * @param {string} role
   * @returns {'clickable' | 'editable' | 'selectable' | 'toggleable' | 'navigable'}
   */
  L.interactionHint = (el, role) => {
    const tag = el.localName;
    if (tag === 'textarea' || /** @type {HTMLElement} */ (el).isContentEditable) return 'editable';
    if (tag === 'input') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (type === 'checkbox' || type === 'radio') return 'toggleable';
      if (TEXT_INPUTS.has(type)) return 'editable';
      return 'clickable';
    }
    if (tag === 'select' || tag === 'option') return 'selectable';
    if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role)) return 'toggleable';
    if (['textbox', 'searchbox'].includes(role)) return 'editable';
    if (['option', 'listbox', 'combobox'].includes(role)) return 'selectable';
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
