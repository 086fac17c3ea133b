// The kinds of op a client draws and their weights (a workload's `mix`).

/** `sendRetry`: a send the client repeats with the same idempotency key (it never saw the 202). */
export type OpMixKind = 'call' | 'send' | 'counterAdd' | 'idempotentRetry' | 'sendRetry';
export type OpMix = Partial<Record<OpMixKind, number>>;

export const opMixKinds: readonly OpMixKind[] = [
  'call',
  'send',
  'counterAdd',
  'idempotentRetry',
  'sendRetry',
];
