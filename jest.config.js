/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Transpile only: `npm test` type-checks everything with tsc (npm run build) before jest runs.
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  // Unpacks the test browser once and checks PostgreSQL answers, before any worker starts.
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  testTimeout: 60000,
  // Integration suites start real listeners and child processes; two workers fit a 2-core machine.
  maxWorkers: 2,
};
