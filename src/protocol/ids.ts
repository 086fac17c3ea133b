// Invocation ids and partition routing.
//
// The ingress makes every invocation id itself and encodes its partition key in it, so
// routing needs no round trip: inv_<partition key, 8 hex>_<unique part>. Keyed and
// idempotent calls get a deterministic id (a hash of service, key, handler and
// idempotency key), so a client retry lands on the same invocation.
import { createHash, randomBytes } from 'node:crypto';

const PARTITION_KEY_SPACE = 2 ** 32;

export function partitionKeyOf(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0);
}

/** Partition keys are split into `numPartitions` equal ranges. */
export function partitionOf(partitionKey: number, numPartitions: number): number {
  return Math.floor((partitionKey * numPartitions) / PARTITION_KEY_SPACE);
}

export interface InvocationTarget {
  service: string;
  key: string;
  handler: string;
}

/** Random bytes drawn from the system 4 KiB at a time (one call into the CSPRNG per ~400 ids, not one per id). */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolAt = 0;
function pooledRandomBytes(n: number): Buffer {
  if (poolAt + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  const out = pool.subarray(poolAt, poolAt + n);
  poolAt += n;
  return out;
}

export function makeInvocationId(
  target: InvocationTarget,
  idempotencyKey: string | undefined,
  random: () => Buffer = () => pooledRandomBytes(10),
): string {
  const routingText = target.key !== '' ? `${target.service}/${target.key}` : undefined;
  if (idempotencyKey !== undefined && idempotencyKey !== '') {
    const pk = partitionKeyOf(routingText ?? `${target.service}/${idempotencyKey}`);
    const unique = createHash('sha256')
      .update(`${target.service}\0${target.key}\0${target.handler}\0${idempotencyKey}`)
      .digest('hex')
      .slice(0, 20);
    return `inv_${hex8(pk)}_${unique}`;
  }
  const unique = random().toString('hex');
  const pk = routingText !== undefined ? partitionKeyOf(routingText) : random().readUInt32BE(0);
  return `inv_${hex8(pk)}_${unique}`;
}

const INVOCATION_ID = /^inv_([0-9a-f]{8})_([0-9a-z]{1,64})$/;

export function isInvocationId(id: string): boolean {
  return INVOCATION_ID.test(id);
}

/** The partition key encoded in an invocation id, or undefined if the id is malformed. */
export function partitionKeyOfInvocation(id: string): number | undefined {
  const m = INVOCATION_ID.exec(id);
  return m?.[1] !== undefined ? Number.parseInt(m[1], 16) : undefined;
}

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}
