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
 * The refusal for a restricted page, naming the tab and what to do. Pure (unit-tested).
 * @param {string} url what the tab shows
 * @param {number | null | undefined} tabId
 * @param {boolean} explicit the caller named the tab (tab_id) rather than using the tracked one
 */
export function restrictedMessage(url, tabId, explicit) {
  const which = tabId === null || tabId === undefined ? 'The tab' : explicit ? `Tab ${tabId}` : `The tracked tab (tab ${tabId})`;
  const fix = explicit ? 'pass the tab_id of a web page' : 'switch to a web page or pass tab_id';
  return `${which} shows ${url} (a browser page that cannot be captured or scripted); ${fix}. ` +
    '(observe what="tabs" lists the open tabs.)';
}

/**
 * @param {string | undefined} url
 * @param {number | null} [tabId] the tab showing it, named in the message
 * @param {boolean} [explicit] the caller chose the tab with tab_id
 * @throws {ShotError} restricted_page
 */
export function assertCapturable(url, tabId = null, explicit = false) {
  if (!isRestrictedUrl(url)) return;
  throw new ShotError(Code.RESTRICTED_PAGE, url ? restrictedMessage(url, tabId, explicit) : RESTRICTED_MESSAGE);
}
