// ESLint (flat config): typescript-eslint's type-checked rules over every TypeScript file,
// ESLint's recommended rules over all files. `make lint` runs it, `make fix` applies --fix.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: ['dist/', 'coverage/', '.tmp/', '.tools/', '.image/', '**/node_modules/', 'examples/*/dist/', 'deploy/compose/pki/'],
  },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // One program over src, test, bench, scripts and examples; tsconfig.eslint.json maps
        // `fabric-ops` to src/ so the examples type-check without installing the package.
        project: './tsconfig.eslint.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A switch over a union names every member or has a default.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Passing on what a catch caught is fine, as `throw error` is (only-throw-error allows it too).
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // `async` without `await` is deliberate here: it turns a throw into a rejection where an
      // interface expects a promise (HealthChecker.check and the like).
      '@typescript-eslint/require-await': 'off',
      // `_name`: a binding that must be there (a positional parameter, a rest destructuring) but is not read.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // @types/jest types the asymmetric matchers (expect.any, expect.stringMatching, ...) as
      // `any`, so every `toEqual({ time: expect.any(String) })` would be reported. The other
      // no-unsafe-* rules still catch an `any` that is used.
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
  {
    // The JavaScript files are Node scripts.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
