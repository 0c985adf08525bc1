// The initial-download budget of the console's app: the entry chunk and everything it imports statically (not the
// pages loaded on demand) must stay under 250 KB of gzipped JavaScript. Used by the Vite build (prints the sizes)
// and by test/unit/console-ui-bundle.test.ts (reads dist's manifest). Node only.
import { gzipSync } from 'node:zlib';

export const INITIAL_JS_BUDGET_GZIP_BYTES = 250 * 1024;

export interface ManifestChunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

/** Manifest keys of the entry and its static imports, transitively (dynamic imports excluded). */
export function initialChunkKeys(manifest: Record<string, ManifestChunk>): string[] {
  const entries = Object.entries(manifest)
    .filter(([, c]) => c.isEntry)
    .map(([k]) => k);
  if (entries.length !== 1) throw new Error(`expected one entry chunk, found ${entries.length}`);
  const seen = new Set<string>();
  const visit = (key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    for (const dep of manifest[key]?.imports ?? []) visit(dep);
  };
  visit(entries[0]!);
  return [...seen];
}

export function gzipBytes(content: string | Uint8Array): number {
  return gzipSync(content, { level: 9 }).length;
}

export function formatKb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}
