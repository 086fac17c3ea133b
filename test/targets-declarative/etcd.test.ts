// End to end on the etcd declaration: the real 3-member cluster started from
// targets/etcd.limbo.ts, every byte into the leader's peer port cut (chaos/peers/
// leader-inbound-cut.ts), and the verdict checked — it passes, the cut hit `*->etcd-N` of the
// member that led, another member led during the cut (the bridged etcd_server_is_leader), and
// no etcd process is left. Skips when etcd is not installed, but fails then with
// LIMBO_ETCD_REQUIRED=1 (.ci/run sets it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findCommand } from '../../src/targets/declarative/validate.js';
import { processRuns } from '../helpers/process-state.js';
import { runOnDeclared } from '../helpers/declared-run.js';

const required = process.env['LIMBO_ETCD_REQUIRED'] === '1';
const installed = findCommand('etcd') !== undefined;

const alive = processRuns;

test(
  'etcd is installed when LIMBO_ETCD_REQUIRED=1',
  { skip: !required && 'LIMBO_ETCD_REQUIRED is not 1' },
  () => {
    assert.ok(installed, 'LIMBO_ETCD_REQUIRED=1 but there is no etcd on PATH (apt-get install etcd-server)');
  },
);

test(
  'etcd: cutting the peer link into the leader moves leadership; every call ends, every effect once, nothing left running',
  { skip: !installed && 'etcd is not installed (apt-get install etcd-server etcd-client)' },
  async (t) => {
    const { res, started, leaderAtStart, pids } = await runOnDeclared(
      t,
      'etcd',
      'chaos/peers/leader-inbound-cut.ts',
      11,
    );
    assert.ok(started);
    assert.match(leaderAtStart ?? '', /^etcd-[123]$/, 'a leader was known once the target was ready');
    assert.equal(pids.length, 3, 'three etcd members ran');

    const v = res.verdict;
    assert.equal(v.verdict, 'pass', JSON.stringify(v.checks.map((c) => [c.name, c.verdict, c.summary])));
    assert.ok(v.ops.ok > 100, `calls were made and answered (${v.ops.ok} ok)`);
    assert.ok(
      res.run.history.every((op) => op.request === undefined || op.request.path.startsWith('/v3/kv/')),
      'the workload spoke the declared client adapter (etcd gateway paths)',
    );
    const w = res.run.faults[0];
    assert.ok(w !== undefined, 'the cut was injected');
    assert.match(w.target, /^\*->etcd-[123]$/);
    const cutLeader = w.target.slice(3);
    // Someone other than the cut member reported leadership during the cut.
    const during = res.run.series.filter(
      (s) =>
        s.name === 'limbo_processor_is_leader' &&
        s.value === 1 &&
        s.tMs > w.injectedAtMs &&
        s.tMs < (w.healedAtMs ?? Infinity) &&
        s.labels['node'] !== cutLeader,
    );
    assert.ok(during.length > 0, `another member led while ${cutLeader}'s inbound peer link was cut`);
    for (const pid of pids) assert.ok(!alive(pid), `etcd pid ${pid} stopped`);
  },
);
