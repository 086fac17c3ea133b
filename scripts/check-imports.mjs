#!/usr/bin/env node
// The import graph of src/ flows one way (docs/architecture.md#import-flow): each folder may import
// only the folders (or single files, `folder/file.ts`) listed for it below, and no file is on an
// import cycle. `npm run check` runs this; it exits 1 naming every import against the flow and
// every cycle.
//
//   node scripts/check-imports.mjs [root]     (root: default src)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const runnerMayImport = [
  'coverage',
  'diagnose',
  'faults',
  'targets',
  'report',
  'workload',
  'runtime',
  'observe',
  'checkers',
  'run-data',
  'telemetry',
  'protocol',
  'util',
  // the bug-switch names (a suite's `catches`), not the services
  'services/bugs.ts',
];

/** Folder → the folders it may import (besides itself). A new folder must be placed here. */
export const allowed = {
  util: [],
  protocol: ['util'],
  telemetry: ['protocol', 'util'],
  services: ['telemetry', 'protocol', 'util'],
  proxy: ['telemetry', 'protocol', 'util'],
  'run-data': ['protocol'],
  // code coverage of a run's processes: the hook they load, converting and merging the counts
  coverage: ['run-data', 'protocol', 'util'],
  checkers: ['run-data', 'protocol', 'util'],
  observe: ['checkers', 'run-data', 'telemetry', 'protocol', 'util'],
  runtime: ['observe', 'proxy', 'run-data', 'telemetry', 'protocol', 'util'],
  workload: ['run-data', 'telemetry', 'protocol', 'util'],
  report: ['diagnose', 'run-data', 'protocol', 'util'],
  // why a failing run failed: the failed checks' ops read against spans, leadership and faults
  diagnose: ['checkers', 'run-data', 'protocol', 'util'],
  targets: [
    'runtime',
    'observe',
    'workload',
    'checkers',
    'services',
    'proxy',
    'run-data',
    'telemetry',
    'protocol',
    'util',
  ],
  faults: ['targets', 'runtime', 'run-data', 'protocol', 'util'],
  runner: runnerMayImport,
  // explore sits on the runner; limbo detect on explore too: a switch no suite claims is explored.
  explore: ['runner', ...runnerMayImport],
  // limbo soak: every suite for N seeds through the runner, a leak check after each run
  soak: ['runner', ...runnerMayImport],
  detect: ['explore', 'runner', ...runnerMayImport],
  cli: ['*'],
  '.': ['*'],
};

function tsFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const importRe =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Every relative import of every file: [from, to] as paths relative to root. */
export function importEdges(root) {
  const edges = [];
  for (const file of tsFiles(root)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(importRe)) {
      const spec = m[1] ?? m[2];
      const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
      edges.push([relative(root, file), relative(root, target)]);
    }
  }
  return edges;
}

const folderOf = (path) => (path.includes(sep) ? path.split(sep)[0] : '.');

/** Imports against the flow, and files on a cycle (each cycle once). */
export function checkImports(root, rules = allowed) {
  const problems = [];
  const edges = importEdges(root);
  for (const [from, to] of edges) {
    if (to.startsWith('..')) {
      problems.push(`${from} imports ${to}, outside ${root}`);
      continue;
    }
    const a = folderOf(from);
    const b = folderOf(to);
    if (a === b) continue;
    const may = rules[a];
    if (may === undefined)
      problems.push(
        `${from}: folder ${a}/ has no place in the import flow (add it to scripts/check-imports.mjs)`,
      );
    else if (!may.includes('*') && !may.includes(b) && !may.includes(to.split(sep).join('/')))
      problems.push(`${from} imports ${to}: ${a}/ may not import ${b}/`);
  }
  // File cycles: depth-first search, reporting each back edge's cycle.
  const next = new Map();
  for (const [from, to] of edges) {
    if (!next.has(from)) next.set(from, new Set());
    next.get(from).add(to);
  }
  const state = new Map(); // 1 on the stack, 2 done
  const stack = [];
  const seen = new Set();
  const visit = (node) => {
    state.set(node, 1);
    stack.push(node);
    for (const to of next.get(node) ?? []) {
      if (state.get(to) === 1) {
        const cycle = stack.slice(stack.indexOf(to)).concat(to);
        const key = [...cycle.slice(0, -1)].sort().join('|');
        if (!seen.has(key)) {
          seen.add(key);
          problems.push(`import cycle: ${cycle.join(' -> ')}`);
        }
      } else if (state.get(to) === undefined) visit(to);
    }
    stack.pop();
    state.set(node, 2);
  };
  for (const node of [...next.keys()].sort()) if (state.get(node) === undefined) visit(node);
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('check-imports.mjs')) {
  const root = resolve(process.argv[2] ?? 'src');
  if (!statSync(root).isDirectory()) {
    process.stderr.write(`check-imports: ${root} is not a folder\n`);
    process.exit(2);
  }
  const problems = checkImports(root);
  for (const p of problems) process.stderr.write(`check-imports: ${p}\n`);
  if (problems.length > 0) process.exit(1);
  process.stdout.write(
    `check-imports: ${importEdges(root).length} imports in ${root}, all one way, no cycles\n`,
  );
}
