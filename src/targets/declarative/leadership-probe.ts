// The declared leadership probe, asked of one service: does it say "I lead", and for which
// partitions. leaderOf (faults aim at the leader) and the leadership signals (who led when,
// served as limbo_processor_is_leader) both ask through here, so they cannot disagree.
//
//   http     POST/GET the service's port, leaderWhen over the JSON answer   ─▶ { '0': true|false }
//   command  run per service: exit 0 (or JSON that says so with leaderWhen) ─▶ { '0': true|false }
//   metric   the service's /metrics, the gauge at 1 (per partitionLabel)   ─▶ { '3': true, '5': false }
//
// One group leads everything for http and command (and metric without partitionLabel): the
// answer is for partition '0' and stands for every partition.
import { execFile } from 'node:child_process';
import { scrape } from '../../telemetry/prom-text.js';
import type { LeaderWhen, LeadershipDeclaration } from './declaration.js';
import { jsonAt } from './json-path.js';
import { fill, type TemplateValues } from './template.js';

/** Each ask of one service is bounded by this. */
export const LEADER_ASK_MS = 1500;

/** Partition → whether this service leads it. */
export type LeaderAnswer = ReadonlyMap<string, boolean>;

/** The partition a one-group answer is given under. */
export const GROUP_PARTITION = '0';

export interface AskedService {
  values: TemplateValues;
  /** Its /metrics URL, filled in, when it has one. */
  metricsUrl: string | undefined;
}

/**
 * Whether a JSON answer says "I lead"; a string `equals` is a template of the asked service's
 * own (`'{{name}}'`: a system that names its leader).
 */
export function saysLeader(json: unknown, w: LeaderWhen, v: TemplateValues): boolean {
  const { value, expected } = readLeaderWhen(json, w, v);
  return value !== undefined && value === expected;
}

/** The value at leaderWhen's path, and the value that means "I lead" (another path's, or `equals` filled in). */
function readLeaderWhen(
  json: unknown,
  w: LeaderWhen,
  v: TemplateValues,
): { value: unknown; expected: unknown } {
  return {
    value: jsonAt(json, w.jsonPath),
    expected:
      w.equalsJsonPath !== undefined
        ? jsonAt(json, w.equalsJsonPath)
        : typeof w.equals === 'string'
          ? fill(w.equals, v)
          : w.equals,
  };
}

/** Whether the probe groups everything under one leader (not per partition). */
export const isGroupLeadership = (l: LeadershipDeclaration): boolean =>
  !('metric' in l) || l.partitionLabel === undefined;

/** Whether `answer` says the service leads `partition`. */
export function leads(l: LeadershipDeclaration, answer: LeaderAnswer, partition: number): boolean {
  return answer.get(isGroupLeadership(l) ? GROUP_PARTITION : String(partition)) === true;
}

/**
 * The service's answer, or undefined when it gave none (paused, dying, not serving, the ask
 * timed out): "no answer" is not "not the leader", and the signals tell them apart.
 */
export async function askLeader(
  l: LeadershipDeclaration,
  s: AskedService,
  env: NodeJS.ProcessEnv,
): Promise<LeaderAnswer | undefined> {
  return (await probeLeader(l, s, env)).answer;
}

/** A service's answer to the probe and, in a few words, what it said (for "nobody leads" errors). */
export interface ProbeResult {
  answer: LeaderAnswer | undefined;
  said: string;
}

/** Asks the service, keeping what it said: `askLeader` and the account of a failed leaderOf read the same ask. */
export async function probeLeader(
  l: LeadershipDeclaration,
  s: AskedService,
  env: NodeJS.ProcessEnv,
): Promise<ProbeResult> {
  try {
    if ('command' in l) return await commandSaysLeader(l, s.values, env);
    if ('metric' in l) {
      if (s.metricsUrl === undefined) return { answer: undefined, said: 'no metrics URL declared' };
      const samples = (await scrape(s.metricsUrl, LEADER_ASK_MS)).filter((m) => m.name === l.metric);
      const values = samples.map((m) => `${JSON.stringify(m.labels)}=${m.value}`).slice(0, 4);
      const said = samples.length === 0 ? `no ${l.metric} in its metrics` : `${l.metric} ${values.join(' ')}`;
      if (l.partitionLabel === undefined)
        return { answer: new Map([[GROUP_PARTITION, samples.some((m) => m.value === 1)]]), said };
      const byPartition = new Map<string, boolean>();
      for (const m of samples) {
        const p = m.labels[l.partitionLabel];
        if (p !== undefined) byPartition.set(p, byPartition.get(p) === true || m.value === 1);
      }
      return { answer: byPartition, said };
    }
    const port = s.values.ports[l.http.port];
    if (port === undefined) return { answer: undefined, said: `no port ${l.http.port}` };
    const res = await fetch(`http://127.0.0.1:${port}${l.http.path}`, {
      method: l.http.method ?? (l.http.body !== undefined ? 'POST' : 'GET'),
      ...(l.http.body !== undefined
        ? { body: JSON.stringify(l.http.body), headers: { 'content-type': 'application/json' } }
        : {}),
      signal: AbortSignal.timeout(LEADER_ASK_MS),
    });
    if (!res.ok) return { answer: new Map([[GROUP_PARTITION, false]]), said: `HTTP ${res.status}` };
    const json = await res.json();
    return {
      answer: new Map([[GROUP_PARTITION, saysLeader(json, l.leaderWhen, s.values)]]),
      said: whatItSaid(json, l.leaderWhen, s.values),
    };
  } catch (err) {
    return { answer: undefined, said: `no answer (${err instanceof Error ? err.message : String(err)})` };
  }
}

/** "status.leader is \"svc-2\", leads when \"svc-1\"": the path's value against what means "I lead". */
function whatItSaid(json: unknown, w: LeaderWhen, v: TemplateValues): string {
  const { value, expected } = readLeaderWhen(json, w, v);
  const shown = (x: unknown): string => (x === undefined ? 'absent' : clip(JSON.stringify(x)));
  return `${w.jsonPath} is ${shown(value)}, leads when ${shown(expected)}`;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * The leadership command for one service: exit 0 (and, with leaderWhen, JSON that says so) is
 * "I lead", another exit "not me"; its declared noAnswerExit, killed at the bound, or not
 * started: no answer.
 */
function commandSaysLeader(
  l: Extract<LeadershipDeclaration, { command: string }>,
  v: TemplateValues,
  env: NodeJS.ProcessEnv,
): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(
      l.command,
      (l.args ?? []).map((a) => fill(a, v)),
      { env, timeout: LEADER_ASK_MS, maxBuffer: 1024 * 1024, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        const last = (text: string): string => clip(text.trim().split('\n').pop() ?? '');
        if (err && typeof err.code === 'number' && err.code === l.noAnswerExit)
          return resolve({
            answer: undefined,
            said: `no answer (exit ${err.code}${last(stderr) !== '' ? `: ${last(stderr)}` : ''})`,
          });
        if (err)
          return resolve(
            typeof err.code === 'number'
              ? {
                  answer: new Map([[GROUP_PARTITION, false]]),
                  said: `exit ${err.code}${last(stderr) !== '' ? `: ${last(stderr)}` : ''}`,
                }
              : {
                  answer: undefined,
                  said: `no answer (${err.killed ? 'killed at the bound' : err.message})`,
                },
          );
        if (l.leaderWhen === undefined)
          return resolve({ answer: new Map([[GROUP_PARTITION, true]]), said: 'exit 0' });
        try {
          const json = JSON.parse(stdout) as unknown;
          resolve({
            answer: new Map([[GROUP_PARTITION, saysLeader(json, l.leaderWhen, v)]]),
            said: `exit 0, ${whatItSaid(json, l.leaderWhen, v)}`,
          });
        } catch {
          resolve({
            answer: new Map([[GROUP_PARTITION, false]]),
            said: `exit 0, output not JSON: ${last(stdout) === '' ? '(empty)' : last(stdout)}`,
          });
        }
      },
    );
  });
}
