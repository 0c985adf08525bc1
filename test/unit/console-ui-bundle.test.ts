// The console app's initial download: builds the app (Vite, into a temporary directory) and fails if the entry chunk
// and its static imports exceed 250 KB of gzipped JavaScript. Also checks the CSP-relevant shape of the output:
// relative asset URLs, no inline script or style in index.html.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipBytes, INITIAL_JS_BUDGET_GZIP_BYTES, initialChunkKeys, type ManifestChunk } from '../../src/console/ui/bundle-budget.js';

let out: string;
let manifest: Record<string, ManifestChunk>;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'console-ui-'));
  execFileSync(
    'node_modules/.bin/vite',
    ['build', '--config', 'src/console/ui/vite.config.ts', '--outDir', out, '--emptyOutDir', '--manifest'],
    {
      stdio: 'pipe',
      timeout: 120_000,
    },
  );
  manifest = JSON.parse(readFileSync(join(out, '.vite', 'manifest.json'), 'utf8')) as Record<string, ManifestChunk>;
}, 180_000);

afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

describe('console UI bundle', () => {
  it('keeps the initial JavaScript (entry + static imports) under 250 KB gzipped', () => {
    const keys = initialChunkKeys(manifest);
    const files = keys.map((k) => manifest[k]!.file).filter((f) => f.endsWith('.js'));
    expect(files.length).toBeGreaterThan(0);
    const total = files.reduce((sum, f) => sum + gzipBytes(readFileSync(join(out, f))), 0);
    expect(total).toBeGreaterThan(1000);
    expect(total).toBeLessThanOrEqual(INITIAL_JS_BUDGET_GZIP_BYTES);
  });

  it('splits pages into chunks loaded on demand (not in the initial download)', () => {
    const initial = new Set(initialChunkKeys(manifest).map((k) => manifest[k]!.file));
    const all = readdirSync(join(out, 'assets')).filter((f) => f.endsWith('.js'));
    const payments = all.find((f) => f.startsWith('payments-'));
    expect(payments).toBeDefined();
    expect(initial.has(`assets/${payments}`)).toBe(false);
  });

  it('writes an index.html with relative asset URLs and no inline script or style', () => {
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    expect(html).toMatch(/<script type="module" crossorigin src="\.\/assets\/index-[\w-]+\.js"><\/script>/);
    expect(html).toMatch(/<link rel="stylesheet" crossorigin href="\.\/assets\/index-[\w-]+\.css">/);
    // Every <script> has a src (no inline code); no <style> element, no style attribute.
    for (const tag of html.match(/<script\b[^>]*>[\s\S]*?<\/script>/g) ?? [])
      expect(tag).toMatch(/^<script[^>]*\ssrc="[^"]+"[^>]*><\/script>$/);
    expect(html).not.toMatch(/<style\b/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/https?:\/\//);
  });
});
