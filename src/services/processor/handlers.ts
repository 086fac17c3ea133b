// The built-in handlers: enough behaviour to make every failure mode observable.
//   Echo/echo             returns its input
//   Sleep/sleep {ms}      answers after ms (bounded)
//   Counter/{key}/add     {delta} → the new value (keyed: one at a time per key)
//   Counter/{key}/get     → the value
//   Flaky/call {failFirst} fails its first attempts (on this leader), then succeeds
// A handler returns its result and the state updates that its End record will carry; a
// thrown HandlerError is terminal (the invocation ends with a failure), any other throw
// is retried by the invoker.
import type { StateUpdate } from '../../protocol/records.js';
import { sleep } from '../../util/backoff.js';
import { LimboError } from '../../util/errors.js';

export interface HandlerContext {
  key: string;
  /** Parsed JSON body. */
  input: unknown;
  /** 1 for the first attempt on this leader. */
  attempt: number;
  getState(name: string): string | undefined;
  signal: AbortSignal;
}

export interface HandlerResult {
  value: unknown;
  stateUpdates: StateUpdate[];
}

export class HandlerError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_HANDLER', message, options);
  }
}

export class RetryableHandlerError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_HANDLER_RETRY', message, options);
  }
}

type Handler = (ctx: HandlerContext) => Promise<HandlerResult>;

export const MAX_SLEEP_MS = 600_000;

function numberField(input: unknown, field: string, fallback?: number): number {
  const v = (input as Record<string, unknown> | null)?.[field];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new HandlerError(`"${field}" must be a number`);
  return v;
}

const counterKey = (key: string): string => `Counter/${key}`;

export const handlers: Record<string, Handler> = {
  'Echo/echo': (ctx) => Promise.resolve({ value: ctx.input, stateUpdates: [] }),
  'Sleep/sleep': async (ctx) => {
    const ms = numberField(ctx.input, 'ms');
    if (ms < 0 || ms > MAX_SLEEP_MS) throw new HandlerError(`"ms" must be between 0 and ${MAX_SLEEP_MS}`);
    await sleep(ms, ctx.signal);
    return { value: { slept: ms }, stateUpdates: [] };
  },
  'Counter/add': (ctx) => {
    const delta = numberField(ctx.input, 'delta', 1);
    const current = Number(ctx.getState(counterKey(ctx.key)) ?? '0');
    const next = current + delta;
    return Promise.resolve({
      value: next,
      stateUpdates: [{ key: counterKey(ctx.key), value: String(next) }],
    });
  },
  'Counter/get': (ctx) =>
    Promise.resolve({ value: Number(ctx.getState(counterKey(ctx.key)) ?? '0'), stateUpdates: [] }),
  'Flaky/call': (ctx) => {
    const failFirst = numberField(ctx.input, 'failFirst', 1);
    if (ctx.attempt <= failFirst)
      throw new RetryableHandlerError(`flaky failure ${ctx.attempt} of ${failFirst}`);
    return Promise.resolve({ value: { attempts: ctx.attempt }, stateUpdates: [] });
  },
};

export function findHandler(service: string, handler: string): Handler | undefined {
  return handlers[`${service}/${handler}`];
}
