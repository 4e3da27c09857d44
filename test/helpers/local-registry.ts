/**
 * An npm registry on 127.0.0.1 that knows only the packages this repository's package-lock.json records,
 * so a test can install a user's project with npm's own resolver and no network.
 *
 * Each package's document lists every version the lock file holds (the lowest and the highest Vitest of
 * test/vitest-versions among them), with the dependencies, peers, bins, engines and platforms the lock file
 * recorded and the tarball's integrity. npm takes a tarball whose integrity it knows from its own cache, which
 * `npm ci` of this repository filled with the very same files; a tarball missing there is asked of this
 * server, which has none to give: the install fails and `misses` names it (run `npm ci` again).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

interface LockEntry {
  name?: string;
  version?: string;
  integrity?: string;
  link?: boolean;
  license?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, unknown>;
  bin?: Record<string, string>;
  engines?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  libc?: string[];
}

export interface LocalRegistry {
  url: string;
  /** Tarballs npm asked for: each one it could not find in its cache. */
  misses: string[];
  /** The versions of a package the registry serves, lowest first. */
  versions(name: string): string[];
  close(): Promise<void>;
}

/** `1.2.3` / `1.2.3-beta.1` as comparable parts (a prerelease sorts before its release). */
function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core, pre] = v.split('-', 2) as [string, string | undefined];
    return { nums: core.split('.').map(Number), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if (x.nums[i] !== y.nums[i]) return (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}

/** The package a lock entry's path installs (`a/node_modules/@s/p` → `@s/p`), unless the entry names it (an alias). */
function nameOf(path: string, entry: LockEntry): string {
  return entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

type Manifest = Record<string, unknown> & { version: string };

function packuments(lockFile: string, tarballBase: () => string): Map<string, Map<string, Manifest>> {
  const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { packages: Record<string, LockEntry> };
  const byName = new Map<string, Map<string, Manifest>>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.includes('node_modules/') || entry.link || !entry.version || !entry.integrity) continue;
    const name = nameOf(path, entry);
    const { version } = entry;
    const file = `${name.split('/').pop()}-${version}.tgz`;
    const manifest: Manifest = { name, version };
    for (const key of [
      'license',
      'dependencies',
      'optionalDependencies',
      'peerDependencies',
      'peerDependenciesMeta',
      'bin',
      'engines',
      'os',
      'cpu',
      'libc',
    ] as const) {
      if (entry[key] !== undefined) manifest[key] = entry[key];
    }
    Object.defineProperty(manifest, 'dist', {
      enumerable: true,
      get: () => ({ tarball: `${tarballBase()}/${name}/-/${file}`, integrity: entry.integrity }),
    });
    if (!byName.has(name)) byName.set(name, new Map());
    byName.get(name)!.set(version, manifest);
  }
  return byName;
}

/** Serve the packages of `repo`'s package-lock.json on a free loopback port. */
export async function startLocalRegistry(repo: string): Promise<LocalRegistry> {
  let url = '';
  const docs = packuments(join(repo, 'package-lock.json'), () => url);
  const misses: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!.slice(1));
    if (path.includes('/-/')) {
      misses.push(path);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `${path} is not in npm's cache: run npm ci in the repository` }));
      return;
    }
    const versions = docs.get(path);
    if (!versions || req.method !== 'GET') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'not found' }));
      return;
    }
    const sorted = [...versions.keys()].sort(compareVersions);
    const releases = sorted.filter((v) => !v.includes('-'));
    const body = JSON.stringify({
      name: path,
      'dist-tags': { latest: releases.at(-1) ?? sorted.at(-1) },
      versions: Object.fromEntries(sorted.map((v) => [v, versions.get(v)])),
    });
    // no-store: npm keeps no copy of a document from a registry whose port is gone after the test
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    misses,
    versions: (name) => [...(docs.get(name)?.keys() ?? [])].sort(compareVersions),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
