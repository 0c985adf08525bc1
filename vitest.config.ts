import { configDefaults, defineConfig } from 'vitest/config';
import { SLOW_SCENARIOS } from './vitest.slow.js';

// Tests run against the real PostgreSQL and Redis of the machine (docs/testing.md).
// Each test file gets its own database cloned from a migrated template (test/support/global-setup.ts).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The slow scenarios run with `npm run test:slow` (vitest.slow.ts), a small subset of them in CI.
    exclude: [...configDefaults.exclude, ...SLOW_SCENARIOS],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
