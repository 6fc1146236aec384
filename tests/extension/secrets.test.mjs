// node --test tests/extension/ : the extension's idea of a secret comes from secret-rules.json
// alone, and a field that was ever secret stays one (page/secrets.js, run in a small fake DOM).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import vm from 'node:vm';

const EXT = new URL('../../python/shotbridge/extension/', import.meta.url);
const RULES = JSON.parse(readFileSync(new URL('secret-rules.json', EXT), 'utf8'));

class Element {
  /** @param {string} localName @param {Record<string, string>} attrs @param {string} [css] */
  constructor(localName, attrs, css = '') {
    this.localName = localName;
    this.nodeType = 1;
    this.attrs = { ...attrs };
    this.css = css;
    this.ownerDocument = { defaultView: { getComputedStyle: () => ({ getPropertyValue: (p) => (p === '-webkit-text-security' ? this.css : '') }) } };
  }
  getAttribute(n) { return n in this.attrs ? this.attrs[n] : null; }
  hasAttribute(n) { return n in this.attrs; }
}

/** Load page/secrets.js in a fresh fake page; returns its API and the mutation callback. */
function loadSecrets() {
  const observers = [];
  const context = {
    Element,
    MutationObserver: class { constructor(cb) { observers.push(cb); } observe() {} },
    document: {},
    addEventListener() {},
  };
  context.globalThis = context;
  vm.runInNewContext(readFileSync(new URL('page/secrets.js', EXT), 'utf8'), context);
  return { secrets: context.__shotbridge.secrets, mutate: (records) => observers.forEach((cb) => cb(records)) };
}

test('the service worker hands page code exactly the lists of secret-rules.json', async () => {
  globalThis.chrome = { runtime: { getURL: (p) => new URL(p, EXT).href } };
  globalThis.fetch = async (url) => ({ json: async () => JSON.parse(readFileSync(new URL(url), 'utf8')) });
  const { pageRules } = await import('../../python/shotbridge/extension/lib/secret-rules.js');
  assert.deepEqual(await pageRules(), {
    input_types: RULES.input_types, autocomplete: RULES.autocomplete, css_properties: RULES.css_properties,
    reveal_attributes: RULES.reveal_attributes,
  });
});

test('no extension script keeps its own copy of the autocomplete tokens', () => {
  const files = [];
  for (const dir of ['', 'lib/', 'page/', 'content/']) {
    for (const f of readdirSync(new URL(dir, EXT))) if (f.endsWith('.js')) files.push(new URL(dir + f, EXT));
  }
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const token of RULES.autocomplete) assert.ok(!text.includes(token), `${file.pathname} names ${token}`);
  }
});

test('every rule of the list makes a secret, and nothing else does', () => {
  const { secrets } = loadSecrets();
  assert.equal(secrets.isSecret(new Element('input', {})), true, 'fail closed before the rules arrive');
  assert.ok(secrets.setRules(RULES));
  assert.equal(secrets.isSecret(new Element('input', { autocomplete: 'cc-exp' })), true);
  assert.equal(secrets.isSecret(new Element('input', { autocomplete: 'billing cc-exp-month' })), true);
  assert.equal(secrets.isSecret(new Element('textarea', { autocomplete: 'current-password' })), true);
  assert.equal(secrets.isSecret(new Element('select', { autocomplete: 'cc-exp-year' })), true);
  assert.equal(secrets.isSecret(new Element('input', { type: 'PASSWORD' })), true);
  assert.equal(secrets.isSecret(new Element('input', {}, 'disc')), true, '-webkit-text-security');
  assert.equal(secrets.isSecret(new Element('input', { type: 'text', autocomplete: 'email' })), false);
  assert.equal(secrets.isSecret(new Element('div', { autocomplete: 'cc-number' })), false);
});

test('a field that was ever a password stays secret after a show-password toggle', () => {
  const { secrets, mutate } = loadSecrets();
  secrets.setRules(RULES);
  // Toggled before any probe ever looked at it: only the mutation record knows it was a password.
  const field = new Element('input', { type: 'text' });
  mutate([{ target: field, attributeName: 'type', oldValue: 'password' }]);
  assert.equal(secrets.isSecret(field), true);
  // Seen as a PIN box once, then its CSS changed: still secret.
  const pin = new Element('input', {}, 'disc');
  assert.equal(secrets.isSecret(pin), true);
  pin.css = 'none';
  assert.equal(secrets.isSecret(pin), true);
  const plain = new Element('input', { type: 'text' });
  mutate([{ target: plain, attributeName: 'type', oldValue: 'email' }]);
  assert.equal(secrets.isSecret(plain), false);
});
