import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';
import { SLOW_SCENARIOS } from './vitest.slow.js';

// `npm run test:slow`: the slow scenarios only (vitest.slow.ts), with the suite's set-up and limits.
export default defineConfig({ test: { ...base.test, include: SLOW_SCENARIOS, exclude: configDefaults.exclude, isolate: true } });
