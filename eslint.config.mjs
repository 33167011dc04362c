// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'coverage/',
      'node_modules/',
      'eslint.config.mjs',
      'jest.config.js',
      // Generated from the service (npm run client:generate), checked by a drift test instead.
      'clients/typescript/src/generated/',
      'clients/typescript/dist/',
      // Built by npm pack (packages/nest/build.mjs) and by the example app's own build.
      'packages/nest/dist/',
      'examples/nest-app/dist/',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The dashboard's page script runs in the browser, as a classic script.
  {
    files: ['src/dashboard/public/**/*.js'],
    languageOptions: { globals: { ...globals.browser }, sourceType: 'script' },
  },
);
