// node --test tests/extension/ : the extension's argument parsing (extension/lib/args.js) against
// the JSON Schema of python/shotbridge/wire/extension.py (wire-schema.json, written by
// scripts/export_wire_schema.py). For each command: the same fields, the same defaults, every
// value the schema allows accepted, every value it forbids refused (or read the way both sides
// say: truthy, fallback, clamped), and unknown fields handled alike.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const { COMMAND_ARGS, parseArgs } = await import('../../extension/lib/args.js');
const SCHEMA = JSON.parse(readFileSync(new URL('./wire-schema.json', import.meta.url), 'utf8'));

/** @param {any} root @param {any} s the schema with its $ref resolved against `root` */
function deref(root, s) {
  return s && s.$ref ? root.$defs[s.$ref.split('/').pop()] : s;
}

/** Does `v` satisfy `s` (the subset of JSON Schema pydantic writes for these models)? */
function valid(root, s, v) {
  s = deref(root, s);
  if (s.anyOf) return s.anyOf.some((b) => valid(root, b, v));
  if ('const' in s && v !== s.const) return false;
  if (s.enum && !s.enum.includes(v)) return false;
  const types = {
    integer: () => Number.isInteger(v),
    number: () => typeof v === 'number' && Number.isFinite(v),
    string: () => typeof v === 'string',
    boolean: () => typeof v === 'boolean',
    null: () => v === null,
    array: () => Array.isArray(v),
    object: () => typeof v === 'object' && v !== null && !Array.isArray(v),
  };
  if (s.type && !types[s.type]()) return false;
  if (s.minimum !== undefined && !(v >= s.minimum)) return false;
  if (s.maximum !== undefined && !(v <= s.maximum)) return false;
  if (s.exclusiveMinimum !== undefined && !(v > s.exclusiveMinimum)) return false;
  if (s.pattern && !new RegExp(s.pattern).test(v)) return false;
  if (s.type === 'array' && s.items) return v.every((x) => valid(root, s.items, x));
  if (s.type === 'object' && s.properties) {
    if ((s.required ?? []).some((k) => !(k in v))) return false;
    return Object.entries(s.properties).every(([k, p]) => !(k in v) || valid(root, p, v[k]));
  }
  return true;
}

const STRINGS = ['#main', 'Page.enable', 'https://example.com/'];

/** A value `s` allows, other than its default where there is a choice (null only when nothing else is). */
function sample(root, s) {
  s = deref(root, s);
  if (s.anyOf) return sample(root, s.anyOf.find((b) => b.type !== 'null') ?? s.anyOf[0]);
  if ('const' in s) return s.const;
  if (s.enum) return s.enum.find((e) => e !== s.default) ?? s.enum[0];
  switch (s.type) {
    case 'integer':
    case 'number': {
      const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : undefined);
      if (lo !== undefined) return lo === s.default ? Math.min(lo + 1, s.maximum ?? Infinity) : lo;
      return s.maximum ?? 7;
    }
    case 'string': return STRINGS.find((x) => !s.pattern || new RegExp(s.pattern).test(x));
    case 'boolean': return s.default !== true;
    case 'array': return [sample(root, s.items)];
    case 'null': return null;
    default: return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, p]) => [k, sample(root, p)]));
  }
}

/** Values near `s` that it forbids: wrong types, just out of bounds, off its enum or pattern. */
function candidates(root, s) {
  s = deref(root, s);
  if (s.anyOf) return s.anyOf.flatMap((b) => candidates(root, b));
  const out = [{ wrong: 'type' }, 'not-a-value', 42, 1.5, '   ', []];
  if ('const' in s) out.push(!s.const);
  if (s.enum && s.enum.every((e) => typeof e === 'number')) out.push(Math.max(...s.enum) + 1, 0);
  if (s.minimum !== undefined) out.push(s.minimum - 1, s.minimum + (s.type === 'integer' ? 0.5 : 0));
  if (s.maximum !== undefined) out.push(s.maximum + 1);
  if (s.exclusiveMinimum !== undefined) out.push(s.exclusiveMinimum);
  if (s.type === 'array') out.push([42], 'x');
  if (s.type === 'object' && s.properties) {
    const good = sample(root, s);
    for (const [k, p] of Object.entries(s.properties)) {
      const { [k]: _, ...without } = good;
      out.push(without);
      for (const c of candidates(root, p)) out.push({ ...good, [k]: c });
    }
  }
  return out;
}

/**
 * Arguments the command accepts: one of its examples (the first unless `i`), else its required fields.
 * @param {any} args @param {number} [i]
 */
function base(args, i = 0) {
  const out = { ...(args.examples?.[i] ?? {}) };
  for (const k of args.required ?? []) if (!(k in out)) out[k] = sample(args, args.properties[k]);
  return out;
}

/** Every base the command's examples give (one when it has none). @param {any} args */
const bases = (args) => (args.examples ?? [{}]).map((_, i) => base(args, i));

/**
 * `extra` plus what the schema's joining rules ask of the fields it sets (null is no value):
 * dependentSchemas, dependentRequired, if/then.
 */
function withDependencies(args, extra) {
  const out = { ...extra };
  for (const [k, v] of Object.entries(extra)) {
    if (v === null) continue;
    for (const [dk, ds] of Object.entries(args.dependentSchemas?.[k]?.properties ?? {})) out[dk] = ds.const;
    for (const dk of args.dependentRequired?.[k] ?? []) out[dk] ??= sample(args, args.properties[dk]);
  }
  const when = Object.entries(args.if?.properties ?? {});
  if (when.length && when.every(([k, p]) => out[k] === p.const)) {
    for (const k of args.then.required) out[k] ??= sample(args, args.properties[k]);
  }
  return out;
}

/** The bad_request refusal of `args`, or the parsed arguments when there is none. */
function refusal(cmd, args) {
  try {
    return { parsed: parseArgs(cmd, args) };
  } catch (e) {
    assert.equal(e.code, 'bad_request', `${cmd} ${JSON.stringify(args)}: ${e.message}`);
    return { refused: e.message };
  }
}

const commands = Object.entries(SCHEMA.commands);

test('the extension parses exactly the commands the models declare', () => {
  assert.deepEqual(Object.keys(COMMAND_ARGS).sort(), commands.map(([c]) => c).sort());
});

for (const [cmd, { args }] of commands) {
  const props = Object.entries(args.properties);

  test(`${cmd}: the same fields, the same defaults`, () => {
    assert.deepEqual(Object.keys(COMMAND_ARGS[cmd].fields).sort(), props.map(([k]) => k).sort());
    const b = base(args);
    const got = refusal(cmd, b);
    assert.ok(got.parsed, `${cmd} refuses its smallest call ${JSON.stringify(b)}: ${got.refused}`);
    for (const [k, p] of props) {
      if (k in b) continue;
      assert.ok('default' in p, `${cmd}.${k} is neither required nor defaulted in the schema`);
      assert.deepEqual(got.parsed[k], p.default, `${cmd}.${k} default`);
    }
  });

  test(`${cmd}: a missing required field is refused`, () => {
    for (const k of args.required ?? []) {
      const { [k]: _, ...without } = base(args);
      assert.ok(refusal(cmd, without).refused, `${cmd} without ${k}`);
    }
  });

  test(`${cmd}: every value the schema allows is accepted`, () => {
    for (const [k, p] of props) {
      const p0 = deref(args, p);
      const values = [sample(args, p), ...(p0.enum ?? []), ...(valid(args, p, null) ? [null] : [])];
      for (const v of values) {
        assert.ok(valid(args, p, v), `sample ${JSON.stringify(v)} of ${cmd}.${k}`);
        // Accepted in at least one of the calls the schema gives as examples.
        const tries = bases(args).map((b) => refusal(cmd, withDependencies(args, { ...b, [k]: v })));
        const got = tries.find((t) => t.parsed) ?? tries[0];
        assert.ok(got.parsed, `${cmd}.${k}=${JSON.stringify(v)} refused: ${got.refused}`);
        const want = p['x-coerce'] === 'truthy' ? !!v : v;
        assert.deepEqual(got.parsed[k], want, `${cmd}.${k}=${JSON.stringify(v)} read as`);
      }
    }
  });

  test(`${cmd}: every value the schema forbids is refused, or read as both sides say`, () => {
    for (const [k, p] of props) {
      const bad = candidates(args, p).filter((v) => !valid(args, p, v));
      assert.ok(bad.length, `no forbidden value found for ${cmd}.${k}`);
      for (const v of bad) {
        const got = refusal(cmd, withDependencies(args, { ...base(args), [k]: v }));
        const how = `${cmd}.${k}=${JSON.stringify(v)}`;
        if (p['x-coerce'] === 'truthy') assert.equal(got.parsed?.[k], !!v, `${how} read as truthy`);
        else if (p['x-coerce'] === 'fallback') assert.deepEqual(got.parsed?.[k], p.default, `${how} falls back`);
        else assert.ok(got.refused, `${how} accepted`);
      }
      if (p['x-clamp-max'] !== undefined) {
        const got = refusal(cmd, { ...base(args), [k]: p['x-clamp-max'] * 2 });
        assert.equal(got.parsed?.[k], p['x-clamp-max'], `${cmd}.${k} is cut to ${p['x-clamp-max']}`);
      }
    }
  });

  test(`${cmd}: unknown fields are handled as the models handle them`, () => {
    const got = refusal(cmd, { ...base(args), not_a_field: 1 });
    if (args.additionalProperties === false) assert.ok(got.refused);
    else assert.ok(got.parsed && !('not_a_field' in got.parsed));
  });

  test(`${cmd}: the rules joining fields hold on both sides`, () => {
    for (const [k, dep] of Object.entries(args.dependentSchemas ?? {})) {
      // The field without what it depends on (the dependency left at its default).
      const { [k]: _, ...rest } = base(args);
      for (const dk of Object.keys(dep.properties)) delete rest[dk];
      assert.ok(refusal(cmd, { ...rest, [k]: sample(args, args.properties[k]) }).refused, `${cmd}.${k} alone`);
    }
    for (const [k, deps] of Object.entries(args.dependentRequired ?? {})) {
      const sent = { ...base(args), [k]: sample(args, args.properties[k]) };
      for (const dk of deps) delete sent[dk];
      assert.ok(refusal(cmd, sent).refused, `${cmd}.${k} without ${deps}`);
    }
    if (args.if) {
      const when = Object.fromEntries(Object.entries(args.if.properties).map(([k, p]) => [k, p.const]));
      const sent = { ...base(args), ...when };
      for (const k of args.then.required) delete sent[k];
      assert.ok(refusal(cmd, sent).refused, `${cmd} ${JSON.stringify(when)} without ${args.then.required}`);
      for (const k of args.then.required) sent[k] = sample(args, args.properties[k]);
      assert.ok(refusal(cmd, sent).parsed, `${cmd} ${JSON.stringify(when)} with ${args.then.required}`);
    }
  });
}
