// Not a test by itself: the child process of sigint.test.ts. With `run` as its argument it runs
// a long toy suite with Ctrl-C handling installed, prints the PIDs and ports it holds once the
// chaos phase begins, and waits to be interrupted. Under `node --test` it does nothing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCleanup } from '../../src/runtime/cleanup.js';
import { defineSuite } from '../../src/runner/suite.js';
import { runSuite } from '../../src/runner/run-suite.js';
import { at, pause } from '../../src/faults/index.js';
import { noClientLeftHanging } from '../../src/checkers/index.js';
import type { StartedTarget } from '../../src/targets/target.js';
import { startToyIngress } from '../helpers/toy-ingress.js';
import { startToyTarget } from '../helpers/toy-target.js';

// `run-prometheus`: the same, with the run's own Prometheus; its PID is printed too.
const mode = process.argv[2];
if (mode === 'run' || mode === 'run-prometheus') {
  const ingress = await startToyIngress();
  const cleanup = createCleanup();
  cleanup.installSignalHandlers();
  cleanup.add('toy ingress', () => ingress.stop());
  let started: StartedTarget | undefined;
  const suite = defineSuite({
    name: 'sigint',
    why: 'interrupted mid-chaos',
    topology: { processors: 2 },
    workload: { concurrency: 2, mix: { call: 1 } },
    warmup: '100ms',
    chaos: '60s',
    schedule: [at('100ms', pause('processor-1'))],
    expect: [noClientLeftHanging()],
  });
  let printed = false;
  let prometheusPid: number | undefined;
  await runSuite(suite, {
    ...(mode === 'run-prometheus' ? { prometheus: {} } : {}),
    onLog: (line) => {
      const pid = /^prometheus \S+ \(pid (\d+),/.exec(line)?.[1];
      if (pid !== undefined) prometheusPid = Number(pid);
    },
    target: {
      name: 'toy',
      start: async (topology) => {
        started = await startToyTarget(topology.processors, { ingressUrls: [ingress.url] });
        return started;
      },
    },
    seed: 1,
    outRoot: mkdtempSync(join(tmpdir(), 'limbo-sigint-')),
    replay: 'r',
    cleanup,
    progressIntervalMs: 50,
    onProgress: (p) => {
      if (printed || p.phase !== 'chaos' || p.activeFaults.length === 0 || started === undefined) return;
      printed = true;
      const pids = [...started.services.values()].map((s) => s.pid());
      if (mode === 'run-prometheus') pids.push(prometheusPid);
      process.stdout.write(`held ${JSON.stringify({ pids, ingress: ingress.url })}\n`);
    },
  });
}
