// What a run may leave behind, read from the machine before and after it: the soak's leak
// checks. Each is attributable to this runner, so other work on a shared machine (other
// clusters, other temp dirs) is never counted:
//
//   processes   descendants of the runner, and any process whose command line names the
//               soak's own temp or output directory (an orphan a run left)
//   ports       listening TCP sockets held by those processes or the runner
//   fds         the runner's open file descriptors (/proc/self/fd), growth beyond a slack
//   temp dirs   entries left in the soak's private TMPDIR (every run and service uses it)
//   toxics      toxics (and proxies) left on a shared Toxiproxy (--toxiproxy-url)
//   containers  containers of this process's owner label (--runtime docker)
//
// Linux only (/proc); elsewhere the process, port and fd checks report nothing.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface ProcessInfo {
  pid: number;
  command: string;
}

export interface Snapshot {
  processes: ProcessInfo[];
  /** Listening TCP ports held by the runner or its processes: port → pid. */
  listening: Map<number, number>;
  fds: number;
  tempEntries: string[];
  /** `proxy` and `proxy/toxic` names on the shared Toxiproxy. */
  toxiproxy: string[];
  containers: string[];
}

export type LeakKind = 'process' | 'port' | 'fds' | 'temp' | 'toxic' | 'container';

export interface Leak {
  kind: LeakKind;
  detail: string;
}

export interface LeakProbe {
  /** The soak's private TMPDIR. */
  tmpDir: string;
  /** Strings whose presence in a command line marks a process as ours (tmpDir, out root). */
  markers: string[];
  toxiproxyUrl?: string;
  /** The ids of this runner's containers (docker runtime). */
  listContainers?: () => Promise<string[]>;
  /** Extra open fds tolerated after a run (lazily opened handles of the runner itself). */
  fdSlack: number;
}

export async function snapshot(probe: LeakProbe): Promise<Snapshot> {
  const processes = ourProcesses(probe.markers);
  const pids = [process.pid, ...processes.map((p) => p.pid)];
  return {
    processes,
    listening: listeningPorts(pids),
    fds: countFds(),
    tempEntries: safeReaddir(probe.tmpDir).sort(),
    toxiproxy: probe.toxiproxyUrl !== undefined ? await toxiproxyState(probe.toxiproxyUrl) : [],
    containers: probe.listContainers ? (await probe.listContainers()).sort() : [],
  };
}

/** What `after` holds that `before` did not (the fd count beyond the slack). */
export function leaksBetween(before: Snapshot, after: Snapshot, fdSlack: number): Leak[] {
  const leaks: Leak[] = [];
  const beforePids = new Set(before.processes.map((p) => p.pid));
  for (const p of after.processes)
    if (!beforePids.has(p.pid))
      leaks.push({ kind: 'process', detail: `pid ${p.pid}: ${p.command.slice(0, 160)}` });
  for (const [port, pid] of after.listening)
    if (!before.listening.has(port))
      leaks.push({ kind: 'port', detail: `port ${port} listening (pid ${pid})` });
  if (after.fds > before.fds + fdSlack)
    leaks.push({ kind: 'fds', detail: `runner fds ${before.fds} → ${after.fds} (slack ${fdSlack})` });
  const tempBefore = new Set(before.tempEntries);
  for (const t of after.tempEntries)
    if (!tempBefore.has(t)) leaks.push({ kind: 'temp', detail: `temp ${t}` });
  const toxBefore = new Set(before.toxiproxy);
  for (const t of after.toxiproxy)
    if (!toxBefore.has(t)) leaks.push({ kind: 'toxic', detail: `toxiproxy ${t}` });
  const cBefore = new Set(before.containers);
  for (const c of after.containers)
    if (!cBefore.has(c)) leaks.push({ kind: 'container', detail: `container ${c.slice(0, 12)}` });
  return leaks;
}

/** Descendants of this process, plus processes whose command line holds a marker. */
function ourProcesses(markers: readonly string[]): ProcessInfo[] {
  const parentOf = new Map<number, number>();
  for (const name of safeReaddir('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const stat = safeRead(`/proc/${pid}/stat`);
    if (stat === undefined) continue;
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') continue; // a zombie holds nothing; its parent reaps it
    parentOf.set(pid, Number(fields[1]));
  }
  const ours = new Set<number>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of parentOf) {
      if (ours.has(pid)) continue;
      if (ppid === process.pid || ours.has(ppid)) {
        ours.add(pid);
        grew = true;
      }
    }
  }
  const out: ProcessInfo[] = [];
  for (const pid of parentOf.keys()) {
    const command = (safeRead(`/proc/${pid}/cmdline`) ?? '').replaceAll('\0', ' ').trim();
    if (ours.has(pid) || (command !== '' && markers.some((m) => command.includes(m))))
      out.push({ pid, command });
  }
  return out.sort((a, b) => a.pid - b.pid);
}

function listeningPorts(pids: readonly number[]): Map<number, number> {
  const inodeToPid = new Map<string, number>();
  for (const pid of pids) {
    for (const fd of safeReaddir(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m?.[1] !== undefined) inodeToPid.set(m[1], pid);
      } catch {
        // closed meanwhile
      }
    }
  }
  const out = new Map<number, number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (safeRead(file) ?? '').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is f[1] (hex ip:port), state f[3] (0A = LISTEN), inode f[9].
      if (f[3] !== '0A' || f[1] === undefined || f[9] === undefined) continue;
      const pid = inodeToPid.get(f[9]);
      if (pid !== undefined) out.set(Number.parseInt(f[1].split(':')[1] ?? '0', 16), pid);
    }
  }
  return out;
}

function countFds(): number {
  return safeReaddir('/proc/self/fd').length;
}

async function toxiproxyState(url: string): Promise<string[]> {
  try {
    const res = await fetch(`${url.replace(/\/$/, '')}/proxies`, { signal: AbortSignal.timeout(5000) });
    const proxies = (await res.json()) as Record<string, { toxics?: { name: string }[] }>;
    const out: string[] = [];
    for (const [name, p] of Object.entries(proxies)) {
      out.push(name);
      for (const t of p.toxics ?? []) out.push(`${name}/${t.name}`);
    }
    return out;
  } catch (err) {
    return [`(unreadable: ${err instanceof Error ? err.message : String(err)})`];
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function safeRead(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
