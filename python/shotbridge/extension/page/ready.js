// Injected last: marks the page library complete. Must equal the manifest version (lib/page.js
// compares them), so a library left in a page by an older extension build is reloaded.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});
  L.version = chrome.runtime.getManifest().version;
})();
