import { configDefaults, defineConfig } from 'vitest/config';
import { ISOLATED_FILES } from './vitest.isolated.js';
import { SLOW_SCENARIOS } from './vitest.slow.js';

// The e2e files `npm run test:compiled` runs against the compiled build (package.json): in CI they run there only.
const COMPILED_IN_CI = [
  'test/e2e/readme-snippets.test.ts',
  'test/e2e/service-payment.test.ts',
  'test/e2e/payment-outcomes.test.ts',
  'test/e2e/refunds-subscription-flow.test.ts',
];

// Tests run against the real PostgreSQL and Redis of the machine (docs/testing.md).
// Each test file gets its own database cloned from a migrated template (test/support/global-setup.ts).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The slow scenarios run with `npm run test:slow` (vitest.slow.ts), a small subset of them in CI.
    // Files that read the process-wide metrics registry run in a second, isolated pass (vitest.isolated.ts).
    // CI (.ci/run) sets TEST_README_ON_COMPILED=1: the README snippets and the other e2e files of
    // `npm run test:compiled` then run once, on the compiled build, instead of twice.
    exclude: [
      ...configDefaults.exclude,
      ...SLOW_SCENARIOS,
      ...ISOLATED_FILES,
      ...(process.env.TEST_README_ON_COMPILED === '1' ? COMPILED_IN_CI : []),
    ],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One module cache per worker, shared by the files it runs: no file pays the service's import again. Files
    // never mutate modules or the environment; those that read process-wide metrics are isolated (above).
    isolate: false,
    maxWorkers: 2,
    reporters: ['default'],
  },
});
