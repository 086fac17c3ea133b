// Progress of a suite run on stderr, shared by `limbo run` and `limbo explore`: on a terminal
// one line rewritten in place, elsewhere (CI logs) a line every 5 s and at the end. Log lines
// (faults injected and healed) clear the progress line first.
import type { Progress } from '../runner/run-suite.js';

export function formatProgress(p: Progress): string {
  const faults = p.activeFaults.map((f) => `${f.fault}@${f.target}`).join(' ') || '-';
  return `${p.suite} ${p.phase.padEnd(8)} ${(p.elapsedMs / 1000).toFixed(1).padStart(6)}s  ops ${p.opsDone} done, ${p.opsInFlight} in flight  faults ${faults}`;
}

export interface ProgressPrinter {
  onLog: (line: string) => void;
  onProgress: (p: Progress) => void;
  /** Clears the in-place line (call when the run ends). */
  done: () => void;
}

/**
 * `prefix` labels every line (explore's slots); with one, lines are never rewritten in place,
 * since several printers share the terminal.
 */
export function progressPrinter(
  stream: NodeJS.WriteStream = process.stderr,
  everyMs = 5000,
  prefix = '',
): ProgressPrinter {
  const tty = stream.isTTY === true && prefix === '';
  let lastLine = 0;
  return {
    onLog: (line) => stream.write(`${tty ? '\r\x1b[K' : ''}${prefix}  ${line}\n`),
    onProgress: (p) => {
      if (tty) stream.write(`\r\x1b[K${formatProgress(p)}`);
      else if (p.elapsedMs - lastLine >= everyMs || p.phase === 'done') {
        lastLine = p.elapsedMs;
        stream.write(prefix + formatProgress(p) + '\n');
      }
    },
    done: () => {
      if (tty) stream.write('\r\x1b[K');
    },
  };
}
