// A diagnosis group in one sentence, and a diagnosis in a few lines for the console:
// "7 sends left hanging, stopped at ingress-1 in "ingress send" (partition 2) waiting for …;
//  partition 2: no leader 0.7–5.1 s, then processor-1 led 5.1–20.0 s, epoch 1; during
//  clients-before-processors@processor-1,processor-2 (0.0–3.0 s); processor-1 applied their
//  End at 5.4 s and no reply reached ingress-1."
import type {
  CheckFinding,
  Diagnosis,
  DiagnosisFault,
  DiagnosisGroup,
  OpProblem,
} from '../run-data/verdict.js';
import { describeLeadership, sec } from './leadership.js';

const kindWords: Record<string, [string, string]> = {
  call: ['call', 'calls'],
  send: ['send', 'sends'],
  counterAdd: ['counter add', 'counter adds'],
  counterGet: ['counter get', 'counter gets'],
  idempotentRetry: ['idempotent retry', 'idempotent retries'],
};

/** Each problem as a verb phrase after "7 calls". */
const problemWords: Record<OpProblem, string> = {
  'left hanging': 'left hanging',
  'lost reply': 'lost their reply',
  'lost effect': 'lost their effect',
  'not exactly once': 'not applied exactly once',
  'wrong answer': 'answered wrongly',
  'impossible answer': 'answered with an impossible error',
  'error answer': 'answered with an error',
  slow: 'slow',
  'answered late': 'answered late',
  named: 'named by a failed check',
};

function opsWord(g: DiagnosisGroup): string {
  const kinds = Object.keys(g.kinds);
  const words = kinds.length === 1 ? (kindWords[kinds[0]!] ?? [kinds[0]!, `${kinds[0]!}s`]) : ['op', 'ops'];
  return `${g.count} ${g.count === 1 ? words[0] : words[1]}`;
}

export function faultText(f: DiagnosisFault): string {
  const window = `${sec(f.fromMs)}–${f.toMs !== undefined ? `${sec(f.toMs)} s` : 'never healed'}`;
  return `${f.name} (${window})`;
}

/** What the last hop did, as a verb phrase: "applied their End", "reached "log append"". */
function reached(span: string, their: string): string {
  const record = /^(apply|log append) (\w+)$/.exec(span);
  if (record !== null)
    return `${record[1] === 'apply' ? 'applied' : 'appended'} ${their} ${record[2]![0]!.toUpperCase()}${record[2]!.slice(1)}`;
  return `reached "${span}"`;
}

export function groupSentence(g: DiagnosisGroup, traced: boolean): string {
  const parts: string[] = [];
  const p = g.partition !== undefined ? `partition ${g.partition}` : undefined;
  const hanging = g.problem === 'left hanging';
  const what = `${opsWord(g)} ${problemWords[g.problem]}`;
  if (g.service === 'unknown')
    parts.push(
      `${what}${p !== undefined ? ` on ${p}` : ''}, hop unknown (${traced ? 'no spans of these ops' : 'the run has no spans'})`,
    );
  else if (g.endedWith !== undefined)
    parts.push(
      `${what}: their answer came from ${g.service} "${g.span}"${p !== undefined ? ` (${p})` : ''}, which failed with ${g.endedWith}`,
    );
  else
    parts.push(
      `${what}, ${hanging ? 'stopped' : 'waited longest'} at ${g.service} in "${g.span}"` +
        (p !== undefined ? ` (${p})` : '') +
        (g.waitingFor !== undefined ? ` waiting for ${g.waitingFor}` : ''),
    );
  if (p !== undefined && g.leadership.length > 0) parts.push(`${p}: ${describeLeadership(g.leadership)}`);
  const during = g.faults.filter((f) => f.before !== true);
  if (during.length > 0) parts.push(`during ${during.slice(0, 3).map(faultText).join(', ')}`);
  else if (g.faults[0] !== undefined) parts.push(`after ${faultText(g.faults[0])}`);
  else parts.push('no fault was in');
  const last = g.lastHop;
  if (last !== undefined && !(last.service === g.service && last.span === g.span)) {
    const their = g.count === 1 ? 'its' : 'their';
    const at =
      sec(last.fromMs) === sec(last.toMs)
        ? `${sec(last.fromMs)} s`
        : `${sec(last.fromMs)}–${sec(last.toMs)} s`;
    const tail = hanging && last.service !== g.service ? ` and no reply reached ${g.service}` : '';
    parts.push(`${last.service} ${reached(last.span, their)} at ${at}${tail}`);
  }
  return parts.join('; ') + '.';
}

/**
 * A finding that names no op in one sentence: "pendingDrains: limbo_ingress_pending_requests
 * rose to 3 and stayed, on ingress-1 at 12.3–12.6 s; during reset_peer@ingress->processor-1
 * (12.0–16.0 s)".
 */
export function findingSentence(f: CheckFinding): string {
  const where = [
    f.service !== undefined ? `on ${f.service}` : undefined,
    f.partition !== undefined ? `partition ${f.partition}` : undefined,
  ].filter((x): x is string => x !== undefined);
  const parts = [
    `${f.check}: ${f.what}${where.length > 0 ? `, ${where.join(', ')}` : ''} at ${sec(f.fromMs)}–${sec(f.toMs)} s`,
  ];
  const during = f.faults.filter((x) => x.before !== true);
  if (during.length > 0) parts.push(`during ${during.slice(0, 3).map(faultText).join(', ')}`);
  else if (f.faults[0] !== undefined) parts.push(`after ${faultText(f.faults[0])}`);
  else parts.push('no fault was in');
  for (const l of f.leadership.slice(0, 2))
    if (l.stretches.length > 0) parts.push(`partition ${l.partition}: ${describeLeadership(l.stretches)}`);
  return parts.join('; ') + '.';
}

/** The top groups, one sentence each, then the findings that name no op, for the console after the failing checks. */
export function formatDiagnosis(d: Diagnosis, maxGroups = 3, runDir = '<run directory>'): string[] {
  const lines: string[] = [];
  for (const f of (d.findings ?? []).slice(0, maxGroups)) lines.push(`  why: ${f.sentence}`);
  if (d.groups.length === 0) return lines;
  lines.push(`  why: ${d.badOps} bad op(s) in ${d.groups.length} group(s) by where they stopped`);
  for (const g of d.groups.slice(0, maxGroups)) {
    lines.push(`    - ${g.sentence}`);
    if (g.invocationIds[0] !== undefined)
      lines.push(`      e.g. npx limbo trace ${g.invocationIds[0]} --run ${runDir}`);
  }
  const rest = d.groups.slice(maxGroups);
  if (rest.length > 0)
    lines.push(
      `    … ${rest.length} more group(s), ${rest.reduce((n, g) => n + g.count, 0)} op(s): verdict.json "diagnosis"`,
    );
  return lines;
}

/**
 * The diagnosis in one line for a failed check (a JUnit failure's first line): the check's own
 * finding when it names no op, else the largest group among the ops the check named, else the
 * largest group of the run.
 */
export function diagnosisHeadline(d: Diagnosis | undefined, check?: string): string | undefined {
  if (d === undefined) return undefined;
  const finding = d.findings?.find((f) => f.check === check);
  if (finding !== undefined) return `why: ${finding.sentence}`;
  const top = d.groups.find((g) => check !== undefined && g.checks.includes(check)) ?? d.groups[0];
  if (top === undefined) return undefined;
  const more = d.groups.length > 1 ? ` (+${d.groups.length - 1} more group(s))` : '';
  return `why: ${top.sentence}${more}`;
}
