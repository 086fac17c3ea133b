// End to end on the NATS declaration, a system whose clients do not speak HTTP: the real
// 3-server JetStream cluster started from targets/nats.limbo.ts, the workload through its
// client adapter (the npm nats client, no gateway), every byte into the stream leader slowed
// on the route link that carries it (chaos/peers/leader-inbound-latency.ts; a cut is
// timing-dependent on NATS, see docs/nats.md). Checked: the verdict passes, the fault landed
// on a route link and met traffic there, the ops went through the adapter, and no nats-server
// is left. Skips when nats-server is not installed, but fails
// then with LIMBO_NATS_REQUIRED=1 (.ci/run sets it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findCommand } from '../../src/targets/declarative/validate.js';
import { processRuns } from '../helpers/process-state.js';
import { runOnDeclared } from '../helpers/declared-run.js';

const required = process.env['LIMBO_NATS_REQUIRED'] === '1';
const installed = findCommand('nats-server') !== undefined;

test(
  'nats-server is installed when LIMBO_NATS_REQUIRED=1',
  { skip: !required && 'LIMBO_NATS_REQUIRED is not 1' },
  () => {
    assert.ok(
      installed,
      'LIMBO_NATS_REQUIRED=1 but there is no nats-server on PATH (apt-get install nats-server)',
    );
  },
);

test(
  'nats: latency into the stream leader lands on the route that carries it; every op through the client adapter ends, every effect once, nothing left running',
  { skip: !installed && 'nats-server is not installed (apt-get install nats-server)' },
  async (t) => {
    const { res, started, leaderAtStart, pids } = await runOnDeclared(
      t,
      'nats',
      'chaos/peers/leader-inbound-latency.ts',
      11,
    );
    assert.ok(started);
    assert.match(leaderAtStart ?? '', /^nats-[123]$/, 'the stream had a leader once the target was ready');
    assert.equal(pids.length, 3, 'three nats-servers ran');

    const v = res.verdict;
    assert.equal(v.verdict, 'pass', JSON.stringify(v.checks.map((c) => [c.name, c.verdict, c.summary])));
    assert.ok(v.ops.ok > 100, `ops were made and answered (${v.ops.ok} ok)`);
    assert.ok(
      res.run.history.every(
        (op) => op.request === undefined || op.request.path.startsWith('nats-jetstream:'),
      ),
      'the workload spoke through the client adapter',
    );
    const w = res.run.faults[0];
    assert.ok(w !== undefined, 'the latency was injected');
    assert.match(w.target, /^nats-[123]->nats-[123]$/, 'on a route link');
    const hit = v.checks.find((c) => c.name === 'faultsHitTraffic');
    assert.equal(
      hit?.verdict,
      'pass',
      `the fault met traffic on its own proxy: ${hit?.summary ?? 'no check'}`,
    );
    for (const pid of pids) assert.ok(!processRuns(pid), `nats-server pid ${pid} stopped`);
  },
);

test(
  'nats: a leader isolated for 4 s keeps the stream (its documented failure), and the verdict says why from the leadership probe and the fault window',
  { skip: !installed && 'nats-server is not installed (apt-get install nats-server)' },
  async (t) => {
    const { res } = await runOnDeclared(t, 'nats', 'chaos/leader-isolated.ts', 11);
    const v = res.verdict;
    const changed = v.checks.find((c) => c.name === 'leadershipChanged');
    assert.equal(
      changed?.verdict,
      'fail',
      JSON.stringify({
        verdict: v.verdict,
        runErrors: v.runErrors,
        checks: v.checks.map((c) => [c.name, c.verdict, c.summary]),
      }),
    );
    const w = res.run.faults.find((x) => x.fault === 'isolate');
    assert.ok(w !== undefined && w.leader === true, 'the isolated node led the stream');
    const f = v.diagnosis?.findings?.find((x) => x.check === 'leadershipChanged');
    assert.ok(f !== undefined, JSON.stringify(v.diagnosis));
    assert.equal(f.service, w.target, f.sentence);
    assert.ok(
      f.faults.some((x) => x.name === `isolate@${w.target}` && x.before !== true),
      f.sentence,
    );
    // From the leadership probe: the isolated node led partition 0 while it was cut off, and no
    // other node became leader in the window (after the heal the stream may be leaderless a while).
    const strip = f.leadership.find((l) => l.partition === 0)?.stretches ?? [];
    const during = strip.filter((s) => s.fromMs < (w.healedAtMs ?? Number.POSITIVE_INFINITY));
    assert.ok(during.length > 0, f.sentence);
    assert.ok(
      during.every((s) => s.leaders.length === 1 && s.leaders[0] === w.target),
      f.sentence,
    );
    assert.ok(
      strip.every((s) => s.leaders.every((l) => l === w.target)),
      f.sentence,
    );
  },
);
