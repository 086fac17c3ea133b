// Faults by name (Toxiproxy's toxic names for toxics), so schedules can be plain data:
// { fault: 'latency', on: 'ingress->processor-1', latencyMs: 500 }.
import type { Fault } from './fault.js';
import { FaultError } from './fault.js';
import { followerLag } from './follower-lag.js';
import { isolate, type IsolateOptions } from './isolate.js';
import { clientsBeforeProcessors, kill, pause, restart, transferLeadership } from './process-faults.js';
import type { LinkSelector, ServiceSelector } from './selectors.js';
import {
  clockStep,
  leadershipStepFailure,
  logAppendErrors,
  logWriteErrors,
  restartWithDataLoss,
  slowFsync,
  tableUpdates,
  type LeadershipStep,
} from './service-faults.js';
import {
  bandwidth,
  latency,
  limitData,
  linkDown,
  resetPeer,
  slicer,
  slowClose,
  timeout,
} from './toxic-faults.js';

export type FaultParams = Record<string, unknown> & { on?: unknown };
export type FaultFactory = (params: FaultParams) => Fault;

const registry = new Map<string, FaultFactory>();

export function registerFault(name: string, factory: FaultFactory): void {
  if (registry.has(name)) throw new Error(`fault ${name} is already registered`);
  registry.set(name, factory);
}

export function faultNames(): string[] {
  return [...registry.keys()].sort();
}

export function createFault(name: string, params: FaultParams = {}): Fault {
  const f = registry.get(name);
  if (f === undefined)
    throw new FaultError('E_FAULT_UNKNOWN', `unknown fault ${name} (known: ${faultNames().join(', ')})`);
  return f(params);
}

const linkOf = (p: FaultParams): LinkSelector => p.on as LinkSelector;
const svcOf = (p: FaultParams): ServiceSelector => p.on as ServiceSelector;
const num = (p: FaultParams, k: string, d?: number): number => {
  const v = p[k] ?? d;
  if (typeof v !== 'number') throw new FaultError('E_FAULT_TARGET', `fault parameter ${k} must be a number`);
  return v;
};

/** `stream: 'upstream'` holds back client → server bytes (e.g. a deposed leader's appends). */
const streamOf = (p: FaultParams): { stream?: 'upstream' | 'downstream' } => {
  const s = p['stream'];
  if (s === undefined) return {};
  if (s !== 'upstream' && s !== 'downstream')
    throw new FaultError('E_FAULT_TARGET', 'fault parameter stream must be upstream or downstream');
  return { stream: s };
};

registerFault('latency', (p) =>
  latency(linkOf(p), { latencyMs: num(p, 'latencyMs'), jitterMs: num(p, 'jitterMs', 0) }, streamOf(p)),
);
registerFault('bandwidth', (p) => bandwidth(linkOf(p), { rateKBps: num(p, 'rateKBps') }));
registerFault('timeout', (p) => timeout(linkOf(p), { timeoutMs: num(p, 'timeoutMs', 0) }, streamOf(p)));
registerFault('reset_peer', (p) => resetPeer(linkOf(p), { timeoutMs: num(p, 'timeoutMs', 0) }));
registerFault('slow_close', (p) => slowClose(linkOf(p), { delayMs: num(p, 'delayMs') }));
registerFault('slicer', (p) =>
  slicer(linkOf(p), {
    averageSize: num(p, 'averageSize'),
    sizeVariation: num(p, 'sizeVariation', 0),
    delayUs: num(p, 'delayUs', 0),
  }),
);
registerFault('limit_data', (p) => limitData(linkOf(p), { bytes: num(p, 'bytes') }));
registerFault('link-down', (p) => linkDown(linkOf(p)));
registerFault('kill', (p) => kill(svcOf(p)));
registerFault('pause', (p) => pause(svcOf(p)));
registerFault('restart', (p) => restart(svcOf(p)));
registerFault('transfer-leadership', (p) =>
  transferLeadership({
    partition: num(p, 'partition'),
    ...(typeof p['to'] === 'string' ? { to: p['to'] } : {}),
  }),
);
registerFault('clients-before-processors', () => clientsBeforeProcessors());
registerFault('follower-lag', (p) =>
  followerLag({ partition: num(p, 'partition'), latencyMs: num(p, 'latencyMs') }),
);
registerFault('isolate', (p) => isolate(svcOf(p), isolateOptionsOf(p)));
registerFault('log-append-errors', (p) => logAppendErrors(partitionsOf(p)));
registerFault('log-write-errors', (p) => {
  const written = p['written'] ?? 'none';
  if (written !== 'none' && written !== 'torn' && written !== 'all')
    throw new FaultError('E_FAULT_TARGET', 'fault parameter written must be none, torn or all');
  return logWriteErrors({ written, ...partitionsOf(p) });
});
registerFault('slow-fsync', (p) => slowFsync({ delayMs: num(p, 'delayMs'), ...partitionsOf(p) }));
registerFault('table-updates', (p) => {
  const how = p['how'] ?? 'delay';
  if (how !== 'delay' && how !== 'drop' && how !== 'reorder')
    throw new FaultError('E_FAULT_TARGET', 'fault parameter how must be delay, drop or reorder');
  return tableUpdates({
    how,
    ...(p['delayMs'] !== undefined ? { delayMs: num(p, 'delayMs') } : {}),
    ...(typeof p['watcher'] === 'string' ? { watcher: p['watcher'] } : {}),
  });
});
registerFault('leadership-step-failure', (p) => {
  const steps = p['steps'] ?? (p['step'] !== undefined ? [p['step']] : ['announce']);
  const known = ['claim', 'announce', 'catch-up', 'resume'];
  if (!Array.isArray(steps) || steps.length === 0 || !steps.every((x) => known.includes(x as string)))
    throw new FaultError('E_FAULT_TARGET', `fault parameter steps must be a list of ${known.join(', ')}`);
  return leadershipStepFailure({
    partition: num(p, 'partition'),
    steps: steps as LeadershipStep[],
    ...(typeof p['to'] === 'string' ? { to: p['to'] } : {}),
  });
});
registerFault('clock-step', (p) => clockStep(svcOf(p), { offsetMs: num(p, 'offsetMs') }));
registerFault('data-loss-restart', (p) => restartWithDataLoss(svcOf(p)));

function partitionsOf(p: FaultParams): { partitions?: number[] } {
  const v = p['partitions'] ?? (p['partition'] !== undefined ? [p['partition']] : undefined);
  if (v === undefined) return {};
  if (!Array.isArray(v) || !v.every((x) => Number.isInteger(x)))
    throw new FaultError('E_FAULT_TARGET', 'fault parameter partitions must be a list of partition numbers');
  return { partitions: v as number[] };
}

function isolateOptionsOf(p: FaultParams): IsolateOptions {
  const o: IsolateOptions = {};
  const direction = p['direction'];
  if (direction !== undefined) {
    if (direction !== 'both' && direction !== 'inbound' && direction !== 'outbound')
      throw new FaultError('E_FAULT_TARGET', 'fault parameter direction must be both, inbound or outbound');
    o.direction = direction;
  }
  const how = p['how'];
  if (how !== undefined) {
    if (how !== 'hold' && how !== 'drop' && how !== 'refuse')
      throw new FaultError('E_FAULT_TARGET', 'fault parameter how must be hold, drop or refuse');
    o.how = how;
  }
  const kinds = p['kinds'];
  if (kinds !== undefined) {
    if (!Array.isArray(kinds) || !kinds.every((k) => typeof k === 'string'))
      throw new FaultError('E_FAULT_TARGET', 'fault parameter kinds must be a list of link kinds');
    o.kinds = kinds;
  }
  return o;
}
