// `limbo serve ingress`: options in, a running ingress out.
import type { OptionSpecs } from '../../util/options.js';
import { limits } from '../../protocol/limits.js';
import { UsageError } from '../../util/errors.js';
import { bugsOption, parseBugs } from '../bugs.js';
import { defineRole } from '../service.js';
import { startIngress } from './ingress.js';
import { roleDescriptions } from '../role-descriptions.js';

const options = {
  node: { type: 'string', default: 'ingress-1', description: 'node name (unique in the cluster)' },
  logAddress: {
    type: 'string',
    description: 'host:port of the log server (partition table; legacy appends) (required)',
  },
  host: { type: 'string', default: '127.0.0.1', description: 'address to bind' },
  port: {
    type: 'int',
    default: 0,
    min: 0,
    max: 65535,
    description: 'HTTP port for clients (0 = a free one)',
  },
  metricsPort: {
    type: 'int',
    default: 0,
    min: 0,
    max: 65535,
    description: 'port of GET /metrics (0 = a free one)',
  },
  protocol: {
    type: 'enum',
    values: ['rpc', 'legacy'] as const,
    default: 'rpc',
    description: 'processor protocol',
  },
  rpcTimeoutMs: {
    type: 'int',
    default: 5000,
    min: 10,
    max: 600_000,
    description: 'per-attempt deadline of quick RPCs',
  },
  longPollMs: {
    type: 'int',
    default: 30_000,
    min: 100,
    max: 3_600_000,
    description: 'per-attempt deadline of RPCs that wait for an output',
  },
  requestTimeoutMs: {
    type: 'int',
    default: 0,
    min: 0,
    description: 'client request deadline, answered 504 (0 = none)',
  },
  maxPending: { type: 'int', default: 10_000, min: 1, description: 'pending requests before answering 503' },
  receiveTimeoutMs: {
    type: 'int',
    default: limits.receiveMsDefault,
    min: 100,
    max: limits.receiveMsMax,
    description: 'bound on receiving a request (headers and body), answered 408',
  },
  maxBodyBytes: {
    type: 'int',
    default: limits.payloadBytesMax,
    min: 1,
    max: limits.payloadBytesMax,
    description: 'request body limit (413 above)',
  },
  bugs: bugsOption,
} satisfies OptionSpecs;

export const ingressRole = defineRole({
  role: 'ingress',
  description: roleDescriptions.ingress,
  options,
  start(o, ctx) {
    if (o.logAddress === undefined) throw new UsageError('--log-address is required (or LIMBO_LOG_ADDRESS)');
    return startIngress({
      ...o,
      bugs: parseBugs(o.bugs),
      logAddress: o.logAddress,
      logger: ctx.logger.child(o.node),
      env: ctx.env,
      ...(ctx.tracingFor !== undefined ? { tracing: ctx.tracingFor(o.node) } : {}),
    });
  },
});
