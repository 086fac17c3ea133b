// One invocation, one trace: a call resent across a leader kill yields a single trace with
// the client span, the ingress span, several RPC attempts (one carrying a resend reason),
// spans from two processors, log appends and the End — and `limbo trace` prints it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { call, TestCluster } from '../helpers/cluster.js';
import { keysOnPartition } from '../helpers/keys.js';
import { startOtlpReceiver } from '../../src/observe/otlp-receiver.js';
import { createTracing, traceparentOf } from '../../src/telemetry/tracing.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import { limboCommand } from '../../src/runtime/process.js';

test('a call resent across a leader kill is one trace, and limbo trace shows it', async () => {
  await using receiver = await startOtlpReceiver();
  const env = {
    ...process.env,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
  };
  const client = createTracing('client', silentLogger, env);
  let invocationId: string | null;
  {
    await using cluster = await TestCluster.start({ processors: 3, partitions: 2, env });
    const table = await cluster.waitForLeaders();
    const leader = table.partitions.find((p) => p.partition === 0)!.leaderNode;
    const key = keysOnPartition('Sleep', 0, 2, 1, `tr${Date.now()}-`)[0]!;
    const span = client.tracer.startSpan('client call');
    const pending = call(
      cluster.url,
      '/Sleep/sleep',
      { ms: 3000 },
      {
        headers: { 'idempotency-key': key, traceparent: traceparentOf(span) },
        timeoutMs: 30_000,
      },
    );
    // Long enough for the first leader to export its append and apply spans (batch delay 500 ms).
    await new Promise((r) => setTimeout(r, 1500));
    cluster.processors.find((p) => p?.ready.node === leader)!.kill('SIGKILL');
    const res = await pending;
    span.end();
    assert.deepEqual([res.status, res.body], [200, { slept: 3000 }]);
    invocationId = res.invocationId;
    await client.shutdown();
  } // stopping the cluster flushes every service's spans
  const traceId = receiver.spans.find((s) => s.name === 'client call')!.traceId;
  const trace = receiver.spans.filter((s) => s.traceId === traceId);
  const names = trace.map((s) => `${s.service}:${s.name}`);
  assert.ok(names.includes('ingress-1:ingress call'), names.join('\n'));
  const attempts = trace.filter((s) => s.name === 'ingress submit attempt');
  assert.ok(attempts.length >= 2, `attempts: ${attempts.length}`);
  assert.ok(
    attempts.some((s) => s.attributes['limbo.resend.reason'] !== ''),
    'one attempt is a resend with its reason',
  );
  const processors = new Set(trace.filter((s) => s.service.startsWith('processor-')).map((s) => s.service));
  assert.ok(processors.size >= 2, `spans from two processors: ${[...processors].join(', ')}`);
  assert.ok(trace.some((s) => s.name === 'log append invoke'));
  assert.ok(trace.some((s) => s.name === 'log append end'));
  assert.ok(trace.some((s) => s.name === 'apply end'));
  // The log server sees opaque records: its spans join the trace but carry no invocation id.
  assert.ok(
    trace.some((s) => s.service === 'log' && s.name === 'log append'),
    'the log hop from its side',
  );
  for (const s of trace.filter((x) => x.service !== 'client' && x.service !== 'log')) {
    if (s.name !== 'ingress call') assert.equal(s.attributes['limbo.invocation.id'], invocationId, s.name);
  }

  const runDir = mkdtempSync(join(tmpdir(), 'limbo-trace-'));
  try {
    writeFileSync(
      join(runDir, 'spans.jsonl'),
      receiver.spans.map((s) => JSON.stringify(s)).join('\n') + '\n',
    );
    const cmd = limboCommand();
    const { stdout } = await promisify(execFile)(cmd.command, [
      ...cmd.args,
      'trace',
      invocationId!,
      '--run',
      runDir,
    ]);
    const lines = stdout.split('\n');
    assert.match(lines[0]!, new RegExp(`${invocationId} — trace ${traceId}`));
    const order = [
      'client call',
      'ingress call',
      'ingress submit attempt',
      'processor submit',
      'log append invoke',
    ];
    let at = 0;
    for (const name of order) {
      const i = lines.findIndex((l, idx) => idx >= at && l.includes(name));
      assert.ok(i >= at, `${name} after line ${at}\n${stdout}`);
      at = i;
    }
    assert.match(stdout, /resend: (connection_lost|lost_leadership|not_leader|timeout)/);
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
});
