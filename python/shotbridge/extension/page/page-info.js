// page_info: a cheap summary of the page (no hit-testing, no selectors).
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  const INTERACTIVE = 'button, input:not([type="hidden" i]), select, textarea, a[href], summary, ' +
    '[role="button"], [role="link"], [role="checkbox"], [role="radio"], [role="switch"], [role="tab"], ' +
    '[role="menuitem"], [role="option"], [role="combobox"], [role="textbox"], [role="slider"], ' +
    '[role="searchbox"], [onclick], [tabindex]:not([tabindex="-1"]), [contenteditable]:not([contenteditable="false" i])';

  L.pageInfo = () => {
    const roots = L.allRoots(document, false);
    const headings = [];
    for (const el of L.queryAllDeep('h1, h2, h3, h4, h5, h6, [role="heading"]', { roots })) {
      if (headings.length >= 30) break;
      const rect = el.getBoundingClientRect();
      if (!L.isVisible(el, rect)) continue;
      const aria = parseInt(el.getAttribute('aria-level') || '', 10);
      const level = /^h[1-6]$/.test(el.localName) ? Number(el.localName[1]) : Number.isFinite(aria) ? aria : 2;
      headings.push({ level, text: L.clean(/** @type {HTMLElement} */ (el).innerText || el.textContent) });
    }
    let interactive = 0;
    for (const el of L.queryAllDeep(INTERACTIVE, { roots })) {
      if (L.isVisible(el, el.getBoundingClientRect())) interactive++;
    }
    return {
      ...L.pageHeader(),
      headings,
      forms: L.queryAllDeep('form', { roots }).length,
      interactive_count: interactive,
    };
  };
})();
