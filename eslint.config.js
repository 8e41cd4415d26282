// ESLint flat config: typescript-eslint's recommended rules plus the few conventions we hold to
// (no default exports, no `any` slipping in, unused values are errors).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'plugins/', '.scratch*/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', fetch: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  { files: ['eslint.config.js', 'vitest.config.ts'], rules: { 'no-restricted-syntax': 'off' } },
  // The app and its emulators (packages/emulators), one way round: the app loads them only with import()
  // (src/main/emulators.ts, types may be imported), so a web or worker process never loads emulator code;
  // the emulators take what they need from the app through one file, packages/emulators/src/relais.ts.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts', 'src/**/*.test-support.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{
        regex: '^@relais/emulators(/|$)|/packages/emulators/', allowTypeImports: true,
        message: 'The app loads the emulators only with import(): use src/main/emulators.ts.',
      }] }],
    },
  },
  {
    files: ['packages/emulators/src/**/*.ts'],
    ignores: ['packages/emulators/src/relais.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{
        regex: '^(\\.\\./)+src/',
        message: 'The emulators take what they need from the app through packages/emulators/src/relais.ts.',
      }] }],
    },
  },
);
