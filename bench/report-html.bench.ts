// How long report.html takes to render for long runs, beside what the runner already pays to
// write the same series as series.json (JSON.stringify of the samples), as a ratio; and the
// size of the report against series.json. Series are the sample leader-kill run repeated
// over 5 ingress-like services, up to about an hour of 250 ms scrapes.
import { renderReportHtml } from '../src/report/html.js';
import type { SeriesSample } from '../src/run-data/run-data.js';
import { sampleRun, sampleSpans } from '../test/report/sample-run.js';

const REPEATS = [10, 60, 180];

function timeMs(f: () => unknown): { ms: number; out: unknown } {
  const t = performance.now();
  const out = f();
  return { ms: performance.now() - t, out };
}

export async function run(): Promise<void> {
  const base = sampleRun();
  const spans = sampleSpans();
  for (const repeats of REPEATS) {
    const series: SeriesSample[] = [];
    for (let k = 0; k < repeats; k++)
      for (const s of base.series)
        series.push({
          ...s,
          service: `${s.service}-${k % 5}`,
          labels: { ...s.labels },
          tMs: s.tMs + k * 20_000,
        });
    const run = { ...base, series, phases: { ...base.phases, deadlineMs: repeats * 20_000 } };
    const json = timeMs(() => JSON.stringify(series));
    const html = timeMs(() => renderReportHtml({ run, verdicts: [], spans, replayCommand: 'x' }));
    const jsonBytes = (json.out as string).length;
    const htmlBytes = (html.out as string).length;
    process.stdout.write(
      `${String(Math.round(repeats / 3)).padStart(3)} min, ${String(series.length).padStart(7)} samples: ` +
        `render ${html.ms.toFixed(0)} ms vs series.json ${json.ms.toFixed(0)} ms (×${(html.ms / json.ms).toFixed(2)}); ` +
        `report ${(htmlBytes / 1024).toFixed(0)} KiB vs series.json ${(jsonBytes / 1024).toFixed(0)} KiB\n`,
    );
  }
  await Promise.resolve();
}
