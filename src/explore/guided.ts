// Coverage-guided exploration (`limbo explore --guided`): a corpus of the schedules that
// reached something no earlier run had — a branch arm of the reference cluster (runs with
// --coverage) or a fault-space cell (any target: fault × what it struck × request phase) —
// and new schedules derived from them as well as drawn fresh:
//
//   run ─▶ coverage.json + fault-space.json ─▶ new arms / cells? ─▶ corpus += schedule
//                                                                      │
//   next schedule ◀── mutate a corpus entry (add, drop, shift, stretch, redraw a fault) ◀┘
//                 ◀── or a fresh draw (half the time, and always while the corpus is empty)
//
// The corpus is saved as it grows (one JSON file a schedule) and read back by the next
// search, so a search goes on from where the last one left off.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import libCoverage from 'istanbul-lib-coverage';
import { cellKey, faultSpaceFile, readFaultSpace } from '../coverage/fault-space.js';
import { runFiles } from '../run-data/files.js';
import type { Random } from '../util/random.js';
import {
  drawFault,
  fits,
  generateSchedule,
  hookFaultKinds,
  type GenerateOptions,
  type PlannedFault,
} from './plan.js';

export interface CorpusEntry {
  kind: 'limbo-corpus';
  version: 1;
  name: string;
  seed: number;
  schedule: PlannedFault[];
  /** What its run reached first: branch arms and fault-space cells no earlier run had. */
  added: { branches: number; cells: number };
}

export interface GrowthStep {
  newBranches: number;
  newCells: number;
  branches: number;
  cells: number;
  corpus: number;
  /** True when the run's schedule joined the corpus. */
  kept: boolean;
}

/** Arms of every branch a coverage map reached, as `file:branch:arm`. */
export function reachedArms(map: libCoverage.CoverageMapData): Set<string> {
  const out = new Set<string>();
  for (const [file, data] of Object.entries(map))
    for (const [id, counts] of Object.entries(data.b))
      counts.forEach((n, arm) => {
        if (n > 0) out.add(`${file}:${id}:${arm}`);
      });
  return out;
}

export class Corpus {
  readonly entries: CorpusEntry[] = [];
  private readonly branches = new Set<string>();
  private readonly cells = new Set<string>();

  /** `dir`: where the corpus is kept (created on the first save); entries already there are loaded. */
  constructor(private readonly dir: string) {
    if (!existsSync(dir)) return;
    for (const f of readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort()) {
      let entry: CorpusEntry;
      try {
        entry = JSON.parse(readFileSync(join(dir, f), 'utf8')) as CorpusEntry;
      } catch (err) {
        throw new Error(`${join(dir, f)} is not a corpus entry: ${String(err)}`, { cause: err });
      }
      if (entry.kind !== 'limbo-corpus' || !Array.isArray(entry.schedule))
        throw new Error(`${join(dir, f)} is not a corpus entry (kind ${String(entry.kind)})`);
      this.entries.push(entry);
    }
  }

  get branchCount(): number {
    return this.branches.size;
  }

  get cellCount(): number {
    return this.cells.size;
  }

  /**
   * Reads what a run reached (its run directory's coverage.json and fault-space.json); a
   * schedule that reached anything new joins the corpus and is saved.
   */
  observe(name: string, seed: number, schedule: readonly PlannedFault[], runDir: string): GrowthStep {
    let newBranches = 0;
    let newCells = 0;
    const coverage = join(runDir, runFiles.coverage);
    if (existsSync(coverage))
      for (const arm of reachedArms(
        JSON.parse(readFileSync(coverage, 'utf8')) as libCoverage.CoverageMapData,
      ))
        if (!this.branches.has(arm)) {
          this.branches.add(arm);
          newBranches++;
        }
    const space = join(runDir, faultSpaceFile);
    if (existsSync(space))
      for (const c of readFaultSpace(space).cells) {
        const key = cellKey(c);
        if (!this.cells.has(key)) {
          this.cells.add(key);
          newCells++;
        }
      }
    const kept = newBranches + newCells > 0;
    if (kept) {
      const entry: CorpusEntry = {
        kind: 'limbo-corpus',
        version: 1,
        name,
        seed,
        schedule: [...schedule],
        added: { branches: newBranches, cells: newCells },
      };
      this.entries.push(entry);
      this.save(entry);
    }
    return {
      newBranches,
      newCells,
      branches: this.branches.size,
      cells: this.cells.size,
      corpus: this.entries.length,
      kept,
    };
  }

  /** The next schedule: derived from a corpus entry half the time, else drawn fresh. */
  next(random: Random, o: GenerateOptions): { schedule: PlannedFault[]; from?: string; how?: string } {
    if (this.entries.length === 0 || random.int(2) === 0) return { schedule: generateSchedule(random, o) };
    const parent = random.pick(this.entries);
    const m = mutate(random, parent.schedule, o);
    return m === undefined ? { schedule: generateSchedule(random, o) } : { ...m, from: parent.name };
  }

  private save(entry: CorpusEntry): void {
    mkdirSync(this.dir, { recursive: true });
    const file = join(this.dir, `${entry.name}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(entry, null, 2) + '\n');
    renameSync(`${file}.tmp`, file);
  }
}

const MUTATIONS = ['add', 'drop', 'shift', 'stretch', 'redraw'] as const;
/** A mutation that breaks the schedule's rules (two faults on one thing at once) is drawn again this many times. */
const MUTATION_TRIES = 8;

/**
 * One change to a schedule: add a fault, drop one, shift one in time, change its length, or
 * draw it again of the same kind (a new target, direction or size). Undefined when no change
 * that keeps the schedule valid was found.
 */
export function mutate(
  random: Random,
  schedule: readonly PlannedFault[],
  o: GenerateOptions,
): { schedule: PlannedFault[]; how: string } | undefined {
  // A declared target has no fault hooks: its changes draw from the rest, as its schedules do.
  const kinds = o.shape !== undefined ? o.kinds.filter((k) => !hookFaultKinds.has(k)) : o.kinds;
  const lastStart = Math.max(0, o.chaosMs - 2000);
  for (let t = 0; t < MUTATION_TRIES; t++) {
    const how = random.pick(MUTATIONS);
    const i = random.int(Math.max(1, schedule.length));
    const rest = schedule.filter((_, k) => k !== i);
    const f = schedule[i];
    let changed: PlannedFault | undefined;
    switch (how) {
      case 'add': {
        if (schedule.length >= o.maxFaults || kinds.length === 0) continue;
        const added = drawFault(random, random.pick(kinds), o);
        if (!fits(schedule, added)) continue;
        return { schedule: sorted([...schedule, added]), how: `add ${added.fault}` };
      }
      case 'drop':
        if (schedule.length < 2) continue;
        return { schedule: rest, how: `drop ${f!.fault}` };
      case 'shift': {
        if (f === undefined) continue;
        const by = random.between(5, 20) * 100 * (random.int(2) === 0 ? 1 : -1);
        changed = { ...f, atMs: Math.min(lastStart, Math.max(0, f.atMs + by)) };
        break;
      }
      case 'stretch': {
        if (f === undefined) continue;
        changed = { ...f, forMs: Math.min(4000, Math.max(500, f.forMs + random.between(-15, 15) * 100)) };
        break;
      }
      case 'redraw': {
        if (f === undefined || !(kinds as readonly string[]).includes(f.fault)) continue;
        const again = drawFault(random, f.fault as (typeof kinds)[number], o);
        changed = { ...again, atMs: f.atMs, forMs: f.forMs };
        break;
      }
    }
    if (changed === undefined || JSON.stringify(changed) === JSON.stringify(f) || !fits(rest, changed))
      continue;
    return { schedule: sorted([...rest, changed]), how: `${how} ${changed.fault}` };
  }
  return undefined;
}

const sorted = (s: PlannedFault[]): PlannedFault[] => s.sort((a, b) => a.atMs - b.atMs);
