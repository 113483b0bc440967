// ESLint (flat config): ESLint's and typescript-eslint's recommended rules over the TypeScript
// sources. Syntax-only on purpose (not the type-checked configs), so `npm run lint` stays fast.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    // generated, vendored or written at run time
    ignores: [
      'config/schema-validator.js',
      'bench/out/',
      'dist/',
      'test/mutation/incremental/',
      '**/.eoswatch/',
      '.stryker-tmp/',
      'reports/',
    ],
  },
  {
    files: ['src/**/*.ts', 'harness/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_`-named parameters and the keys a rest pattern leaves out (`{ logger: _l, ...rest }`) are unused on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // A `let` that a callback reads before its one assignment (a SIGINT handler, a service's failed()) stays `let`: as a `const`, that read would throw (temporal dead zone) instead of seeing undefined.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // The product never imports the harness (harness/: local clusters, chaos, demos), the tests or
    // the benchmarks: they sit on top of it. (tsconfig.build.json compiles src/ alone, so such an
    // import would also fail the build.)
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(\\.\\./)+(harness|test|bench|scripts)/', message: 'src/ is the product: the harness, tests and benchmarks import it, never the reverse.' }] }],
    },
  },
);
