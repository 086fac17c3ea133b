// Bounds on everything a request to the reference cluster can set, in one place, and the
// check of every built-in handler's arguments against them.
//
//   client ─▶ ingress: path, idempotency-key, body size, handler arguments ─▶ 400/413/431
//                         │ (nothing out of bounds is appended to the log)
//                         ▼
//   processor handler: the same argument check again (a direct Submit, a record written
//                      by an older ingress) ─▶ the invocation ends with a failure
//
// Why bounds: a testbed's own services must not be able to hang a client by design (a
// `Sleep.ms` of 1e15, a `Flaky.failFirst` of a billion), nor carry unbounded text into
// every log record an invocation touches (an 8,000-byte idempotency key). The table in
// docs/reliability.md lists these; keep the two in step. Imports nothing.

export const limits = {
  /** `Sleep/sleep {ms}`: the longest sleep. */
  sleepMsMax: 60_000,
  /** `Flaky/call {failFirst}`: the most failing attempts before it succeeds. */
  flakyFailFirstMax: 10,
  /** `Counter/{key}/add {delta}`: the largest |delta| (an integer). */
  counterDeltaMax: 1_000_000_000,
  /** The key of a keyed call (`/Counter/{key}/…`), in UTF-8 bytes. */
  keyBytesMax: 256,
  /** The `idempotency-key` header, in UTF-8 bytes. */
  idempotencyKeyBytesMax: 256,
  /** The `traceparent` header, in characters (a valid one has 55). */
  traceparentCharsMax: 256,
  /**
   * A request body (the handler's payload), in bytes; the ingress's --max-body-bytes is
   * capped by it. A quarter of the log's 1 MiB record limit: the Invoke and End records
   * carry the payload as JSON text inside JSON, and escaping can double it.
   */
  payloadBytesMax: 256 * 1024,
  /**
   * Receiving one request (headers and body) at the ingress, in ms: a client that sends
   * slower than this gets 408 and the connection closed (`--receive-timeout-ms`, capped here).
   */
  receiveMsMax: 120_000,
  /** The default of `--receive-timeout-ms`. */
  receiveMsDefault: 30_000,
  /**
   * Nesting of arrays and objects in a JSON payload: a handler's result is written back
   * with JSON.stringify, which overflows the stack near 5,000 levels (and an invocation
   * whose End cannot be written would be retried for ever).
   */
  jsonDepthMax: 64,
  /** Segments of a request path (`/Counter/{key}/add/send` has 4). */
  pathSegmentsMax: 8,
  /** Log server API: a node name or watcher name, in characters (the controller's own bound). */
  nodeNameCharsMax: 200,
  /** Log server API: a node's advertised `host:port`, in characters. */
  addressCharsMax: 512,
  /** Log server API: partitions listed in one heartbeat. */
  heartbeatPartitionsMax: 4096,
  /** Log server API: records in one Append. */
  appendRecordsMax: 10_000,
  /** Log server API: appends in one AppendBatch. */
  appendBatchItemsMax: 4096,
  /** Log server API: a Read's `batchDelayMs` (what a caught-up reader waits to send more at once). */
  readBatchDelayMsMax: 1000,
} as const;

/** A bad argument: the field it is about and what is wrong with it (a 400 at the ingress). */
export interface ArgumentProblem {
  field: string;
  message: string;
}

type ArgumentCheck = (input: unknown) => ArgumentProblem | undefined;

function fieldOf(input: unknown, field: string): unknown {
  return typeof input === 'object' && input !== null && !Array.isArray(input)
    ? (input as Record<string, unknown>)[field]
    : undefined;
}

function needsObject(input: unknown, example: string): ArgumentProblem | undefined {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) return undefined;
  return { field: 'body', message: `body must be a JSON object like ${example}` };
}

/** An integer field in [min, max]; `optional` fields may be absent (or null). */
function integerField(
  input: unknown,
  field: string,
  min: number,
  max: number,
  optional: boolean,
): ArgumentProblem | undefined {
  const v = fieldOf(input, field);
  if ((v === undefined || v === null) && optional) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    return {
      field,
      message: `"${field}" must be an integer from ${min} to ${max}${optional ? ' (or absent)' : ''}, got ${describe(v)}`,
    };
  }
  return undefined;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  const text = JSON.stringify(v);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

const checks: Record<string, ArgumentCheck> = {
  'Echo/echo': () => undefined,
  'Sleep/sleep': (input) =>
    needsObject(input, '{"ms": 100}') ?? integerField(input, 'ms', 0, limits.sleepMsMax, false),
  'Counter/add': (input) =>
    input === null
      ? undefined
      : (needsObject(input, '{"delta": 1}') ??
        integerField(input, 'delta', -limits.counterDeltaMax, limits.counterDeltaMax, true) ??
        integerField(input, 'holdMs', 0, limits.sleepMsMax, true)),
  'Counter/get': () => undefined,
  'Flaky/call': (input) =>
    input === null
      ? undefined
      : (needsObject(input, '{"failFirst": 1}') ??
        integerField(input, 'failFirst', 0, limits.flakyFailFirstMax, true)),
};

/** The first problem with a handler's parsed JSON input, or undefined if it is fine (or unknown). */
export function checkHandlerInput(
  service: string,
  handler: string,
  input: unknown,
): ArgumentProblem | undefined {
  if (jsonDepthOver(input, limits.jsonDepthMax))
    return { field: 'body', message: `body nests deeper than ${limits.jsonDepthMax} levels` };
  const key = `${service}/${handler}`;
  return Object.hasOwn(checks, key) ? checks[key]?.(input) : undefined;
}

/** Whether a parsed JSON value nests arrays/objects deeper than `max` (iterative: no stack). */
function jsonDepthOver(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [v, depth] = item;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** A problem with the key of a keyed call, or undefined. */
export function checkKey(key: string): ArgumentProblem | undefined {
  const bytes = Buffer.byteLength(key, 'utf8');
  return bytes > limits.keyBytesMax
    ? { field: 'key', message: `key is ${bytes} bytes, over the limit of ${limits.keyBytesMax}` }
    : undefined;
}

/** A problem with an idempotency key, or undefined. */
export function checkIdempotencyKey(idempotencyKey: string): ArgumentProblem | undefined {
  const bytes = Buffer.byteLength(idempotencyKey, 'utf8');
  return bytes > limits.idempotencyKeyBytesMax
    ? {
        field: 'idempotency-key',
        message: `idempotency-key is ${bytes} bytes, over the limit of ${limits.idempotencyKeyBytesMax}`,
      }
    : undefined;
}
