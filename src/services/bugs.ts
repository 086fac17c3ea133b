// The bug switches of the reference cluster: realistic mistakes, each a few lines of real
// behaviour in one service, off by default. Here are what the services need: each switch's
// name, the role that acts on it, and parsing `--bugs`. What each one does wrong, where it comes
// from, what a user sees and which check should show it is detection's catalogue
// (src/detect/catalogue.ts): `limbo detect` switches one on and some suite must go red.
//
//   --target reference+bug:a,b ─▶ each service started with --bugs a,b (or LIMBO_BUGS)
//                                 ─▶ parseBugs ─▶ ReadonlySet<BugName> ─▶ `bugs.has(name)`
// Every service gets the whole list and acts only on the switches of its own role, so a
// target never needs to know which service a switch lives in. With no switch, every
// service behaves exactly as the fixed reference cluster.
import { UsageError } from '../util/errors.js';

export type BugRole = 'ingress' | 'processor' | 'log' | 'controller';

export interface BugSwitch {
  name: string;
  /** The role whose code acts on the switch. */
  role: BugRole;
  /** Runs the processors and ingress on the legacy push protocol (the seed's design). */
  legacy?: boolean;
}

export const bugSwitches = [
  { name: 'lost-submit-notification', role: 'processor', legacy: true },
  { name: 'lost-end-response', role: 'processor', legacy: true },
  { name: 'reply-lost-on-shutdown', role: 'processor' },
  { name: 'dead-connection-after-heal', role: 'ingress' },
  { name: 'resend-storm', role: 'ingress' },
  { name: 'fenced-ack', role: 'processor' },
  { name: 'stale-follower-not-found', role: 'processor' },
  { name: 'never-resumes', role: 'processor' },
  { name: 'lost-leadership-is-final', role: 'ingress' },
  { name: 'idempotency-key-ignored', role: 'ingress' },
  { name: 'slow-failure-detection', role: 'controller' },
  { name: 'read-skips-after-reconnect', role: 'log' },
  { name: 'pending-gauge-leak', role: 'ingress' },
] as const satisfies readonly BugSwitch[];

export type BugName = (typeof bugSwitches)[number]['name'];

export const bugNames: readonly BugName[] = bugSwitches.map((b) => b.name);

export function isBugName(name: string): name is BugName {
  return (bugNames as readonly string[]).includes(name);
}

/** The switches of a list (from --bugs or LIMBO_BUGS); an unknown name is a UsageError naming it. */
export function parseBugs(names: readonly string[] | undefined, source = '--bugs'): ReadonlySet<BugName> {
  const out = new Set<BugName>();
  for (const n of names ?? []) {
    if (!isBugName(n))
      throw new UsageError(`${source}: unknown bug switch "${n}" (known: ${bugNames.join(', ')})`);
    out.add(n);
  }
  return out;
}

export function bugSwitch(name: BugName): BugSwitch {
  return bugSwitches.find((b) => b.name === name) as BugSwitch;
}

/** The option every `limbo serve` role takes (env LIMBO_BUGS). */
export const bugsOption = {
  type: 'list',
  description: `bug switches to turn on, comma-separated (detection power; known: ${bugNames.join(', ')})`,
} as const;

export const noBugs: ReadonlySet<BugName> = new Set();
