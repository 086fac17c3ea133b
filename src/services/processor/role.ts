// `limbo serve processor`: options in, a running processor node out.
import type { OptionSpecs } from '../../util/options.js';
import { UsageError } from '../../util/errors.js';
import { limits } from '../../protocol/limits.js';
import { bugsOption, parseBugs } from '../bugs.js';
import { defineRole } from '../service.js';
import { processorDefaults, startProcessor } from './processor.js';
import { roleDescriptions } from '../role-descriptions.js';

const options = {
  node: { type: 'string', default: 'processor-1', description: 'node name (unique in the cluster)' },
  logAddress: { type: 'string', description: 'host:port of the log server (required)' },
  host: { type: 'string', default: '127.0.0.1', description: 'address to bind' },
  port: { type: 'int', default: 0, min: 0, max: 65535, description: 'gRPC port (0 = a free one)' },
  metricsPort: {
    type: 'int',
    default: 0,
    min: 0,
    max: 65535,
    description: 'port of GET /metrics (0 = a free one)',
  },
  advertisedAddress: {
    type: 'string',
    description: 'host:port ingresses dial (e.g. a proxy) [default: the bound address]',
  },
  protocol: {
    type: 'enum',
    values: ['rpc', 'legacy'] as const,
    default: 'rpc',
    description: 'ingress protocol',
  },
  partitions: { type: 'list', description: 'partitions to host, comma-separated [default: all]' },
  heartbeatIntervalMs: {
    type: 'int',
    default: processorDefaults.heartbeatIntervalMs,
    min: 10,
    max: 60_000,
    description: 'heartbeat interval',
  },
  leaseMs: {
    type: 'int',
    default: processorDefaults.leaseMs,
    min: 50,
    max: 600_000,
    description: 'step down after this long without the controller',
  },
  completionRetentionMs: {
    type: 'int',
    default: 3_600_000,
    min: 0,
    description: 'how long completed outputs are kept',
  },
  appendTimeoutMs: {
    type: 'int',
    default: 5000,
    min: 10,
    max: 600_000,
    description: 'bound on one log append',
  },
  followerReadDelayMs: {
    type: 'int',
    default: processorDefaults.followerReadDelayMs,
    min: 0,
    max: limits.readBatchDelayMsMax,
    description: "a follower's caught-up log reads wait this long to take more entries at once (0 = none)",
  },
  bugs: bugsOption,
} satisfies OptionSpecs;

export const processorRole = defineRole({
  role: 'processor',
  description: roleDescriptions.processor,
  options,
  start(o, ctx) {
    if (o.logAddress === undefined) throw new UsageError('--log-address is required (or LIMBO_LOG_ADDRESS)');
    const partitions = (o.partitions ?? []).map((p) => {
      if (!/^\d+$/.test(p)) throw new UsageError(`--partitions: "${p}" is not a partition number`);
      return Number(p);
    });
    return startProcessor({
      node: o.node,
      logAddress: o.logAddress,
      host: o.host,
      port: o.port,
      metricsPort: o.metricsPort,
      ...(o.advertisedAddress !== undefined ? { advertisedAddress: o.advertisedAddress } : {}),
      protocol: o.protocol,
      partitions,
      heartbeatIntervalMs: o.heartbeatIntervalMs,
      leaseMs: o.leaseMs,
      completionRetentionMs: o.completionRetentionMs,
      appendTimeoutMs: o.appendTimeoutMs,
      followerReadDelayMs: o.followerReadDelayMs,
      bugs: parseBugs(o.bugs),
      logger: ctx.logger.child(o.node),
      env: ctx.env,
      ...(ctx.tracingFor !== undefined ? { tracing: ctx.tracingFor(o.node) } : {}),
    });
  },
});
