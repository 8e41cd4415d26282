#!/usr/bin/env node
/**
 * Moves src/ into feature folders (issue 26, item 1) and repairs everything that named the old paths.
 *
 *   node scripts/layout/apply-moves.mjs [--dry-run] [--allow-dirty]
 *
 * 1. Reads scripts/layout/moves.txt (folder lines move every file under them, files added since included;
 *    the longest match wins) and `git mv`s each tracked file of src/ to its new place.
 * 2. Rewrites every relative module specifier (`from '…'`, `import('…')`, `import '…'`,
 *    `new URL('…', import.meta.url)`) in src/, test/, bench/, packages/ and scripts/ so it names the same
 *    file from the importer's new place, keeping the extension the import was written with (`.js`).
 * 3. Applies the edits of EDITS below (the import boundaries in eslint.config.js, which name folders by glob).
 * 4. Rewrites repository paths written out in text (`src/jobs/queues.ts` in a comment, a doc, a config, a
 *    command line) everywhere but data, fixtures, the lock file and the layout's own records.
 * 5. Puts docs/ARCHITECTURE.target.md in place of docs/ARCHITECTURE.md when it exists, removes the emptied
 *    folders and formats the changed sources with prettier.
 *
 * A second run finds nothing to move and changes nothing. It refuses to start on a work tree with
 * uncommitted changes (unless --allow-dirty), and before moving anything when a target is taken.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { posix } from 'node:path';

const ROOT = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
process.chdir(ROOT);
const DRY_RUN = process.argv.includes('--dry-run');
const ALLOW_DIRTY = process.argv.includes('--allow-dirty');

/** Folders whose code files may import by relative path (step 2). */
const CODE_ROOTS = ['src/', 'test/', 'bench/', 'packages/', 'scripts/'];
const CODE_FILE = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/;
/** Files whose written-out paths are left alone (step 4): data, fixtures, the lock, the layout's own records. */
const TEXT_LEFT_ALONE = [
  /^data\//,
  /^test\/fixtures\//,
  /^plugins\//,
  /^package-lock\.json$/,
  /^docs\/LAYOUT\.md$/,
  /^docs\/dispatch-api-spec\.md$/,
  /^scripts\/layout\//,
  /^docs\/ARCHITECTURE\.target\.md$/,
  /\.(png|jpg|gif|ico|csv|gz|zip|pdf|woff2?)$/,
];

/**
 * Edits that path rewriting cannot make: the import boundaries name folders by glob. Each `from` must be found
 * once; one already applied (its `to` present) is skipped, and one found nowhere is reported for a person to
 * apply by hand (the file changed since this list was written).
 */
const EDITS = [
  // `config/` in .prettierignore meant the root's config/ (JSON profiles) but matched src/config/ too, whose
  // files prettier never checked; anchored, it keeps only the root's, and the moved files are formatted below.
  { file: '.prettierignore', from: '\nconfig/\n', to: '\n/config/\n' },
  {
    file: 'eslint.config.js',
    from: " *  - a shop platform's folder is private to src/stores: everything else goes through src/stores/index.ts;",
    to: " *  - a shop platform's folder (src/adapters/shopify, src/adapters/woocommerce) is private to src/shops/platforms:\n *    everything else goes through src/shops/platforms/index.ts;",
  },
  {
    file: 'eslint.config.js',
    from: " *  - a ledger storage backend (src/ledger/postgres/, src/ledger/redis/) is chosen by src/main and used by\n *    src/ledger only: everyone else goes through the ledger's port.",
    to: " *  - a ledger storage backend (src/adapters/postgres/) is chosen by src/main and used by src/ledger only:\n *    everyone else goes through the ledger's port.",
  },
  {
    file: 'eslint.config.js',
    from: "group: ['**/stores/shopify/**', '**/stores/woocommerce/**'],",
    to: "group: ['**/adapters/shopify/**', '**/adapters/woocommerce/**'],",
  },
  {
    file: 'eslint.config.js',
    from: "A shop platform's folder is private to src/stores. Import from",
    to: "A shop platform's folder (src/adapters/shopify, src/adapters/woocommerce) is private to src/shops/platforms. Import from",
  },
  {
    file: 'eslint.config.js',
    from: "group: ['**/dispatch/*', '!**/dispatch/index.js'],",
    to: "group: ['**/adapters/dispatch-api/*', '!**/adapters/dispatch-api/index.js'],",
  },
  {
    file: 'eslint.config.js',
    from: "group: ['**/ledger/postgres/**', '**/ledger/redis/**'],",
    to: "group: ['**/adapters/postgres/**'],",
  },
  {
    file: 'eslint.config.js',
    from: "const useCases = ['src/jobs/**', 'src/reconcile/**', 'src/disputes/**', 'src/checkout/**'];",
    to: "const useCases = ['src/orders/**', 'src/checkout/**'];",
  },
  {
    file: 'eslint.config.js',
    from: "ignores: ['src/stores/**', 'src/ledger/**', 'src/main/**', ...tests],",
    to: "ignores: ['src/adapters/**', 'src/shops/platforms/**', 'src/ledger/**', 'src/main/**', ...tests],",
  },
  {
    file: 'eslint.config.js',
    from: "{ files: ['src/stores/**/*.ts'], ignores: tests, rules: restrict(ledgerBackends, emulators) },",
    to: [
      '{',
      "      files: ['src/adapters/shopify/**/*.ts', 'src/adapters/woocommerce/**/*.ts', 'src/shops/platforms/**/*.ts'],",
      '      ignores: tests,',
      '      rules: restrict(ledgerBackends, emulators),',
      '    },',
      '    {',
      "      files: ['src/adapters/dispatch-api/**/*.ts'],",
      '      ignores: tests,',
      '      rules: restrict(platformFolders, ledgerBackends, emulators),',
      '    },',
    ].join('\n'),
  },
  {
    file: 'eslint.config.js',
    from: "{ files: ['src/ledger/**/*.ts', 'src/main/**/*.ts'], ignores: tests, rules: restrict(platformFolders, emulators) },",
    to: [
      '{',
      "      files: ['src/ledger/**/*.ts', 'src/adapters/postgres/**/*.ts', 'src/main/**/*.ts'],",
      '      ignores: tests,',
      '      rules: restrict(platformFolders, emulators),',
      '    },',
    ].join('\n'),
  },
];

// ---------------------------------------------------------------------------------------------------------------
// The move map

/** [{ from, to, folder }] from moves.txt, longest `from` first. */
function readRules() {
  const rules = [];
  for (const [index, raw] of readFileSync('scripts/layout/moves.txt', 'utf8').split('\n').entries()) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const [from, to, extra] = line.split(/\s+/);
    if (!from || !to || extra) throw new Error(`moves.txt line ${index + 1}: expected "<from> <to>", got "${raw}"`);
    if (from.endsWith('/') !== to.endsWith('/'))
      throw new Error(`moves.txt line ${index + 1}: a folder moves to a folder, a file to a file`);
    rules.push({ from, to, folder: from.endsWith('/') });
  }
  rules.sort((a, b) => b.from.length - a.from.length);
  // Idempotence: nothing may land where a rule would pick it up again on a second run.
  for (const rule of rules) {
    if (rule.from === rule.to) continue;
    for (const other of rules) {
      if (other.from === other.to) continue;
      if (matches(other, rule.to) || (rule.folder && other.from.startsWith(rule.to)))
        throw new Error(`moves.txt: ${rule.from} goes to ${rule.to}, which ${other.from} moves again`);
    }
  }
  return rules;
}

function matches(rule, path) {
  return rule.folder ? path.startsWith(rule.from) : path === rule.from;
}

function ruleFor(rules, path) {
  return rules.find((rule) => matches(rule, path));
}

/** Where `path` (a file, or a folder ending in /) goes; itself when no rule moves it. */
function destination(rules, path) {
  const rule = ruleFor(rules, path);
  if (!rule) return path;
  return rule.folder ? rule.to + path.slice(rule.from.length) : rule.to;
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers

function git(...args) {
  return execFileSync('git', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

function trackedFiles() {
  return git('ls-files', '-z')
    .split('\0')
    .filter((path) => path && existsSync(path));
}

function isText(path) {
  if (TEXT_LEFT_ALONE.some((pattern) => pattern.test(path))) return false;
  const stat = statSync(path);
  if (!stat.isFile() || stat.size > 2_000_000) return false;
  return !readFileSync(path).subarray(0, 8000).includes(0);
}

/** The file an import of `path` means: itself, or the .ts source of a .js specifier (as NodeNext resolves). */
function sourceOf(path, files) {
  if (files.has(path)) return { file: path, swap: null };
  for (const [js, ts] of [
    ['.js', '.ts'],
    ['.mjs', '.mts'],
    ['.cjs', '.cts'],
    ['.js', '.tsx'],
  ]) {
    if (path.endsWith(js) && files.has(path.slice(0, -js.length) + ts))
      return { file: path.slice(0, -js.length) + ts, swap: [js, ts] };
  }
  return null;
}

function relativeSpecifier(fromFile, toPath, trailingSlash) {
  let spec = posix.relative(posix.dirname(fromFile), toPath);
  if (!spec.startsWith('.')) spec = `./${spec}`;
  return trailingSlash && !spec.endsWith('/') ? `${spec}/` : spec;
}

// ---------------------------------------------------------------------------------------------------------------
// Steps

function planMoves(rules, files) {
  const moves = new Map();
  for (const file of files) {
    if (!file.startsWith('src/')) continue;
    const to = destination(rules, file);
    if (to !== file) moves.set(file, to);
  }
  const taken = new Map();
  const problems = [];
  for (const [from, to] of moves) {
    if (taken.has(to)) problems.push(`${from} and ${taken.get(to)} would both become ${to}`);
    taken.set(to, from);
    if (existsSync(to) && !moves.has(to)) problems.push(`${from} → ${to}: ${to} exists already`);
  }
  const untracked = git('ls-files', '--others', '--exclude-standard', '-z', 'src')
    .split('\0')
    .filter((path) => path && destination(rules, path) !== path);
  for (const path of untracked) problems.push(`${path} is not tracked by git: commit or remove it first`);
  if (problems.length) throw new Error(`refusing to move:\n  ${problems.join('\n  ')}`);
  return moves;
}

/** Step 2: every relative specifier names, from the importer's new place, the new place of what it named. */
function rewriteSpecifiers(text, newFile, oldFile, rules, oldFiles, oldFolders) {
  const fix = (spec) => {
    const trailingSlash = spec.endsWith('/');
    const target = posix.normalize(posix.join(posix.dirname(oldFile), spec));
    if (target.startsWith('..')) return spec;
    const source = sourceOf(target.replace(/\/$/, ''), oldFiles);
    let newTarget;
    if (source) {
      newTarget = destination(rules, source.file);
      if (source.swap) newTarget = newTarget.slice(0, -source.swap[1].length) + source.swap[0];
    } else if (oldFolders.has(target.replace(/\/$/, ''))) {
      newTarget = destination(rules, `${target.replace(/\/$/, '')}/`).replace(/\/$/, '');
    } else return spec; // names nothing in the tree (a generated file, a path built at run time): left alone
    const rewritten = relativeSpecifier(newFile, newTarget, trailingSlash);
    return rewritten === spec ? spec : rewritten;
  };
  return text
    .replace(
      /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"\n]*)\2/g,
      (_, lead, q, spec) => `${lead}${q}${fix(spec)}${q}`,
    )
    .replace(
      /(new URL\(\s*)(['"])(\.{1,2}\/[^'"\n]*)\2(\s*,\s*import\.meta\.url)/g,
      (_, lead, q, spec, tail) => `${lead}${q}${fix(spec)}${q}${tail}`,
    );
}

/**
 * Step 4: a repository path written out (`src/jobs/queues.ts`, `src/stores/`) names its new place. Only what this
 * run moves is rewritten: a file it moved, or a folder it emptied (a folder that keeps files, such as src/config/,
 * is left as written), so a second run rewrites nothing.
 */
function rewriteWrittenPaths(text, moves, emptiedFolders, rules) {
  return text.replace(/(?<![\w./@-])src\/[\w./-]*[\w/]/g, (path) => {
    for (const [written, file, strip] of [
      [path, path, ''],
      [path, `${path}.ts`, '.ts'],
      [path, path.replace(/\.js$/, '.ts'), '.js'],
    ]) {
      if (written !== path || !moves.has(file)) continue;
      const moved = moves.get(file);
      if (strip === '.ts') return moved.slice(0, -3);
      if (strip === '.js') return `${moved.slice(0, -3)}.js`;
      return moved;
    }
    const folder = path.endsWith('/') ? path : `${path}/`;
    if (!emptiedFolders.has(folder)) return path;
    const moved = destination(rules, folder);
    return path.endsWith('/') ? moved : moved.replace(/\/$/, '');
  });
}

/** Folders (ending in /) that held files before the run and hold none of the old ones after it. */
function emptiedFolders(oldFiles, moves) {
  const folders = new Map();
  for (const file of oldFiles) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) {
      const folder = `${parts.slice(0, i).join('/')}/`;
      folders.set(folder, (folders.get(folder) ?? true) && moves.has(file));
    }
  }
  return new Set([...folders].filter(([, allMoved]) => allMoved).map(([folder]) => folder));
}

function applyEdits() {
  const unapplied = [];
  for (const edit of EDITS) {
    if (!existsSync(edit.file)) continue;
    const text = readFileSync(edit.file, 'utf8');
    if (text.includes(edit.to)) continue;
    const count = text.split(edit.from).length - 1;
    if (count !== 1) {
      unapplied.push(
        `${edit.file}: ${count === 0 ? 'not found' : `found ${count} times`}: ${edit.from.split('\n')[0]}`,
      );
      continue;
    }
    if (!DRY_RUN) writeFileSync(edit.file, text.replace(edit.from, edit.to));
  }
  return unapplied;
}

function removeEmptyFolders(folder) {
  if (!existsSync(folder) || !statSync(folder).isDirectory()) return;
  for (const entry of readdirSync(folder)) removeEmptyFolders(posix.join(folder, entry));
  if (readdirSync(folder).length === 0) rmdirSync(folder);
}

function main() {
  if (!ALLOW_DIRTY && git('status', '--porcelain').trim())
    throw new Error('the work tree has uncommitted changes: commit them first (or pass --allow-dirty)');
  const rules = readRules();
  const oldFiles = new Set(trackedFiles());
  const moves = planMoves(rules, oldFiles);
  console.log(`${moves.size} files to move${DRY_RUN ? ' (dry run: nothing changes)' : ''}`);
  if (DRY_RUN) for (const [from, to] of moves) console.log(`  ${from} → ${to}`);

  if (!DRY_RUN)
    for (const [from, to] of moves) {
      mkdirSync(posix.dirname(to), { recursive: true });
      git('mv', from, to);
    }
  const oldOf = new Map([...moves].map(([from, to]) => [to, from]));
  const oldFolders = new Set(
    [...oldFiles].flatMap((file) => file.split('/').map((_, i, parts) => parts.slice(0, i).join('/'))),
  );
  const emptied = emptiedFolders(oldFiles, moves);
  const changed = new Set();
  const unapplied = applyEdits();
  for (const file of DRY_RUN ? oldFiles : trackedFiles()) {
    if (!isText(file)) continue;
    const oldFile = DRY_RUN ? file : (oldOf.get(file) ?? file);
    const newFile = DRY_RUN ? (moves.get(file) ?? file) : file;
    const before = readFileSync(file, 'utf8');
    let after = before;
    if (CODE_FILE.test(file) && CODE_ROOTS.some((root) => file.startsWith(root)))
      after = rewriteSpecifiers(after, newFile, oldFile, rules, oldFiles, oldFolders);
    after = rewriteWrittenPaths(after, moves, emptied, rules);
    if (after === before) continue;
    changed.add(file);
    if (!DRY_RUN) writeFileSync(file, after);
  }
  console.log(`${changed.size} files rewritten (module specifiers and written-out paths)`);
  if (DRY_RUN) for (const file of changed) console.log(`  ${file}`);

  if (!DRY_RUN && existsSync('docs/ARCHITECTURE.target.md')) {
    git('mv', '-f', 'docs/ARCHITECTURE.target.md', 'docs/ARCHITECTURE.md');
    console.log('docs/ARCHITECTURE.md: replaced by docs/ARCHITECTURE.target.md');
  }
  if (!DRY_RUN) {
    removeEmptyFolders('src');
    // Everything moved or rewritten, and what is left in src/config/ (see the .prettierignore edit).
    const formattable = [
      ...new Set([
        ...changed,
        ...moves.values(),
        ...trackedFiles().filter((f) => f.startsWith('src/config/')),
        'eslint.config.js',
      ]),
    ].filter((file) => existsSync(file) && /\.(ts|mts|js|mjs)$/.test(file));
    if (formattable.length)
      execFileSync('npx', ['prettier', '--log-level', 'warn', '--write', ...formattable], { stdio: 'inherit' });
  }
  if (unapplied.length) {
    console.log(`\nEdits to make by hand (see EDITS in scripts/layout/apply-moves.mjs):\n  ${unapplied.join('\n  ')}`);
    process.exitCode = 2;
  }
  console.log('\nThen: npm run typecheck && npm run lint && npm run build, and the tests.');
}

main();
