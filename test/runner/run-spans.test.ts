// The runner's side: a traced run gives its checkers the spans (ended and open) in its run
// data, and spans.jsonl holds the ops left open as client spans that never ended, marked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineSuite } from '../../src/runner/suite.js';
import { runSuite } from '../../src/runner/run-suite.js';
import { at, kill } from '../../src/faults/index.js';
import { spansEnd } from '../../src/checkers/index.js';
import { pairOps } from '../../src/run-data/run-data.js';
import type { Target } from '../../src/targets/target.js';
import { startToyIngress } from '../helpers/toy-ingress.js';
import { startToyTarget } from '../helpers/toy-target.js';

test('a traced run: run.spans has every client span; a hung op is a client span that never ended', async (t) => {
  const ingress = await startToyIngress();
  t.after(() => ingress.stop());
  const out = mkdtempSync(join(tmpdir(), 'limbo-runspans-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const target: Target = {
    name: 'toy',
    start: (topology) =>
      startToyTarget(topology.processors, {
        ingressUrls: [ingress.url],
        metricsUrls: { 'ingress-1': ingress.metrics.url },
      }),
  };
  const suite = defineSuite({
    name: 'toy-hang',
    why: 'the toy ingress stops answering halfway',
    topology: { processors: 2 },
    workload: { concurrency: 2, opTimeoutMs: 30_000, mix: { call: 1 } },
    warmup: '200ms',
    chaos: '1s',
    converge: '1s',
    schedule: [at('100ms', kill('processor-2'), { for: '300ms' })],
    expect: [spansEnd({ withinMsAfterHeal: 500 })],
  });
  const hang = setTimeout(() => (ingress.behaviour.hang = true), 700);
  t.after(() => clearTimeout(hang));
  const res = await runSuite(suite, { target, seed: 3, outRoot: out, replay: 'x', scrapeIntervalMs: 100 });
  const pairs = pairOps(res.run.history).filter((p) => p.invoke.request?.final !== true);
  const hung = pairs.filter((p) => p.end === undefined);
  assert.ok(hung.length >= 1, 'some ops hung');
  const spans = res.run.spans ?? [];
  const client = spans.filter((s) => s.service === 'client' && s.name === 'client call');
  assert.equal(client.length, pairs.length, 'one client span per op in the run data');
  for (const p of hung) {
    const s = client.find((c) => c.traceId === p.invoke.traceId);
    assert.ok(s, `the hung op ${p.invoke.opId} has its client span`);
    assert.equal(s.endMs, null);
    assert.equal(s.open?.cause, 'open');
    assert.match(s.open.reason, /^still open at heal \+ \d+\.\d s$/);
  }
  const check = res.verdict.checks.find((c) => c.name === 'spansEnd');
  assert.equal(check?.verdict, 'fail', check?.summary);
  assert.match(check.summary, /client "client call" — still open at heal/);
  const lines = readFileSync(join(res.runDir, 'spans.jsonl'), 'utf8').trim().split('\n');
  const open = lines
    .map((l) => JSON.parse(l) as { endMs: number | null; open?: { reason: string } })
    .filter((s) => s.endMs === null);
  assert.equal(open.length, hung.length, 'spans.jsonl marks every hung op');
  assert.ok(open.every((s) => s.open?.reason.startsWith('still open at heal')));
  // The run data ends up with exactly what spans.jsonl has (the report draws from it).
  const ids = (list: readonly { spanId: string }[]): string[] => list.map((s) => s.spanId).sort();
  assert.deepEqual(
    ids(spans),
    ids(lines.map((l) => JSON.parse(l) as { spanId: string })),
    'run.spans and spans.jsonl hold the same spans',
  );
});
