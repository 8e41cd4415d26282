#!/usr/bin/env node
/**
 * Keeps the import graph of src/ in the shape docs/ARCHITECTURE.md draws: no cycles, and (almost) no
 * import that runs from a lower layer up to a higher one.
 *
 * Layers, bottom up (a file may import its own layer or any layer below it):
 *   0 domain     src/domain, and the logger everyone writes with (src/log.ts)
 *   1 adapters   src/shops/platforms, src/adapters/dispatch-api, src/ledger, src/geo, src/config, src/redis.ts
 *   2 use cases  src/orders, src/orders/reconcile, src/orders/disputes, src/checkout, src/dashboard/use-cases
 *   3 edges      src/http, src/dashboard (outside use-cases), src/main, src/ops, src/observability (the rest)
 *
 * Cycles: every static import counts, types included. A cycle of type imports does no harm at load time, but
 * it still ties the modules so that neither can be read, tested or moved without the other.
 * Upward imports: only the imports that run count. `import type`, `export type` and imports whose every name
 * is a type are erased by TypeScript, so they pull no code of a higher layer in; they are counted and shown
 * apart, as a figure to bring down, without failing. import() is a deliberate late load and is not counted.
 * Tests (*.test.ts, *.test-support.ts) are left out.
 *
 * Fails (exit 1) on any cycle, or on more upward imports than MAX_UPWARD; prints each of them.
 * Run from `npm run lint`, or alone: `node scripts/check-imports.mjs`.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Runtime imports up the layers: none left (issue 26 allowed four), so any new one fails. */
const MAX_UPWARD = 0;

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');

const LAYERS = [
  { name: 'domain', rank: 0, prefixes: ['src/domain/', 'src/log.ts'] },
  {
    name: 'adapters',
    rank: 1,
    prefixes: ['src/shops/', 'src/adapters/', 'src/ledger/', 'src/geo/', 'src/config/', 'src/redis.ts'],
  },
  {
    name: 'use cases',
    rank: 2,
    prefixes: ['src/orders/', 'src/shops/uninstall.ts', 'src/checkout/', 'src/dashboard/use-cases/'],
  },
  {
    name: 'edges',
    rank: 3,
    prefixes: ['src/http/', 'src/dashboard/', 'src/main/', 'src/ops/', 'src/observability/'],
  },
];

function layerOf(file) {
  // The longest matching prefix wins: src/dashboard/use-cases/ over src/dashboard/, src/shops/uninstall.ts over src/shops/.
  let best;
  for (const layer of LAYERS) {
    for (const prefix of layer.prefixes) {
      if (file.startsWith(prefix) && (!best || prefix.length > best.prefix.length)) best = { layer, prefix };
    }
  }
  return best?.layer;
}

function sourceFiles(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    const isTest = entry.name.endsWith('.test.ts') || entry.name.endsWith('.test-support.ts');
    return entry.name.endsWith('.ts') && !isTest ? [path] : [];
  });
}

/** True when TypeScript erases the declaration: nothing of it exists at run time. */
function isTypeOnly(node) {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) return false; // `import './x.js'` runs the module
    if (clause.isTypeOnly) return true;
    if (clause.name) return false;
    const bindings = clause.namedBindings;
    if (!bindings || ts.isNamespaceImport(bindings)) return false;
    return bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
  }
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return (
    !!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly)
  );
}

/** The src/ files a file imports statically, with the line of each import and whether it is erased. */
function runtimeImports(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const imports = [];
  for (const statement of source.statements) {
    const isImportOrExport = ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement);
    if (!isImportOrExport || !statement.moduleSpecifier) continue;
    const specifier = statement.moduleSpecifier.text;
    if (!specifier.startsWith('.')) continue;
    const target = relative(root, resolve(root, dirname(file), specifier)).replace(/\.js$/, '.ts');
    if (!target.startsWith('src/')) continue;
    const line = source.getLineAndCharacterOfPosition(statement.getStart(source)).line + 1;
    imports.push({ target, line, typeOnly: isTypeOnly(statement) });
  }
  return imports;
}

/** Every elementary cycle, found once each by Tarjan's strongly connected components then a walk inside each. */
function findCycles(graph) {
  const cycles = [];
  const seen = new Set();
  for (const component of stronglyConnected(graph)) {
    if (component.length < 2) continue;
    const members = new Set(component);
    for (const start of [...component].sort()) {
      const walk = (node, path) => {
        for (const next of graph.get(node) ?? []) {
          if (!members.has(next) || next < start) continue;
          if (next === start) {
            const key = [...path].sort().join('|');
            if (!seen.has(key)) {
              seen.add(key);
              cycles.push([...path, start]);
            }
          } else if (!path.includes(next) && cycles.length < 100) walk(next, [...path, next]);
        }
      };
      walk(start, [start]);
    }
  }
  return cycles;
}

function stronglyConnected(graph) {
  let index = 0;
  const indices = new Map();
  const lowLinks = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const visit = (node) => {
    indices.set(node, index);
    lowLinks.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        lowLinks.set(node, Math.min(lowLinks.get(node), lowLinks.get(next)));
      } else if (onStack.has(next)) lowLinks.set(node, Math.min(lowLinks.get(node), indices.get(next)));
    }
    if (lowLinks.get(node) === indices.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component);
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return components;
}

const files = sourceFiles('src');
const graph = new Map();
const upward = [];
const upwardTypes = [];
for (const file of files) {
  const imports = runtimeImports(file);
  graph.set(file, [...new Set(imports.map((entry) => entry.target))]);
  const from = layerOf(file);
  for (const { target, line, typeOnly } of imports) {
    const to = layerOf(target);
    if (!from || !to || to.rank <= from.rank) continue;
    (typeOnly ? upwardTypes : upward).push(`${file}:${line} (${from.name}) → ${target} (${to.name})`);
  }
}

const cycles = findCycles(graph);
for (const cycle of cycles) console.log(`cycle: ${cycle.join(' → ')}`);
for (const line of upward) console.log(`upward: ${line}`);
if (process.argv.includes('--types')) for (const line of upwardTypes) console.log(`upward, types only: ${line}`);
console.log(
  `${files.length} files: ${cycles.length} import cycles (0 allowed), ${upward.length} upward imports ` +
    `(${MAX_UPWARD} allowed), ${upwardTypes.length} more of types only (--types lists them)`,
);
if (cycles.length > 0 || upward.length > MAX_UPWARD) process.exit(1);
