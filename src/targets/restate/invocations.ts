// Restate's invocation ids for idempotency keys, from the admin API's SQL introspection
// (`sys_invocation`, any node's admin port): how a hung call, which never got an answer naming
// its id, is named in a verdict by the id a Restate developer can look up. Bounded: keys are
// asked in chunks, each query with a timeout, the next admin URL tried when one fails.
const CHUNK = 100;
const QUERY_TIMEOUT_MS = 5_000;

export interface RestateInvocation {
  id: string;
  target: string;
  status: string;
}

const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;

export async function invocationsByIdempotencyKey(
  adminUrls: readonly string[],
  keys: readonly string[],
): Promise<Map<string, RestateInvocation>> {
  const out = new Map<string, RestateInvocation>();
  for (let i = 0; i < keys.length; i += CHUNK) {
    const chunk = keys.slice(i, i + CHUNK);
    const query = `SELECT id, target, status, idempotency_key FROM sys_invocation WHERE idempotency_key IN (${chunk.map(sqlString).join(', ')})`;
    let last: unknown;
    let done = false;
    for (const admin of adminUrls) {
      try {
        const res = await fetch(new URL('/query', admin), {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ query }),
          signal: AbortSignal.timeout(QUERY_TIMEOUT_MS),
        });
        const body = (await res.json()) as { rows?: Record<string, unknown>[]; message?: string };
        if (!res.ok) throw new Error(`${res.status} ${body.message ?? ''}`);
        for (const r of body.rows ?? [])
          if (typeof r['idempotency_key'] === 'string' && typeof r['id'] === 'string')
            out.set(r['idempotency_key'], {
              id: r['id'],
              target: typeof r['target'] === 'string' ? r['target'] : '',
              status: typeof r['status'] === 'string' ? r['status'] : '',
            });
        done = true;
        break;
      } catch (err) {
        last = err;
      }
    }
    if (!done) throw last instanceof Error ? last : new Error(String(last));
  }
  return out;
}
