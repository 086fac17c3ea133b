// An error the HTTP API answers with `{"error": message, "status": status}`.
import { LimboError } from '../util/errors.js';

export class ApiError extends LimboError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(`E_TOXIPROXY_${status}`, message);
  }
}
