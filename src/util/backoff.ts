// Exponential backoff with jitter: 50 ms doubling, capped at 1 s (docs/architecture.md#ingress).
// Jitter draws each delay from [delay/2, delay], so resends from many requests spread out
// and the attempt rate per request stays bounded by the cap.

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  random?: () => number;
}

export class Backoff {
  private attempt = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 50;
    this.maxMs = options.maxMs ?? 1000;
    this.random = options.random ?? Math.random;
  }

  /** The next delay in milliseconds. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt++;
    return Math.round(base / 2 + (base / 2) * this.random());
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Resolves after `ms`, or at once (rejecting with the signal's reason) when aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
