// ISOLATED-world half of the page-error relay: forwards entries from content/errors-main.js to the
// service worker, which keeps a per-tab buffer for the `errors` command.
(() => {
  const EVENT = '__shotbridge_page_error__';
  window.addEventListener(EVENT, (e) => {
    const detail = /** @type {CustomEvent} */ (e).detail;
    if (typeof detail !== 'string' || detail.length > 10000) return;
    let entry;
    try {
      entry = JSON.parse(detail);
    } catch {
      return;
    }
    try {
      chrome.runtime.sendMessage({ type: 'shotbridge:page_error', entry }).catch(() => {});
    } catch {
      // extension reloaded: this content script is orphaned; nothing to do
    }
  });
})();
