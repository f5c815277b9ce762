/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    // stream-json 3 ships ES modules only; Node 20 require()s them, but Jest's loader cannot, so compile them to CommonJS.
    '^.+/node_modules/(stream-json|stream-chain)/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(stream-json|stream-chain)/)'],
  testTimeout: 30000,
  // Integration suites start real listeners and child processes; two workers fit a 2-core machine.
  maxWorkers: 2,
};
