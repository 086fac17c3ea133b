// The goals of `npm run bench`, each recorded by the benchmark that measures
// it and printed by main.ts as one table at the end: figure, goal, measured, met or short. A
// benchmark that did not run (skipped by name or by its env switch) leaves its rows "not run".
import { fmt } from './load.js';

export interface Goal {
  figure: string;
  /** The bench that measures it (`npm run bench <bench>`). */
  bench: string;
  op: '>=' | '<=';
  target: number;
  unit?: string;
}

export const GOALS = {
  clusterThroughput: { figure: 'cluster calls/s ÷ bare Node echo', bench: 'cluster', op: '>=', target: 0.35 },
  clusterP99: { figure: 'cluster p99 ÷ bare echo p99', bench: 'cluster', op: '<=', target: 4 },
  logAppends: {
    figure: 'log server appends/s ÷ raw fsyncs/s (64 appenders)',
    bench: 'log',
    op: '>=',
    target: 10,
  },
  referenceVsRestate: {
    figure: 'reference ops/s ÷ real Restate, same mix',
    bench: 'restate',
    op: '>=',
    target: 3,
  },
  killAnswered: {
    figure: 'calls in flight at a leader kill: slowest answer after it',
    bench: 'restate',
    op: '<=',
    target: 1000,
    unit: 'ms',
  },
  runnerRss: {
    figure: 'runner peak RSS during the standard suites',
    bench: 'testbed',
    op: '<=',
    target: 150,
    unit: 'MiB',
  },
  clusterRss: {
    figure: 'cluster peak memory, standard suites (private + shared once)',
    bench: 'testbed',
    op: '<=',
    target: 300,
    unit: 'MiB',
  },
  suitesWall: { figure: 'standard suites wall ÷ scheduled phases', bench: 'testbed', op: '<=', target: 1.15 },
  startUp: { figure: 'topology start-up, median', bench: 'testbed', op: '<=', target: 1000, unit: 'ms' },
  exploreParallel: {
    figure: 'explore schedules/hour, --parallel 2 ÷ 1',
    bench: 'explore',
    op: '>=',
    target: 1.6,
  },
  coverageOverhead: {
    figure: 'calls/s with --coverage ÷ without',
    bench: 'coverage',
    op: '>=',
    target: 0.5,
  },
  tracingOverhead: {
    figure: 'calls/s ledger + client spans on ÷ off',
    bench: 'tracing',
    op: '>=',
    target: 0.95,
  },
  injectorP99: {
    figure: 'injector API p99 under churn, 1,000 connections',
    bench: 'injector',
    op: '<=',
    target: 50,
    unit: 'ms',
  },
  injectorUnanswered: {
    figure: 'injector API calls without an answer',
    bench: 'injector',
    op: '<=',
    target: 0,
  },
  injectorStuck: { figure: 'connections stuck after a toxic change', bench: 'injector', op: '<=', target: 0 },
} as const satisfies Record<string, Goal>;

export type GoalName = keyof typeof GOALS;

const measured = new Map<GoalName, { value: number; note?: string }>();

/** The prefix of the line a benchmark's child process reports its figures on. */
export const GOAL_LINE = 'limbo-bench-goals ';

export function recordedGoals(): Record<string, { value: number; note?: string }> {
  return Object.fromEntries(measured);
}

/** Takes in the figures a child reported (JSON from its goals line); unknown names are ignored. */
export function recordGoalsFrom(json: string): void {
  const got = JSON.parse(json) as Record<string, { value: number | null; note?: string }>;
  for (const [name, m] of Object.entries(got))
    if (name in GOALS) recordGoal(name as GoalName, m.value ?? NaN, m.note);
}

/** Records a measured figure for the summary (the last one recorded for a goal wins). */
export function recordGoal(name: GoalName, value: number, note?: string): void {
  measured.set(name, note === undefined ? { value } : { value, note });
}

export function goalMet(goal: Goal, value: number): boolean {
  return goal.op === '>=' ? value >= goal.target : value <= goal.target;
}

function show(goal: Goal, value: number): string {
  const digits = goal.unit === 'ms' || goal.unit === 'MiB' ? 0 : Math.abs(value) >= 10 ? 1 : 3;
  return `${fmt(value, digits)}${goal.unit ? ` ${goal.unit}` : ''}`;
}

/** The summary table as text; `ran` names the benches that ran in this invocation. */
export function summaryTable(ran: ReadonlySet<string>): string {
  const rows = (Object.entries(GOALS) as [GoalName, Goal][]).map(([name, goal]) => {
    const m = measured.get(name);
    const status = !ran.has(goal.bench)
      ? 'not run'
      : m === undefined || !Number.isFinite(m.value)
        ? 'no figure'
        : goalMet(goal, m.value)
          ? 'met'
          : 'short';
    return [
      goal.figure,
      `${goal.op === '>=' ? '≥' : '≤'} ${goal.target}${goal.unit ? ` ${goal.unit}` : ''}`,
      m === undefined ? '-' : show(goal, m.value),
      status + (m?.note ? ` (${m.note})` : ''),
      goal.bench,
    ];
  });
  const header = ['figure', 'goal', 'measured', 'status', 'bench'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}
