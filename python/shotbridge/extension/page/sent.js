// sent: the last answer this document gave to each kind of read, so an unchanged answer need not
// cross again. An assistant looks at a page that has not changed since its last look: the labels
// are the same 10-30 KB of JSON, and carrying them from the page through the extension's worker
// and native messaging to the host, beside Chrome's capture, slowed that capture. Each answer gets
// a token; a caller that still holds the answer of a token says so (`known`), and the page answers
// `{same: token}` when what it would send is, character for character, what it sent then.
(() => {
  const L = (globalThis.__shotbridge = globalThis.__shotbridge || {});

  const KEEP = 4; // kinds of read remembered (the host asks two: labels, and its read after a capture)
  /** @type {Map<string, {json: string, token: string}>} by kind of read, oldest first */
  const last = new Map();
  let count = 0;

  /**
   * `answer` with its token, or `{same: token}` when it equals the answer of a token in `known`.
   * Tokens are unique across documents (L.documentId, page/probe.js), so a token never names
   * another document's answer.
   * @template {object} T
   * @param {string} kind what was asked (answers to different questions never match)
   * @param {T} answer
   * @param {string[] | undefined} known tokens whose answers the caller holds
   * @returns {(T & {token: string}) | {same: string}}
   */
  L.sameOrNew = (kind, answer, known) => {
    const json = JSON.stringify(answer);
    const was = last.get(kind);
    last.delete(kind);
    if (was && was.json === json) {
      last.set(kind, was);
      if (known?.includes(was.token)) return { same: was.token };
      return { ...answer, token: was.token };
    }
    const token = `${L.documentId}.${++count}`;
    last.set(kind, { json, token });
    if (last.size > KEEP) last.delete(last.keys().next().value);
    return { ...answer, token };
  };
})();
