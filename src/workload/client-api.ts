// How a target's ingress is spoken to: the URL paths of call / send / attach, where the
// invocation id comes from, and how a counter value reads. The workload's ops are the same on
// every target (DESIGN.md §1); only this differs. `referenceClientApi` is the reference
// ingress's API (ids made by the client, `x-limbo-invocation-id`), `restateClientApi` the real
// Restate ingress's (ids made by Restate, from `x-restate-id` or the send answer's body).
import { INVOCATION_ID_HEADER } from '../protocol/names.js';
import { makeInvocationId, type InvocationTarget } from '../protocol/ids.js';
import type { HttpAnswer } from './http-client.js';

export interface ClientApi {
  readonly name: string;
  /** The id known before the call (deterministic for idempotent calls), if the client can know it. */
  invocationIdFor(target: InvocationTarget, idempotencyKey: string | undefined): string | undefined;
  /** The path of a call; `key` '' for a plain service. */
  callPath(target: InvocationTarget): string;
  /** The path of a fire-and-forget send of the same call. */
  sendPath(target: InvocationTarget): string;
  /** Waits for an invocation's output. */
  attachPath(invocationId: string): string;
  /** The invocation id an answer names (header or body), if any. */
  idFrom(answer: HttpAnswer): string | undefined;
  /** A counter's value in an answer's body. */
  counterValue(body: unknown): number | undefined;
}

export const REFERENCE_INVOCATION_ID_HEADER = INVOCATION_ID_HEADER;
export const RESTATE_INVOCATION_ID_HEADER = 'x-restate-id';

function callPath(c: InvocationTarget): string {
  return c.key === ''
    ? `/${c.service}/${c.handler}`
    : `/${c.service}/${encodeURIComponent(c.key)}/${c.handler}`;
}

function headerOrBodyId(header: string) {
  return (answer: HttpAnswer): string | undefined => {
    const h = answer.headers[header];
    if (typeof h === 'string' && h !== '') return h;
    const b = answer.body as { invocationId?: unknown } | undefined;
    return typeof b?.invocationId === 'string' ? b.invocationId : undefined;
  };
}

function counterValue(body: unknown): number | undefined {
  if (typeof body === 'number') return body;
  const v = (body as { value?: unknown } | undefined)?.value;
  return typeof v === 'number' ? v : undefined;
}

export const referenceClientApi: ClientApi = {
  name: 'reference',
  invocationIdFor: (target, key) => makeInvocationId(target, key),
  callPath,
  sendPath: (c) => `${callPath(c)}/send`,
  attachPath: (id) => `/invocations/${encodeURIComponent(id)}/attach`,
  idFrom: headerOrBodyId(REFERENCE_INVOCATION_ID_HEADER),
  counterValue,
};

/**
 * Restate 1.7: `POST /{service}[/{key}]/{handler}[/send]`, `GET /restate/invocation/{id}/attach`;
 * the id is Restate's own (its hash of the idempotency key is not the client's to compute), so
 * it is known once Restate answered: `x-restate-id` on a call, `invocationId` on a send.
 */
export const restateClientApi: ClientApi = {
  name: 'restate',
  invocationIdFor: () => undefined,
  callPath,
  sendPath: (c) => `${callPath(c)}/send`,
  attachPath: (id) => `/restate/invocation/${encodeURIComponent(id)}/attach`,
  idFrom: headerOrBodyId(RESTATE_INVOCATION_ID_HEADER),
  counterValue,
};
