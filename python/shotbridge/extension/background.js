// Service worker entry. Listeners are registered synchronously at the top level (MV3 only routes
// events to listeners that exist when the worker starts); the native port is opened here too, and
// again from onStartup/onInstalled, which is harmless because connect() is idempotent.

import * as native from './lib/native.js';
import * as tabs from './lib/tabs.js';
import * as debuggerSessions from './lib/debugger.js';
import * as dialogs from './lib/dialogs.js';
import * as pageErrors from './lib/page-errors.js';
import * as consoleLog from './lib/console-log.js';
import * as recorder from './lib/recorder.js';
import * as status from './lib/status.js';
import * as emulation from './lib/emulate.js';
import { handleRequest, EXTENSION_VERSION } from './lib/commands.js';
import { PROTOCOL_VERSION, profileId } from './lib/identity.js';
import { pageRules } from './lib/secret-rules.js';

tabs.installListeners();
tabs.setEmitter(native.sendEvent);
dialogs.installListeners();
debuggerSessions.installListeners();
status.installListeners();
recorder.installListeners();
recorder.setEmitter(native.sendEvent);
emulation.installListeners();

native.configure({
  onMessage(msg) {
    void handleRequest(msg, native.post).then((reply) => {
      if (reply) native.post(reply);
    });
  },
  async hello() {
    return {
      protocol: PROTOCOL_VERSION,
      extension_version: EXTENSION_VERSION,
      profile_id: await profileId(),
      user_agent: navigator.userAgent,
      tracked_tab: await tabs.trackedTabId().catch(() => null),
    };
  },
});

// Page errors relayed by content/bridge-relay.js.
chrome.runtime.onMessage.addListener((msg, sender) => {
  if (sender.id !== chrome.runtime.id || !msg || msg.type !== 'shotbridge:page_error') return;
  const tabId = sender.tab?.id;
  if (tabId !== undefined) pageErrors.record(tabId, msg.entry);
});
chrome.tabs.onRemoved.addListener((tabId) => pageErrors.forget(tabId));

// Console warnings and logs relayed by content/bridge-relay.js.
chrome.runtime.onMessage.addListener((msg, sender) => {
  if (sender.id !== chrome.runtime.id || !msg || msg.type !== 'shotbridge:console') return;
  const tabId = sender.tab?.id;
  if (tabId !== undefined && sender.frameId === 0) consoleLog.record(tabId, msg.entry);
});
chrome.tabs.onRemoved.addListener((tabId) => consoleLog.forget(tabId));

// page/secrets.js (content script) asks for the shared secret rules once per document.
chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if (sender.id !== chrome.runtime.id || !msg || msg.type !== 'shotbridge:secret_rules') return undefined;
  pageRules().then(sendResponse, () => sendResponse(null));
  return true; // answered asynchronously
});

chrome.runtime.onStartup.addListener(native.connect);
chrome.runtime.onInstalled.addListener(native.connect);
native.connect();
