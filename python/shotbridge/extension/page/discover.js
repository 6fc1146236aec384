// discover: elements worth labelling, in reading order, with selectors that match exactly them.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  const INTERACTIVE_SELECTOR = [
    'button', 'input:not([type="hidden" i])', 'select', 'textarea', 'a[href]', 'area[href]', 'summary',
    ...['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
      'menuitemradio', 'option', 'combobox', 'textbox', 'slider', 'searchbox', 'spinbutton', 'treeitem']
      .map((r) => `[role="${r}"]`),
    '[onclick]', '[tabindex]:not([tabindex="-1"])', '[contenteditable]:not([contenteditable="false" i])',
  ].join(', ');

  // Roles that mark an element as meaningful in target=all_visible even without own text.
  const CONTENT_ROLES = new Set(['img', 'heading', 'link', 'button', 'checkbox', 'radio', 'switch',
    'textbox', 'searchbox', 'combobox', 'listbox', 'slider', 'spinbutton', 'tab', 'menuitem', 'option',
    'progressbar', 'meter', 'navigation', 'main', 'banner', 'contentinfo', 'complementary', 'form',
    'dialog', 'alert', 'status', 'region', 'table', 'list', 'listitem', 'paragraph', 'separator']);
  // Elements whose descendants' text is part of their own name: descendants are not listed apart.
  const TEXT_OWNER_ROLES = new Set(['link', 'button', 'heading', 'tab', 'menuitem', 'option',
    'checkbox', 'radio', 'switch', 'img', 'textbox', 'searchbox', 'combobox', 'listbox', 'treeitem',
    'menuitemcheckbox', 'menuitemradio']);
  const SKIP_TAGS = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title',
    'br', 'wbr', 'html', 'body', 'option', 'optgroup', 'source', 'track', 'param']);

  /** @param {Element} el has a non-blank text node child (its "own" text) */
  function hasOwnText(el) {
    for (const n of el.childNodes) if (n.nodeType === 3 && /\S/.test(n.nodeValue || '')) return true;
    return false;
  }

  /**
   * @param {{target?: string, selector?: string | null, max?: number, include_offscreen?: boolean}} args
   */
  L.discover = (args) => {
    const target = args.target || 'interactive';
    const max = args.max || 50;
    const includeOffscreen = !!args.include_offscreen;
    const roots = L.allRoots(document, false); // open shadow roots, as a page author would query

    /** @type {Element[]} */
    let candidates;
    if (target === 'custom') {
      try {
        candidates = L.resolveAll(String(args.selector));
      } catch (e) {
        return { error: L.invalidSelector(String(args.selector), e) };
      }
    } else if (target === 'interactive') {
      candidates = L.queryAllDeep(INTERACTIVE_SELECTOR, { roots });
    } else {
      candidates = L.queryAllDeep('*', { roots }).filter((el) => !SKIP_TAGS.has(el.localName));
    }
    candidates = [...new Set(candidates)];

    const vw = window.innerWidth;
    const vh = window.innerHeight;
    const viewportRect = { x: 0, y: 0, width: vw, height: vh };
    /** @type {{el: Element, rect: DOMRect, role: string}[]} */
    let kept = [];
    for (const el of candidates) {
      const rect = el.getBoundingClientRect();
      if (!L.isVisible(el, rect)) continue;
      const onScreen = L.overlapArea(rect, viewportRect) > 0;
      if (!onScreen && !includeOffscreen) continue;
      const role = L.role(el);
      if (target === 'all_visible' && !(hasOwnText(el) || CONTENT_ROLES.has(role) || el.matches(INTERACTIVE_SELECTOR))) {
        continue;
      }
      if (onScreen && L.isCovered(el, rect)) continue;
      kept.push({ el, rect, role });
    }

    if (target === 'all_visible') {
      // Text inside a button/link/heading belongs to that element's name: list the owner only.
      const owners = new Set(kept.filter((k) => TEXT_OWNER_ROLES.has(k.role) || k.el.matches(INTERACTIVE_SELECTOR)).map((k) => k.el));
      const listed = new Set(kept.map((k) => k.el));
      kept = kept.filter((k) => {
        for (let p = L.composedParent(k.el); p; p = L.composedParent(p)) if (owners.has(p)) return false;
        // Containers (lists, landmarks) without own text only repeat their listed children's text.
        if (!hasOwnText(k.el) && !owners.has(k.el) && k.role !== 'img') {
          const t = /** @type {HTMLElement} */ (k.el).innerText || '';
          if (!t.trim()) return true; // e.g. an empty landmark with a role: keep, it has no children listed
          let childListed = false;
          for (const d of k.el.querySelectorAll('*')) if (listed.has(d)) { childListed = true; break; }
          if (childListed) return false;
        }
        return true;
      });
    }

    // Order on geometry first: names and unique selectors cost DOM queries, so they are computed
    // only for the `max` elements returned.
    const ordered = L.readingOrder(kept.map((k) => ({ k, bounds: L.rect(k.rect) })));
    const elements = ordered.slice(0, max).map(({ k: { el, rect, role }, bounds }) => ({
      selector: L.uniqueSelector(el),
      tag: el.localName,
      role,
      name: L.accessibleName(el, role),
      text: L.visibleText(el),
      bounds,
      interactionHint: L.interactionHint(el, role),
      in_viewport: L.overlapArea(rect, viewportRect) > 0.5 * rect.width * rect.height,
    }));
    return {
      ...L.pageHeader(),
      elements,
      total_found: ordered.length,
    };
  };
})();
