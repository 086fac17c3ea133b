// A fault as plain data: a registered fault's name and parameters (the names suites use),
// when it starts and how long it lasts — what `limbo explore` draws, shrinks and saves under
// seeds/, and what a seed file replays.
//
//   PlannedFault[] ─▶ toScheduleEntries ─▶ ScheduleEntry[] (the runner's schedule)
import { createFault, type FaultParams } from './registry.js';
import type { ScheduleEntry } from './schedule.js';

export interface PlannedFault {
  atMs: number;
  forMs: number;
  fault: string;
  params: FaultParams;
}

export function toScheduleEntries(planned: readonly PlannedFault[]): ScheduleEntry[] {
  return planned.map((p) => ({ atMs: p.atMs, forMs: p.forMs, fault: createFault(p.fault, p.params) }));
}

export function describePlanned(p: PlannedFault): string {
  const on = p.params.on;
  const where =
    on === undefined
      ? `partition ${String(p.params['partition'])}`
      : typeof on === 'string'
        ? on
        : (on as { kind?: unknown }).kind === 'anyLink'
          ? 'any link'
          : `leaderOf(${String((on as { partition?: unknown }).partition)})`;
  const extra = Object.entries(p.params)
    .filter(([k]) => k !== 'on' && k !== 'partition')
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
  return `${(p.atMs / 1000).toFixed(1)}s +${(p.forMs / 1000).toFixed(1)}s ${p.fault} ${where}${extra ? ` ${extra}` : ''}`;
}
