import { existsSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { type Issue, type ManifestDoc, where, yamlFiles } from './documents.js';

// kustomization.yaml files are kustomize's own configuration, not Kubernetes objects: checked here for the fields
// these manifests use, that every listed resource exists, that no manifest beside it is left out, and that every
// kustomization pins the same image (the migration Job must run the release the Deployments run).

const KUSTOMIZE_API = 'kustomize.config.k8s.io/v1beta1';
const FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'labels', 'resources', 'images']);

export const isKustomization = (d: ManifestDoc): boolean => posix.basename(d.file) === 'kustomization.yaml';

export function kustomizationIssues(docs: ManifestDoc[], root: string): Issue[] {
  const issues: Issue[] = [];
  const images = new Map<string, string>();
  const files = yamlFiles(root);
  for (const d of docs.filter(isKustomization)) {
    const at = where(d);
    if (d.body.apiVersion !== KUSTOMIZE_API || d.body.kind !== 'Kustomization') {
      issues.push({ where: at, message: `must be apiVersion ${KUSTOMIZE_API}, kind Kustomization` });
    }
    for (const key of Object.keys(d.body)) if (!FIELDS.has(key)) issues.push({ where: at, message: `unexpected field ${key}` });
    const dir = dirname(d.file);
    const resources = Array.isArray(d.body.resources) ? d.body.resources.map(String) : [];
    if (resources.length === 0) issues.push({ where: at, message: 'resources is empty' });
    for (const r of resources) {
      if (r.includes('..') || !existsSync(join(root, dir, r)))
        issues.push({ where: at, message: `resource ${r} is not a file in ${dir}/` });
    }
    const beside = files.filter((f) => dirname(f) === dir && posix.basename(f) !== 'kustomization.yaml').map((f) => posix.basename(f));
    for (const f of beside) if (!resources.includes(f)) issues.push({ where: at, message: `${dir}/${f} is not listed in resources` });
    for (const image of Array.isArray(d.body.images) ? d.body.images : []) {
      const { name, newName, newTag } = image as Record<string, unknown>;
      images.set(`${dir}: ${String(name)}`, `${String(newName)}:${String(newTag)}`);
    }
  }
  if (new Set(images.values()).size > 1) {
    issues.push({
      where: 'kustomization.yaml',
      message: `the image differs between kustomizations: ${JSON.stringify(Object.fromEntries(images))}`,
    });
  }
  for (const d of docs.filter((x) => !isKustomization(x))) {
    if (dirname(d.file) === '.')
      issues.push({ where: where(d), message: 'manifests live in a kustomization folder (config/, migrate/, app/)' });
  }
  return issues;
}
