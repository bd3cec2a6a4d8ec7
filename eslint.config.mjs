// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.tools/', '.sandbox/', '.data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code is replayed deterministically inside Temporal's sandbox: no I/O of any kind.
    files: ['workflows/**/*.ts'],
    rules: {
      // A workflow reads as the plan it executes: long functions are split into named steps.
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: false, skipComments: false }],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...builtinModules.flatMap((m) => [m, `node:${m}`]),
            '@kubernetes/client-node',
            '@temporalio/activity',
            '@temporalio/client',
            '@temporalio/worker',
            {
              name: '@temporalio/workflow',
              importNames: ['patched', 'deprecatePatch'],
              message:
                'every workflow type is pinned: a change that fails replay is a new build (README "Worker upgrades")',
            },
          ],
          patterns: [
            {
              regex: '(^|/)activities(/|$)',
              allowTypeImports: true,
              message: 'workflows import activity types only',
            },
          ],
        },
      ],
    },
  },
  {
    // Helper "core" splits previewOf as plan/ moves to core/; this block goes with plan/.
    files: ['workflows/plan/preview.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        module: 'writable',
        require: 'readonly',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
