#!/usr/bin/env node
// The import graph of src/ flows one way (docs/architecture.md#import-flow): each folder may import
// only the folders (or single files, `folder/file.ts`) listed for it below, and no file is on an
// import cycle. `npm run check` runs this; it exits 1 naming every import against the flow and
// every cycle.
//
//   node scripts/check-imports.mjs [root]     (root: default src)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * Folder → the folders (or single files) it may import besides itself: exactly those its files
 * import today, so a new arrow in the flow is a decision made here. A new folder must be placed
 * here too.
 */
export const allowed = {
  util: [],
  // how limbo processes start, load and stop: the bundle to load, stack maps, the TypeScript
  // loader, GC limits, the ready line, the child launcher, free ports, stop signals
  launch: ['util'],
  protocol: ['util'],
  // the contract's gRPC binding (channels, servers, typed clients) and the client machinery on
  // it: the log client's append batcher and stream, the ingress's call stream, the multiplexer
  transport: ['protocol', 'util'],
  telemetry: [],
  services: ['telemetry', 'transport', 'protocol', 'util'],
  // the proxy logs and serves its metrics as a service does
  proxy: ['telemetry', 'protocol', 'util'],
  'run-data': [],
  // code coverage of a run's processes: the hook they load, converting and merging the counts;
  // the fault space tells the client's spans by the contract's service name
  coverage: ['run-data', 'protocol'],
  checkers: ['run-data', 'protocol', 'util'],
  // the observers parse Prometheus text and trace the runner with the services' own telemetry
  // and launch the run's Prometheus (launch/)
  observe: ['run-data', 'telemetry', 'launch', 'protocol', 'util'],
  // a docker run's Prometheus (observe/) and the embedded Toxiproxy (proxy/) are started here
  runtime: ['observe', 'proxy', 'launch', 'protocol', 'util'],
  workload: ['run-data', 'telemetry', 'protocol', 'util'],
  // junit.xml and report.html tell a failed run's diagnosis; report.html shows the run's code
  // coverage and fault space as `limbo coverage` reads them (coverage/)
  report: ['coverage', 'diagnose', 'run-data', 'protocol', 'util'],
  // why a failing run failed: the failed checks' ops read against spans, leadership and faults
  diagnose: ['checkers', 'run-data', 'protocol'],
  // a target names its checks and service levels (checkers/), its client API (workload/), the
  // services it starts (services/), on Restate a leadership observer (observe/) and, on the
  // reference cluster, a controller client (transport/)
  targets: [
    'runtime',
    'observe',
    'workload',
    'checkers',
    'services',
    'telemetry',
    'transport',
    'launch',
    'protocol',
    'util',
  ],
  faults: ['targets', 'run-data', 'protocol', 'util'],
  runner: [
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
    'launch',
    'protocol',
    'util',
    // the bug-switch names (a suite's `catches`), not the services
    'services/bugs.ts',
  ],
  // explore sits on the runner: random schedules of planned faults (faults/) under a workload
  // spec of its own (workload/), guided by the fault space runs reached (coverage/)
  explore: ['runner', 'faults', 'targets', 'workload', 'coverage', 'run-data', 'util'],
  // limbo soak: every suite for N seeds through the runner, a leak check after each run
  soak: ['runner', 'targets', 'run-data'],
  // limbo detect sits on explore (a switch no suite claims is explored) and the runner; it
  // names the switches (services/bugs.ts), renders its page through report/, and owns the
  // cleanup of its runs on the chosen runtime (runtime/)
  detect: ['explore', 'runner', 'report', 'targets', 'runtime', 'checkers', 'run-data', 'services/bugs.ts'],
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
