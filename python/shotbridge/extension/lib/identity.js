// Who we are, for the hello event: one random profile id per browser profile, created on first use
// and kept in chrome.storage.local (it identifies the profile to the host, nothing more).

export const PROTOCOL_VERSION = 1;
const KEY = 'profile_id';

/** @type {Promise<string> | null} */
let cached = null;

/** @returns {Promise<string>} */
export function profileId() {
  cached ??= (async () => {
    const got = await chrome.storage.local.get(KEY);
    if (typeof got[KEY] === 'string' && got[KEY]) return got[KEY];
    const id = crypto.randomUUID();
    await chrome.storage.local.set({ [KEY]: id });
    return id;
  })().catch((e) => {
    cached = null;
    throw e;
  });
  return cached;
}
