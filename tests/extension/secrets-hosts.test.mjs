// node --test tests/extension/ : component hosts that declare a password (or a reveal toggle) are
// secrets as a whole, every element that ever was a secret is found again by inRoot, and a
// same-origin frame's own memory can add masks but never remove one (page/secrets.js, run in a
// small fake DOM).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const EXT = new URL('../../python/shotbridge/extension/', import.meta.url);
const RULES = JSON.parse(readFileSync(new URL('secret-rules.json', EXT), 'utf8'));

class Element {
  /** @param {string} localName @param {Record<string, string>} attrs @param {object} [root] */
  constructor(localName, attrs, root = null) {
    this.localName = localName;
    this.nodeType = 1;
    this.attrs = { ...attrs };
    this.root = root;
    this.ownerDocument = { defaultView: { getComputedStyle: () => ({ getPropertyValue: () => '' }) } };
  }
  getAttribute(n) { return n in this.attrs ? this.attrs[n] : null; }
  hasAttribute(n) { return n in this.attrs; }
  removeAttribute(n) { delete this.attrs[n]; }
  getRootNode() { return this.root || this; }
}

/** A document or shadow root holding `elements` (querySelectorAll returns them all: the rules decide). */
function root(view = null) {
  const r = { nodeType: 11, host: {}, elements: [], ownerDocument: { defaultView: view } };
  r.querySelectorAll = () => r.elements;
  r.add = (/** @type {string} */ tag, /** @type {Record<string, string>} */ attrs) => {
    const el = new Element(tag, attrs, r);
    r.elements.push(el);
    return el;
  };
  return r;
}

function loadSecrets() {
  const observers = [];
  const context = {
    Element,
    WeakRef,
    MutationObserver: class { constructor(cb) { observers.push(cb); } observe() {} },
    document: {},
    addEventListener() {},
  };
  context.globalThis = context;
  vm.runInNewContext(readFileSync(new URL('page/secrets.js', EXT), 'utf8'), context);
  return { secrets: context.__shotbridge.secrets, mutate: (records) => observers.forEach((cb) => cb(records)) };
}

const HOSTS = [
  // [tag, attributes, secret?]
  ['sl-input', { type: 'password', 'password-toggle': '' }, true],
  ['sl-input', { type: 'password' }, true],
  ['ion-input', { type: 'PASSWORD' }, true],
  ['sl-input', { type: 'text', 'password-toggle': '' }, true],
  ...RULES.reveal_attributes.map((a) => ['x-field', { [a]: '' }, true]),
  ['sl-input', { type: 'text' }, false],
  ['sl-input', { type: 'email', autocomplete: 'email' }, false],
  ['button', { type: 'submit' }, false],
  ['script', { type: 'module' }, false],
  ['div', {}, false],
  ['x-field', { 'data-password': 'yes' }, false],
];

for (const [tag, attrs, expected] of HOSTS) {
  test(`<${tag} ${Object.keys(attrs).map((k) => `${k}="${attrs[k]}"`).join(' ')}> is ${expected ? '' : 'not '}a secret`, () => {
    const { secrets } = loadSecrets();
    assert.ok(secrets.setRules(RULES));
    assert.equal(secrets.isSecret(new Element(tag, attrs)), expected);
  });
}

test('before the rules arrive only native fields count (fail closed), hosts wait for the rules', () => {
  const { secrets } = loadSecrets();
  assert.equal(secrets.isSecret(new Element('input', { type: 'text' })), true);
  assert.equal(secrets.isSecret(new Element('sl-input', { type: 'password' })), false);
});

test('a host whose type went from password to text stays secret', () => {
  const { secrets, mutate } = loadSecrets();
  secrets.setRules(RULES);
  const host = new Element('ion-input', { type: 'text' });
  mutate([{ target: host, attributeName: 'type', oldValue: 'password' }]);
  assert.equal(secrets.isSecret(host), true);
});

test('inRoot finds every element that ever was a secret, even when no attribute says so now', () => {
  const { secrets } = loadSecrets();
  secrets.setRules(RULES);
  const r = root();
  const host = r.add('sl-input', { type: 'password', 'password-toggle': '' });
  const field = r.add('input', { type: 'password' });
  r.add('input', { type: 'text' });
  assert.deepEqual(new Set(secrets.inRoot(r)), new Set([host, field]));
  // The page strips the attributes and takes the elements out of what a query would find.
  host.removeAttribute('type');
  host.removeAttribute('password-toggle');
  field.attrs.type = 'text';
  r.elements = [];
  assert.deepEqual(new Set(secrets.inRoot(r)), new Set([host, field]));
  // Elements of another root are not this root's secrets.
  assert.equal(secrets.inRoot(root()).length, 0);
});

test("a frame's own memory adds masks and can never take one away", () => {
  const { secrets } = loadSecrets();
  secrets.setRules(RULES);
  const view = {};
  const r = root(view);
  const plain = r.add('input', { type: 'text' });
  const known = r.add('input', { type: 'password' });
  const stranger = new Element('input', {}, root());
  for (const [answer, expected] of [
    [() => [plain], [known, plain]], // the frame remembers `plain` was a password
    [() => [], [known]], // it forgot `known`: still masked here
    [() => [stranger, null, 'x', { nodeType: 1, getRootNode: () => null }], [known]], // not in this root
    [() => 'nonsense', [known]],
    [() => { throw new Error('broken'); }, [known]],
  ]) {
    view.__shotbridge = { secrets: { inRoot: answer, hasRules: () => true, setRules() {} } };
    assert.deepEqual(new Set(secrets.inRoot(r)), new Set(expected));
  }
});
