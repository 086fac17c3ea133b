// A run's history.jsonl and series.json are written chunk by chunk (run-data/files.ts) and must
// be byte for byte what one JSON.stringify of the whole would be: the report, `limbo trace`
// and users' scripts read them. Sizes cross many chunks, and text with multi-byte characters
// and numbers JSON cannot spell (NaN, Infinity: null) are in them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFiles, writeChunked, writeRunFiles } from '../../src/run-data/files.js';
import type { HistoryOp, RunData, SeriesSample } from '../../src/run-data/run-data.js';
import type { VerdictFile } from '../../src/run-data/verdict.js';

function run(ops: number, samples: number): RunData {
  const history: HistoryOp[] = [];
  for (let i = 0; i < ops; i++)
    history.push({
      type: i % 2 === 0 ? 'invoke' : 'ok',
      opId: i >> 1,
      process: i % 7,
      kind: 'call',
      invocationId: `inv-${i}-ünïcødé-✓`,
      timeMs: i * 1.5,
      wallTime: new Date(1_700_000_000_000 + i).toISOString(),
    });
  const series: SeriesSample[] = [];
  for (let i = 0; i < samples; i++)
    series.push({
      service: `processor-${i % 3}`,
      name: 'limbo_processor_applied_total',
      labels: { partition: String(i % 4), note: i % 11 === 0 ? 'ä€😀' : 'x' },
      tMs: i * 250,
      value: i % 13 === 0 ? NaN : i % 17 === 0 ? Infinity : i / 3,
    });
  return {
    suite: 's',
    target: 'reference',
    seed: 1,
    phases: { startedAtWall: new Date(0).toISOString() },
    history,
    series,
    faults: [],
  };
}

const verdict = { suite: 's', checks: [] } as unknown as VerdictFile;

for (const [ops, samples] of [
  [0, 0],
  [1, 1],
  [40_000, 30_000],
] as const)
  test(`history.jsonl and series.json are what one JSON.stringify gives (${ops} ops, ${samples} samples)`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'limbo-run-files-'));
    try {
      const data = run(ops, samples);
      writeRunFiles(dir, data, verdict);
      const history = readFileSync(join(dir, runFiles.history), 'utf8');
      assert.equal(
        history,
        data.history.map((op) => JSON.stringify(op)).join('\n') + (data.history.length ? '\n' : ''),
      );
      assert.equal(readFileSync(join(dir, runFiles.series), 'utf8'), JSON.stringify(data.series));
      if (ops > 1000) assert.ok(history.length > 1_000_000, 'the big case crosses many chunks');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

test('writeChunked writes every text in order, and an empty file for none', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-run-files-'));
  try {
    const texts = Array.from({ length: 5000 }, (_, i) => `${i}:${'é'.repeat(i % 300)}|`);
    writeChunked(join(dir, 'a'), texts);
    assert.equal(readFileSync(join(dir, 'a'), 'utf8'), texts.join(''));
    writeChunked(join(dir, 'b'), []);
    assert.equal(readFileSync(join(dir, 'b'), 'utf8'), '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
