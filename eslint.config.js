// ESLint flat config: typescript-eslint's recommended rules plus the few conventions we hold to
// (no default exports, no `any` slipping in, unused values are errors).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'plugins/', '.scratch*/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  { files: ['eslint.config.js', 'vitest.config.ts'], rules: { 'no-restricted-syntax': 'off' } },
  // Type-aware rules, for TypeScript files only: a promise nobody awaits loses its rejection (an unhandled
  // rejection ends the process) and its ordering; a promise handed where a void callback is expected (an
  // Express handler, an event listener) does the same behind the caller's back. The project service reads
  // tsconfig.json once and shares one program across files, which keeps lint time near the untyped run.
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  ...sizeAndErrorRules(),
  // One door per boundary (docs/ARCHITECTURE.md): each scope below gets every import rule that applies to it,
  // since a later config object's rule options replace an earlier one's for the files both match.
  ...importBoundaries(),
  // The emulators (packages/emulators) take what they need from the app through one file,
  // packages/emulators/src/relais.ts; the app loads them only with import() (importBoundaries below).
  {
    files: ['packages/emulators/src/**/*.ts'],
    ignores: ['packages/emulators/src/relais.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+src/',
              message: 'The emulators take what they need from the app through packages/emulators/src/relais.ts.',
            },
          ],
        },
      ],
    },
  },
);

/**
 * The doors, as import patterns with the way to go instead:
 *  - a shop platform's folder (src/adapters/shopify, src/adapters/woocommerce) is private to src/shops/platforms:
 *    everything else goes through src/shops/platforms/index.ts;
 *  - the use-cases see the delivery service through its port (src/domain/delivery.ts), never the dispatch
 *    client, its wire format or its errors; they build an adapter only through src/adapters/dispatch-api/index.ts;
 *  - a ledger storage backend (src/adapters/postgres/) is chosen by src/main and used by src/ledger only:
 *    everyone else goes through the ledger's port.
 * Scoped to src/: tests and benchmarks drive adapters directly on purpose.
 */
function importBoundaries() {
  const platformFolders = {
    group: ['**/adapters/shopify/**', '**/adapters/woocommerce/**'],
    message:
      "A shop platform's folder (src/adapters/shopify, src/adapters/woocommerce) is private to src/shops/platforms. Import from src/shops/platforms/index.ts (platformOf(shop), STORE_PLATFORMS and the functions it exports), or add what you need to StorePlatform in src/shops/platforms/platform.ts.",
  };
  const dispatchInternals = {
    group: ['**/adapters/dispatch-api/*', '!**/adapters/dispatch-api/index.js'],
    message:
      'Use-cases talk to the delivery service through its port: take deliveryFor(shop) in your deps and import types and DeliveryError from src/domain/delivery.ts. Build an adapter only through src/adapters/dispatch-api/index.ts.',
  };
  const ledgerBackends = {
    group: ['**/adapters/postgres/**'],
    message:
      "A ledger storage backend is used by src/ledger and chosen by src/main only. Go through the ledger's ports (src/ledger/order-ledger.ts, src/ledger/alias-store.ts), which the runtime hands you.",
  };
  const emulators = {
    regex: '^@relais/emulators(/|$)|/packages/emulators/',
    allowTypeImports: true,
    message:
      'The app loads the emulators only with import() (src/main/emulators.ts), so a web or worker process never loads emulator code; types may be imported.',
  };
  const useCases = ['src/orders/**', 'src/checkout/**'];
  const tests = ['**/*.test.ts', '**/*.test-support.ts'];
  const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
  return [
    {
      files: ['src/**/*.ts'],
      ignores: ['src/adapters/**', 'src/shops/platforms/**', 'src/ledger/**', 'src/main/**', ...tests],
      rules: restrict(platformFolders, ledgerBackends, emulators),
    },
    { files: useCases, ignores: tests, rules: restrict(platformFolders, dispatchInternals, ledgerBackends, emulators) },
    {
      files: ['src/adapters/shopify/**/*.ts', 'src/adapters/woocommerce/**/*.ts', 'src/shops/platforms/**/*.ts'],
      ignores: tests,
      rules: restrict(ledgerBackends, emulators),
    },
    {
      files: ['src/adapters/dispatch-api/**/*.ts'],
      ignores: tests,
      rules: restrict(platformFolders, ledgerBackends, emulators),
    },
    {
      files: ['src/ledger/**/*.ts', 'src/adapters/postgres/**/*.ts', 'src/main/**/*.ts'],
      ignores: tests,
      rules: restrict(platformFolders, emulators),
    },
  ];
}

/**
 * Files a newcomer can read, and one error base. In src/ (not tests, not the emulators, not bench): at most 400
 * lines a file and 80 a function, and every error class derives from RelaisError (src/domain/errors.ts), so a
 * job can tell whether trying again helps.
 */
function sizeAndErrorRules() {
  const tests = ['**/*.test.ts', '**/*.test-support.ts'];
  const namedExports = { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' };
  const relaisErrors = {
    selector: "ClassDeclaration[superClass.type='Identifier'][superClass.name=/^(Error|TypeError|RangeError)$/]",
    message: 'Derive errors from RelaisError (src/domain/errors.ts) and say whether trying again can help (failure).',
  };
  return [
    {
      files: ['src/**/*.ts'],
      ignores: tests,
      rules: {
        'max-lines': ['error', { max: 400 }],
        'max-lines-per-function': ['error', { max: 80 }],
      },
    },
    {
      files: ['src/**/*.ts'],
      ignores: tests,
      rules: { 'no-restricted-syntax': ['error', namedExports, relaisErrors] },
    },
  ];
}
