// Errors that callers branch on carry a stable `code`; the CLI maps UsageError to exit 2.

export class LimboError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad command-line usage or input: the CLI prints the message and exits with status 2. */
export class UsageError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_USAGE', message, options);
  }
}

export class TimeoutError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_TIMEOUT', message, options);
  }
}

/** The message of anything thrown (an Error's message, else its string form). */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
