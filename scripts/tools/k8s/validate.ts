import { type Issue, type ManifestDoc, readManifests } from './documents.js';
import { unknownFieldIssues } from './fields.js';
import { isKustomization, kustomizationIssues } from './kustomize.js';
import { referenceIssues } from './refs.js';
import { schemaIssues } from './schema.js';

// Every check of the Kubernetes manifests (docs/deploy.md, "Validation"): YAML, the Kubernetes schema of each kind,
// unknown fields, references between the manifests, and the kustomizations.

export interface Report {
  docs: ManifestDoc[];
  issues: Issue[];
}

/** Checks already-parsed documents (the test feeds broken ones); `root` is the manifests' folder. */
export function checkDocuments(docs: ManifestDoc[], root: string, nodeModulesRoot = process.cwd()): Issue[] {
  const objects = docs.filter((d) => !isKustomization(d));
  return [
    ...objects.flatMap(schemaIssues),
    ...unknownFieldIssues(objects, nodeModulesRoot),
    ...referenceIssues(objects),
    ...kustomizationIssues(docs, root),
  ];
}

export function validateManifests(root: string): Report {
  const { docs, issues } = readManifests(root);
  return { docs, issues: [...issues, ...checkDocuments(docs, root)] };
}
