// Trace ↔ history reconciliation: what the servers did against what the clients saw.
//   - a ghost completion: the invocation's End was applied on the server while the client op
//     stayed open or gave up — the reply was lost on the way back (the seed bug, named by its
//     cause: which span, service, epoch and when). The End counts as done when a leader
//     applied it (`apply end`), when the log acknowledged its append (`log append end` ended
//     ok), or when the log server took the append (its `log append`, child of a `log append
//     end`) even though the proposer died before the ack: a durable End is applied by every
//     replica, and a new leader that caught up on it as a follower records no span of its own;
//   - a client `ok` with no server span at all in its trace (an answer from nowhere);
//   - two End spans for one invocation at different log positions (completed twice).
// Needs the run's spans; on a target whose servers export none (e.g. Restate) the ghosts come
// from what the server says of the hung invocations (run.serverInvocations, Restate's
// sys_invocation status), the other two kinds can't be told, and with neither it is skipped.
import { clientServiceName, runnerServiceName, spanAttributes as A, spanNames } from '../protocol/names.js';
import { invocationIdOf, pairOps, spanRunMs, type RunData, type RunSpan } from '../run-data/run-data.js';
import { result, type Checker, type CheckResult } from './checker.js';
import { notTraced } from './span-select.js';

/** The name of the span a processor records when it applies an invocation's End record. */
export const END_APPLIED_SPAN = spanNames.apply('end');
/** The processor's span around appending an End record to the log. */
export const END_APPENDED_SPAN = spanNames.processorAppend('end');
/** The log server's span of one append. */
export const LOG_APPEND_SPAN = spanNames.logAppend;

const MAX_LISTED = 100;
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

interface Ghost {
  opId: number;
  kind: string;
  invocationId?: string;
  traceId?: string;
  client: 'open at the deadline' | 'client timeout';
  endApplied?: { span: string; spanId: string; service: string; epoch: unknown; lsn: unknown; atMs: number };
  /** On a target without spans: what the server reported of the invocation. */
  serverStatus?: { status: string; source: string };
  summary: string;
}

export function noGhostCompletions(): Checker {
  const name = 'noGhostCompletions';
  return {
    name,
    check(run: RunData): CheckResult {
      const spans = run.spans;
      if (spans === undefined || spans.length === 0) return notTraced(name);
      const ends = spans.filter((s) => s.name === END_APPLIED_SPAN);
      const endsByInvocation = group(ends, (s) => s.attributes[A.invocationId]);
      const endsByTrace = group(ends, (s) => s.traceId);
      // Durable Ends no leader recorded applying: acknowledged to the proposer, or taken by the log.
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const durable: { span: RunSpan; how: string; invocationId: unknown }[] = [];
      for (const s of spans) {
        if (s.endMs === null || s.status.code === 2) continue;
        if (s.name === END_APPENDED_SPAN)
          durable.push({
            span: s,
            how: 'acknowledged by the log to',
            invocationId: s.attributes[A.invocationId],
          });
        else if (s.name === LOG_APPEND_SPAN) {
          const parent = byId.get(s.parentSpanId);
          if (parent?.name === END_APPENDED_SPAN)
            durable.push({
              span: s,
              how: 'taken by the log from',
              invocationId: parent.attributes[A.invocationId],
            });
        }
      }
      const durableByInvocation = groupBy(durable, (d) => d.invocationId);
      const durableByTrace = groupBy(durable, (d) => d.span.traceId);
      const serverTraces = new Set(
        spans
          .filter((s) => s.service !== clientServiceName && s.service !== runnerServiceName)
          .map((s) => s.traceId),
      );
      const pairs = pairOps(run.history).filter((p) => p.invoke.request?.final !== true);
      const serverSays = run.serverInvocations ?? {};
      if (serverTraces.size === 0 && Object.keys(serverSays).length === 0) {
        const why = `no server spans in this run (${run.target} exports none to limbo) and no invocation status from it: nothing to reconcile the history with`;
        return { ...result(name, 'inconclusive', `skipped: ${why}`), skipped: why };
      }

      const ghosts: Ghost[] = [];
      const okWithoutServer: Record<string, unknown>[] = [];
      for (const p of pairs) {
        const invocationId = invocationIdOf(p);
        const traceId = p.end?.traceId ?? p.invoke.traceId;
        const lostReply =
          p.end === undefined
            ? 'open at the deadline'
            : p.end.error?.code === 'client_timeout'
              ? 'client timeout'
              : undefined;
        if (lostReply !== undefined) {
          const found =
            (invocationId !== undefined ? endsByInvocation.get(invocationId)?.[0] : undefined) ??
            (traceId !== undefined ? endsByTrace.get(traceId)?.[0] : undefined) ??
            (invocationId !== undefined ? durableByInvocation.get(invocationId)?.[0] : undefined) ??
            (traceId !== undefined ? durableByTrace.get(traceId)?.[0] : undefined);
          if (found !== undefined) {
            const { span: applied, how } = 'how' in found ? found : { span: found, how: 'applied on' };
            // The proposer's epoch: on the log server's span, from its parent's.
            const proposer = how === 'taken by the log from' ? byId.get(applied.parentSpanId) : applied;
            const by = how === 'taken by the log from' ? (proposer?.service ?? '?') : applied.service;
            const atMs = spanRunMs(run, applied.endMs ?? applied.startMs);
            const epoch = proposer?.attributes[A.leaderEpoch];
            ghosts.push({
              opId: p.invoke.opId,
              kind: p.invoke.kind,
              ...(invocationId !== undefined ? { invocationId } : {}),
              ...(traceId !== undefined ? { traceId } : {}),
              client: lostReply,
              endApplied: {
                span: applied.name,
                spanId: applied.spanId,
                service: applied.service,
                epoch,
                lsn: applied.attributes[A.lsn],
                atMs: Math.round(atMs),
              },
              summary: `ghost completion: ${invocationId ?? `op ${p.invoke.opId}`} — End ${how} ${by} (epoch ${String(epoch)}) at ${secs(atMs)} (span "${applied.name}" ${applied.spanId} on ${applied.service}); the client ${lostReply === 'client timeout' ? 'timed out' : 'was still waiting at the deadline'}: the reply was lost`,
            });
          } else if (invocationId !== undefined && serverSays[invocationId]?.status === 'completed') {
            const said = serverSays[invocationId];
            ghosts.push({
              opId: p.invoke.opId,
              kind: p.invoke.kind,
              invocationId,
              ...(traceId !== undefined ? { traceId } : {}),
              client: lostReply,
              serverStatus: said,
              summary: `ghost completion: ${invocationId} — ${said.source} says it completed; the client ${lostReply === 'client timeout' ? 'timed out' : 'was still waiting at the deadline'}: the reply was lost`,
            });
          }
        } else if (p.end?.type === 'ok' && traceId !== undefined && !serverTraces.has(traceId)) {
          okWithoutServer.push({ opId: p.invoke.opId, kind: p.invoke.kind, invocationId, traceId });
        }
      }
      // Two End records applied for one invocation (distinct log positions).
      const doubleEnds: Record<string, unknown>[] = [];
      for (const [invocationId, list] of endsByInvocation) {
        const lsns = new Set(list.map((s) => String(s.attributes[A.lsn] ?? s.spanId)));
        if (lsns.size > 1)
          doubleEnds.push({
            invocationId,
            ends: list.map((s) => ({
              service: s.service,
              spanId: s.spanId,
              epoch: s.attributes[A.leaderEpoch],
              lsn: s.attributes[A.lsn],
              atMs: Math.round(spanRunMs(run, s.startMs)),
            })),
          });
      }
      // Without any server span the "ok with no server span" check would flag every op.
      const serversTraced = serverTraces.size > 0 && (run.spansDropped ?? 0) === 0;
      const answeredFromNowhere = serversTraced ? okWithoutServer : [];
      const details = {
        ops: pairs.length,
        endSpans: ends.length,
        serverStatuses: Object.keys(serverSays).length,
        ghostCompletions: ghosts.slice(0, MAX_LISTED),
        okWithoutServerSpan: answeredFromNowhere.slice(0, MAX_LISTED),
        doubleEnds: doubleEnds.slice(0, MAX_LISTED),
        ...(serversTraced
          ? {}
          : {
              note: 'no server spans in this run (or some were dropped): "ok with no server span" not checked',
            }),
      };
      const problems = ghosts.length + answeredFromNowhere.length + doubleEnds.length;
      if (problems === 0) {
        if (
          ends.length === 0 &&
          Object.keys(serverSays).length === 0 &&
          pairs.some((p) => p.end === undefined)
        )
          return result(
            name,
            'inconclusive',
            `${pairs.filter((p) => p.end === undefined).length} ops stayed open but the run has no End spans to reconcile them with (${run.spans?.length ?? 0} spans in all, ${serverTraces.size} traces with a server span)`,
            { details },
          );
        return result(
          name,
          'pass',
          `${pairs.length} ops reconcile with ${ends.length} End spans` +
            (Object.keys(serverSays).length > 0
              ? ` and ${Object.keys(serverSays).length} invocation status(es) from the server`
              : '') +
            ': no ghost completion',
          { details },
        );
      }
      const parts: string[] = [];
      if (ghosts.length > 0)
        parts.push(`${ghosts.length} ghost completion(s) — first: ${ghosts[0]!.summary}`);
      if (answeredFromNowhere.length > 0)
        parts.push(`${answeredFromNowhere.length} client ok with no server span`);
      if (doubleEnds.length > 0) parts.push(`${doubleEnds.length} invocation(s) with two End spans`);
      const ids = [
        ...ghosts.map((g) => g.invocationId),
        ...answeredFromNowhere.map((o) => o.invocationId),
        ...doubleEnds.map((d) => d.invocationId),
      ].filter((i): i is string => typeof i === 'string');
      return result(name, 'fail', parts.join('; '), {
        invocationIds: [...new Set(ids)],
        traceIds: [
          ...new Set(
            [...ghosts.map((g) => g.traceId), ...answeredFromNowhere.map((o) => o.traceId)].filter(
              (t): t is string => typeof t === 'string',
            ),
          ),
        ],
        details,
      });
    },
  };
}

function group(spans: readonly RunSpan[], key: (s: RunSpan) => unknown): Map<string, RunSpan[]> {
  return groupBy(spans, key);
}

function groupBy<T>(items: readonly T[], key: (item: T) => unknown): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const s of items) {
    const k = key(s);
    if (typeof k !== 'string' || k === '') continue;
    const list = out.get(k);
    if (list === undefined) out.set(k, [s]);
    else list.push(s);
  }
  return out;
}
