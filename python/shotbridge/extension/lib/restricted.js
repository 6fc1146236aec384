// Pages Chrome does not let extensions script or debug. Checking up front gives the caller one clear
// message instead of whichever low-level error chrome.scripting or chrome.debugger happens to raise.

import { Code, RESTRICTED_MESSAGE, ShotError } from './errors.js';

const RESTRICTED_SCHEMES = new Set([
  'chrome:', 'chrome-extension:', 'chrome-untrusted:', 'chrome-search:', 'chrome-devtools:',
  'edge:', 'devtools:', 'view-source:', 'brave:', 'opera:', 'vivaldi:', 'extension:',
]);

/**
 * True when Chrome forbids extensions from capturing/scripting `url`.
 * Pure function (no chrome.* use) so it is unit-testable under node.
 * @param {string | undefined | null} url
 * @returns {boolean}
 */
export function isRestrictedUrl(url) {
  if (!url) return false; // a tab still loading its first URL: let the real call decide
  let u;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (RESTRICTED_SCHEMES.has(u.protocol)) return true;
  // about:blank (and about:srcdoc frames) inherit their opener's origin and can be scripted.
  if (u.protocol === 'about:') return !(u.pathname === 'blank' || u.pathname === 'srcdoc');
  if (u.protocol === 'http:' || u.protocol === 'https:') {
    const host = u.hostname.toLowerCase();
    if (host === 'chromewebstore.google.com') return true;
    if (host === 'chrome.google.com' && (u.pathname === '/webstore' || u.pathname.startsWith('/webstore/'))) {
      return true;
    }
    if (host === 'microsoftedge.microsoft.com' && u.pathname.startsWith('/addons')) return true;
  }
  return false;
}

/**
 * @param {string | undefined} url
 * @throws {ShotError} restricted_page
 */
export function assertCapturable(url) {
  if (isRestrictedUrl(url)) throw new ShotError(Code.RESTRICTED_PAGE, RESTRICTED_MESSAGE);
}
