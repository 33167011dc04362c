/**
 * Five projects, all run by `npm test`: unit (pure logic), integration (real Redis), e2e (HTTP), client
 * (the TypeScript client package against the service), and
 * browser (the dashboard in Chromium), which `npm test` runs on its own after the others: its 1 s
 * targets are measured, not shared with a CPU busy with other test files.
 */
// SWC compiles each file alone, as tsconfig.json's isolatedModules promises is enough; `npm test` type-checks
// with tsc first. On CI's cold Jest cache, compiling with TypeScript itself took about 6 CPU seconds per
// worker and project. Nest's dependency injection reads the constructor types that decoratorMetadata emits.
const swc = (parser) => [
  '@swc/jest',
  {
    jsc: {
      parser,
      target: 'es2022',
      keepClassNames: true,
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
    },
    module: { type: 'commonjs' },
  },
];
// ESM-only packages: content-disposition 3 (under @fastify/static, which serves /docs) and
// temporal-polyfill with its helpers (calendar windows). Node loads them (require of ESM); Jest's module
// loader does not, so Jest compiles these packages to CommonJS.
const esmOnly = ['content-disposition', 'temporal-polyfill', 'temporal-utils', 'temporal-spec'];
const toCommonJs = (packages) => ({
  transform: {
    '^.+\\.ts$': swc({ syntax: 'typescript', decorators: true }),
    [`node_modules/(${packages.join('|')})/.+\\.js$`]: swc({ syntax: 'ecmascript' }),
  },
  // Also under another package's own node_modules (openapi-typescript nests some of them).
  transformIgnorePatterns: [`/node_modules/(?!([^/]+/node_modules/)?(${packages.join('|')})/)`],
});
const base = {
  ...toCommonJs(esmOnly),
  moduleFileExtensions: ['ts', 'js', 'json'],
  // The example app imports the library by its package name; here it is the source (tsconfig.json paths).
  moduleNameMapper: { '^@trendboard/nest$': '<rootDir>/src/library/index.ts' },
  // Quiet while green: a test's output is printed only when it fails (test/support/quiet-environment.ts).
  testEnvironment: '<rootDir>/test/support/quiet-environment.ts',
  // fast-check runs from a fixed seed unless FC_SEED says otherwise (test/support/property-seed.ts).
  setupFiles: ['<rootDir>/test/support/property-seed.ts'],
};
// One redis-server and one Redis Cluster per worker for the projects on real Redis (harness/worker-servers.ts).
const workerServers = {
  globalSetup: '<rootDir>/test/support/worker-servers-setup.ts',
  globalTeardown: '<rootDir>/test/support/worker-servers-teardown.ts',
};
// openapi-typescript (the client's drift test regenerates its types) requires these ESM-only packages.
const clientEsmOnly = [...esmOnly, 'parse-json', 'index-to-position', 'supports-color', 'change-case'];

module.exports = {
  maxWorkers: 2,
  globalSetup: '<rootDir>/test/support/node-version.js',
  // The longest files first on a cold Jest cache too (CI), from measured seconds (test/support/cost-sequencer.mjs).
  testSequencer: '<rootDir>/test/support/cost-sequencer.mjs',
  // Starting a private Redis Cluster takes a second or two, more on a busy 2-core machine.
  testTimeout: 60000,
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...base,
      ...workerServers,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.int-spec.ts'],
    },
    { ...base, ...workerServers, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'] },
    { ...base, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'] },
    {
      ...base,
      ...toCommonJs(clientEsmOnly),
      ...workerServers,
      displayName: 'client',
      testMatch: ['<rootDir>/clients/typescript/test/**/*.spec.ts'],
      // The client's sources import './x.js' (ESM as browsers and Node load it); here they are compiled TS.
      moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    },
  ],
};
