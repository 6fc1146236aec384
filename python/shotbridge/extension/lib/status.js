// What the user sees of shotbridge in the browser: the toolbar icon's badge and title, and the
// state the popup (popup/popup.js) explains. One place keeps it: the native port reports whether
// the host answered, the debugger reports when the user pressed Cancel on Chrome's
// "started debugging this browser" bar.

const KEY = 'shotbridge_status';

/**
 * @typedef {{connection: 'connecting' | 'connected' | 'not_connected' | 'error', reason: string,
 *   last_error: string, debugging_cancelled: boolean, since: number}} Status
 */

/** @type {Status} */
let status = { connection: 'connecting', reason: '', last_error: '', debugging_cancelled: false, since: Date.now() };

/** Resolves once the state of a previous service-worker life has been read back. */
export const ready = chrome.storage.session.get(KEY).then((got) => {
  const old = got?.[KEY];
  // Only the user's refusal outlives the worker; the connection is re-learned on connect.
  if (old && old.debugging_cancelled) status.debugging_cancelled = true;
  paint();
}, () => {});

/** @returns {Status} */
export function current() {
  return { ...status };
}

/**
 * Why the native port closed, in words and with what to run. Pure (unit-tested).
 * @param {string} chromeMessage chrome.runtime.lastError's message
 * @returns {{reason: string, hint: string}}
 */
export function explainDisconnect(chromeMessage) {
  if (/not found/i.test(chromeMessage)) {
    return { reason: 'host_not_found', hint: 'The shotbridge host is not registered for this browser profile.' };
  }
  if (/forbidden/i.test(chromeMessage)) {
    return { reason: 'forbidden', hint: "The host's manifest does not list this extension's ID; run shotctl install again." };
  }
  if (/exited/i.test(chromeMessage)) {
    return { reason: 'host_exited', hint: 'The host started and exited; see ~/.local/state/shotbridge/host.log.' };
  }
  return { reason: 'host_closed', hint: chromeMessage };
}

/** @param {Partial<Status>} change */
export function update(change) {
  const next = { ...status, ...change };
  if (next.connection !== status.connection) next.since = Date.now();
  status = next;
  void chrome.storage.session.set({ [KEY]: status }).catch(() => {});
  paint();
}

/** Badge and tooltip from the state: on (green), off (grey), ! (red: error or refusal). */
function paint() {
  const s = status;
  /** @type {[string, string, string]} */
  const [text, color, title] = s.debugging_cancelled && s.connection === 'connected'
    ? ['!', '#b06000', 'shotbridge: connected; debugging was cancelled (clicks and typing are off)']
    : s.connection === 'connected' ? ['on', '#188038', 'shotbridge: connected']
      : s.connection === 'error' ? ['!', '#d93025', `shotbridge: error — ${s.last_error}`]
        : s.connection === 'connecting' ? ['…', '#5f6368', 'shotbridge: connecting']
          : ['off', '#5f6368', `shotbridge: not connected (${s.reason || 'no host'})`];
  const action = chrome.action;
  if (!action) return;
  void action.setBadgeText({ text }).catch(() => {});
  void action.setBadgeBackgroundColor({ color }).catch(() => {});
  void action.setTitle({ title }).catch(() => {});
}

/**
 * The popup's questions: `shotbridge:status` → the state; `shotbridge:allow_debugging` → the
 * user lifts their Cancel. Called once from the service worker's top level.
 */
export function installListeners() {
  chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
    if (sender.id !== chrome.runtime.id || !msg || typeof msg.type !== 'string') return undefined;
    if (msg.type === 'shotbridge:status') {
      void ready.then(() => sendResponse(current()));
      return true;
    }
    if (msg.type === 'shotbridge:bar_closed_early' && sender.tab) {
      // viewport.js watchBarTail: the bar closed before Chrome's own close, so the user pressed
      // its Cancel (or ✕) after shotbridge had detached; Chrome reports that to nobody.
      console.info(`[shotbridge] debugging bar closed early in tab ${sender.tab.id} (+${msg.grew} px): a refusal`);
      update({ debugging_cancelled: true });
      return undefined;
    }
    if (msg.type === 'shotbridge:allow_debugging') {
      update({ debugging_cancelled: false });
      sendResponse(current());
    }
    return undefined;
  });
}
