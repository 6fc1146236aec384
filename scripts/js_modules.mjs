// What scripts/check_layers.py needs to know about the extension's JavaScript, read by a real
// parser (acorn, pinned in tests/e2e/package.json) so that an `import('./x.js')` inside a JSDoc
// comment or a string is never taken for an import.
//
//   node scripts/js_modules.mjs DIR  ->  JSON on stdout:
//   {"files": {"lib/a.js": {"imports": [{"spec": "./b.js", "line": 3}],
//                           "functions": [{"name": "f", "line": 10, "lines": 42}]}},
//    "errors": ["lib/x.js: Unexpected token (3:4)"]}
//
// Imports are static `import … from`, `export … from`, bare `import '…'` and `import()` with a
// literal path. A file-wide `(() => { … })()` wrapper (the page scripts' classic-script scope) is
// not counted as a function: it is the file's scope, not a piece of logic.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';

const require = createRequire(new URL('../tests/e2e/package.json', import.meta.url));
const acorn = require('acorn');

/** @param {string} dir @returns {string[]} */
function jsFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') out.push(...jsFiles(path));
    else if (entry.isFile() && /\.(m?js)$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

/** Module first (the service worker's lib/), classic script for the injected page files. */
function parse(text) {
  const options = { ecmaVersion: 'latest', locations: true, allowHashBang: true };
  try {
    return acorn.parse(text, { ...options, sourceType: 'module' });
  } catch (moduleError) {
    try {
      return acorn.parse(text, { ...options, sourceType: 'script' });
    } catch {
      throw moduleError;
    }
  }
}

const FUNCTION_TYPES = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** A readable name for the function `node`, from where it sits (`parent`). */
function nameOf(node, parent) {
  if (node.id?.name) return node.id.name;
  if (!parent) return '<anonymous>';
  const key = parent.key ?? parent.id ?? parent.left;
  if (key?.type === 'Identifier') return key.name;
  if (key?.type === 'PrivateIdentifier') return `#${key.name}`;
  if (key?.type === 'Literal') return String(key.value);
  if (key?.type === 'MemberExpression' && key.property?.type === 'Identifier') return key.property.name;
  return '<anonymous>';
}

/** The top-level `(() => {…})()` / `(function () {…})()` wrapper of a classic script, if any. */
function fileWrappers(program) {
  const wrappers = new Set();
  for (const stmt of program.body) {
    let expr = stmt.type === 'ExpressionStatement' ? stmt.expression : null;
    if (expr?.type === 'UnaryExpression') expr = expr.argument;
    if (expr?.type === 'CallExpression' && FUNCTION_TYPES.has(expr.callee.type)) wrappers.add(expr.callee);
  }
  return wrappers;
}

function describe(program) {
  const imports = [];
  const functions = [];
  const skip = fileWrappers(program);
  const visit = (node, parent, enclosing) => {
    if (!node || typeof node.type !== 'string') return;
    const source = node.source;
    if (source?.type === 'Literal' && typeof source.value === 'string') {
      // ImportDeclaration, Export{Named,All}Declaration with a `from`, and import() of a literal.
      imports.push({ spec: source.value, line: node.loc.start.line });
    }
    let inside = enclosing;
    if (FUNCTION_TYPES.has(node.type) && !skip.has(node)) {
      const lines = node.loc.end.line - node.loc.start.line + 1;
      let name = nameOf(node, parent);
      // A callback is named by where it sits: "captureCdp > callback" says where to look.
      if (name === '<anonymous>' && enclosing) name = `${enclosing} > callback`;
      functions.push({ name, line: node.loc.start.line, lines });
      inside = name;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'loc') continue;
      if (Array.isArray(value)) for (const child of value) visit(child, node, inside);
      else if (value && typeof value === 'object') visit(value, node, inside);
    }
  };
  visit(program, null, '');
  return { imports, functions };
}

const root = process.argv[2];
if (!root) {
  console.error('usage: node scripts/js_modules.mjs DIR');
  process.exit(2);
}
const files = {};
const errors = [];
for (const path of jsFiles(root)) {
  const rel = relative(root, path).split(sep).join('/');
  try {
    files[rel] = describe(parse(readFileSync(path, 'utf8')));
  } catch (err) {
    errors.push(`${rel}: ${err.message}`);
  }
}
process.stdout.write(JSON.stringify({ files, errors }));
