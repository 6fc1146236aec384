// The JavaScript dialog open in each tab, as Chrome reported it. dialogs.js keeps this map from the
// debugger's events; it lives apart so that debugger.js (which keeps a session attached while a
// dialog is open) can read it without importing dialogs.js, which answers dialogs through
// debugger.js.

/**
 * @typedef {{type: 'alert' | 'confirm' | 'prompt' | 'beforeunload', message: string,
 *   default_prompt: string, url: string, opened_at: number, reported_by?: 'page'}} DialogInfo
 *   reported_by 'page': known only from the page's own report, not answerable through CDP
 */

/** @type {Map<number, DialogInfo>} the dialog open in each tab */
export const openDialogs = new Map();

/**
 * The dialog open in `tabId` as far as Chrome told us, or null.
 * @param {number} tabId
 * @returns {DialogInfo | null}
 */
export function openDialog(tabId) {
  return openDialogs.get(tabId) ?? null;
}
