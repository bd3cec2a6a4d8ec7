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
            {
              regex: '^(\\.\\./)+(kube|runs|worker|bridge|cli)(/|$)',
              message: 'workflows/ sit below kube/, runs/, worker/, bridge/ and cli/ (README "Architecture")',
            },
          ],
        },
      ],
    },
  },
  {
    // The pure core (README "Architecture"): decisions and contracts, no I/O, no Temporal.
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...builtinModules.flatMap((m) => [m, `node:${m}`])],
          patterns: [
            {
              regex: '^(?!\\.|zod(/|$)|@noble/)',
              message:
                'core/ imports only api/, core/, zod and @noble/* (no Temporal, no Kubernetes client, no Node)',
            },
            {
              regex: '^(\\.\\./)+(workflows|activities|kube|runs|worker|bridge|cli)(/|$)',
              message: 'core/ imports only api/ and core/ (README "Architecture")',
            },
          ],
        },
      ],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // Above workflows/, only the message definitions (signals, queries, updates, search attributes).
    files: ['activities/**/*.ts', 'kube/**/*.ts', 'runs/**/*.ts', 'bridge/**/*.ts', 'cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+workflows(/(?!(messages|search-attributes)$)|$)',
              message: 'import from workflows/ only workflows/messages and workflows/search-attributes',
            },
          ],
        },
      ],
    },
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
