import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';
import { ISOLATED_FILES } from './vitest.isolated.js';

// The second pass of `npm test`: the files that read the process-wide metrics registry, each in a fresh process.
export default defineConfig({ test: { ...base.test, include: ISOLATED_FILES, exclude: configDefaults.exclude, isolate: true } });
