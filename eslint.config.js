import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NO_SANDBOX = { group: ['**/sandbox/**', '**/sandbox'], message: 'src and commands must not import the simulator (sandbox/).' };

/** Specifiers are relative: `../store/` from a releases/ sub-folder is releases/store/, `../../store/` is src/store/. */
const IMPORTS_DOWNWARD = [
  { files: ['src/facts/*.ts'], forbidden: '(releases|routing)/', why: 'facts/ carries facts in; routing and the reducer are above it (the composition root hands the queue its partitioner).' },
  { files: ['src/facts/watch/**'], forbidden: 'releases/', why: 'the watch feeds the facts queue; it may ask routing, never the reducer or its stores.' },
  { files: ['src/routing/**'], forbidden: 'releases/(reduce|store|worker)/|read-api', why: 'routing sits on the record model alone.' },
  { files: ['src/releases/record/**'], forbidden: '^\\.\\./(reduce|store|worker)/|routing/|read-api', why: 'the record model imports no reducer, store, worker or routing file.' },
  { files: ['src/releases/reduce/**'], forbidden: '^\\.\\./(store|worker)/|read-api', why: 'the pure reducer imports the record model and routing only.' },
  { files: ['src/releases/store/**'], forbidden: '^\\.\\./worker/|read-api', why: 'the stores sit below the worker.' },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // The product never depends on its simulator: dist/ and the image hold no sandbox code.
    files: ['src/**', 'commands/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_SANDBOX] }] },
  },
  // Facts flow one way (docs/architecture.md): each layer imports only those below it.
  ...IMPORTS_DOWNWARD.map(({ files, forbidden, why }) => ({
    files,
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_SANDBOX, { regex: forbidden, message: why }] }] },
  })),
  {
    files: ['bench/**', 'test/**', 'sandbox/**', 'scripts/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // Plain Node scripts run before anything is built (scripts/run-parallel.mjs runs the checks).
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // Tests read JSON fixtures and responses whose shape is what they assert.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
