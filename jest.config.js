/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Transpile only: `npm test` type-checks everything with tsc (npm run build) before jest runs.
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 60000,
  // Integration suites start real listeners and child processes; two workers fit a 2-core machine.
  maxWorkers: 2,
};
