// detection.html: `limbo detect`'s page (src/detect/detect.ts decides and writes it). Each bug
// switch with what caught it, the evidence and its runs, then the same suites on plain
// reference. The page takes plain data: the fields below, which a DetectionReport carries.
import { escapeHtml } from './html-escape.js';

/** One suite's run as the page lists it. */
export interface DetectionPageRun {
  suite: string;
  verdict: string;
  failing: string[];
}

/** What detection.html shows (a DetectionReport of src/detect/ is one). */
export interface DetectionPage {
  seed: number;
  startedAt: string;
  switches: {
    switch: string;
    mustCatch: boolean;
    description: string;
    source: string;
    caught: boolean;
    caughtBy?: { suite: string; check: string };
    evidence?: string;
    secondsToFail?: number;
    runs: DetectionPageRun[];
  }[];
  score: { caught: number; total: number };
  missedMustCatch: readonly string[];
  reference: DetectionPageRun[];
  falseAlarms: DetectionPageRun[];
}

export function detectionHtml(r: DetectionPage): string {
  const e = escapeHtml;
  const rows = r.switches
    .map(
      (s) =>
        `<tr class="${s.caught ? 'caught' : 'missed'}"><td><b>${e(s.switch)}</b>${s.mustCatch ? '' : ' <i>(optional)</i>'}<br><small>${e(s.description)}</small><br><small>source: ${e(s.source)}</small></td>` +
        `<td>${s.caughtBy !== undefined ? `${e(s.caughtBy.suite)} / ${e(s.caughtBy.check)}` : 'MISSED'}</td>` +
        `<td>${s.secondsToFail ?? '-'}</td><td>${e(s.evidence ?? '')}</td>` +
        `<td>${s.runs.map((v) => `${e(v.suite)}: ${e(v.verdict)}`).join('<br>')}</td></tr>`,
    )
    .join('\n');
  const ref = r.reference
    .map(
      (v) =>
        `<tr class="${v.verdict === 'fail' ? 'missed' : 'caught'}"><td>${e(v.suite)}</td><td>${e(v.verdict)}</td><td>${e(v.failing.join(', '))}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>limbo detection power</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
tr.caught td:nth-child(2){color:#075}tr.missed td:nth-child(2){color:#b00;font-weight:bold}</style></head><body>
<h1>Detection power</h1><p>seed ${r.seed}, started ${e(r.startedAt)}. Score <b>${r.score.caught}/${r.score.total}</b>; must-catch missed: ${e(r.missedMustCatch.join(', ') || 'none')}; false alarms on reference: <b>${r.falseAlarms.length}</b>.</p>
<table><tr><th>switch</th><th>caught by</th><th>seconds to first failing verdict</th><th>evidence</th><th>runs</th></tr>
${rows}</table><h2>The same suites on plain reference</h2><table><tr><th>suite</th><th>verdict</th><th>failing checks</th></tr>
${ref}</table></body></html>
`;
}
