#!/usr/bin/env node
// Removes packages the services image never loads from package.json and package-lock.json
// in the current directory, together with every lock entry only they needed, so that
// `npm ci` in the image neither downloads nor installs them (the Restate binaries are
// ~240 MB; testcontainers is for the machine that starts containers, not for the services).
//
//   node prune-manifest.mjs @restatedev/restate-server @restatedev/restatectl testcontainers
//
// The lock stays consistent with package.json: what is kept is exactly what the remaining
// root dependencies reach, resolved the way node does (nearest node_modules upwards).
import { readFileSync, writeFileSync } from 'node:fs';

const drop = new Set(process.argv.slice(2));
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const depFields = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];

for (const manifest of [pkg, lock.packages['']]) {
  for (const field of depFields) {
    for (const name of drop) delete manifest[field]?.[name];
  }
}

// Where node finds `name` when required from the package at `from` ('' is the root).
function resolve(from, name) {
  for (let dir = from; ;) {
    const candidate = `${dir === '' ? '' : dir + '/'}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (dir === '') return undefined;
    const up = dir.lastIndexOf('/node_modules/');
    dir = up < 0 ? '' : dir.slice(0, up);
  }
}

const keep = new Set(['']);
const queue = [''];
while (queue.length > 0) {
  const at = queue.pop();
  const entry = lock.packages[at];
  for (const field of depFields) {
    for (const name of Object.keys(entry[field] ?? {})) {
      const found = resolve(at, name);
      if (found !== undefined && !keep.has(found)) {
        keep.add(found);
        queue.push(found);
      }
    }
  }
}

let removed = 0;
for (const path of Object.keys(lock.packages)) {
  if (!keep.has(path)) {
    delete lock.packages[path];
    removed++;
  }
}
writeFileSync('package.json', JSON.stringify(pkg, null, 2) + '\n');
writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
process.stdout.write(`prune-manifest: dropped ${[...drop].join(', ')} and ${removed} lock entries\n`);
