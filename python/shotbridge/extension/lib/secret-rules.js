// The one list of what counts as a secret (secret-rules.json, shared with the host's fixture
// sanitiser). The service worker reads it from the package and hands it to every page-side call
// (lib/page.js) and to content scripts that ask (page/secrets.js); nothing in the extension keeps
// a copy of its own.

/** @typedef {{input_types: string[], autocomplete: string[], css_properties: string[], reveal_attributes: string[], key_words: string[]}} SecretRules */

/** @type {Promise<SecretRules> | null} */
let loading = null;

/** @returns {Promise<SecretRules>} */
export function secretRules() {
  if (!loading) {
    loading = fetch(chrome.runtime.getURL('secret-rules.json'))
      .then((r) => r.json())
      .then((r) => {
        for (const k of ['input_types', 'autocomplete', 'css_properties', 'reveal_attributes']) {
          if (!Array.isArray(r[k])) throw new Error(`secret-rules.json: ${k} must be a list`);
        }
        return r;
      })
      .catch((e) => {
        loading = null; // try again next time; callers fail closed meanwhile
        throw e;
      });
  }
  return loading;
}

/** @typedef {Omit<SecretRules, 'key_words'>} PageRules */
/** @type {PageRules | null} */
let pageRulesRead = null;

/** The part page code needs (no key words: those are for request bodies). */
export async function pageRules() {
  const r = await secretRules();
  pageRulesRead = {
    input_types: r.input_types,
    autocomplete: r.autocomplete,
    css_properties: r.css_properties,
    reveal_attributes: r.reveal_attributes,
  };
  return pageRulesRead;
}

/**
 * pageRules() without waiting, once they have been read: a page call then leaves in the same
 * task as its caller, ahead of whatever the caller asks for next.
 * @returns {PageRules | null}
 */
export const pageRulesNow = () => pageRulesRead;
