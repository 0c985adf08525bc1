import { validateManifests } from './k8s/validate.js';

// Validates deploy/kubernetes/ offline (docs/deploy.md, "Validation"): each document against the Kubernetes schema of
// its apiVersion/kind (kubernetes-models, generated from the Kubernetes OpenAPI definitions), unknown fields, the
// references between manifests and the kustomizations. Exits 1 listing every issue.
//   npm run k8s:validate [-- <folder>]

const root = process.argv[2] ?? 'deploy/kubernetes';
const { docs, issues } = validateManifests(root);
if (issues.length > 0) {
  process.stderr.write(`k8s:validate FAILED: ${issues.length} issue(s) in ${root}\n`);
  for (const i of issues) process.stderr.write(`  ${i.where}: ${i.message}\n`);
  process.exit(1);
}
const kinds = new Map<string, number>();
for (const d of docs) kinds.set(String(d.body.kind), (kinds.get(String(d.body.kind)) ?? 0) + 1);
process.stdout.write(`k8s:validate: ${docs.length} documents in ${root} valid (${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')})\n`);
