// Whether a process runs, for tests that check what is left behind.
import { readFileSync } from 'node:fs';

/**
 * Running or stopped; a zombie (exited, not yet reaped) is not. An orphan's new parent (the
 * namespace's init or a subreaper) may be slow to reap it, so a check by signal 0 alone would
 * see an exited process as alive.
 */
export function processRuns(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
