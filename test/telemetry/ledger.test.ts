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
import { LedgerSpanProcessor, SPAN_LEDGER_PATH } from '../../src/telemetry/span-ledger.js';
import { runSpans } from '../../src/observe/run-spans.js';
import type { RunData } from '../../src/run-data/run-data.js';
import { renderWaterfall } from '../../src/report/waterfall.js';
import { renderHtmlWaterfall } from '../../src/report/html-waterfall.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
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

test('a flush request over the ledger stream brings every ended span in before the batch delay', async () => {
  await using receiver = await startOtlpReceiver();
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    [SPAN_LEDGER_ENV]: `${receiver.url}${SPAN_LEDGER_PATH}`,
  };
  // Two services, each with its batch span processor's 500 ms delay.
  const a = createTracing('svc-a', silentLogger, env);
  const b = createTracing('svc-b', silentLogger, env);
  try {
    // Their ledger streams open at the start (an empty batch each), before any span.
    const t0 = Date.now();
    while (Date.now() - t0 < 5000 && !(await receiver.flushLedgers(2000))) await sleep(20);
    for (let i = 0; i < 20; i++) {
      a.tracer.startSpan(`a ${i}`).end();
      b.tracer.startSpan(`b ${i}`).end();
    }
    const asked = performance.now();
    assert.equal(await receiver.flushLedgers(3000), true, 'both services answered');
    const took = performance.now() - asked;
    assert.equal(receiver.spans.length, 40, 'every ended span is in');
    assert.ok(took < 450, `answered in ${Math.round(took)} ms, before the 500 ms batch delay`);
  } finally {
    await Promise.all([a.shutdown(), b.shutdown()]);
  }
  // Once a span source has no ledger stream to ask (it stopped), the answer is no at once.
  const asked = performance.now();
  assert.equal(await receiver.flushLedgers(3000), false);
  assert.ok(performance.now() - asked < 1000);
});

test('a flush cannot be asked of a plain OTLP source, nor answered by a ledger without a flush', async () => {
  await using receiver = await startOtlpReceiver();
  // A service exporting OTLP without a ledger: it cannot be asked, so no fast answer.
  const plain = createTracing('plain', silentLogger, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  plain.tracer.startSpan('p').end();
  await plain.shutdown();
  assert.equal(receiver.spans.length, 1);
  assert.equal(await receiver.flushLedgers(2000), false);
  // A ledger that cannot flush (no flushAll) never answers: the wait ends at its bound.
  await using r2 = await startOtlpReceiver();
  const ledger = new LedgerSpanProcessor({ url: `${r2.url}${SPAN_LEDGER_PATH}`, service: 'old' });
  try {
    const tracing = createTracing('old', silentLogger, { OTEL_EXPORTER_OTLP_ENDPOINT: r2.url });
    const span = tracing.tracer.startSpan('open');
    ledger.onStart(span as never, undefined as never);
    await ledger.flush();
    for (let i = 0; i < 100 && r2.ledger.starts === 0; i++) await sleep(20);
    assert.equal(r2.ledger.starts, 1, 'the receiver has the old ledger stream');
    const asked = performance.now();
    assert.equal(await r2.flushLedgers(300), false);
    assert.ok(performance.now() - asked >= 290);
    span.end();
    await tracing.shutdown();
  } finally {
    await ledger.shutdown();
  }
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
