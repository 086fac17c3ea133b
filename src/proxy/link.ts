// One direction of one proxied connection: a chain of toxic stages in creation order.
//
//   source socket ─▶ q0 ─▶ [noop] ─▶ q1 ─▶ [toxic A] ─▶ q2 ─▶ [toxic B] ─▶ out ─▶ sink socket
//
// Stage 0 is always a pass-through, so adding a toxic is always "append after the last
// stage". Rewiring is synchronous between awaits: a stage pushes into whatever queue its
// `output` names at that moment, and a removed stage first flushes what it held, then its
// queued input is moved on in order. So changing toxics on a live connection neither
// loses nor reorders bytes.
import { ChunkQueue, END, Interrupt, type QueueLimits, type StreamItem } from './chunk-queue.js';
import type { Direction, Toxic, ToxicConfig, ToxicStub } from './toxic.js';
import { noopToxic } from './toxics/noop.js';
import type { Logger } from '../telemetry/logger.js';

export interface LinkHost {
  readonly random: () => number;
  readonly logger: Logger;
  readonly queueLimits: QueueLimits;
  /** The whole connection is reset (RST). */
  reset(): void;
  /** A toxic's toxicity roll hit on this connection: it acts here until removed or updated. */
  onToxicApplied(config: ToxicConfig): void;
}

class Stage {
  output: ChunkQueue;
  readonly state: Record<string, number> = {};
  closed = false;
  private controller = new Interrupt();
  private running: Promise<void> = Promise.resolve();
  private stub: ToxicStub | undefined;
  private toxic: Toxic | undefined;
  /**
   * The toxic as it last acted on this connection. An update re-rolls toxicity, so a toxic
   * that acted (a timeout that swallowed bytes) may be a pass-through when it is removed; its
   * cleanup must still run, or the connection stays open with those bytes gone for good.
   */
  private acted: Toxic | undefined;

  constructor(
    readonly config: ToxicConfig | undefined,
    readonly input: ChunkQueue,
    output: ChunkQueue,
    private readonly host: LinkHost,
  ) {
    this.output = output;
  }

  start(): void {
    this.controller = new Interrupt();
    const signal = this.controller;
    const config = this.config;
    const hit = config === undefined || this.host.random() < config.toxicity;
    const toxic =
      config === undefined || !hit ? noopToxic : config.definition.create({ ...config.attributes });
    if (config !== undefined && hit) {
      this.host.onToxicApplied(config);
      this.acted = toxic;
    }
    this.toxic = toxic;
    const stub = this.makeStub(signal);
    this.stub = stub;
    this.running = toxic.pipe(stub).catch((err: unknown) => {
      this.host.logger.warn('toxic failed', { toxic: config?.name, err });
    });
  }

  async interrupt(): Promise<void> {
    this.controller.abort();
    await this.running;
  }

  cleanup(): void {
    if (this.stub && !this.closed) (this.acted ?? this.toxic)?.cleanup?.(this.stub);
  }

  private makeStub(signal: Interrupt): ToxicStub {
    const waitForRoom = async (): Promise<boolean> => {
      for (let i = 0; i < 1_000_000 && this.output.isFull; i++) {
        if (signal.aborted) return false;
        await this.output.waitForSpace(signal);
      }
      return !signal.aborted;
    };
    return {
      // With room downstream (the usual case) straight to the queue: a chunk crosses every
      // stage of every link, so one promise less per stage is felt by the whole event loop.
      // Without a timeout the queue never answers 'timeout'.
      receive: () =>
        (this.output.isFull
          ? waitForRoom().then((room) => (room ? this.input.receive(signal) : undefined))
          : this.input.receive(signal)) as Promise<StreamItem | undefined>,
      receiveWithin: (timeoutMs) =>
        this.output.isFull
          ? waitForRoom().then((room) => (room ? this.input.receive(signal, timeoutMs) : undefined))
          : this.input.receive(signal, timeoutMs),
      send: (item) => {
        if (!this.closed) this.output.push(item);
      },
      sleep: (ms) => sleep(ms, signal),
      close: () => {
        if (this.closed) return;
        this.output.push(END);
        this.closed = true;
      },
      reset: () => this.host.reset(),
      get interrupted() {
        return signal.aborted;
      },
      random: this.host.random,
      state: this.state,
    };
  }
}

export class Link {
  /** The source socket pushes here. */
  readonly input: ChunkQueue;
  /** The sink reads here. */
  readonly output: ChunkQueue;
  private readonly stages: Stage[];
  /** Rewiring operations run one at a time. */
  private ops: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    readonly direction: Direction,
    toxics: readonly ToxicConfig[],
    private readonly host: LinkHost,
  ) {
    this.input = new ChunkQueue(host.queueLimits);
    this.output = new ChunkQueue(host.queueLimits);
    this.stages = [new Stage(undefined, this.input, this.output, host)];
    for (const t of toxics) this.appendStage(t);
  }

  start(): void {
    for (const s of this.stages) s.start();
  }

  addToxic(config: ToxicConfig): Promise<void> {
    return this.enqueue(async () => {
      const stage = this.appendStage(config);
      stage.start();
      await Promise.resolve();
    });
  }

  updateToxic(config: ToxicConfig): Promise<void> {
    return this.enqueue(async () => {
      const stage = this.stages.find((s) => s.config === config);
      if (!stage || stage.closed) return;
      await stage.interrupt();
      if (!this.stopped && !stage.closed) stage.start();
    });
  }

  removeToxic(config: ToxicConfig): Promise<void> {
    return this.enqueue(async () => {
      const index = this.stages.findIndex((s) => s.config === config);
      if (index <= 0) return;
      const stage = this.stages[index] as Stage;
      await stage.interrupt();
      stage.cleanup();
      // Synchronous from here: nothing else runs while the chain is rewired.
      const i = this.stages.indexOf(stage);
      const previous = this.stages[i - 1] as Stage;
      for (const item of stage.input.takeAll()) stage.output.push(item);
      previous.output = stage.output;
      this.stages.splice(i, 1);
      stage.input.retire();
    });
  }

  /** Stops every stage; queued data is dropped (the connection is going away). */
  stop(): void {
    this.stopped = true;
    for (const s of this.stages) void s.interrupt();
  }

  private appendStage(config: ToxicConfig): Stage {
    const last = this.stages[this.stages.length - 1] as Stage;
    const between = new ChunkQueue(this.host.queueLimits);
    const stage = new Stage(config, between, last.output, this.host);
    last.output = between;
    this.stages.push(stage);
    return stage;
  }

  private enqueue(op: () => Promise<void>): Promise<void> {
    const next = this.ops.then(async () => {
      if (!this.stopped) await op();
    });
    this.ops = next.catch(() => {});
    return next;
  }
}

/** Sleeps `ms`; resolves false early if `signal` aborts. */
export function sleep(ms: number, signal: Interrupt): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.off(onAbort);
      resolve(true);
    }, ms);
    signal.on(onAbort);
  });
}
