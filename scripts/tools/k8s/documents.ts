import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';

// Reads every YAML file under the manifests' folder into plain documents, keeping where each came from.

export interface ManifestDoc {
  /** Path relative to the folder walked, e.g. `app/api.yaml`. */
  file: string;
  /** 0-based position of the document in its file. */
  index: number;
  body: Record<string, unknown>;
}

export interface Issue {
  where: string;
  message: string;
}

export const where = (d: ManifestDoc): string => {
  const meta = d.body.metadata as { name?: string } | undefined;
  return `${d.file} #${d.index + 1} (${String(d.body.kind ?? '?')}/${meta?.name ?? '?'})`;
};

export function yamlFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir).sort()) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(e)) out.push(relative(root, p));
    }
  };
  walk(root);
  return out;
}

/** Parses one file's text; YAML errors and warnings and non-mapping documents are issues. */
export function parseManifests(text: string, file: string): { docs: ManifestDoc[]; issues: Issue[] } {
  const docs: ManifestDoc[] = [];
  const issues: Issue[] = [];
  parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true }).forEach((doc, index) => {
    if ('empty' in doc) return;
    for (const e of [...doc.errors, ...doc.warnings]) issues.push({ where: `${file} #${index + 1}`, message: e.message });
    if (doc.errors.length > 0) return;
    const body: unknown = doc.toJS({ maxAliasCount: 0 });
    if (body === null || body === undefined) return;
    if (typeof body !== 'object' || Array.isArray(body)) {
      issues.push({ where: `${file} #${index + 1}`, message: 'a manifest must be a mapping' });
      return;
    }
    docs.push({ file, index, body: body as Record<string, unknown> });
  });
  return { docs, issues };
}

export function readManifests(root: string): { docs: ManifestDoc[]; issues: Issue[] } {
  const docs: ManifestDoc[] = [];
  const issues: Issue[] = [];
  for (const file of yamlFiles(root)) {
    const r = parseManifests(readFileSync(join(root, file), 'utf8'), file);
    docs.push(...r.docs);
    issues.push(...r.issues);
  }
  return { docs, issues };
}
