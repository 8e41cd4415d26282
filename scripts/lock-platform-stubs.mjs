#!/usr/bin/env node
/**
 * Keeps `npm ci` working with the package registry our machines reach.
 *
 * That registry does not serve some platform-specific optional packages (for example
 * @rollup/rollup-android-arm-eabi, or some @msgpackr-extract builds for macOS and Windows). `npm install`
 * skips them and leaves them out of package-lock.json, and `npm ci` then refuses the lock as "out of
 * sync" ("Missing: … from lock file"). This script adds a lock entry for each optional dependency the
 * lock leaves out, marked optional and restricted to the platform its name gives, so `npm ci` records
 * it and skips it on this platform (it is never downloaded here).
 *
 * Run after changing dependencies: `npm install && npm run lock:platforms`.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const OSES = ['aix', 'android', 'darwin', 'freebsd', 'linux', 'netbsd', 'openbsd', 'openharmony', 'sunos', 'win32'];
const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
const added = [];

for (const [location, pkg] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(pkg.optionalDependencies ?? {})) {
    // npm resolves a dependency from the nearest node_modules up the tree.
    const candidates = [];
    let base = location;
    for (;;) {
      candidates.push(`${base ? `${base}/` : ''}node_modules/${name}`);
      const at = base.lastIndexOf('/node_modules/');
      if (!base) break;
      base = at === -1 ? '' : base.slice(0, at);
    }
    if (candidates.some((c) => packages[c])) continue;
    const tokens = name.split('/').pop().split('-');
    const osAt = tokens.findIndex((t) => OSES.includes(t));
    if (osAt === -1 || !tokens[osAt + 1]) continue; // not a platform build: leave it for npm to report
    const entry = { version: spec.replace(/^[\^~=]/, ''), cpu: [tokens[osAt + 1]], optional: true, os: [tokens[osAt]] };
    const libc = tokens[osAt + 2];
    if (tokens[osAt] === 'linux' && libc?.startsWith('gnu')) entry.libc = ['glibc'];
    if (tokens[osAt] === 'linux' && libc?.startsWith('musl')) entry.libc = ['musl'];
    packages[`node_modules/${name}`] = entry;
    added.push(name);
  }
}

const [root, ...rest] = Object.entries(packages);
lock.packages = Object.fromEntries([root, ...rest.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(
  added.length
    ? `lock: ${added.length} platform builds recorded as optional: ${added.join(', ')}\n`
    : 'lock: nothing to add\n',
);
