// The run directory's data files (DESIGN.md §3): their names, and the writers of the ones
// the runner leaves after every run. Readers of a finished run (the report, `limbo trace`,
// tests) use the same names, so a file has one spelling and one writer.
//
//   runDir/ verdict.json · history.jsonl · series.json · faults.json · spans.jsonl · logs/
import { writeFileSync } from 'node:fs';
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
} as const;

/** faults.json: the phase times and every fault window, on the run's monotonic clock. */
export interface FaultsFile {
  phases: RunData['phases'];
  windows: RunData['faults'];
}

/** Writes verdict.json, history.jsonl, series.json and faults.json of a finished run. */
export function writeRunFiles(runDir: string, run: RunData, verdict: VerdictFile): void {
  writeFileSync(join(runDir, runFiles.verdict), JSON.stringify(verdict, null, 2) + '\n');
  writeFileSync(
    join(runDir, runFiles.history),
    run.history.map((op) => JSON.stringify(op)).join('\n') + (run.history.length ? '\n' : ''),
  );
  writeFileSync(join(runDir, runFiles.series), JSON.stringify(run.series));
  const faults: FaultsFile = { phases: run.phases, windows: run.faults };
  writeFileSync(join(runDir, runFiles.faults), JSON.stringify(faults, null, 2) + '\n');
}
