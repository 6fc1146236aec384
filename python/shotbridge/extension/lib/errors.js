// Structured errors: every failure that reaches the host carries one of the protocol's ErrorCode
// values (python/shotbridge/wire/), so callers can branch on `code` instead of parsing text.

/** Error codes shared with the host (mirror of wire.errors.ErrorCode). */
export const Code = Object.freeze({
  BAD_REQUEST: 'bad_request',
  NO_TAB: 'no_tab',
  TAB_CLOSED: 'tab_closed',
  RESTRICTED_PAGE: 'restricted_page',
  INVALID_SELECTOR: 'invalid_selector',
  NOT_FOUND: 'not_found',
  DEBUGGER_UNAVAILABLE: 'debugger_unavailable',
  CAPTURE_FAILED: 'capture_failed',
  NAVIGATION_FAILED: 'navigation_failed',
  TIMEOUT: 'timeout',
  STALE_SCREENSHOT: 'stale_screenshot',
  DIALOG_OPEN: 'dialog_open',
  NO_DIALOG: 'no_dialog',
  PAGE_BUSY: 'page_busy',
  INTERNAL: 'internal',
});

export const RESTRICTED_MESSAGE = 'Cannot capture screenshots of browser internal pages.';

/** An error with a protocol code; anything else thrown is reported as `internal`. */
export class ShotError extends Error {
  /**
   * @param {string} code one of {@link Code}
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = 'ShotError';
    this.code = code;
  }
}

/**
 * @param {unknown} err
 * @returns {{code: string, message: string}}
 */
export function toErrorInfo(err) {
  if (err instanceof ShotError) return { code: err.code, message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { code: Code.INTERNAL, message: message || 'unknown error' };
}

/** @param {unknown} err */
export function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Chrome reports scripting failures as plain strings; turn the ones we can name into codes.
 * @param {unknown} err
 * @param {string} fallbackCode code for anything unrecognised
 * @returns {ShotError}
 */
export function fromChromeError(err, fallbackCode) {
  if (err instanceof ShotError) return err;
  const msg = messageOf(err);
  if (/No tab with id/i.test(msg)) return new ShotError(Code.TAB_CLOSED, 'The tab was closed.');
  if (/showing error page/i.test(msg)) {
    return new ShotError(Code.NAVIGATION_FAILED, 'The tab is showing an error page (the page failed to load).');
  }
  if (/Cannot access|cannot be scripted|Missing host permission|chrome:\/\/ URL/i.test(msg)) {
    return new ShotError(Code.RESTRICTED_PAGE, RESTRICTED_MESSAGE);
  }
  return new ShotError(fallbackCode, msg);
}
