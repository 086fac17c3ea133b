// faultsHitTraffic judges each fault on its own evidence: the bytes, dials and cuts its own
// proxies counted while it was in — never the run's live ops as a whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { faultsHitTraffic } from '../../src/checkers/faults-hit-traffic.js';
import type { FaultEvidence } from '../../src/run-data/run-data.js';
import { RunBuilder } from '../helpers/run-data-builder.js';

const link = (extra: Partial<FaultEvidence> = {}): FaultEvidence => ({
  proxies: ['gw-1->nats-2'],
  directions: ['upstream', 'downstream'],
  bytes: 0,
  connectionsOpened: 0,
  ...extra,
});

/** Ops live through the whole run: a busy run, whatever each fault met. */
function busy(b: RunBuilder): RunBuilder {
  for (let i = 0; i < 20; i++) b.op(500 + i * 100, 9000, 'ok');
  return b;
}

test('a link fault whose proxy counted nothing is inconclusive, however busy the run was', () => {
  const b = busy(new RunBuilder()).fault({
    fault: 'timeout',
    target: 'gw-1->nats-2',
    affects: ['gw-1->nats-2'],
    evidence: link(),
  });
  const r = faultsHitTraffic().check(b.run);
  assert.equal(r.verdict, 'inconclusive');
  assert.match(r.summary, /timeout@gw-1->nats-2 \(0 bytes, 0 connections opened on proxy gw-1->nats-2/);
});

test('bytes, a dial or a cut connection on its own proxy make a link fault count', () => {
  for (const met of [{ bytes: 1 }, { connectionsOpened: 1 }, { connectionsCut: 2 }]) {
    const b = new RunBuilder().fault({ fault: 'link-down', target: 'a->b', evidence: link(met) });
    assert.equal(faultsHitTraffic().check(b.run).verdict, 'pass', JSON.stringify(met));
  }
});

test('each fault on its own: one that met traffic does not carry one that met none', () => {
  const b = new RunBuilder()
    .fault({ fault: 'latency', target: 'client->nats-1', evidence: link({ proxies: ['c1'], bytes: 5000 }) })
    .fault({ fault: 'timeout', target: '*->nats-3', evidence: link({ proxies: ['p3'] }) });
  const r = faultsHitTraffic().check(b.run);
  assert.equal(r.verdict, 'inconclusive');
  assert.match(r.summary, /^1 of 2 fault\(s\) met no traffic of their own: timeout@\*->nats-3 \(0 bytes/);
  assert.doesNotMatch(r.summary, /latency/);
});

test('a process fault held work if its links carried bytes in the second before it', () => {
  const evidence = link({ proxies: ['ingress->processor-1', 'processor-1->log'], look: 'around' });
  const b = new RunBuilder().fault({
    fault: 'kill',
    target: 'processor-1',
    injectedAtMs: 3000,
    healedAtMs: 4000,
    evidence,
  });
  assert.equal(faultsHitTraffic().check(b.run).verdict, 'inconclusive', 'nothing before, nothing during');
  // Bytes on another proxy, or long before, prove nothing about this process.
  b.sample(
    'toxiproxy',
    'toxiproxy_proxy_received_bytes_total',
    { proxy: 'ingress->log', direction: 'upstream' },
    [
      [2500, 0],
      [2900, 900],
    ],
  );
  b.sample(
    'toxiproxy',
    'toxiproxy_proxy_received_bytes_total',
    { proxy: 'processor-1->log', direction: 'upstream' },
    [
      [1000, 0],
      [1500, 400],
      [2100, 400],
      [2900, 400],
    ],
  );
  assert.equal(faultsHitTraffic().check(b.run).verdict, 'inconclusive', 'only older or other bytes');
  b.sample(
    'toxiproxy',
    'toxiproxy_proxy_received_bytes_total',
    { proxy: 'processor-1->log', direction: 'downstream' },
    [
      [2250, 10],
      [2750, 70],
    ],
  );
  const r = faultsHitTraffic().check(b.run);
  assert.equal(r.verdict, 'pass', r.summary);
});

test('a leader with no proxy of its own counts only with ops in flight at its inject', () => {
  const fault = {
    fault: 'pause',
    target: 'node-1',
    leader: true,
    injectedAtMs: 3000,
    evidence: link({ proxies: [], look: 'around' as const }),
  };
  assert.equal(faultsHitTraffic().check(new RunBuilder().fault(fault).run).verdict, 'inconclusive');
  const b = new RunBuilder().fault(fault);
  b.op(2900, 3100, 'ok');
  assert.equal(faultsHitTraffic().check(b.run).verdict, 'pass');
  const follower = new RunBuilder().fault({ ...fault, leader: false });
  follower.op(2900, 3100, 'ok');
  assert.equal(faultsHitTraffic().check(follower.run).verdict, 'inconclusive');
});

test('without counts of its own, the scraped bytes its proxies read over its window decide', () => {
  const b = busy(new RunBuilder()).fault({
    fault: 'latency',
    target: 'processor-1->log',
    injectedAtMs: 6000,
    healedAtMs: 7000,
    evidence: link({ proxies: ['processor-1->log'], unavailable: 'GET /metrics: 404' }),
  });
  const r = faultsHitTraffic().check(b.run);
  assert.equal(r.verdict, 'inconclusive');
  assert.match(
    r.summary,
    /0 bytes on proxy processor-1->log .*as scraped; no counts of its own: GET \/metrics: 404/,
  );
  b.sample(
    'toxiproxy',
    'toxiproxy_proxy_received_bytes_total',
    { proxy: 'processor-1->log', direction: 'upstream' },
    [
      [5900, 100],
      [6500, 180],
    ],
  );
  assert.equal(faultsHitTraffic().check(b.run).verdict, 'pass');
  assert.equal(faultsHitTraffic().check(new RunBuilder().run).verdict, 'inconclusive', 'no fault at all');
});

test('a fault inside a service counts by its hook: 0 acted on is inconclusive, whatever the proxies carried', () => {
  const hooked = (hookHits: number | undefined) =>
    new RunBuilder().fault({
      fault: 'log-append-errors',
      target: 'log',
      evidence: {
        ...link({ bytes: 90_000 }),
        hook: 'append-errors',
        ...(hookHits !== undefined ? { hookHits } : { hookHitsUnavailable: 'connect ECONNREFUSED' }),
      },
    }).run;
  const none = faultsHitTraffic().check(hooked(0));
  assert.equal(none.verdict, 'inconclusive');
  assert.match(none.summary, /log-append-errors@log \(hook append-errors acted on 0 requests\)/);
  assert.equal(faultsHitTraffic().check(hooked(12)).verdict, 'pass');
  assert.match(
    faultsHitTraffic().check(hooked(undefined)).summary,
    /could not be read \(connect ECONNREFUSED\)/,
  );
});

test('a link down that met nothing in its window counts when refused dialers came back right after the heal', () => {
  const b = new RunBuilder().fault({
    fault: 'link-down',
    target: 'ingress->processor-2',
    injectedAtMs: 6000,
    healedAtMs: 7000,
    evidence: link({ proxies: ['ingress->processor-2'], connectionsCut: 0 }),
  });
  const opens = (points: [number, number][]) =>
    b.sample(
      'toxiproxy',
      'limbo_proxy_connections_total',
      { proxy: 'ingress->processor-2', event: 'opened' },
      points,
    );
  opens([
    [5000, 3],
    [6900, 3],
    [8500, 4],
  ]);
  assert.equal(
    faultsHitTraffic().check(b.run).verdict,
    'inconclusive',
    'a dial 1.5 s later is not that demand',
  );
  opens([[7250, 4]]);
  b.run.series.sort((x, y) => x.tMs - y.tMs);
  const r = faultsHitTraffic().check(b.run);
  assert.equal(r.verdict, 'pass', r.summary);
});
