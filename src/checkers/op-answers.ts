// Shared reading of client ops for the answer checks: which answers are errors, which are
// impossible under the protocol, and which ops a fault window met.
import { pairOps, runEndMs, type FaultWindow, type PairedOp, type RunData } from '../run-data/run-data.js';

/** Client ops, without the runner's final reads (they are not client traffic). */
export function clientOps(run: RunData): PairedOp[] {
  return pairOps(run.history).filter((p) => p.invoke.request?.final !== true);
}

/** The HTTP status the op was answered with, if the server answered. */
export function statusOf(p: PairedOp): number | undefined {
  return p.end?.response?.status;
}

/** The server answered with an error (4xx or 5xx), as opposed to no answer or a timeout. */
export function isErrorAnswer(p: PairedOp): boolean {
  const s = statusOf(p);
  return s !== undefined && s >= 400;
}

/** The error message the server put in the body, if any. */
export function errorMessageOf(p: PairedOp): string | undefined {
  const body = p.end?.response?.body;
  if (typeof body !== 'object' || body === null) return undefined;
  // limbo's ingress says `error`; Restate's (and many HTTP APIs) say `message`.
  const { error, message } = body as { error?: unknown; message?: unknown };
  if (typeof error === 'string') return error;
  if (typeof message === 'string') return message;
  return undefined;
}

/** Ops live during [fromMs, toMs]: invoked before its end and not ended before its start. */
export function opsLiveIn(ops: readonly PairedOp[], fromMs: number, toMs: number, endMs: number): PairedOp[] {
  return ops.filter((p) => p.invoke.timeMs <= toMs && (p.end?.timeMs ?? endMs) >= fromMs);
}

export function windowLabel(w: FaultWindow): string {
  return `${w.fault}@${w.target}`;
}

/** One op as evidence: what it asked, how it ended. */
export function describeOp(p: PairedOp, run: RunData): Record<string, unknown> {
  const end = runEndMs(run);
  return {
    opId: p.invoke.opId,
    kind: p.invoke.kind,
    invocationId: p.end?.invocationId ?? p.invoke.invocationId,
    path: p.invoke.request?.path,
    invokedAtMs: p.invoke.timeMs,
    endedAtMs: p.end?.timeMs,
    latencyMs: Math.round((p.end?.timeMs ?? end) - p.invoke.timeMs),
    status: statusOf(p),
    error: errorMessageOf(p) ?? p.end?.error?.message,
  };
}

const EXCERPT_CHARS = 120;

/**
 * How an op ended, in a few words for a summary: `ok 200 {"value":3}`, `fail 503 "no leader"`,
 * `info client_timeout: …`, or `no answer (open at the deadline)`; bodies cut to a short excerpt.
 */
export function answerExcerpt(p: PairedOp): string {
  const end = p.end;
  if (end === undefined) return 'no answer (open at the deadline)';
  const status = end.response?.status;
  const body = end.response?.body;
  const parts: string[] = [end.type];
  if (status !== undefined) parts.push(String(status));
  if (end.error !== undefined) parts.push(`${end.error.code}: ${cut(end.error.message)}`);
  if (body !== undefined) parts.push(`body ${cut(JSON.stringify(body) ?? typeof body)}`);
  else if (end.type === 'ok') parts.push('no body');
  return parts.join(' ');
}

const cut = (s: string): string => (s.length <= EXCERPT_CHARS ? s : `${s.slice(0, EXCERPT_CHARS)}…`);

export function ids(ops: readonly PairedOp[]): string[] {
  return ops
    .map((p) => p.end?.invocationId ?? p.invoke.invocationId)
    .filter((x): x is string => x !== undefined);
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}
