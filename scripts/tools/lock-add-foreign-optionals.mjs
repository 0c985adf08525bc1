// The npm registry reachable here serves only the linux-x64 builds of packages that ship native binaries as
// optional dependencies (anvil, litesvm, msgpackr-extract, ...); `npm install` then leaves the other platforms'
// entries out of package-lock.json, and `npm ci` refuses the lock as out of sync. This adds those entries, marked
// optional and restricted to their platform by name, so `npm ci` accepts the lock and skips them on this machine
// exactly as it would with a lock written where the whole registry is reachable. Run after `npm install`.
import { readFileSync, writeFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const platformOf = (name) => {
  const os = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openbsd', 'sunos', 'aix', 'netbsd'].find((o) => name.includes(o));
  const cpu = [
    ['arm64', 'arm64'],
    ['aarch64', 'arm64'],
    ['amd64', 'x64'],
    ['x64', 'x64'],
    ['ia32', 'ia32'],
    ['arm', 'arm'],
    ['riscv64', 'riscv64'],
    ['s390x', 's390x'],
    ['ppc64', 'ppc64'],
  ].find(([k]) => name.includes(k))?.[1];
  const libc = name.includes('musl') ? 'musl' : name.includes('gnu') ? 'glibc' : undefined;
  return { os, cpu, libc };
};
let added = 0;
for (const [path, pkg] of Object.entries(lock.packages)) {
  for (const [dep, spec] of Object.entries(pkg.optionalDependencies ?? {})) {
    const nested = `${path ? `${path}/` : ''}node_modules/${dep}`;
    if (lock.packages[nested] || lock.packages[`node_modules/${dep}`]) continue;
    if (!/^\d+\.\d+\.\d+/.test(spec)) continue; // only exact versions can be recorded without the registry
    const { os, cpu, libc } = platformOf(dep);
    if (!os || !cpu) continue;
    lock.packages[`node_modules/${dep}`] = {
      version: spec,
      ...(pkg.dev ? { dev: true } : {}),
      optional: true,
      os: [os],
      cpu: [cpu],
      ...(libc ? { libc: [libc] } : {}),
    };
    added++;
  }
}
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} foreign-platform optional entries`);
