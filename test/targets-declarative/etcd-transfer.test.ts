// The declared leadership transfer on the real etcd declaration: the `transfer-leadership`
// fault runs targets/etcd.limbo.ts's `etcdctl move-leader` from the member that leads to
// another, the probe then names that member, and leadershipChanged sees etcd's own counter
// move. Skips without etcd and etcdctl, but fails then with LIMBO_ETCD_REQUIRED=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSuite } from '../../src/runner/run-suite.js';
import { defineSuite } from '../../src/runner/suite.js';
import { at } from '../../src/faults/schedule.js';
import { transferLeadership } from '../../src/faults/process-faults.js';
import { leadershipChanged } from '../../src/checkers/leadership-changed.js';
import { noClientLeftHanging } from '../../src/checkers/no-client-left-hanging.js';
import { resolveTarget } from '../../src/targets/registry.js';
import { findCommand } from '../../src/targets/declarative/validate.js';
import type { StartedTarget, Target } from '../../src/targets/target.js';

const required = process.env['LIMBO_ETCD_REQUIRED'] === '1';
const installed = findCommand('etcd') !== undefined && findCommand('etcdctl') !== undefined;

test(
  'etcd and etcdctl are installed when LIMBO_ETCD_REQUIRED=1',
  { skip: !required && 'LIMBO_ETCD_REQUIRED is not 1' },
  () =>
    assert.ok(
      installed,
      'LIMBO_ETCD_REQUIRED=1 but etcd or etcdctl is missing (apt-get install etcd-server etcd-client)',
    ),
);

test(
  'etcd: transfer-leadership moves the leader with etcdctl move-leader; leadershipChanged passes',
  { skip: !installed && 'etcd or etcdctl is not installed (apt-get install etcd-server etcd-client)' },
  async (t) => {
    const out = mkdtempSync(join(tmpdir(), 'limbo-etcd-transfer-'));
    t.after(() => rmSync(out, { recursive: true, force: true }));
    const etcd = await resolveTarget('etcd');
    let started: StartedTarget | undefined;
    let leaderAfter: string | undefined;
    const target: Target = {
      name: etcd.name,
      ...(etcd.profile !== undefined ? { profile: etcd.profile } : {}),
      start: async (topology, ctx) => {
        started = await etcd.start(topology, ctx);
        const s = started;
        const stop = s.stop.bind(s);
        // Who leads once the run is over, before the members stop.
        return Object.assign(s, {
          stop: async () => {
            leaderAfter = await s.leaderOf(0);
            await stop();
          },
        });
      },
    };
    const suite = defineSuite({
      name: 'etcd-transfer',
      why: 'leadership moved on purpose, with calls in flight',
      workload: { concurrency: 4, mix: { call: 1 } },
      warmup: '1s',
      // A proposal the old leader held when it handed over is answered only by etcd's
      // request timeout, 7 s after it was made (docs/etcd.md), so the run and the hang bound
      // reach past the transfer by that much: such a call is slow, not left hanging.
      converge: '8s',
      schedule: [at('1s', transferLeadership({ partition: 0 }), { for: '2s' })],
      expect: [leadershipChanged(), noClientLeftHanging({ withinMsAfterHeal: 7500 })],
    });
    const res = await runSuite(suite, { target, seed: 5, outRoot: out, replay: 'test', trace: false });
    const w = res.run.faults[0];
    assert.ok(w !== undefined, JSON.stringify(res.verdict.checks.map((c) => [c.name, c.summary])));
    const { from, to } = w.details as { from?: string; to?: string };
    assert.match(from ?? '', /^etcd-[123]$/);
    assert.match(to ?? '', /^etcd-[123]$/);
    assert.notEqual(from, to);
    assert.equal(leaderAfter, to, `the leader moved from ${from} to ${to}`);
    const changed = res.verdict.checks.find((c) => c.name === 'leadershipChanged');
    assert.equal(changed?.verdict, 'pass', JSON.stringify(changed));
    assert.equal(
      res.verdict.verdict,
      'pass',
      JSON.stringify(res.verdict.checks.map((c) => [c.name, c.verdict, c.summary])),
    );
  },
);
