// Fault hooks: named switches inside a service that a chaos runner turns on and off while the
// service runs, for faults no proxy or signal can make (the log refusing appends, a slow
// fsync, a step of a leadership change failing, the wall clock stepped). They are driven
// through the service's own metrics server, from this host only:
//
//   POST /limbo/faults {"hook":"log.append-error","params":{…}} ─▶ on  ─▶ {"hook","on":true,"hits":0}
//   POST /limbo/faults {"hook":"log.append-error","off":true}   ─▶ off ─▶ {"hook","on":false,"hits":N}
//   GET  /limbo/faults                                          ─▶ every hook: on, params, hits
//
// A hook is off unless switched on, and the code it guards pays one boolean read
// (`if (hook.on)`). Every time a hook acts on real work it counts a hit
// (limbo_fault_hook_hits_total{hook}, and the `hits` answered when it is switched off): a
// fault that met nothing says so with 0.
import type http from 'node:http';
import { Counter, Gauge, type Registry } from 'prom-client';
import { referenceMetricNames as metricNames } from '../protocol/names.js';
import type { ExtraRoute } from '../telemetry/metrics.js';

export const faultHooksPath = '/limbo/faults';

export interface FaultHook<P> {
  readonly name: string;
  /** Switched on: the one read the guarded code pays while it is off. */
  readonly on: boolean;
  /** Its parameters while on (those it was switched on with). */
  readonly params: P;
  /** Counts one piece of work the fault acted on. */
  hit(): void;
}

export interface HookSpec<P> {
  /** The hook's parameters from the request's JSON `params` (throws a message when bad). */
  parse(raw: Record<string, unknown>): P;
  /** Called as it is switched on (with its parameters) and off (e.g. to install a clock offset). */
  onSwitch?(on: boolean, params: P | undefined): void;
}

class Hook<P> implements FaultHook<P> {
  on = false;
  params!: P;
  /** Hits since it was last switched on. */
  hits = 0;
  constructor(
    readonly name: string,
    readonly spec: HookSpec<P>,
    private readonly counter: { inc(): void },
    readonly active: { set(v: number): void },
  ) {}
  hit(): void {
    this.hits++;
    this.counter.inc();
  }
}

export class HookParamError extends Error {}

export class FaultHooks {
  private readonly hooks = new Map<string, Hook<unknown>>();
  private readonly hitsTotal: Counter<'hook'>;
  private readonly activeGauge: Gauge<'hook'>;

  constructor(registry: Registry) {
    this.hitsTotal = new Counter({
      name: metricNames.faultHookHitsTotal,
      help: 'Work a fault hook acted on while switched on (a fault that met nothing leaves it at 0)',
      labelNames: ['hook'],
      registers: [registry],
    });
    this.activeGauge = new Gauge({
      name: metricNames.faultHookActive,
      help: '1 while a fault hook is switched on',
      labelNames: ['hook'],
      registers: [registry],
    });
  }

  /** Registers a hook (off); the guarded code keeps the returned object and reads `on`. */
  define<P>(name: string, spec: HookSpec<P>): FaultHook<P> {
    if (this.hooks.has(name)) throw new Error(`fault hook ${name} is already defined`);
    const labels = { hook: name };
    const hook = new Hook<P>(name, spec, this.hitsTotal.labels(labels), this.activeGauge.labels(labels));
    this.hitsTotal.inc(labels, 0);
    hook.active.set(0);
    this.hooks.set(name, hook);
    return hook;
  }

  names(): string[] {
    return [...this.hooks.keys()].sort();
  }

  /** Switches a hook on with its parameters (again: new parameters, hits from 0). */
  switchOn(name: string, raw: Record<string, unknown>): { hook: string; on: true; hits: number } {
    const hook = this.get(name);
    const params = hook.spec.parse(raw);
    if (hook.on) hook.spec.onSwitch?.(false, undefined);
    hook.params = params;
    hook.hits = 0;
    hook.on = true;
    hook.active.set(1);
    hook.spec.onSwitch?.(true, params);
    return { hook: name, on: true, hits: 0 };
  }

  /** Switches a hook off; answers its hits since it was switched on. */
  switchOff(name: string): { hook: string; on: false; hits: number } {
    const hook = this.get(name);
    if (hook.on) {
      hook.on = false;
      hook.active.set(0);
      hook.spec.onSwitch?.(false, undefined);
    }
    return { hook: name, on: false, hits: hook.hits };
  }

  list(): { hook: string; on: boolean; params?: unknown; hits: number }[] {
    return [...this.hooks.values()].map((h) => ({
      hook: h.name,
      on: h.on,
      ...(h.on ? { params: h.params } : {}),
      hits: h.hits,
    }));
  }

  /** Every hook off (the service stops). */
  offAll(): void {
    for (const name of this.hooks.keys()) this.switchOff(name);
  }

  private get(name: string): Hook<unknown> {
    const hook = this.hooks.get(name);
    if (hook === undefined)
      throw new HookParamError(`no fault hook ${name} here (hooks: ${this.names().join(', ') || 'none'})`);
    return hook;
  }

  /** The route on the metrics server: GET and POST /limbo/faults, from this host only. */
  readonly route: ExtraRoute = async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== faultHooksPath) return false;
    if (!isLoopback(req.socket.remoteAddress)) {
      send(res, 403, { error: 'fault hooks answer only on this host' });
      return true;
    }
    if (req.method === 'GET') {
      send(res, 200, { hooks: this.list() });
      return true;
    }
    if (req.method !== 'POST') {
      send(res, 405, { error: 'GET or POST' });
      return true;
    }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, 64 * 1024));
    } catch (err) {
      send(res, 400, { error: `body: ${err instanceof Error ? err.message : String(err)}` });
      return true;
    }
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (typeof b['hook'] !== 'string') {
      send(res, 400, { error: 'hook: a hook name is required' });
      return true;
    }
    const params = b['params'] ?? {};
    try {
      if (b['off'] === true) send(res, 200, this.switchOff(b['hook']));
      else if (typeof params !== 'object' || params === null || Array.isArray(params))
        send(res, 400, { error: 'params: must be an object' });
      else send(res, 200, this.switchOn(b['hook'], params as Record<string, unknown>));
    } catch (err) {
      send(res, err instanceof HookParamError ? 400 : 500, {
        error: err instanceof Error ? err.message : String(err),
      });
    }
    return true;
  };
}

function isLoopback(address: string | undefined): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function readBody(req: http.IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        reject(new Error(`over ${max} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

// ------------------------------------------------------------------ parameters

/** A number parameter within bounds (the default when absent, if there is one). */
export function numberParam(
  raw: Record<string, unknown>,
  name: string,
  bounds: { min: number; max: number; default?: number },
): number {
  const v = raw[name] ?? bounds.default;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < bounds.min || v > bounds.max)
    throw new HookParamError(`${name}: a number from ${bounds.min} to ${bounds.max} is required`);
  return v;
}

/** `partitions`: the partitions a hook acts on (absent: all). */
export function partitionsParam(raw: Record<string, unknown>): ReadonlySet<number> | undefined {
  const v = raw['partitions'] ?? (raw['partition'] !== undefined ? [raw['partition']] : undefined);
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((p) => Number.isInteger(p) && (p as number) >= 0))
    throw new HookParamError('partitions: a list of partition numbers');
  return new Set(v as number[]);
}

/** One of `values` (the first when absent). */
export function enumParam<V extends string>(
  raw: Record<string, unknown>,
  name: string,
  values: readonly V[],
): V {
  const v = raw[name] ?? values[0];
  if (typeof v !== 'string' || !values.includes(v as V))
    throw new HookParamError(`${name}: one of ${values.join(', ')}`);
  return v as V;
}

// ------------------------------------------------------------------ the wall clock

const RealDate = Date;

/**
 * `clock.step`: this process's wall clock (Date.now and `new Date()`) runs `offsetMs` off,
 * as after an NTP step, while the steady clock (performance.now) does not move; healed by
 * taking the offset away. Every service defines it. A hit is a read of the stepped clock.
 */
export function defineClockStep(hooks: FaultHooks, registry: Registry): FaultHook<{ offsetMs: number }> {
  const offsetGauge = new Gauge({
    name: metricNames.clockOffsetSeconds,
    help: 'How far this process’s wall clock is stepped from the host’s (the clock.step fault hook)',
    registers: [registry],
  });
  offsetGauge.set(0);
  const hook: FaultHook<{ offsetMs: number }> = hooks.define('clock.step', {
    parse: (raw) => ({ offsetMs: numberParam(raw, 'offsetMs', { min: -864e6, max: 864e6 }) }),
    onSwitch(on, params) {
      if (!on || params === undefined) {
        globalThis.Date = RealDate;
        offsetGauge.set(0);
        return;
      }
      const offset = params.offsetMs;
      // A Date whose "now" is stepped; the same prototype, so instanceof holds both ways.
      const Stepped = function (this: unknown, ...args: unknown[]): unknown {
        if (new.target === undefined) return new RealDate(RealDate.now() + offset).toString();
        hook.hit();
        return Reflect.construct(RealDate, args.length === 0 ? [RealDate.now() + offset] : args, new.target);
      } as unknown as DateConstructor;
      Object.defineProperty(Stepped, 'prototype', { value: RealDate.prototype });
      Stepped.now = () => {
        hook.hit();
        return RealDate.now() + offset;
      };
      Stepped.parse = RealDate.parse.bind(RealDate);
      Stepped.UTC = RealDate.UTC.bind(RealDate);
      globalThis.Date = Stepped;
      offsetGauge.set(offset / 1000);
    },
  });
  return hook;
}

/** A service's hooks with the ones every service has (clock.step). */
export function createFaultHooks(registry: Registry): FaultHooks {
  const hooks = new FaultHooks(registry);
  defineClockStep(hooks, registry);
  return hooks;
}
