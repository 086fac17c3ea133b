// Hand-made run data for checker tests: a tiny builder of histories, series and fault windows.
import type {
  FaultWindow,
  HistoryOp,
  OpKind,
  OpRequest,
  OpResponse,
  OpError,
  RunData,
  SeriesSample,
} from '../../src/run-data/run-data.js';

export class RunBuilder {
  private nextOp = 1;
  readonly run: RunData = {
    suite: 'test',
    target: 'reference',
    seed: 1,
    phases: {
      startedAtWall: new Date(0).toISOString(),
      chaosStartMs: 0,
      chaosEndMs: 10_000,
      healedAtMs: 10_000,
      deadlineMs: 30_000,
    },
    history: [],
    series: [],
    faults: [],
  };

  /** The run's phases: chaos from `chaosStartMs` to its heal at `healedAtMs`, judged at `deadlineMs`. */
  phases(chaosStartMs: number, healedAtMs: number, deadlineMs: number): this {
    this.run.phases = {
      startedAtWall: new Date(0).toISOString(),
      chaosStartMs,
      chaosEndMs: healedAtMs,
      healedAtMs,
      deadlineMs,
    };
    return this;
  }

  /** Records an invoke at `atMs`; returns the op id. */
  invoke(atMs: number, kind: OpKind, request: Partial<OpRequest> = {}, invocationId?: string): number {
    const opId = this.nextOp++;
    this.run.history.push({
      type: 'invoke',
      opId,
      process: 0,
      kind,
      invocationId,
      request: { method: 'POST', path: '/Echo/echo', ...request },
      timeMs: atMs,
      wallTime: new Date(atMs).toISOString(),
    });
    return opId;
  }

  end(
    opId: number,
    atMs: number,
    type: 'ok' | 'fail' | 'info',
    extra: { response?: OpResponse; error?: OpError; invocationId?: string } = {},
  ): this {
    const invoke = this.run.history.find((o) => o.opId === opId && o.type === 'invoke') as HistoryOp;
    this.run.history.push({
      ...invoke,
      type,
      timeMs: atMs,
      wallTime: new Date(atMs).toISOString(),
      ...extra,
    });
    return this;
  }

  op(
    fromMs: number,
    toMs: number,
    type: 'ok' | 'fail' | 'info',
    kind: OpKind = 'call',
    request: Partial<OpRequest> = {},
    extra: { response?: OpResponse; error?: OpError; invocationId?: string } = {},
  ): number {
    const id = this.invoke(fromMs, kind, request, extra.invocationId);
    this.end(id, toMs, type, extra);
    return id;
  }

  add(
    fromMs: number,
    toMs: number | undefined,
    type: 'ok' | 'fail' | 'info',
    key: string,
    delta: number,
    idempotencyKey?: string,
  ): number {
    const req = { path: `/Counter/${key}/add`, counterKey: key, delta, idempotencyKey };
    const id = this.invoke(fromMs, 'counterAdd', req, `inv_${key}_${idempotencyKey ?? fromMs}`);
    if (toMs !== undefined) this.end(id, toMs, type);
    return id;
  }

  finalRead(atMs: number, key: string, value: number): this {
    const id = this.invoke(atMs, 'counterGet', { path: `/Counter/${key}/get`, counterKey: key, final: true });
    return this.end(id, atMs + 10, 'ok', { response: { status: 200, value } });
  }

  sample(service: string, name: string, labels: Record<string, string>, points: [number, number][]): this {
    for (const [tMs, value] of points)
      this.run.series.push({ service, name, labels, tMs, value } satisfies SeriesSample);
    return this;
  }

  fault(w: Partial<FaultWindow> & Pick<FaultWindow, 'fault' | 'target'>): this {
    this.run.faults.push({ affects: [w.target], injectedAtMs: 2000, healedAtMs: 5000, ...w });
    return this;
  }
}
