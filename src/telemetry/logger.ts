// A small injectable logger: one line per event on stderr, `time level name message {fields}`.
// Services get their own instance (named after role and node) so two can share a process.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(name: string): Logger;
}

export function createLogger(
  name: string,
  options: { level?: LogLevel; write?: (line: string) => void } = {},
): Logger {
  const min = order[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const log =
    (level: LogLevel) =>
    (message: string, fields?: Record<string, unknown>): void => {
      if (order[level] < min) return;
      const extra = fields && Object.keys(fields).length > 0 ? ' ' + safeJson(fields) : '';
      write(`${new Date().toISOString()} ${level.padEnd(5)} ${name} ${message}${extra}`);
    };
  return {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: (sub) => createLogger(`${name}/${sub}`, options),
  };
}

export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v: unknown) => (v instanceof Error ? v.message : v));
  } catch {
    return '{}';
  }
}
