// The errors the ingress answers with: each carries its HTTP status, the outcome label it
// is counted under (limbo_ingress_requests_total{outcome}), extra headers, and the request
// field or invocation it is about. Thrown anywhere on the request path, turned into the
// JSON error body by the HTTP API (http-api.ts).
import type { ArgumentProblem } from '../../protocol/limits.js';
import { LimboError } from '../../util/errors.js';

export class HttpError extends LimboError {
  constructor(
    readonly status: number,
    readonly outcome: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly invocationId?: string,
    /** The request field a 400 is about (handler argument, key, header). */
    readonly field?: string,
  ) {
    super(`E_HTTP_${status}`, message);
  }
}

export function badArgument(p: ArgumentProblem): HttpError {
  return new HttpError(400, 'bad_request', p.message, {}, undefined, p.field);
}
