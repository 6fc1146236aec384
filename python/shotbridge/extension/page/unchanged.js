// unchanged: a mark of what decides where the page's elements are and how they look, so that a
// read of its geometry (page/discover.js) can be reused while the mark stays the same. An
// assistant looks at a page, thinks for seconds, and looks again: the second look need not redo
// the hit tests and text boxes of the first when nothing has happened in between.
//
// The mark changes with the DOM (page/memo.js's observer), the viewport, the zoom and the
// window's scroll, and after any event that can move or restyle elements without a mutation:
// input (hover, focus, typing, pointer), a scroll anywhere, a load (an image taking its size), a
// popover or font change, and with the style sheets' rules (CSS-in-JS adds rules through the
// CSSOM, which no observer sees). A running animation or transition means no mark at all.
// Listeners are removed at the first such event, so a busy page pays for one event per look.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  // Composed (they cross shadow boundaries): watched on the window.
  const WINDOW_EVENTS = ['resize', 'pointerover', 'pointerdown', 'pointerup', 'mouseover', 'mousedown',
    'keydown', 'input', 'change', 'focusin', 'focusout', 'wheel', 'touchstart', 'dragenter', 'drop'];
  // Not composed (a scroll or an image load inside a shadow root): watched on every root.
  const ROOT_EVENTS = ['scroll', 'load', 'error', 'toggle', 'beforetoggle', 'transitionrun',
    'animationstart', 'animationiteration', 'animationend', 'transitionend', 'slotchange'];
  const OPTIONS = { capture: true, passive: true };

  /** Counts the changes seen (each one disarms the listeners until the next mark). */
  let epoch = 0;
  /** @type {(Document | ShadowRoot)[] | null} the roots the listeners are on */
  let armed = null;

  /** @type {Set<() => void>} called once, at the next change seen */
  const waiting = new Set();

  function notify() {
    const callbacks = [...waiting];
    waiting.clear();
    for (const cb of callbacks) cb();
  }

  const changed = () => {
    epoch++;
    disarm();
    notify();
  };
  L.domChanged = notify; // page/memo.js's observer saw a mutation

  /**
   * Call `cb` once, at the next change seen: an event above or a mutation, while watched (from
   * an `L.pageMark` until the first change after it).
   * @param {() => void} cb
   */
  L.onPageChange = (cb) => waiting.add(cb);

  function disarm() {
    if (!armed) return;
    for (const t of WINDOW_EVENTS) window.removeEventListener(t, changed, OPTIONS);
    for (const r of armed) for (const t of ROOT_EVENTS) r.removeEventListener(t, changed, OPTIONS);
    document.fonts?.removeEventListener('loadingdone', changed);
    armed = null;
  }

  /** Listen on `roots` unless already listening there (what happened unwatched is a change). */
  function arm(/** @type {(Document | ShadowRoot)[]} */ roots) {
    if (armed && armed.length === roots.length && armed.every((r, i) => r === roots[i])) return;
    disarm();
    epoch++;
    for (const t of WINDOW_EVENTS) window.addEventListener(t, changed, OPTIONS);
    for (const r of roots) for (const t of ROOT_EVENTS) r.addEventListener(t, changed, OPTIONS);
    document.fonts?.addEventListener('loadingdone', changed);
    armed = roots.slice();
  }

  /** Whether an animation or transition is running or about to, anywhere under `roots`. */
  function animating(/** @type {(Document | ShadowRoot)[]} */ roots) {
    for (const r of roots) {
      for (const a of r.getAnimations()) if (a.pending || a.playState === 'running') return true;
    }
    return false;
  }

  /**
   * The style sheets' rule counts, and which are on: `insertRule` by a CSS-in-JS library changes
   * the page's look with no mutation to see. Cross-origin sheets cannot be read (and not changed
   * by the page either).
   * @param {(Document | ShadowRoot)[]} roots
   */
  function sheets(roots) {
    let sig = '';
    for (const r of roots) {
      for (const list of [r.styleSheets, r.adoptedStyleSheets || []]) {
        for (const sheet of list) {
          let n = -1;
          try {
            n = sheet.cssRules.length;
          } catch {
            // cross-origin: its rules are not the page's to change
          }
          sig += sheet.disabled ? `d${n},` : `${n},`;
        }
      }
      sig += ';';
    }
    return sig;
  }

  /**
   * The page's mark now: two equal marks mean nothing that moves or restyles elements was seen
   * between them. Null while something animates (nothing is reused then).
   * @param {(Document | ShadowRoot)[]} roots the document and every shadow root in it
   * @returns {string | null}
   */
  L.pageMark = (roots) => {
    arm(roots);
    if (animating(roots) || document.fonts?.status === 'loading') return null;
    const v = window.visualViewport;
    return [epoch, L.domGeneration(roots), window.innerWidth, window.innerHeight, window.scrollX, window.scrollY,
      window.devicePixelRatio, v ? `${v.scale},${v.offsetLeft},${v.offsetTop}` : '', sheets(roots)].join(' ');
  };
})();
