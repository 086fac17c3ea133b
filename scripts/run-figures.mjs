// Figures for a findings page from one run directory (docs/etcd.md): per leader-hitting fault
// window, the failover time as the metrics saw it (a different node reports
// limbo_processor_is_leader 1) and as clients saw it (the first write invoked after the
// injection that succeeded); then the slowest op and the last answer after the final heal.
//   node scripts/run-figures.mjs runs/leader-kill/<time> [more run directories…]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

for (const dir of process.argv.slice(2)) {
  const faults = JSON.parse(readFileSync(join(dir, 'faults.json'), 'utf8'));
  const series = JSON.parse(readFileSync(join(dir, 'series.json'), 'utf8'));
  const samples = Array.isArray(series) ? series : series.samples;
  const lines = readFileSync(join(dir, 'history.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const invoked = new Map();
  const ops = [];
  for (const e of lines)
    if (e.type === 'invoke') invoked.set(e.opId, e);
    else if (invoked.has(e.opId)) ops.push({ invoke: invoked.get(e.opId), end: e });
  const leaderSamples = samples
    .filter((s) => s.name === 'limbo_processor_is_leader' && s.value === 1)
    .sort((a, b) => a.tMs - b.tMs);
  const out = [`${dir}`];
  for (const w of faults.windows) {
    if (w.leader !== true) continue;
    const node = (s) => s.labels?.node ?? s.service;
    const before = leaderSamples.filter((s) => s.tMs <= w.injectedAtMs).at(-1);
    const next = leaderSamples.find((s) => s.tMs > w.injectedAtMs && node(s) !== node(before ?? {}));
    // The longest stretch with no write answered ok, from the injection to 5 s after the heal (or the end of the chaos phase).
    const until = Math.min((w.healedAtMs ?? faults.phases.healedAtMs) + 5000, faults.phases.chaosEndMs);
    const oks = ops
      .filter(
        (o) =>
          o.end.type === 'ok' &&
          o.invoke.kind !== 'counterGet' &&
          o.end.timeMs >= w.injectedAtMs &&
          o.end.timeMs <= until,
      )
      .map((o) => o.end.timeMs)
      .sort((a, b) => a - b);
    let gap = 0;
    let prev = w.injectedAtMs;
    for (const t of [...oks, until]) ((gap = Math.max(gap, t - prev)), (prev = t));
    out.push(
      `  ${w.fault}@${w.target}: leader ${before ? node(before) : '?'} → ${next ? node(next) : '(no other seen)'}${next ? ` ${Math.round(next.tMs - w.injectedAtMs)} ms after the injection (250 ms scrapes)` : ''}; longest stretch without an ok write ${Math.round(gap)} ms`,
    );
  }
  const slowest = ops.reduce((m, o) => Math.max(m, o.end.timeMs - o.invoke.timeMs), 0);
  const healed = faults.phases.healedAtMs;
  const last = ops
    .filter((o) => o.invoke.timeMs < healed)
    .reduce((m, o) => Math.max(m, o.end.timeMs - healed), 0);
  const count = (t) => ops.filter((o) => o.end.type === t).length;
  out.push(
    `  ops ${ops.length} (ok ${count('ok')}, fail ${count('fail')}, unknown ${count('info')}); slowest op ${Math.round(slowest)} ms; last answer to a call made before the final heal: ${Math.round(last)} ms after it`,
  );
  console.log(out.join('\n'));
}
