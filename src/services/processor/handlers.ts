// The built-in handlers: enough behaviour to make every failure mode observable.
//   Echo/echo             returns its input
//   Sleep/sleep {ms}      answers after ms (bounded by limits.sleepMsMax)
//   Counter/{key}/add     {delta} → the new value (keyed: one at a time per key)
//   Counter/{key}/get     → the value
//   Flaky/call {failFirst} fails its first attempts (on this leader), then succeeds
// A handler returns its result and the state updates that its End record will carry; a
// thrown HandlerError is terminal (the invocation ends with a failure), any other throw
// is retried by the invoker.
import { checkHandlerInput, limits } from '../../protocol/limits.js';
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

/**
 * An argument out of its bounds (src/protocol/limits.ts). The ingress answers these 400
 * before anything is appended; this one ends an invocation that reached a processor anyway.
 */
export class BadArgumentError extends HandlerError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export class RetryableHandlerError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_HANDLER_RETRY', message, options);
  }
}

type Handler = (ctx: HandlerContext) => Promise<HandlerResult>;

export const MAX_SLEEP_MS = limits.sleepMsMax;

/** Checks the input against the shared bounds, then reads a number field (or its fallback). */
function numberField(ctx: HandlerContext, target: string, field: string, fallback?: number): number {
  const [service = '', handler = ''] = target.split('/');
  const problem = checkHandlerInput(service, handler, ctx.input);
  if (problem) throw new BadArgumentError(problem.field, problem.message);
  const v = (ctx.input as Record<string, unknown> | null)?.[field];
  if ((v === undefined || v === null) && fallback !== undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new BadArgumentError(field, `"${field}" must be a number`);
  return v;
}

const counterKey = (key: string): string => `Counter/${key}`;

export const handlers: Record<string, Handler> = {
  'Echo/echo': (ctx) => {
    const problem = checkHandlerInput('Echo', 'echo', ctx.input);
    if (problem) throw new BadArgumentError(problem.field, problem.message);
    return Promise.resolve({ value: ctx.input, stateUpdates: [] });
  },
  'Sleep/sleep': async (ctx) => {
    const ms = numberField(ctx, 'Sleep/sleep', 'ms');
    await sleep(ms, ctx.signal);
    return { value: { slept: ms }, stateUpdates: [] };
  },
  'Counter/add': async (ctx) => {
    const delta = numberField(ctx, 'Counter/add', 'delta', 1);
    // `holdMs`: the add works that long while it holds its key (keyed calls on one key run one
    // at a time), as an exclusive handler doing real work does.
    const holdMs = numberField(ctx, 'Counter/add', 'holdMs', 0);
    if (holdMs > 0) await sleep(holdMs, ctx.signal);
    const current = Number(ctx.getState(counterKey(ctx.key)) ?? '0');
    const next = current + delta;
    return { value: next, stateUpdates: [{ key: counterKey(ctx.key), value: String(next) }] };
  },
  'Counter/get': (ctx) =>
    Promise.resolve({ value: Number(ctx.getState(counterKey(ctx.key)) ?? '0'), stateUpdates: [] }),
  'Flaky/call': (ctx) => {
    const failFirst = numberField(ctx, 'Flaky/call', 'failFirst', 1);
    if (ctx.attempt <= failFirst)
      throw new RetryableHandlerError(`flaky failure ${ctx.attempt} of ${failFirst}`);
    return Promise.resolve({ value: { attempts: ctx.attempt }, stateUpdates: [] });
  },
};

export function findHandler(service: string, handler: string): Handler | undefined {
  return handlers[`${service}/${handler}`];
}
