// The open-span ledger: a process killed with spans in flight still leaves them known, marked
// with why; ended spans still arrive over plain OTLP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { startOtlpReceiver } from '../../src/observe/otlp-receiver.js';
import { createTracing, SPAN_LEDGER_ENV } from '../../src/telemetry/tracing.js';
import { silentLogger } from '../../src/telemetry/logger.js';
import { SPAN_LEDGER_PATH } from '../../src/telemetry/span-ledger.js';
import { runSpans } from '../../src/observe/run-spans.js';
import type { RunData } from '../../src/run-data/run-data.js';
import { renderWaterfall } from '../../src/report/waterfall.js';
import { renderHtmlWaterfall } from '../../src/report/html-waterfall.js';

const child = fileURLToPath(new URL('./ledger-child.js', import.meta.url));

test('a killed process: its open span is known from the ledger, marked killed; ended spans arrive over OTLP', async (t) => {
  await using receiver = await startOtlpReceiver();
  const startedAt = new Date();
  const proc = spawn(process.execPath, [child], {
    env: {
      ...process.env,
      SERVICE_NAME: 'processor-1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      [SPAN_LEDGER_ENV]: `${receiver.url}${SPAN_LEDGER_PATH}`,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  let out = '';
  proc.stdout.setEncoding('utf8');
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('child never got ready')), 10_000);
    proc.stdout.on('data', (d: string) => {
      out += d;
      const m = /ready (\w+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  const openSpanId = await ready;
  const killedAtMs = Date.now() - startedAt.getTime();
  proc.kill('SIGKILL');
  await once(proc, 'exit');

  assert.deepEqual(
    receiver.spans.map((s) => s.name),
    ['short'],
    'the ended span went out as plain OTLP',
  );
  const unexported = receiver.unexportedSpans();
  const byName = new Map(unexported.map((s) => [s.name, s]));
  const open = byName.get('open');
  assert.ok(open, 'the open span is in the ledger');
  assert.equal(open.spanId, openSpanId);
  assert.equal(open.endMs, null);
  assert.equal(open.service, 'processor-1');
  assert.equal(open.attributes['limbo.leader.epoch'], 3);
  const late = byName.get('ended-unexported');
  assert.ok(late, 'a span that ended while its export was still queued is known from the ledger');
  assert.equal(typeof late.endMs, 'number');
  assert.ok(!byName.has('short'), 'a span exported over OTLP is not also ledger-only');

  const run: RunData = {
    suite: 's',
    target: 't',
    seed: 1,
    phases: {
      startedAtWall: startedAt.toISOString(),
      healedAtMs: killedAtMs + 2000,
      deadlineMs: killedAtMs + 7000,
    },
    history: [],
    series: [],
    faults: [
      {
        fault: 'kill',
        target: 'processor-1',
        affects: ['processor-1'],
        injectedAtMs: killedAtMs,
        healedAtMs: killedAtMs + 2000,
      },
    ],
  };
  const spans = runSpans(receiver.spans, unexported, run);
  const marked = spans.find((s) => s.name === 'open')!;
  assert.equal(marked.open?.cause, 'killed');
  assert.equal(
    marked.open.reason,
    `never ended — processor-1 was killed at ${(killedAtMs / 1000).toFixed(1)} s`,
  );
  // Another service's open span, no fault on it: still open at the heal + 5 s.
  const other = runSpans([], [{ ...open, service: 'ingress-1' }], run)[0]!;
  assert.equal(other.open?.reason, 'still open at heal + 5.0 s');

  const waterfall = renderWaterfall('inv_open', spans).lines.join('\n');
  assert.match(waterfall, /never ended — processor-1 was killed at/);
  assert.match(waterfall, /1 never ended/);
  const html = renderHtmlWaterfall(spans, []);
  assert.match(html, /class="span-row span-open" title="never ended — processor-1 was killed at/);
  assert.match(html, /<td class="num">never ended<\/td>/);
});

test('a span that ends within one ledger tick is never posted; one open at a tick is, then its end', async () => {
  await using receiver = await startOtlpReceiver();
  const tracing = createTracing('svc', silentLogger, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    [SPAN_LEDGER_ENV]: `${receiver.url}${SPAN_LEDGER_PATH}`,
  });
  for (let i = 0; i < 50; i++) tracing.tracer.startSpan(`quick ${i}`).end();
  const slow = tracing.tracer.startSpan('slow');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(receiver.ledger.starts, 1, 'only the span open at a tick was posted');
  slow.end();
  await tracing.shutdown();
  assert.equal(receiver.ledger.ends, 1);
  assert.equal(receiver.spans.length, 51, 'every span still went out over OTLP');
  assert.deepEqual(receiver.unexportedSpans(), []);
});

test('why a span never ended: the first kill, pause or restart of its service not healed when it started', () => {
  const startedAtWall = new Date(1_000_000).toISOString();
  const run: RunData = {
    suite: 's',
    target: 't',
    seed: 1,
    phases: { startedAtWall, healedAtMs: 9000, deadlineMs: 12_000 },
    history: [],
    series: [],
    faults: [
      {
        fault: 'kill',
        target: 'processor-1',
        affects: ['processor-1'],
        injectedAtMs: 1000,
        healedAtMs: 2000,
      },
      {
        fault: 'pause',
        target: 'processor-2',
        affects: ['processor-2'],
        injectedAtMs: 3000,
        healedAtMs: 5000,
      },
      {
        fault: 'restart',
        target: 'processor-3',
        affects: ['processor-3'],
        injectedAtMs: 4000,
        healedAtMs: 4500,
      },
    ],
  };
  const at = (service: string, runMs: number) =>
    runSpans(
      [],
      [
        {
          traceId: 't',
          spanId: 's',
          parentSpanId: '',
          name: 'n',
          service,
          kind: 1,
          startMs: 1_000_000 + runMs,
          endMs: null,
          attributes: {},
          status: { code: 0, message: '' },
        },
      ],
      run,
    )[0]!.open;
  assert.deepEqual(at('processor-1', 500), {
    cause: 'killed',
    reason: 'never ended — processor-1 was killed at 1.0 s',
    atMs: 1000,
  });
  // Started while the kill was landing (recorded before the signal): still that kill.
  assert.equal(at('processor-1', 1500)?.cause, 'killed');
  // Started after the restart: nothing stopped it; it was simply still open.
  assert.deepEqual(at('processor-1', 2500), { cause: 'open', reason: 'still open at heal + 3.0 s' });
  assert.equal(at('processor-2', 2900)?.reason, 'never ended — processor-2 was paused at 3.0 s');
  assert.equal(at('processor-3', 100)?.cause, 'restarted');
  assert.equal(at('ingress-1', 100)?.cause, 'open');
});
