// The resolve hook of test/support/module-log.mjs (runs on the loader's thread).
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.MODULE_LOG, `${r.url}\n`);
  return r;
}
