// Why a branch arm no suite reaches is left unreached: a checked-in file, one line an arm, that
// `limbo coverage` reads beside the runs' coverage. The coverage goal is met only when enough
// branches are reached and every arm still unreached has its reason here — so an arm is either
// reached by a situation a suite creates, removed as dead code, or explained in one line.
//
// A line names the arm by its file, line, kind and arm, and the source line's text; the text is
// what finds it again when edits move it to another line. A reason whose arm a run now reaches,
// or whose text is gone, is stale and is listed so the file stays true. A reason that begins
// `gap:` records a situation a suite could create and none does yet: it is listed as a gap and
// does not meet the goal.
//
//   src/services/log/log-server.ts:212  if[1]  if (closed) return;  ::  the reason, in one line
import { readFileSync } from 'node:fs';

/** An unreached branch arm as `limbo coverage` lists it (coverage/map.ts's UnreachedBranch is one). */
export interface UnreachedArm {
  file: string;
  line: number;
  kind: string;
  arm: number;
  /** The source line's text, trimmed. */
  text: string;
}

/** One explained arm. */
export interface BranchReason {
  file: string;
  line: number;
  kind: string;
  arm: number;
  /** The source line's text, trimmed, as `limbo coverage --unreached` prints it. */
  text: string;
  reason: string;
  /** Where the reason stands in its file (for messages). */
  at: number;
}

/** Separates the arm from its reason on a line (as written; any spaces around `::` are read). */
export const REASON_SEPARATOR = '  ::  ';
const SEPARATOR = /\s+::(?:\s+|$)/;

const ARM = /^(\S+):(\d+)\s+([a-z-]+)\[(\d+)\]\s+(.*)$/;

/** Parses a reasons file's text; throws naming the first line that is not an arm and a reason. */
export function parseReasons(text: string, source = 'reasons file'): BranchReason[] {
  const out: BranchReason[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd();
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const sep = SEPARATOR.exec(line);
    const m = sep === null ? null : ARM.exec(line.slice(0, sep.index));
    const reason = sep === null ? '' : line.slice(sep.index + sep[0].length).trim();
    if (m === null || reason === '')
      throw new Error(
        `${source}:${i + 1}: expected '<file>:<line>  <kind>[<arm>]  <source text>${REASON_SEPARATOR}<reason>', got '${line.slice(0, 80)}'`,
      );
    out.push({
      file: m[1]!,
      line: Number(m[2]),
      kind: m[3]!,
      arm: Number(m[4]),
      text: m[5]!.trim(),
      reason,
      at: i + 1,
    });
  });
  return out;
}

/** Reads and parses a reasons file. */
export function readReasons(path: string): BranchReason[] {
  return parseReasons(readFileSync(path, 'utf8'), path);
}

/**
 * A reason that begins with this is a known gap, not a reason: a situation a suite could create
 * and none does yet. It keeps the team's knowledge of the arm but does not meet the goal.
 */
export const GAP_PREFIX = 'gap:';

/** How the unreached arms of a set of runs stand against the reasons. */
export interface ReasonedUnreached<UnreachedBranch extends UnreachedArm = UnreachedArm> {
  /** Unreached arms with a reason, each with it. */
  explained: { arm: UnreachedBranch; reason: BranchReason }[];
  /** Unreached arms listed as known gaps (`gap: …`), each with its line. */
  gaps: { arm: UnreachedBranch; reason: BranchReason }[];
  /** Unreached arms with no reason. */
  unexplained: UnreachedBranch[];
  /** Reasons that match no unreached arm: a run reaches it now, or its code changed or went. */
  stale: BranchReason[];
}

/**
 * Matches reasons to unreached arms. A reason matches an arm of its file, kind and arm number
 * whose source text equals its own; of several, the one nearest its recorded line. Each arm
 * takes at most one reason and each reason one arm.
 */
export function matchReasons<UnreachedBranch extends UnreachedArm>(
  unreached: readonly UnreachedBranch[],
  reasons: readonly BranchReason[],
): ReasonedUnreached<UnreachedBranch> {
  const taken = new Set<UnreachedBranch>();
  const explained: ReasonedUnreached<UnreachedBranch>['explained'] = [];
  const gaps: ReasonedUnreached<UnreachedBranch>['gaps'] = [];
  const stale: BranchReason[] = [];
  for (const reason of [...reasons].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line)) {
    let best: UnreachedBranch | undefined;
    for (const u of unreached) {
      if (taken.has(u) || u.file !== reason.file || u.kind !== reason.kind || u.arm !== reason.arm) continue;
      if (u.text !== reason.text) continue;
      if (best === undefined || Math.abs(u.line - reason.line) < Math.abs(best.line - reason.line)) best = u;
    }
    if (best === undefined) stale.push(reason);
    else {
      taken.add(best);
      (reason.reason.startsWith(GAP_PREFIX) ? gaps : explained).push({ arm: best, reason });
    }
  }
  return { explained, gaps, unexplained: unreached.filter((u) => !taken.has(u)), stale };
}

/**
 * The line a reasons file holds for an arm. Without a reason it ends at the separator, which the
 * parser refuses: a line printed by `limbo coverage --reason-lines` counts only once written.
 */
export function reasonLine(u: UnreachedArm, reason = ''): string {
  return `${u.file}:${u.line}  ${u.kind}[${u.arm}]  ${u.text}${REASON_SEPARATOR}${reason}`.trimEnd();
}
