// Chrome's Page.captureScreenshot, asked twice when it answers "Unable to capture screenshot":
// Chrome does that now and then under load (5 of 30 calls in one bench run right after a busy
// browser, 0 of 60 when quiet: bench/results-chrome-capture.md). The second call still falls
// between the capture's two probes, so the masks describe it as they describe the first.

const REFUSED = /Unable to capture screenshot/i;

/**
 * @param {{send: (method: string, params?: object) => Promise<any>}} dbg
 * @param {object} params Page.captureScreenshot's parameters
 * @returns {Promise<{data: string}>}
 */
export async function captureScreenshot(dbg, params) {
  try {
    return await dbg.send('Page.captureScreenshot', params);
  } catch (e) {
    if (!REFUSED.test(String(/** @type {any} */ (e)?.message))) throw e;
    return dbg.send('Page.captureScreenshot', params);
  }
}
