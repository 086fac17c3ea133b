// The injector never wedges: toxics added, updated and removed, proxies disabled, enabled,
// deleted and recreated through toxiproxy-node-client while 1,000 connections stream echoes
// through the embedded server, first with a steady upstream, then with the upstream (a real
// child process) killed and restarted over and over. Each proxy also carries a client that
// sends megabytes and never reads, so a disable or delete meets bytes it cannot flush: the
// call must answer all the same. See test/proxy/churn.ts for what counts as unanswered and
// stuck.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runChurn, type ChurnResult } from './churn.js';

/** More than the proxy's socket and queue can take toward a client that does not read. */
const stalledReaderBytes = 16 * 1024 * 1024;

function assertNeverWedged(r: ChurnResult): void {
  const unanswered = r.calls.filter((c) => c.outcome === 'unanswered');
  const errors = r.calls.filter((c) => c.outcome === 'error');
  assert.deepEqual(unanswered, [], 'every API call answers within its timeout');
  assert.deepEqual(errors, [], 'every API call succeeds');
  assert.deepEqual(r.stuck, [], 'no connection left stuck after a removal, disable, delete or kill');
  assert.ok(r.peakOpen >= 1000, `1,000 connections open at once (peak ${r.peakOpen})`);
  assert.ok(
    r.checks >= 8 && r.checkedConnections >= 1000,
    `checks made: ${r.checks} over ${r.checkedConnections}`,
  );
  assert.ok(r.serverStopped, 'the server stopped');
  assert.equal(r.serverOpenAfter, 0, 'the server holds no connection after everything closed');
  assert.ok(r.fdsAfter <= r.fdsBefore + 40, `no descriptor leak: ${r.fdsBefore} before, ${r.fdsAfter} after`);
}

function summary(r: ChurnResult): string {
  const ms = r.calls.map((c) => c.ms).sort((a, b) => a - b);
  const p = (q: number): number => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0;
  return `${r.calls.length} calls (p50 ${p(0.5).toFixed(1)} ms, p99 ${p(0.99).toFixed(1)} ms, max ${p(1).toFixed(1)} ms), ${r.checks} checks over ${r.checkedConnections} connections, ${r.connectionsOpened} opened, peak ${r.peakOpen}, ${r.echoes} echoes, ${r.upstreamKills} kills, fds ${r.fdsBefore}→${r.fdsAfter}`;
}

test('1,000 connections through toxic, proxy churn: every call answered, nothing stuck or leaked', async () => {
  const r = await runChurn({
    connections: 1000,
    proxies: 8,
    durationMs: 12_000,
    seed: 1,
    killUpstream: false,
    stalledReaderBytes,
  });
  process.stdout.write(`# churn: ${summary(r)}\n`);
  assertNeverWedged(r);
});

test('the same while the upstream process is killed and restarted', async () => {
  const r = await runChurn({
    connections: 1000,
    proxies: 8,
    durationMs: 12_000,
    seed: 2,
    killUpstream: true,
    stalledReaderBytes,
  });
  process.stdout.write(`# churn with kills: ${summary(r)}\n`);
  assertNeverWedged(r);
  assert.ok(r.upstreamKills >= 2, `the upstream was killed ${r.upstreamKills} times`);
});
