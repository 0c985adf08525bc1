#!/usr/bin/env bash
# Regenerates docs/console/*.png, the console's screenshots in docs/console.md: the browser journey
# (test/e2e/console-journey.test.ts, in the slow tier) with CONSOLE_SCREENSHOTS set takes one of each page as it goes.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run -s build:console
CONSOLE_SCREENSHOTS=1 npx vitest run --config vitest.slow.config.ts test/e2e/console-journey.test.ts
ls -1 docs/console/*.png
