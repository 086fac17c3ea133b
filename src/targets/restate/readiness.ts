// The bounded waits of a Restate cluster start-up: provisioning (restatectl, retried until
// its output says so), registering the service endpoint, every partition having a leader, and
// a call succeeding through each ingress. Each takes an absolute deadline (ms since epoch).
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../telemetry/logger.js';
import { sleep } from '../../util/backoff.js';
import { TimeoutError, messageOf } from '../../util/errors.js';
import { waitFor } from '../../util/wait.js';
import { listPartitions } from './partitions.js';
import { provisionCluster } from './restatectl.js';

const CALL_ATTEMPT_TIMEOUT_MS = 5_000;
const POLL_INTERVAL_MS = 300;

export async function provision(
  fabricAddress: string,
  o: { partitions: number; replication: number; deadline: number; logger: Logger },
): Promise<void> {
  let last: unknown;
  for (let attempt = 1; Date.now() < o.deadline; attempt++) {
    try {
      const outcome = await provisionCluster(fabricAddress, {
        partitions: o.partitions,
        replication: o.replication,
        timeoutMs: Math.min(20_000, Math.max(1000, o.deadline - Date.now())),
      });
      o.logger.info('restate cluster provisioned', { outcome, attempt });
      return;
    } catch (err) {
      last = err;
      o.logger.debug('provision attempt failed', { attempt, error: err });
      await sleep(1000);
    }
  }
  throw new TimeoutError('restate cluster was not provisioned in time', { cause: last });
}

export async function registerDeployment(
  adminUrls: readonly string[],
  uri: string,
  deadline: number,
  logger: Logger,
): Promise<void> {
  let last = '';
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const adminUrl = adminUrls[attempt % adminUrls.length]!;
    try {
      const res = await fetch(new URL('/deployments', adminUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri, force: true }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      if (res.ok) {
        logger.info('restate deployment registered', { uri, adminUrl, attempt });
        return;
      }
      last = `${res.status} ${text}`;
    } catch (err) {
      last = messageOf(err);
    }
    await sleep(500);
  }
  throw new TimeoutError(`registering ${uri} with restate failed: ${last}`);
}

export async function waitForLeaders(
  fabricAddress: string,
  partitions: number,
  deadline: number,
): Promise<void> {
  await waitFor(
    async () => {
      const leaders = await listPartitions(fabricAddress);
      if (leaders.size >= partitions) return true;
      throw new Error(`${leaders.size} of ${partitions} partitions have a leader`);
    },
    {
      what: 'restate partitions all have a leader',
      timeoutMs: Math.max(0, deadline - Date.now()),
      intervalMs: 500,
    },
  );
}

/** One Echo call through `ingressUrl`; resolves true when it answered 200 with the input. */
export async function echoOnce(ingressUrl: string, timeoutMs = CALL_ATTEMPT_TIMEOUT_MS): Promise<boolean> {
  const probe = { probe: randomBytes(4).toString('hex') };
  try {
    const res = await fetch(new URL('/Echo/echo', ingressUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(probe),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await res.text();
    return res.status === 200 && body === JSON.stringify(probe);
  } catch {
    return false;
  }
}

export async function waitUntilServing(ingressUrls: readonly string[], deadline: number): Promise<void> {
  await Promise.all(
    ingressUrls.map((url) =>
      waitFor(() => echoOnce(url, Math.min(CALL_ATTEMPT_TIMEOUT_MS, Math.max(100, deadline - Date.now()))), {
        what: `a call succeeds through restate ingress ${url}`,
        timeoutMs: Math.max(0, deadline - Date.now()),
        intervalMs: POLL_INTERVAL_MS,
      }),
    ),
  );
}
