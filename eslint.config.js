import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/sandbox/**', '**/sandbox'], message: 'src and commands must not import the simulator (sandbox/).' }] }],
    },
  },
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
