import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { defineSuite } from '../../src/runner/suite.js';
import { runSuite } from '../../src/runner/run-suite.js';
import { at, kill, leaderOf } from '../../src/faults/index.js';
import { leadershipChanged, noClientLeftHanging, pendingDrains } from '../../src/checkers/index.js';
import { referenceTarget } from '../../src/targets/reference.js';
import type { StartedTarget, Target } from '../../src/targets/target.js';
import { processRuns } from '../helpers/process-state.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

const alive = processRuns;

/** PIDs whose parent is `ppid` (from /proc). */
function childrenOf(ppid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === ppid) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

test('a leader kill on the reference cluster: every call answered, leadership moved, nothing left running', async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'limbo-ref-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const suite = defineSuite({
    name: 'ref-leader-kill',
    why: 'the runner against the real reference cluster',
    topology: { processors: 2, partitions: 2 },
    workload: { concurrency: 4 },
    warmup: '500ms',
    schedule: [at('1s', kill(leaderOf({ partition: 0 })), { for: '2s' })],
    expect: [noClientLeftHanging({ withinMsAfterHeal: 8000 }), leadershipChanged(), pendingDrains()],
  });
  let started: StartedTarget | undefined;
  const ref = referenceTarget('rpc');
  const target: Target = {
    name: ref.name,
    start: async (topology, ctx) => (started = await ref.start(topology, ctx)),
  };
  let pids: number[] = [];
  const res = await runSuite(suite, {
    target,
    seed: 3,
    outRoot: out,
    replay: 'r',
    onProgress: () => {
      if (started) for (const s of started.services.values()) if (s.pid() !== undefined) pids.push(s.pid()!);
    },
  });
  pids = [...new Set(pids)];
  const summary = JSON.stringify(res.verdict.checks.map((c) => [c.name, c.verdict, c.summary]));
  assert.equal(res.verdict.verdict, 'pass', summary);
  assert.ok(res.verdict.ops.total > 20, summary);
  assert.ok(res.run.faults[0]?.leader === true);
  assert.ok(pids.length >= 4);
  for (const pid of pids) assert.ok(!alive(pid), `service pid ${pid} outlived the run`);
  const logs = readdirSync(join(res.runDir, 'logs')).sort();
  assert.deepEqual(logs, ['ingress-1.log', 'log.log', 'processor-1.log', 'processor-2.log']);
});

test('Ctrl-C on `limbo run` mid-chaos leaves no process and no port behind', async (t) => {
  mkdirSync(join(root, '.limbo'), { recursive: true });
  const dir = mkdtempSync(join(root, '.limbo', 'sigint-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'long.ts'),
    `import { at, defineSuite, kill, leaderOf, noClientLeftHanging } from 'limbo';
export default defineSuite({
  name: 'long',
  why: 'interrupted mid-chaos by the test',
  topology: { processors: 2, partitions: 2 },
  workload: { concurrency: 4 },
  warmup: '200ms',
  chaos: '120s',
  schedule: [at('200ms', kill(leaderOf({ partition: 0 })))],
  expect: [noClientLeftHanging()],
});
`,
  );
  const proc = spawn(
    process.execPath,
    [join(root, 'bin', 'limbo.js'), 'run', join(dir, 'long.ts'), '--out', join(dir, 'runs')],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no fault injected within 60 s: ${stderr}`)), 60_000);
    createInterface({ input: proc.stderr }).on('line', (line) => {
      stderr += line + '\n';
      if (/inject kill/.test(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const children = childrenOf(proc.pid!);
  assert.ok(children.length >= 3, `children: ${children.join(',')}`);
  const latest = join(dir, 'runs');
  proc.kill('SIGINT');
  const killer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  const code = await exited;
  clearTimeout(killer);
  assert.equal(code, 130, stderr);
  for (const pid of children) {
    let state = '';
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8') + ' ' + readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      // gone
    }
    assert.ok(!alive(pid), `child ${pid} outlived limbo run: ${state}\n${stderr}`);
  }
  // The run directory was created; every service wrote its log there.
  const suiteDir = join(latest, 'long');
  const [runDir] = readdirSync(suiteDir);
  assert.ok(readdirSync(join(suiteDir, runDir!, 'logs')).includes('log.log'));
});
