// Whether a process with this PID exists (signal 0 delivers nothing, it only checks). EPERM
// means it exists but belongs to someone else: alive.
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
