import { type Issue, type ManifestDoc, where } from './documents.js';

// References between the manifests that neither schema sees: a selector that matches no pod, an autoscaler aimed at
// a missing Deployment, a ConfigMap or Secret that no manifest defines, a probe on a port the container does not name.

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const name = (d: ManifestDoc): string => String(obj(d.body.metadata).name ?? '');

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job']);

function podSpecOf(d: ManifestDoc): { labels: Obj; spec: Obj } | null {
  if (!WORKLOADS.has(String(d.body.kind))) return null;
  const template = obj(obj(d.body.spec).template);
  return { labels: obj(obj(template.metadata).labels), spec: obj(template.spec) };
}

const matches = (selector: Obj, labels: Obj): boolean =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

export function referenceIssues(docs: ManifestDoc[]): Issue[] {
  const issues: Issue[] = [];
  const defined = (kind: string, n: string) => docs.some((d) => d.body.kind === kind && name(d) === n);
  const pods = docs.map(podSpecOf).filter((p): p is NonNullable<typeof p> => p !== null);
  const needs = (d: ManifestDoc, kind: 'ConfigMap' | 'Secret', ref: Obj, what: string) => {
    const n = String(ref.name ?? '');
    if (ref.optional !== true && !defined(kind, n)) issues.push({ where: where(d), message: `${what}: ${kind} "${n}" is not defined` });
  };

  for (const d of docs) {
    const kind = String(d.body.kind);
    const spec = obj(d.body.spec);
    if (kind === 'Deployment') {
      const selector = obj(obj(spec.selector).matchLabels);
      if (!matches(selector, podSpecOf(d)!.labels))
        issues.push({ where: where(d), message: 'spec.selector does not match the pod template labels' });
    }
    if (kind === 'Service' && !pods.some((p) => matches(obj(spec.selector), p.labels))) {
      issues.push({ where: where(d), message: 'spec.selector matches no pod template' });
    }
    if (kind === 'Service') {
      for (const port of list(spec.ports)) {
        const target = port.targetPort;
        if (typeof target !== 'string') continue;
        const named = pods
          .filter((p) => matches(obj(spec.selector), p.labels))
          .every((p) => list(p.spec.containers).some((c) => list(c.ports).some((cp) => cp.name === target)));
        if (!named) issues.push({ where: where(d), message: `targetPort "${target}" is not a named port of the selected pods` });
      }
    }
    if (kind === 'PodDisruptionBudget' && !pods.some((p) => matches(obj(obj(spec.selector).matchLabels), p.labels))) {
      issues.push({ where: where(d), message: 'spec.selector matches no pod template' });
    }
    if (kind === 'HorizontalPodAutoscaler') {
      const target = obj(spec.scaleTargetRef);
      if (!defined(String(target.kind), String(target.name))) {
        issues.push({ where: where(d), message: `scaleTargetRef ${String(target.kind)}/${String(target.name)} is not defined` });
      }
    }
    const pod = podSpecOf(d);
    if (!pod) continue;
    for (const v of list(pod.spec.volumes)) {
      if (v.configMap) needs(d, 'ConfigMap', obj(v.configMap), `volume ${String(v.name)}`);
      if (v.secret) needs(d, 'Secret', { name: obj(v.secret).secretName, optional: obj(v.secret).optional }, `volume ${String(v.name)}`);
    }
    for (const c of [...list(pod.spec.initContainers), ...list(pod.spec.containers)]) {
      const cname = `container ${String(c.name)}`;
      for (const from of list(c.envFrom)) {
        if (from.configMapRef) needs(d, 'ConfigMap', obj(from.configMapRef), `${cname} envFrom`);
        if (from.secretRef) needs(d, 'Secret', obj(from.secretRef), `${cname} envFrom`);
      }
      for (const e of list(c.env)) {
        const source = obj(e.valueFrom);
        if (source.configMapKeyRef) needs(d, 'ConfigMap', obj(source.configMapKeyRef), `${cname} env ${String(e.name)}`);
        if (source.secretKeyRef) needs(d, 'Secret', obj(source.secretKeyRef), `${cname} env ${String(e.name)}`);
      }
      const volumes = new Set(list(pod.spec.volumes).map((v) => v.name));
      for (const m of list(c.volumeMounts)) {
        if (!volumes.has(m.name)) issues.push({ where: where(d), message: `${cname} mounts undefined volume "${String(m.name)}"` });
      }
      const ports = new Set(list(c.ports).map((p) => p.name));
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const port = obj(obj(c[probe]).httpGet).port ?? obj(obj(c[probe]).tcpSocket).port;
        if (typeof port === 'string' && !ports.has(port))
          issues.push({ where: where(d), message: `${cname} ${probe} uses unnamed port "${port}"` });
      }
    }
  }
  return issues;
}
