// The run directory's data files (docs/architecture.md#run-directory): their names, and the writers of the ones
// the runner leaves after every run. Readers of a finished run (the report, `limbo trace`,
// tests) use the same names, so a file has one spelling and one writer.
//
//   runDir/ verdict.json · history.jsonl · series.json · faults.json · spans.jsonl · logs/
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { RunData } from './run-data.js';
import type { VerdictFile } from './verdict.js';

export const runFiles = {
  verdict: 'verdict.json',
  history: 'history.jsonl',
  series: 'series.json',
  faults: 'faults.json',
  spans: 'spans.jsonl',
  junit: 'junit.xml',
  report: 'report.html',
  logs: 'logs',
  /** Code coverage of the run's limbo processes (`--coverage`): istanbul's map of src/. */
  coverage: 'coverage.json',
} as const;

/** faults.json: the phase times and every fault window, on the run's monotonic clock. */
export interface FaultsFile {
  phases: RunData['phases'];
  windows: RunData['faults'];
}

/** Writes verdict.json, history.jsonl, series.json and faults.json of a finished run. */
export function writeRunFiles(runDir: string, run: RunData, verdict: VerdictFile): void {
  writeFileSync(join(runDir, runFiles.verdict), JSON.stringify(verdict, null, 2) + '\n');
  writeChunked(join(runDir, runFiles.history), jsonLines(run.history));
  writeChunked(join(runDir, runFiles.series), jsonArray(run.series));
  const faults: FaultsFile = { phases: run.phases, windows: run.faults };
  writeFileSync(join(runDir, runFiles.faults), JSON.stringify(faults, null, 2) + '\n');
}

/** About this many characters go to the file at a time. */
const CHUNK_CHARS = 256 * 1024;

/**
 * Writes the texts to `file` in chunks, never holding the whole file as one string: a run's
 * history and series are megabytes of JSON (a leader-down run: 3 MB each), which as one
 * string, its lines and its UTF-8 copy were the runner's highest memory of the whole run.
 */
export function writeChunked(file: string, texts: Iterable<string>): void {
  const fd = openSync(file, 'w');
  try {
    let chunk = '';
    for (const t of texts) {
      chunk += t;
      if (chunk.length >= CHUNK_CHARS) {
        writeAll(fd, chunk);
        chunk = '';
      }
    }
    if (chunk !== '') writeAll(fd, chunk);
  } finally {
    closeSync(fd);
  }
}

function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  for (let off = 0; off < bytes.length;) {
    const n = writeSync(fd, bytes, off, bytes.length - off);
    if (n <= 0) throw new Error(`write returned ${n}`);
    off += n;
  }
}

/** JSON lines: each item's JSON and a newline. */
function* jsonLines(items: readonly unknown[]): Generator<string> {
  for (const item of items) yield JSON.stringify(item) + '\n';
}

/** The text JSON.stringify(items) is, item by item. */
function* jsonArray(items: readonly unknown[]): Generator<string> {
  yield '[';
  for (let i = 0; i < items.length; i++)
    yield (i === 0 ? '' : ',') + ((JSON.stringify(items[i]) as string | undefined) ?? 'null');
  yield ']';
}
