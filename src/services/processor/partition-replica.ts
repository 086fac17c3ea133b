// One replica of one partition on a processor node.
//
//   log Read (tail) ─▶ state machine ─▶ effects ─┬─▶ waiting RPC replies (leader)
//                                                ├─▶ invoker (leader)
//                                                └─▶ legacy push notifications (leader)
//   partition table ─▶ named leader at epoch e ─▶ append AnnounceLeader(e) ─▶ leader on apply
//
// A replica becomes leader only when it applies the announce it appended in this
// incarnation for the epoch the controller gave it, so it has applied everything before.
// It steps down when it applies a higher epoch, when the table names someone else, or
// when its lease runs out; stepping down answers every waiting request with
// LOST_LEADERSHIP at once. Followers answer NOT_LEADER at once.
//
// The decisions live in pure modules: leadership.ts (state + event → state + effects) and
// waiter-table.ts (the waiting requests and their indices). This file carries out their
// effects: log appends and reads, the invoker, replies, metrics, spans, legacy pushes.
import type { LogClient } from '../../transport/grpc.js';
import { decodeRecord, encodeRecord, type LogRecord } from '../../protocol/records.js';
import type * as w from '../../protocol/wire.js';
import { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { spanAttributes as A, spanNames, type Protocol, type SpanName } from '../../protocol/names.js';
import type { Logger } from '../../telemetry/logger.js';
import { lookupHandler } from '../../protocol/catalogue.js';
import { noBugs, type BugName } from '../bugs.js';
import { contextFromTraceparent, contextOf, traceparentOf } from '../../telemetry/tracing.js';
import { grpc } from '../../transport/grpc.js';
import { Backoff, sleep } from '../../util/backoff.js';
import { Invoker } from './invoker.js';
import type { ProcessorMetrics, ReplicaReadings } from './metrics.js';
import { PartitionStateMachine, type ApplyEffect, type InvocationState } from './state-machine.js';
import { messageOf } from '../../util/errors.js';
import { initialLeadership, transition, type LeadershipEvent, type LeadershipState } from './leadership.js';
import { WaiterTable, type Waiter as TableWaiter } from './waiter-table.js';
import type { FaultHook } from '../fault-hooks.js';

/** The steps of a leadership change a replica carries out, in order (each can fail and is retried). */
export const leadershipSteps = ['claim', 'announce', 'catch-up', 'resume'] as const;
export type LeadershipStepName = (typeof leadershipSteps)[number];

/** The processor.leadership-step fault hook: these steps fail, on these partitions (absent: all). */
export interface StepFaultParams {
  steps: ReadonlySet<LeadershipStepName>;
  partitions: ReadonlySet<number> | undefined;
}

export type { Protocol } from '../../protocol/names.js';

export interface ReplicaOptions {
  partition: number;
  node: string;
  log: LogClient;
  metrics: ProcessorMetrics;
  logger: Logger;
  tracer: Tracer;
  protocol: Protocol;
  completionRetentionMs: number;
  appendTimeoutMs: number;
  /** A follower's caught-up reads ask the log to wait this long and send more at once (0: none). */
  followerReadDelayMs?: number;
  /** Bug switches (src/services/bugs.ts). */
  bugs?: ReadonlySet<BugName>;
  /**
   * Asks the metadata store for a fresh epoch for this node (compare-and-swap on
   * `expectedEpoch`); the new assignment then arrives through the partition table.
   */
  claimEpoch(expectedEpoch: number): Promise<void>;
  /** Legacy protocol: push a notification to an ingress's subscription, if it has one. */
  notify(ingressId: string, notification: w.IngressNotification): void;
  /** The wall clock (records' createdAtMs, outputs' expiresAtMs). */
  now?: () => number;
  /** The steady clock retention is measured on (default performance.now). */
  steadyNow?: () => number;
  /** Fault hook: while on, the chosen steps of a leadership change fail as a real error would. */
  stepFault?: FaultHook<StepFaultParams>;
}

type Reply = w.SubmitResponse | w.GetOutputResponse;
type Waiter = TableWaiter<Reply>;

const MAX_WAITERS = 100_000;

export class PartitionReplica {
  private readonly sm: PartitionStateMachine;
  private lead: LeadershipState = initialLeadership;
  private seq = 0;
  private invoker: Invoker | undefined;
  private readonly abort = new AbortController();
  private readonly waiters = new WaiterTable<Reply>();
  /** When each kept output's invocation ended, on the steady clock, oldest first. */
  private readonly completedAt = new Map<string, number>();
  private readonly steadyNow: () => number;
  private nextWaiterId = 1;
  private knownLeader: w.PartitionAssignment | undefined;
  private readonly now: () => number;
  private readonly labels: { partition: string };
  /** What the per-record gauges read at scrape time (metrics.ts ReplicaReadings). */
  private readonly readings: ReplicaReadings;
  private tailLoop: Promise<void> | undefined;
  /** The log read open now: the mode it was opened in, and how to end it for a new one. */
  private reading: { delayMs: number; reopen(): void } | undefined;
  private retentionTimer: NodeJS.Timeout | undefined;

  private readonly bugs: ReadonlySet<BugName>;

  constructor(private readonly o: ReplicaOptions) {
    this.bugs = o.bugs ?? noBugs;
    this.sm = new PartitionStateMachine({ keepSeqAcrossEpochs: this.bugs.has('fenced-ack') });
    // Read at each call, not captured: a stepped wall clock (clock.step) is seen at once.
    this.now = o.now ?? (() => Date.now());
    // Retention is timed on the steady clock: a wall clock stepped ahead past the retention
    // would otherwise forget every output at once (clients attaching then get 404).
    this.steadyNow = o.steadyNow ?? (() => performance.now());
    this.labels = { partition: String(o.partition) };
    this.readings = {
      partition: this.labels.partition,
      appliedLsn: () => this.sm.appliedLsn,
      invoked: () => this.sm.counts().invoked,
      completed: () => this.sm.counts().completed,
      pendingRpcs: () => this.waiters.size,
    };
    o.metrics.replicas.add(this.readings);
    o.metrics.isLeader.set(this.labels, 0);
    o.metrics.leaderEpoch.set(this.labels, 0);
    o.metrics.staleProposalsDropped.inc(this.labels, 0);
    for (const transition of ['became_leader', 'stepped_down'])
      o.metrics.leadershipChanges.inc({ ...this.labels, transition }, 0);
    for (const reason of ['not_leader', 'lost_leadership'])
      o.metrics.rpcsFailed.inc({ ...this.labels, reason }, 0);
    for (const step of leadershipSteps) o.metrics.leadershipStepFailures.inc({ ...this.labels, step }, 0);
    for (const record of ['invoke', 'end']) o.metrics.repeatedRecords.inc({ ...this.labels, record }, 0);
  }

  /** Whether the step-fault hook fails this step now (counted as a hit when it does). */
  private stepFaulted(step: LeadershipStepName): boolean {
    const h = this.o.stepFault;
    if (h === undefined || !h.on) return false;
    if (!h.params.steps.has(step) || !(h.params.partitions?.has(this.o.partition) ?? true)) return false;
    h.hit();
    return true;
  }

  /** A step of a leadership change failed (it is retried, or the next table starts over). */
  private stepFailed(step: LeadershipStepName, err: unknown): void {
    this.o.metrics.leadershipStepFailures.inc({ ...this.labels, step });
    this.o.logger.warn(`leadership step ${step} failed`, { partition: this.o.partition, error: err });
  }

  start(): void {
    this.tailLoop = this.tail();
    this.retentionTimer = setInterval(() => this.expireOutputs(), 1000);
    this.retentionTimer.unref();
  }

  async stop(): Promise<void> {
    this.leadership({ kind: 'shutdown' });
    this.abort.abort(new Error('replica stopped'));
    clearInterval(this.retentionTimer);
    await this.tailLoop;
    // Its gauges keep the last reading, as they did when each record set them.
    const m = this.o.metrics;
    const r = this.readings;
    m.appliedLsn.set(this.labels, r.appliedLsn());
    m.pendingRpcs.set(this.labels, r.pendingRpcs());
    m.invocations.set({ ...this.labels, status: 'invoked' }, r.invoked());
    m.invocations.set({ ...this.labels, status: 'completed' }, r.completed());
    m.replicas.delete(r);
  }

  get isLeader(): boolean {
    return this.lead.role === 'leader';
  }

  private get role(): LeadershipState['role'] {
    return this.lead.role;
  }

  private get epoch(): number {
    return this.lead.epoch;
  }

  // ------------------------------------------------------------------ leadership

  /** The controller's current view of this partition. */
  onAssignment(a: w.PartitionAssignment): void {
    this.knownLeader = a;
    this.leadership({
      kind: 'assignment',
      leaderNode: a.leaderNode,
      epoch: a.epoch,
      appliedLeaderEpoch: this.sm.leaderEpoch,
    });
  }

  /** No contact with the controller for longer than the lease. */
  onLeaseExpired(): void {
    this.leadership({ kind: 'lease_expired' });
  }

  /** Feeds one event to the pure transitions (leadership.ts) and carries out the effects. */
  private leadership(event: LeadershipEvent): void {
    const step = transition(this.lead, event, this.o.node);
    this.lead = step.state;
    this.matchReadMode();
    for (const effect of step.effects) {
      switch (effect.kind) {
        case 'claim_epoch':
          this.claimFreshEpoch(effect.epoch);
          break;
        case 'announce':
          void this.announce(effect.epoch);
          break;
        case 'become_leader':
          this.becomeLeader(effect.epoch);
          break;
        case 'step_down':
          this.stepDown(effect.why, effect.wasLeader);
          break;
      }
    }
  }

  private claimFreshEpoch(epoch: number): void {
    this.o
      .claimEpoch(epoch)
      .then(() => {
        // Fault hook: the compare-and-swap went through, its answer is lost (a deadline).
        if (this.stepFaulted('claim')) throw new Error('the answer to the epoch claim was lost');
      })
      .then(
        () => this.leadership({ kind: 'claim_settled', epoch, ok: true }),
        (err: unknown) => {
          this.leadership({ kind: 'claim_settled', epoch, ok: false });
          this.stepFailed('claim', err);
        },
      );
  }

  /** Appends AnnounceLeader(epoch) until applied, or until another epoch is wanted. */
  private async announce(epoch: number): Promise<void> {
    const backoff = new Backoff();
    while (!this.abort.signal.aborted && this.lead.announcingEpoch === epoch && this.sm.leaderEpoch < epoch) {
      try {
        // Fault hook: the announce's append fails as the log refusing it would.
        if (this.stepFaulted('announce')) throw new Error(`partition ${this.o.partition} is unavailable`);
        await this.append({ type: 'announce_leader', node: this.o.node, epoch });
        return;
      } catch (err) {
        this.stepFailed('announce', err);
        await sleep(backoff.next(), this.abort.signal).catch(() => undefined);
      }
    }
  }

  private becomeLeader(epoch: number): void {
    this.seq = 0;
    this.o.metrics.isLeader.set(this.labels, 1);
    this.o.metrics.leadershipChanges.inc({ ...this.labels, transition: 'became_leader' });
    this.o.logger.info('became leader', { partition: this.o.partition, epoch });
    try {
      this.resume(epoch);
    } catch (err) {
      // It cannot lead at this epoch: it steps down (its waiting requests answered at once),
      // and the next table makes it claim a fresh epoch and try again.
      this.stepFailed('resume', err);
      this.invoker?.stop();
      this.invoker = undefined;
      queueMicrotask(() => this.leadership({ kind: 'lead_failed', epoch }));
    }
  }

  /** The last step of taking up leadership: the invoker, resuming what a previous leader left running. */
  private resume(epoch: number): void {
    // Fault hook: resuming the work a previous leader left fails.
    if (this.stepFaulted('resume'))
      throw new Error(`resuming the invocations of partition ${this.o.partition} failed`);
    const invoker = new Invoker({
      proposeEnd: (end, span) =>
        this.propose({ type: 'end', ...end, proposal: this.nextProposal() }, span).then(() => undefined),
      getState: (key) => this.sm.getState(key),
      logger: this.o.logger,
      tracer: this.o.tracer,
      partition: this.o.partition,
      epoch,
    });
    this.invoker = invoker;
    for (const inv of this.sm.running()) {
      // Bug switch never-resumes: a keyed invocation left running is queued but never started.
      if (this.bugs.has('never-resumes') && lookupHandler(inv.service, inv.handler)?.keyed === true)
        invoker.hold(inv);
      else invoker.schedule(inv);
    }
    if (this.o.protocol === 'legacy') this.repushOnLeading();
  }

  /**
   * The push protocol with one of the seed's two bugs switched on fixes the other half: a new
   * leader pushes again what it cannot know was pushed. With both (or no switch: the plain
   * legacy protocol, reference:legacy) nothing is pushed again.
   */
  private repushOnLeading(): void {
    const lostSubmit = this.bugs.has('lost-submit-notification');
    const lostEnd = this.bugs.has('lost-end-response');
    if (lostSubmit === lostEnd) return;
    if (!lostSubmit)
      for (const inv of this.sm.running())
        if (inv.ingressId !== undefined)
          this.o.notify(inv.ingressId, {
            requestId: inv.requestId ?? '',
            kind: 'submitNotification',
            submitNotification: { invocationId: inv.invocationId, isNew: true },
          });
    if (!lostEnd)
      for (const id of this.completedAt.keys()) {
        const inv = this.sm.get(id);
        const out = inv ? this.outputResponse(inv) : undefined;
        if (inv?.ingressId !== undefined && out?.result === 'output')
          this.o.notify(inv.ingressId, {
            requestId: inv.requestId ?? '',
            kind: 'invocationResponse',
            invocationResponse: out.output,
          });
      }
  }

  /** The effect of stepping down (the role is already follower). */
  private stepDown(why: string, wasLeader: boolean): void {
    this.invoker?.stop();
    this.invoker = undefined;
    if (wasLeader) {
      this.o.metrics.isLeader.set(this.labels, 0);
      this.o.metrics.leadershipChanges.inc({ ...this.labels, transition: 'stepped_down' });
      this.o.logger.info('stepped down', { partition: this.o.partition, epoch: this.epoch, why });
    }
    // Bug switch reply-lost-on-shutdown: a shutdown answers none of the waiting requests.
    if (why === 'shutdown' && this.bugs.has('reply-lost-on-shutdown')) return;
    for (const waiter of this.waiters.waiting()) {
      this.o.metrics.rpcsFailed.inc({ ...this.labels, reason: 'lost_leadership' });
      this.finish(
        waiter,
        this.error('LOST_LEADERSHIP', `leader of partition ${this.o.partition} stepped down (${why})`),
      );
    }
  }

  // ------------------------------------------------------------------ log

  private nextProposal(): { epoch: number; seq: number } {
    return { epoch: this.epoch, seq: ++this.seq };
  }

  private async append(record: LogRecord, parent?: Span): Promise<number> {
    // A span (and the metadata carrying it) only under a recording parent: with tracing off
    // every span is a no-op, and building one with its context costs ~1 % of a leader's CPU.
    const span = parent?.isRecording()
      ? this.o.tracer.startSpan(
          spanNames.processorAppend(record.type),
          {
            attributes: {
              [A.partition]: this.o.partition,
              [A.leaderEpoch]: this.epoch,
              ...(record.type !== 'announce_leader' ? { [A.invocationId]: record.invocationId } : {}),
            },
          },
          contextOf(parent),
        )
      : undefined;
    try {
      const res = await this.o.log.append(
        { partition: this.o.partition, records: [encodeRecord(record)] },
        {
          timeoutMs: this.o.appendTimeoutMs,
          signal: this.abort.signal,
          ...(span !== undefined ? { metadata: traceMetadata(span) } : {}),
        },
      );
      span?.setAttribute(A.lsn, res.lastLsn);
      return res.lastLsn;
    } catch (err) {
      span?.setStatus({
        code: SpanStatusCode.ERROR,
        message: messageOf(err),
      });
      throw err;
    } finally {
      span?.end();
    }
  }

  private async propose(record: LogRecord, span?: Span): Promise<number> {
    if (this.role !== 'leader') throw new Error('not leader');
    return this.append(record, span);
  }

  /** How a follower reads: the log batches what lands within this many ms (0: at once). */
  private get readDelayMs(): number {
    return this.role === 'follower' ? (this.o.followerReadDelayMs ?? 0) : 0;
  }

  /**
   * The log tail, read in this replica's mode: a follower's reads are batched (it answers no
   * request from what it applies, so a few ms late costs nothing, and the log and this node
   * each handle a third of the messages), a candidate's and a leader's come at once (every
   * call waits on the leader's apply). A change of role reopens the read in the new mode.
   */
  private async tail(): Promise<void> {
    const backoff = new Backoff();
    while (!this.abort.signal.aborted) {
      const delayMs = this.readDelayMs;
      let reopened = false;
      try {
        await new Promise<void>((resolve, reject) => {
          const stream = this.o.log.read(
            {
              partition: this.o.partition,
              fromLsn: this.sm.appliedLsn + 1,
              ...(delayMs > 0 ? { batchDelayMs: delayMs } : {}),
            },
            { signal: this.abort.signal },
          );
          const reading = {
            delayMs,
            reopen: () => {
              reopened = true;
              stream.cancel();
              resolve();
            },
          };
          this.reading = reading;
          stream.on('data', (batch: w.ReadResponse) => {
            // A cancelled stream may still hand over what it had; its successor reads that again.
            if (this.reading !== reading) return;
            // Fault hook: a candidate's read breaks before it has caught up to its announce.
            if (this.role === 'candidate' && this.stepFaulted('catch-up')) {
              reject(new Error(`log read of partition ${this.o.partition} broke while catching up`));
              stream.cancel();
              return;
            }
            backoff.reset();
            for (const entry of batch.entries) {
              if (entry.lsn <= this.sm.appliedLsn) continue;
              this.applyEntry(entry);
            }
          });
          stream.on('error', reject);
          stream.on('end', resolve);
        });
      } catch (err) {
        if (!this.abort.signal.aborted) {
          if (this.role === 'candidate') this.stepFailed('catch-up', err);
          else this.o.logger.debug('log read broke', { partition: this.o.partition, error: err });
        }
      }
      this.reading = undefined;
      if (reopened) continue;
      await sleep(backoff.next(), this.abort.signal).catch(() => undefined);
    }
  }

  /** After a role change: reopen the read if it was opened for the other mode. */
  private matchReadMode(): void {
    if (this.reading !== undefined && this.reading.delayMs !== this.readDelayMs) this.reading.reopen();
  }

  private applyEntry(entry: w.LogEntry): void {
    let record: LogRecord;
    try {
      record = decodeRecord(entry.payload);
    } catch (err) {
      this.o.logger.error('undecodable record skipped', {
        partition: this.o.partition,
        lsn: entry.lsn,
        error: err,
      });
      this.sm.appliedLsn = entry.lsn;
      return;
    }
    const effect = this.sm.apply(entry.lsn, record);
    if (this.role === 'leader' && (effect.kind === 'invoked' || effect.kind === 'ended')) {
      this.o.tracer
        .startSpan(
          spanNames.apply(record.type),
          {
            attributes: {
              [A.invocationId]: effect.invocation.invocationId,
              [A.partition]: this.o.partition,
              [A.leaderEpoch]: this.epoch,
              [A.lsn]: entry.lsn,
              [A.node]: this.o.node,
            },
          },
          contextFromTraceparent(effect.invocation.traceparent),
        )
        .end();
    }
    this.onEffect(effect, record);
  }

  private onEffect(effect: ApplyEffect, record: LogRecord): void {
    switch (effect.kind) {
      case 'announce':
        this.o.metrics.leaderEpoch.set(this.labels, effect.epoch);
        this.leadership({ kind: 'announced', node: effect.node, epoch: effect.epoch });
        return;
      case 'dropped': {
        if (effect.reason === 'stale_epoch' || effect.reason === 'duplicate') {
          this.o.metrics.staleProposalsDropped.inc(this.labels);
        }
        if (effect.reason === 'already_ended')
          this.o.metrics.repeatedRecords.inc({ ...this.labels, record: 'end' });
        const proposal = record.type === 'announce_leader' ? undefined : record.proposal;
        const waiter =
          proposal && proposal.epoch === this.epoch ? this.waiters.takeProposal(proposal.seq) : undefined;
        if (waiter && effect.reason === 'duplicate' && this.bugs.has('fenced-ack')) {
          // Bug switch fenced-ack: a "duplicate" is answered as if it had been applied before.
          if (waiter.wants === 'submitted' && record.type === 'invoke')
            this.finish(waiter, {
              result: 'submitted',
              submitted: { invocationId: record.invocationId, isNew: false },
            });
          else this.waitForOutput(waiter);
        } else if (waiter) this.finish(waiter, this.error('LOST_LEADERSHIP', 'proposal was fenced'));
        return;
      }
      case 'invoked':
        if (!effect.isNew) this.o.metrics.repeatedRecords.inc({ ...this.labels, record: 'invoke' });
        this.onInvoked(effect.invocation, effect.isNew, effect.record.proposal);
        return;
      case 'ended':
        this.onEnded(effect.invocation);
        return;
    }
  }

  private onInvoked(
    inv: InvocationState,
    isNew: boolean,
    proposal: { epoch: number; seq: number } | undefined,
  ): void {
    if (this.role === 'leader') {
      if (isNew) this.invoker?.schedule(inv);
      if (this.o.protocol === 'legacy' && inv.ingressId !== undefined && isNew) {
        this.o.notify(inv.ingressId, {
          requestId: inv.requestId ?? '',
          kind: 'submitNotification',
          submitNotification: { invocationId: inv.invocationId, isNew },
        });
      }
    }
    const waiter =
      proposal && proposal.epoch === this.epoch ? this.waiters.takeProposal(proposal.seq) : undefined;
    if (!waiter) return;
    if (waiter.wants === 'submitted') {
      this.finish(waiter, { result: 'submitted', submitted: { invocationId: inv.invocationId, isNew } });
    } else if (inv.status === 'completed') {
      this.finish(waiter, waiter.kind === 'submit' ? this.submitOutput(inv) : this.outputResponse(inv));
    } else {
      this.waitForOutput(waiter);
    }
  }

  private onEnded(inv: InvocationState): void {
    this.completedAt.set(inv.invocationId, this.steadyNow());
    this.invoker?.ended(inv);
    if (this.role === 'leader' && this.o.protocol === 'legacy' && inv.ingressId !== undefined) {
      const out = this.outputResponse(inv);
      if (out.result === 'output') {
        this.o.notify(inv.ingressId, {
          requestId: inv.requestId ?? '',
          kind: 'invocationResponse',
          invocationResponse: out.output,
        });
      }
    }
    const set = this.waiters.takeOutput(inv.invocationId);
    if (!set) return;
    for (const waiter of set)
      this.finish(waiter, waiter.kind === 'submit' ? this.submitOutput(inv) : this.outputResponse(inv));
  }

  private expireOutputs(): void {
    const cutoff = this.steadyNow() - this.o.completionRetentionMs;
    for (const [id, at] of this.completedAt) {
      if (at > cutoff) break;
      this.completedAt.delete(id);
      this.sm.forgetOutput(id);
    }
  }

  // ------------------------------------------------------------------ RPCs

  submit(req: w.SubmitRequest, signal?: AbortSignal): Promise<w.SubmitResponse> {
    const span = this.rpcSpan(spanNames.processorSubmit, req.invocationId, req.requestId, req.traceparent);
    return this.endWith(span, this.submitInner(req, span, signal));
  }

  getOutput(req: w.GetOutputRequest, signal?: AbortSignal): Promise<w.GetOutputResponse> {
    const span = this.rpcSpan(spanNames.processorGetOutput, req.invocationId, req.requestId, '');
    return this.endWith(span, this.getOutputInner(req, signal));
  }

  private rpcSpan(name: SpanName, invocationId: string, requestId: string, traceparent: string): Span {
    return this.o.tracer.startSpan(
      name,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [A.invocationId]: invocationId,
          [A.partition]: this.o.partition,
          [A.leaderEpoch]: this.epoch,
          [A.node]: this.o.node,
          [A.requestId]: requestId,
        },
      },
      contextFromTraceparent(traceparent),
    );
  }

  private endWith<R extends { result: string }>(span: Span, reply: Promise<R>): Promise<R> {
    return reply.then((r) => {
      const err = (r as { error?: w.RpcError }).error;
      if (r.result === 'error' && err) span.setStatus({ code: SpanStatusCode.ERROR, message: err.code });
      span.setAttribute(A.reply, r.result);
      span.end();
      return r;
    });
  }

  private submitInner(req: w.SubmitRequest, span: Span, signal?: AbortSignal): Promise<w.SubmitResponse> {
    const refusal = this.refuse();
    if (refusal) return Promise.resolve(refusal);
    const existing = this.sm.get(req.invocationId);
    const wantsOutput = req.replyOn === 'OUTPUT';
    if (existing) {
      if (!wantsOutput) {
        return Promise.resolve({
          result: 'submitted',
          submitted: { invocationId: existing.invocationId, isNew: false },
        });
      }
      if (existing.status === 'completed') return Promise.resolve(this.submitOutput(existing));
      return this.newWaiter(req.requestId, req.invocationId, 'output', 'submit', signal, (waiter) =>
        this.waitForOutput(waiter),
      ) as Promise<w.SubmitResponse>;
    }
    return this.newWaiter(
      req.requestId,
      req.invocationId,
      wantsOutput ? 'output' : 'submitted',
      'submit',
      signal,
      (waiter) => {
        const proposal = this.nextProposal();
        this.waiters.awaitProposal(proposal.seq, waiter);
        const record: LogRecord = {
          type: 'invoke',
          proposal,
          invocationId: req.invocationId,
          service: req.service,
          key: req.key,
          handler: req.handler,
          payload: req.payload.toString('utf8'),
          createdAtMs: this.now(),
        };
        if (req.idempotencyKey !== '') record.idempotencyKey = req.idempotencyKey;
        const traceparent = traceparentOf(span) || req.traceparent;
        if (traceparent !== '') record.traceparent = traceparent;
        this.propose(record, span).catch((err: unknown) => {
          this.waiters.dropProposal(proposal.seq, waiter);
          this.finish(waiter, this.error('INTERNAL', `append failed: ${messageOf(err)}`));
        });
      },
    ) as Promise<w.SubmitResponse>;
  }

  private getOutputInner(req: w.GetOutputRequest, signal?: AbortSignal): Promise<w.GetOutputResponse> {
    // Bug switch stale-follower-not-found: the local lookup comes before the leadership check.
    if (this.bugs.has('stale-follower-not-found') && this.sm.get(req.invocationId) === undefined)
      return Promise.resolve({ result: 'notFound', notFound: {} });
    const refusal = this.refuse();
    if (refusal) return Promise.resolve(refusal);
    const inv = this.sm.get(req.invocationId);
    if (!inv || inv.expired) return Promise.resolve({ result: 'notFound', notFound: {} });
    if (inv.status === 'completed') return Promise.resolve(this.outputResponse(inv));
    if (!req.block) return Promise.resolve({ result: 'pending', pending: {} });
    return this.newWaiter(req.requestId, req.invocationId, 'output', 'getOutput', signal, (waiter) =>
      this.waitForOutput(waiter),
    ) as Promise<w.GetOutputResponse>;
  }

  private refuse(): { result: 'error'; error: w.RpcError } | undefined {
    if (this.role === 'leader') {
      if (this.waiters.size >= MAX_WAITERS) return this.error('INTERNAL', 'too many pending requests');
      return undefined;
    }
    this.o.metrics.rpcsFailed.inc({ ...this.labels, reason: 'not_leader' });
    const known = this.knownLeader;
    const err = this.error('NOT_LEADER', `${this.o.node} does not lead partition ${this.o.partition}`);
    err.error.leaderNode = known?.leaderNode ?? '';
    err.error.leaderEpoch = known?.epoch ?? 0;
    return err;
  }

  private newWaiter(
    requestId: string,
    invocationId: string,
    wants: Waiter['wants'],
    kind: Waiter['kind'],
    signal: AbortSignal | undefined,
    arm: (waiter: Waiter) => void,
  ): Promise<w.SubmitResponse | w.GetOutputResponse> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        id: this.nextWaiterId++,
        requestId,
        invocationId,
        wants,
        kind,
        done: false,
        proposalSeq: undefined,
        reply: resolve,
      };
      const prev = this.waiters.add(waiter);
      // The ingress went away (connection closed, call cancelled): stop holding its slot.
      signal?.addEventListener('abort', () => this.finish(waiter, this.error('INTERNAL', 'cancelled')), {
        once: true,
      });
      if (prev) {
        // A resend of a request still in flight takes over its reply slot; nothing is proposed again.
        this.waiters.takeOver(prev, waiter);
        this.finish(prev, this.error('INTERNAL', 'superseded by a resend of the same request'));
        return;
      }
      arm(waiter);
    });
  }

  private submitOutput(inv: InvocationState): w.SubmitResponse {
    const out = this.outputResponse(inv);
    if (out.result === 'output') return out;
    return {
      result: 'output',
      output: {
        invocationId: inv.invocationId,
        success: false,
        value: Buffer.alloc(0),
        failure: 'output expired',
        expiresAtMs: 0,
      },
    };
  }

  private waitForOutput(waiter: Waiter): void {
    this.waiters.awaitOutput(waiter);
  }

  private finish(waiter: Waiter, response: Reply): void {
    if (!this.waiters.remove(waiter)) return;
    waiter.reply(response);
  }

  private outputResponse(
    inv: InvocationState,
  ): { result: 'output'; output: w.Output } | { result: 'notFound'; notFound: Record<string, never> } {
    if (!inv.output) return { result: 'notFound', notFound: {} };
    const steady = this.steadyNow();
    const keptMs = steady - (this.completedAt.get(inv.invocationId) ?? steady);
    return {
      result: 'output',
      output: {
        invocationId: inv.invocationId,
        success: inv.output.success,
        value: Buffer.from(inv.output.value, 'utf8'),
        failure: inv.output.failure,
        expiresAtMs: this.now() + this.o.completionRetentionMs - keptMs,
      },
    };
  }

  private error(code: w.ErrorCode, message: string): { result: 'error'; error: w.RpcError } {
    return { result: 'error', error: { code, message, leaderNode: '', leaderEpoch: 0 } };
  }
}

/** gRPC metadata carrying a span's traceparent, so the log server's span joins the trace. */
function traceMetadata(span: Span): grpc.Metadata {
  const md = new grpc.Metadata();
  const tp = traceparentOf(span);
  if (tp !== '') md.set('traceparent', tp);
  return md;
}
