// `limbo serve log`: the log server role (partition logs + metadata + controller) with its
// options from flags and LIMBO_* variables. A missing or unusable data dir is bad usage
// (exit 2, naming --data-dir), like any other bad option value.
import { access, constants } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError } from '../../util/errors.js';
import { bugsOption, parseBugs } from '../bugs.js';
import { defineRole } from '../service.js';
import { ensureDir } from './ensure-dir.js';
import { LogServerError } from './errors.js';
import { logServerDefaults, startLogServer } from './log-server.js';
import { roleDescriptions } from '../role-descriptions.js';

export const logRole = defineRole({
  role: 'log',
  description: roleDescriptions.log,
  options: {
    node: { type: 'string', default: 'log', description: 'name of this service instance' },
    host: { type: 'string', default: logServerDefaults.host, description: 'address to listen on' },
    port: { type: 'int', default: 0, min: 0, max: 65535, description: 'gRPC port (0 = a free one)' },
    metricsPort: {
      type: 'int',
      default: 0,
      min: 0,
      max: 65535,
      description: 'metrics port (0 = a free one)',
    },
    dataDir: { type: 'string', description: 'directory of the partition logs and metadata (required)' },
    partitions: {
      type: 'int',
      default: logServerDefaults.partitions,
      min: 1,
      max: 1024,
      description: 'number of partitions',
    },
    failureTimeoutMs: {
      type: 'int',
      default: logServerDefaults.failureTimeoutMs,
      min: 50,
      max: 600_000,
      description: 'a processor silent this long is dead',
    },
    expectProcessors: {
      type: 'int',
      default: 0,
      min: 0,
      max: 1000,
      description:
        'processors started together: once this many have sent a heartbeat, the first leaders are picked without waiting the start-up settle (0 = always wait)',
    },
    maxRecordBytes: {
      type: 'int',
      default: logServerDefaults.maxRecordBytes,
      min: 1,
      max: 15 * 1024 * 1024,
      description: 'largest record an append may carry',
    },
    bugs: bugsOption,
  },
  async start(options, context) {
    const bugs = parseBugs(options.bugs);
    if (options.dataDir === undefined || options.dataDir.trim() === '')
      throw new UsageError('--data-dir is required (or LIMBO_DATA_DIR)');
    const dataDir = resolve(options.dataDir);
    try {
      await ensureDir(dataDir);
      await access(dataDir, constants.R_OK | constants.W_OK);
    } catch (err) {
      throw new UsageError(`--data-dir: cannot use "${dataDir}": ${(err as Error).message}`);
    }
    try {
      return await startLogServer({
        dataDir,
        node: options.node,
        host: options.host,
        port: options.port,
        metricsPort: options.metricsPort,
        partitions: options.partitions,
        failureTimeoutMs: options.failureTimeoutMs,
        maxRecordBytes: options.maxRecordBytes,
        expectNodes: options.expectProcessors,
        bugs,
        logger: context.logger,
        env: context.env,
        ...(context.tracingFor !== undefined ? { tracing: context.tracingFor(options.node) } : {}),
      });
    } catch (err) {
      if (err instanceof LogServerError && err.code === 'E_DATA_DIR_LOCKED')
        throw new UsageError(`--data-dir: ${err.message}`, { cause: err });
      throw err;
    }
  },
});
