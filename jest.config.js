const esmOnly = [
  '@kubernetes/client-node',
  'openid-client',
  'oauth4webapi',
  'jose',
  'jsonpath-plus',
  'rfc4648',
];

/**
 * One Jest run for the whole suite. The Temporal dev server is started once for all test files
 * (global-setup.ts) and its address handed to them through the environment; the sandbox
 * cluster is started by test/run.sh around this run.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // Each file transpiled alone (isolatedModules in tsconfig.json): the global setup's tsc
    // type-checks the whole project once, where a type-checking ts-jest in every Jest worker
    // repeated it for each test file.
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // @kubernetes/client-node 1.x and a few of its dependencies ship ES modules only, which Jest on
    // Node 20 cannot require; Babel turns just those into CommonJS (cached after the first run).
    '^.+\\.m?js$': [
      'babel-jest',
      { babelrc: false, configFile: false, plugins: ['@babel/plugin-transform-modules-commonjs'] },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  // Two files at a time on this 2-core machine: most e2e files and drills spend much of their
  // time waiting (timers, timeouts, killed processes), so a second lane uses the idle core (the
  // fresh-clone suite went from 32 to 22 min); the sequencer pairs a busy file with a waiting one.
  maxWorkers: 2,
  testSequencer: '<rootDir>/test/helpers/sequencer.js',
  testTimeout: 180_000,
};
