// A bench child process ends with the process that started it, however that one ends (Ctrl-C,
// a crash, SIGKILL): its parent is then no longer the one it had (as the docker reaper watches
// its own). The starter passes its pid in the environment, so a starter that dies while the
// child is still starting up — before the child could read its own parent — is seen too: a
// child that read process.ppid only after printing its ready line could read the init process
// it had already been handed to, and then wait for a change that never comes.
export const PARENT_PID_ENV = 'LIMBO_BENCH_PARENT_PID';

const parent = Number(process.env[PARENT_PID_ENV]) || process.ppid;

/** The environment for a child that should end with this process. */
export function childEnv(): NodeJS.ProcessEnv {
  return { ...process.env, [PARENT_PID_ENV]: String(process.pid) };
}

/** Exits (0) within a quarter second of the starter's end; also on SIGTERM. */
export function exitWithParent(): void {
  process.on('SIGTERM', () => process.exit(0));
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 250).unref();
}
