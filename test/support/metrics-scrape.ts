// Scrapes a /metrics endpoint and reads samples by name and labels (label order does not matter).

export interface Scrape {
  text: string;
  /** The sample's value, or undefined when no such series was exported. */
  get(name: string, labels?: Record<string, string>): number | undefined;
  /** Sum over every series of `name` whose labels include `labels`. */
  sum(name: string, labels?: Record<string, string>): number;
}

const keyOf = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',')}}`;

export async function scrape(port: number): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  const text = await res.text();
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const byKey = new Map(samples.map((s) => [keyOf(s.name, s.labels), s.value]));
  return {
    text,
    get: (name, labels = {}) => byKey.get(keyOf(name, labels)),
    sum: (name, labels = {}) =>
      samples
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((a, s) => a + s.value, 0),
  };
}
