// Runs `restatectl` against a node's fabric address and reads its output: restatectl exits 0
// even when an operation failed, so success is decided from what it prints.
import { execFile } from 'node:child_process';
import { LimboError } from '../../util/errors.js';
import { restatectlBinary } from './binaries.js';

export class RestatectlError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_RESTATECTL', message, options);
  }
}

export interface RestatectlResult {
  code: number | string;
  stdout: string;
  stderr: string;
}

const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

export function runRestatectl(args: readonly string[], timeoutMs = 15_000): Promise<RestatectlResult> {
  return new Promise((resolve) => {
    execFile(
      restatectlBinary(),
      [...args],
      {
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: MAX_OUTPUT_BYTES,
        env: { ...process.env, NO_COLOR: '1', TERM: 'dumb' },
      },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : (err.signal ?? 'error');
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export type ProvisionOutcome = 'provisioned' | 'already-provisioned';

/** One provisioning attempt. Throws RestatectlError (with the output) when it did not succeed. */
export async function provisionCluster(
  fabricAddress: string,
  options: { partitions: number; replication: number; timeoutMs?: number },
): Promise<ProvisionOutcome> {
  const r = await runRestatectl(
    [
      'provision',
      '--yes',
      '-s',
      fabricAddress,
      '--num-partitions',
      String(options.partitions),
      '--replication',
      String(options.replication),
      '--log-provider',
      'replicated',
    ],
    options.timeoutMs,
  );
  const text = `${r.stdout}\n${r.stderr}`;
  // 1.7.12 prints "✅ Cluster has been successfully provisioned." or, when it was provisioned
  // before (e.g. by an earlier attempt that timed out on our side), "🤷 Cluster has been
  // provisioned by somebody else."; failures print "[ERR]: …" and still exit 0.
  if (!/\[ERR\]/.test(text)) {
    if (/successfully provisioned/i.test(text)) return 'provisioned';
    if (/provisioned by somebody else|already provisioned/i.test(text)) return 'already-provisioned';
  }
  throw new RestatectlError(
    `restatectl provision via ${fabricAddress} failed (exit ${r.code}): ${text.trim()}`,
  );
}
