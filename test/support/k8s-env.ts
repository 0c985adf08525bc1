import type { ManifestDoc } from '../../scripts/tools/k8s/documents.js';

// What a container of the Kubernetes manifests sees: its environment, resolved from the manifests' own ConfigMaps and
// Secrets the way the kubelet does (envFrom in order, a later source winning, then `env` over all of them), and the
// files its ConfigMap and Secret volumes put where. Used by test/unit/k8s-manifests.test.ts.

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);

export interface ContainerView {
  /** `Deployment/stablepay-api`, `Job/stablepay-migrate`. */
  workload: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  pod: Obj;
  container: Obj;
  env: Record<string, string>;
  /** Every variable name a source gave, with the source (`ConfigMap/x`, `Secret/y`, `env`). */
  sources: Array<{ name: string; from: string }>;
  /** Mounted ConfigMap and Secret files: absolute path in the container → content (a Secret's placeholder). */
  files: Record<string, string>;
}

export function byKindAndName(docs: ManifestDoc[], kind: string, name: string): Obj | undefined {
  return docs.find((d) => d.body.kind === kind && obj(d.body.metadata).name === name)?.body;
}

/** A ConfigMap's data or a Secret's stringData (base64 data decoded). */
export function keysOf(doc: Obj): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj(doc.data)))
    out[k] = doc.kind === 'Secret' ? Buffer.from(String(v), 'base64').toString('utf8') : String(v);
  for (const [k, v] of Object.entries(obj(doc.stringData))) out[k] = String(v);
  return out;
}

export function containerViews(docs: ManifestDoc[]): ContainerView[] {
  const views: ContainerView[] = [];
  for (const d of docs) {
    if (d.body.kind !== 'Deployment' && d.body.kind !== 'Job') continue;
    const template = obj(obj(d.body.spec).template);
    const pod = obj(template.spec);
    const meta = obj(template.metadata);
    for (const container of list(pod.containers)) {
      const env: Record<string, string> = {};
      const sources: ContainerView['sources'] = [];
      for (const from of list(container.envFrom)) {
        const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
        const ref = obj(from.configMapRef ?? from.secretRef);
        const source = byKindAndName(docs, kind, String(ref.name));
        if (!source) throw new Error(`${String(d.body.kind)}: ${kind} ${String(ref.name)} is not in the manifests`);
        for (const [k, v] of Object.entries(keysOf(source))) {
          env[k] = v;
          sources.push({ name: k, from: `${kind}/${String(ref.name)}` });
        }
      }
      for (const e of list(container.env)) {
        const source = obj(e.valueFrom);
        const keyRef = obj(source.configMapKeyRef ?? source.secretKeyRef);
        const kind = source.configMapKeyRef ? 'ConfigMap' : 'Secret';
        const value =
          e.value !== undefined ? String(e.value) : keysOf(byKindAndName(docs, kind, String(keyRef.name)) ?? {})[String(keyRef.key)];
        if (value === undefined) continue;
        env[String(e.name)] = value;
        sources.push({ name: String(e.name), from: 'env' });
      }
      const files: Record<string, string> = {};
      const volumes = new Map(list(pod.volumes).map((v) => [String(v.name), v]));
      for (const m of list(container.volumeMounts)) {
        const volume = volumes.get(String(m.name));
        const cm = obj(volume?.configMap);
        const secret = obj(volume?.secret);
        const source = cm.name
          ? byKindAndName(docs, 'ConfigMap', String(cm.name))
          : secret.secretName
            ? byKindAndName(docs, 'Secret', String(secret.secretName))
            : undefined;
        if (!source) continue;
        for (const [k, v] of Object.entries(keysOf(source))) files[`${String(m.mountPath)}/${k}`] = v;
      }
      views.push({
        workload: `${String(d.body.kind)}/${String(obj(d.body.metadata).name)}`,
        labels: obj(meta.labels) as Record<string, string>,
        annotations: obj(meta.annotations) as Record<string, string>,
        pod,
        container,
        env,
        sources,
        files,
      });
    }
  }
  return views;
}
