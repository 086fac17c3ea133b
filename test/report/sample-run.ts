// A realistic hand-made run for report tests: a 20 s leader-kill run on one ingress, three
// processors and two partitions, scraped every 250 ms. The leader of partition 0 is killed
// from 5 s to 8 s (its counters reset on restart), a latency toxic slows processor-2 and a
// link goes down; one call invoked during the kill never ends, and spans exist for it. The
// leadership probe says who led each partition (partition 0 has no leader for a moment).
import type { FaultWindow, HistoryOp, RunData, SeriesSample } from '../../src/run-data/run-data.js';
import type { SpanRecord } from '../../src/observe/otlp-receiver.js';

export const STARTED_AT = '2026-11-30T12:00:00.000Z';
export const WALL0 = Date.parse(STARTED_AT);
export const HUNG_INVOCATION = 'inv_00000000hung0001';
export const HUNG_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
export const SLOW_INVOCATION = 'inv_00000000slow0002';

const END_MS = 20_000;
const STEP_MS = 250;
const LE = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];

/** Seeded, so every render of the sample run is the same. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sampleFaults: FaultWindow[] = [
  {
    fault: 'kill',
    target: 'processor-1',
    affects: ['processor-1', 'ingress->processor-1', 'processor-1->log'],
    leader: true,
    injectedAtMs: 5000,
    healedAtMs: 8000,
    details: { signal: 'SIGKILL', partition: 0 },
    evidence: {
      proxies: ['ingress->processor-1', 'processor-1->log'],
      directions: ['upstream', 'downstream'],
      bytes: 0,
      connectionsOpened: 14,
      connectionsCut: 2,
      look: 'around',
    },
  },
  {
    fault: 'latency',
    target: 'ingress->processor-2',
    affects: ['ingress->processor-2'],
    injectedAtMs: 9500,
    healedAtMs: 12_500,
    details: { latency: 400, jitter: 50 },
    evidence: {
      proxies: ['ingress->processor-2'],
      directions: ['downstream'],
      bytes: 48_210,
      connectionsOpened: 0,
    },
  },
  {
    fault: 'link-down',
    target: 'ingress->processor-3',
    affects: ['ingress->processor-3'],
    injectedAtMs: 13_000,
    healedAtMs: 14_500,
    evidence: {
      proxies: ['ingress->processor-3'],
      directions: ['upstream', 'downstream'],
      bytes: 0,
      connectionsOpened: 0,
      connectionsCut: 1,
    },
  },
];

const inFault = (tMs: number, fault: string): boolean =>
  sampleFaults.some((f) => f.fault === fault && tMs >= f.injectedAtMs && tMs < (f.healedAtMs ?? END_MS));

export function sampleRun(): RunData {
  const rnd = random(42);
  const series: SeriesSample[] = [];
  const push = (
    service: string,
    name: string,
    labels: Record<string, string>,
    tMs: number,
    value: number,
  ): void => {
    series.push({ service, name, labels, tMs, value });
  };
  const leader = (node: string, partition: string, tMs: number, leads: boolean, epoch: number): void => {
    push(node, 'limbo_processor_is_leader', { partition }, tMs, leads ? 1 : 0);
    push(node, 'limbo_processor_leader_epoch', { partition }, tMs, epoch);
  };
  const resends: Record<string, number> = {};
  const attempts: Record<string, number> = {};
  const buckets = new Array<number>(LE.length).fill(0);
  let durSum = 0;
  let durCount = 0;
  const changes = { p1Became: 1, p1Down: 0, p2Became: 1, p2Down: 0, ctrlFailure: 0, ctrlStartup: 2 };

  for (let t = STEP_MS; t <= END_MS; t += STEP_MS) {
    const jitter = Math.round(rnd() * 8);
    const killed = inFault(t, 'kill');
    const slow = inFault(t, 'latency');
    const down = inFault(t, 'link-down');
    // ingress gauges: pending piles up while partition 0 has no leader
    const pendingCall = Math.round((killed ? 6 + (t - 5000) / 300 : slow ? 5 : 2) + rnd() * 2);
    const hungOpen = t >= 5200 ? 1 : 0;
    push('ingress-1', 'limbo_ingress_pending_requests', { kind: 'call' }, t + jitter, pendingCall + hungOpen);
    push('ingress-1', 'limbo_ingress_pending_requests', { kind: 'send' }, t + jitter, Math.round(rnd() * 2));
    const oldest = hungOpen ? (t - 5200) / 1000 : killed ? 0.5 : 0.05 + rnd() * 0.05;
    push('ingress-1', 'limbo_ingress_oldest_pending_seconds', {}, t + jitter, oldest);
    // resends appear (as new label sets) once a link is hurt
    if (killed)
      resends['0|connection_lost'] = (resends['0|connection_lost'] ?? 0) + 2 + Math.round(rnd() * 3);
    if (t > 5300 && t < 6200) resends['0|not_leader'] = (resends['0|not_leader'] ?? 0) + 1;
    if (slow) resends['1|timeout'] = (resends['1|timeout'] ?? 0) + Math.round(rnd() * 2);
    if (down) resends['1|unavailable'] = (resends['1|unavailable'] ?? 0) + 3;
    for (const [key, value] of Object.entries(resends)) {
      const [partition, reason] = key.split('|') as [string, string];
      push('ingress-1', 'limbo_ingress_resends_total', { partition, reason }, t + jitter, value);
    }
    attempts.ok = (attempts.ok ?? 0) + (killed ? 8 : 30) + Math.round(rnd() * 6);
    if (killed || down) attempts.error = (attempts.error ?? 0) + 4 + Math.round(rnd() * 4);
    for (const [result, value] of Object.entries(attempts))
      push(
        'ingress-1',
        'limbo_ingress_rpc_attempts_total',
        { partition: '0', rpc: 'submit', result },
        t + jitter,
        value,
      );
    // latency histogram: ~20 requests per scrape, slower during the faults
    for (let i = 0; i < 20; i++) {
      const base = killed ? 0.8 : slow ? 0.42 : 0.012;
      const d = base * (0.5 + rnd()) + (rnd() < 0.02 ? 1.5 : 0);
      durSum += d;
      durCount++;
      LE.forEach((le, j) => {
        if (le === '+Inf' || d <= Number(le)) buckets[j] = (buckets[j] ?? 0) + 1;
      });
    }
    const hl = { kind: 'call', outcome: 'ok' };
    LE.forEach((le, j) =>
      push(
        'ingress-1',
        'limbo_ingress_request_duration_seconds_bucket',
        { ...hl, le },
        t + jitter,
        buckets[j] ?? 0,
      ),
    );
    push('ingress-1', 'limbo_ingress_request_duration_seconds_sum', hl, t + jitter, durSum);
    push('ingress-1', 'limbo_ingress_request_duration_seconds_count', hl, t + jitter, durCount);
    // processors: processor-1 is dead during the kill and comes back with fresh counters
    if (t >= 5000 && t < 5300) changes.p2Became = 2;
    if (!killed) {
      const restarted = t >= 8000;
      push(
        'processor-1',
        'limbo_processor_leadership_changes_total',
        { partition: '0', transition: 'became_leader' },
        t + 3,
        restarted ? 0 : changes.p1Became,
      );
      if (restarted)
        push(
          'processor-1',
          'limbo_processor_leadership_changes_total',
          { partition: '0', transition: 'stepped_down' },
          t + 3,
          0,
        );
    }
    push(
      'processor-2',
      'limbo_processor_leadership_changes_total',
      { partition: '1', transition: 'became_leader' },
      t + 5,
      changes.p2Became,
    );
    if (t > 11_000) changes.p2Down = 1;
    push(
      'processor-2',
      'limbo_processor_leadership_changes_total',
      { partition: '1', transition: 'stepped_down' },
      t + 5,
      changes.p2Down,
    );
    if (t >= 6500) changes.ctrlFailure = 1;
    push(
      'log-1',
      'limbo_controller_leader_changes_total',
      { partition: '0', reason: 'startup' },
      t + 1,
      changes.ctrlStartup,
    );
    push(
      'log-1',
      'limbo_controller_leader_changes_total',
      { partition: '0', reason: 'failure' },
      t + 1,
      changes.ctrlFailure,
    );
    push('runner', 'limbo_workload_pending', {}, t, Math.round(pendingCall * 1.4 + rnd() * 2) + hungOpen);
    // the leadership probe: processor-1 leads partition 0 at epoch 3 until it is killed (its
    // last scrape, as the kill lands, reports it no longer leading), nobody does until
    // processor-2 takes over at epoch 4 from 5.3 s; processor-2 leads partition 1 throughout
    const p2LeadsP0 = t >= 5300;
    if (!killed || t === 5000) leader('processor-1', '0', t + 3, t < 5000, t < 5000 ? 3 : 0);
    leader('processor-2', '0', t + 5, p2LeadsP0, p2LeadsP0 ? 4 : 0);
    leader('processor-2', '1', t + 5, true, 2);
    leader('processor-3', '0', t + 7, false, 0);
  }

  return {
    suite: 'leader-kill',
    target: 'reference',
    seed: 1234567,
    phases: {
      startedAtWall: STARTED_AT,
      warmupStartMs: 0,
      chaosStartMs: 2000,
      chaosEndMs: 15_000,
      healedAtMs: 15_100,
      deadlineMs: END_MS,
      endedAtMs: END_MS + 200,
    },
    history: sampleHistory(rnd),
    series,
    faults: sampleFaults,
  };
}

function sampleHistory(rnd: () => number): HistoryOp[] {
  const history: HistoryOp[] = [];
  let opId = 0;
  const op = (
    atMs: number,
    durMs: number | undefined,
    invocationId: string,
    type: 'ok' | 'fail' | 'info' = 'ok',
    traceId = invocationId.replace('inv_', '').padEnd(32, '0'),
  ): void => {
    opId++;
    const invoke: HistoryOp = {
      type: 'invoke',
      opId,
      process: opId % 16,
      kind: 'call',
      invocationId,
      traceId,
      request: { method: 'POST', path: '/Echo/echo', body: { n: opId } },
      timeMs: atMs,
      wallTime: new Date(WALL0 + atMs).toISOString(),
    };
    history.push(invoke);
    if (durMs === undefined) return;
    history.push({
      ...invoke,
      type,
      response: type === 'ok' ? { status: 200, body: { n: opId } } : undefined,
      error: type === 'ok' ? undefined : { code: 'http_status', message: 'HTTP 503 from ingress' },
      timeMs: atMs + durMs,
      wallTime: new Date(WALL0 + atMs + durMs).toISOString(),
    });
  };
  for (let t = 100; t < 19_000; t += 90) {
    const killed = inFault(t, 'kill');
    const dur = killed ? 800 + rnd() * 2500 : inFault(t, 'latency') ? 400 + rnd() * 100 : 5 + rnd() * 20;
    op(t, Math.round(dur), `inv_${String(opId + 1).padStart(8, '0')}`, rnd() < 0.02 ? 'fail' : 'ok');
  }
  op(5200, undefined, HUNG_INVOCATION, 'ok', HUNG_TRACE);
  op(9600, 2900, SLOW_INVOCATION);
  return history.sort((a, b) => a.timeMs - b.timeMs);
}

/** Spans for the hung call (attempts only: its ingress span never ended, so it was never exported) and the slow one. */
export function sampleSpans(): SpanRecord[] {
  const span = (
    o: Partial<SpanRecord> & Pick<SpanRecord, 'spanId' | 'name' | 'startMs' | 'endMs'>,
  ): SpanRecord => ({
    traceId: HUNG_TRACE,
    parentSpanId: 'ffffffffffffffff',
    service: 'ingress-1',
    kind: 3,
    attributes: { 'limbo.invocation.id': HUNG_INVOCATION, 'limbo.partition': 0 },
    status: { code: 0, message: '' },
    ...o,
  });
  const at = (ms: number): number => WALL0 + ms;
  const slowTrace = 'slow0002'.padStart(32, '0');
  const slowAttrs = { 'limbo.invocation.id': SLOW_INVOCATION, 'limbo.partition': 1 };
  return [
    span({
      spanId: 'a1',
      name: 'ingress Submit attempt',
      startMs: at(5201),
      endMs: at(5230),
      status: { code: 2, message: 'connection_lost' },
      attributes: {
        'limbo.invocation.id': HUNG_INVOCATION,
        'limbo.partition': 0,
        'limbo.attempt': 1,
        'limbo.resend.reason': '',
      },
    }),
    span({
      spanId: 'a2',
      name: 'ingress Submit attempt',
      startMs: at(5330),
      endMs: at(5340),
      status: { code: 2, message: 'not_leader' },
      attributes: {
        'limbo.invocation.id': HUNG_INVOCATION,
        'limbo.partition': 0,
        'limbo.attempt': 2,
        'limbo.resend.reason': 'connection_lost',
      },
    }),
    span({
      spanId: 'a3',
      name: 'ingress Submit attempt',
      startMs: at(5600),
      endMs: at(5650),
      attributes: {
        'limbo.invocation.id': HUNG_INVOCATION,
        'limbo.partition': 0,
        'limbo.attempt': 3,
        'limbo.resend.reason': 'not_leader',
        'limbo.leader.epoch': 4,
      },
    }),
    span({
      spanId: 'p1',
      parentSpanId: 'a3',
      service: 'processor-2',
      kind: 2,
      name: 'processor Submit',
      startMs: at(5610),
      endMs: at(5645),
      attributes: { 'limbo.invocation.id': HUNG_INVOCATION, 'limbo.partition': 0, 'limbo.leader.epoch': 4 },
    }),
    span({
      spanId: 'l1',
      parentSpanId: 'p1',
      service: 'log-1',
      kind: 2,
      name: 'log Append',
      startMs: at(5615),
      endMs: at(5640),
      attributes: { 'limbo.partition': 0 },
    }),
    span({
      traceId: slowTrace,
      spanId: 's0',
      parentSpanId: '',
      kind: 2,
      name: 'ingress call Echo/echo',
      startMs: at(9600),
      endMs: at(12_500),
      attributes: slowAttrs,
    }),
    span({
      traceId: slowTrace,
      spanId: 's1',
      parentSpanId: 's0',
      name: 'ingress Submit attempt',
      startMs: at(9602),
      endMs: at(10_602),
      status: { code: 2, message: 'timeout' },
      attributes: { ...slowAttrs, 'limbo.attempt': 1 },
    }),
    span({
      traceId: slowTrace,
      spanId: 's2',
      parentSpanId: 's0',
      name: 'ingress Submit attempt',
      startMs: at(10_610),
      endMs: at(12_490),
      attributes: {
        ...slowAttrs,
        'limbo.attempt': 2,
        'limbo.resend.reason': 'timeout',
        'limbo.leader.epoch': 2,
      },
    }),
    span({
      traceId: slowTrace,
      spanId: 's3',
      parentSpanId: 's2',
      service: 'processor-2',
      kind: 2,
      name: 'invoke Echo/echo',
      startMs: at(11_020),
      endMs: at(12_080),
      attributes: { ...slowAttrs, 'limbo.leader.epoch': 2 },
    }),
  ];
}
