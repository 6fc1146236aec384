// The toolbar popup: says whether shotbridge reaches its host, why not, and what to run.
// Plain module; it asks the service worker (lib/status.js) for the state.

/** @typedef {import('../lib/status.js').Status} Status */
/**
 * A bus client as the host lists it (wire.messages.ClientInfo): what it said in its hello, and
 * `forwarded` when it came through a forwarded or mounted socket.
 * @typedef {{name: string, version: string, machine: string, forwarded: boolean, since: number}} Client
 */

import { profileId } from '../lib/identity.js';

const HOST = 'dev.shotbridge.host';

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** `shotctl install` for this browser: --browser from the brand the browser reports. */
function installCommand() {
  const brands = /** @type {any} */ (navigator).userAgentData?.brands?.map((/** @type {any} */ b) => b.brand) ?? [];
  const has = (/** @type {string} */ name) => brands.some((/** @type {string} */ b) => b.includes(name));
  const browser = has('Edge') ? 'edge' : has('Brave') ? 'brave' : has('Google Chrome') ? 'chrome' : 'chromium';
  return `shotctl install --browser ${browser}`;
}

/** @param {Status} s */
function render(s) {
  const state = $('state');
  $('todo').hidden = true;
  $('why').textContent = '';
  $('error').textContent = s.last_error ? `Chrome said: ${s.last_error}` : '';
  if (s.connection === 'connected') {
    state.textContent = 'Connected to the shotbridge host.';
    state.className = 'state on';
    $('why').textContent = 'AI tools using `shotctl mcp` or `shotctl capture` can see the tab you are on.';
  } else if (s.connection === 'connecting') {
    state.textContent = 'Connecting to the shotbridge host…';
    state.className = 'state off';
  } else {
    state.textContent = s.connection === 'error' ? 'Error reaching the shotbridge host.' : 'Not connected.';
    state.className = 'state bad';
    const why = {
      host_not_found: 'Host not found: the shotbridge host is not registered for this browser profile.',
      forbidden: "The host's manifest does not allow this extension (its ID is not listed).",
      host_exited: 'The host started and exited at once; its log is ~/.local/state/shotbridge/host.log.',
    }[s.reason] ?? 'The host closed the connection.';
    $('why').textContent = why;
    $('todo').hidden = false;
    $('cmd').textContent = installCommand() + '\nshotctl doctor';
    $('more').textContent = 'A profile started with --user-data-dir DIR needs `shotctl install --user-data-dir DIR`.';
  }
  $('cancelled').hidden = !s.debugging_cancelled;
  document.body.dataset.ready = s.connection;
  // Opened as a tab, the popup's state shows in the tab title (chrome.tabs sees it; headed tests read it).
  document.title = `shotbridge: ${s.connection}${s.debugging_cancelled ? ', debugging cancelled' : ''}`;
}

/**
 * The clients of this profile's host. Chrome starts a one-shot host for the question, which asks
 * the running one (host/popup_query.py); no answer (no host registered) shows nothing.
 * @returns {Promise<Client[]>}
 */
async function connectedClients() {
  try {
    const [answer, mine] = await Promise.all([
      chrome.runtime.sendNativeMessage(HOST, { event: 'popup_clients', data: {} }),
      profileId(),
    ]);
    /** @type {{profile_id: string | null, clients: Client[]}[]} */
    const hosts = answer?.hosts ?? [];
    return hosts.filter((h) => h.profile_id === mine).flatMap((h) => h.clients);
  } catch {
    return [];
  }
}

/** List the clients; each over a forward is marked, and the note says what that means. */
async function showClients() {
  const clients = await connectedClients();
  const list = $('clients');
  list.replaceChildren(...clients.map((c) => {
    const item = document.createElement('li');
    item.textContent = `${c.name} ${c.version}${c.machine ? ` on ${c.machine}` : ''}`;
    if (c.forwarded) {
      const how = document.createElement('span');
      how.className = 'forwarded';
      how.textContent = ' — over a forward (SSH or a mounted socket)';
      item.append(how);
    }
    return item;
  }));
  $('clients-box').hidden = clients.length === 0;
  $('forward-note').hidden = !clients.some((c) => c.forwarded);
  list.dataset.loaded = String(clients.length);
}

$('allow').addEventListener('click', async () => {
  render(await chrome.runtime.sendMessage({ type: 'shotbridge:allow_debugging' }));
});

/** Ask again while connecting: the state settles within a second or two. */
async function refresh() {
  const s = /** @type {Status} */ (await chrome.runtime.sendMessage({ type: 'shotbridge:status' }));
  render(s);
  if (s.connection === 'connecting') setTimeout(refresh, 300);
  else if (s.connection === 'connected') void showClients();
}
void refresh();
// Stay current while open: Cancel on Chrome's bar (or Allow in another popup) changes the state.
chrome.storage.onChanged.addListener((changes, area) => {
  const next = changes.shotbridge_status?.newValue;
  if (area === 'session' && next) render(next);
});
