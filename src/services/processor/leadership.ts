// Leadership transitions of one partition replica, as a pure function:
//
//   (state, event) ─▶ transition() ─▶ (new state, effects)
//
// Events: the controller's table names a leader at an epoch (`assignment`), the lease ran
// out (`lease_expired`), an AnnounceLeader was applied from the log (`announced`), a claim
// for a fresh epoch settled (`claim_settled`), taking up leadership failed (`lead_failed`),
// the replica stops (`shutdown`). Effects are
// what the replica does next: claim a fresh epoch, append an announce, become leader, step
// down. No clock, no I/O: the replica (partition-replica.ts) carries the effects out, and
// test/services-processor/leadership.test.ts drives this module alone.
//
// A replica becomes leader only when it applies the announce it appended in this
// incarnation for the epoch it was given, so it has applied everything before.

export type Role = 'follower' | 'candidate' | 'leader';

export interface LeadershipState {
  readonly role: Role;
  /** The epoch this replica leads, or last led (kept after stepping down, for logs). */
  readonly epoch: number;
  /** The epoch this replica last appended (or is appending) an announce for. */
  readonly announcingEpoch: number;
  /** Whether a table was seen in this incarnation (the first one after a restart is stale). */
  readonly seenAssignment: boolean;
  /** The table epoch a fresh-epoch claim is in flight for (0: none). */
  readonly claimingEpoch: number;
}

export const initialLeadership: LeadershipState = {
  role: 'follower',
  epoch: 0,
  announcingEpoch: 0,
  seenAssignment: false,
  claimingEpoch: 0,
};

export type LeadershipEvent =
  /** The controller's view: `leaderNode` leads at `epoch`; `appliedLeaderEpoch` is the log's. */
  | { kind: 'assignment'; leaderNode: string; epoch: number; appliedLeaderEpoch: number }
  | { kind: 'lease_expired' }
  /** An AnnounceLeader(node, epoch) was applied from the log. */
  | { kind: 'announced'; node: string; epoch: number }
  | { kind: 'claim_settled'; epoch: number; ok: boolean }
  /** Taking up leadership at `epoch` failed after its announce was applied (resuming its work). */
  | { kind: 'lead_failed'; epoch: number }
  | { kind: 'shutdown' };

export type LeadershipEffect =
  | { kind: 'claim_epoch'; epoch: number }
  /** Append AnnounceLeader(self, epoch) until it is applied or the epoch is no longer wanted. */
  | { kind: 'announce'; epoch: number }
  | { kind: 'become_leader'; epoch: number }
  /** Stop leading (or being a candidate); `wasLeader` says whether it led. */
  | { kind: 'step_down'; why: string; wasLeader: boolean };

export interface LeadershipStep {
  state: LeadershipState;
  effects: LeadershipEffect[];
}

export function transition(s: LeadershipState, e: LeadershipEvent, self: string): LeadershipStep {
  switch (e.kind) {
    case 'assignment':
      return onAssignment(s, e, self);
    case 'lease_expired':
      return s.role !== 'follower' ? stepDown(s, 'lease_expired') : same(s);
    case 'announced':
      if (e.node === self && e.epoch === s.announcingEpoch)
        return {
          state: { ...s, role: 'leader', epoch: e.epoch },
          effects: [{ kind: 'become_leader', epoch: e.epoch }],
        };
      return s.role !== 'follower' ? stepDown(s, `epoch ${e.epoch} announced by ${e.node}`) : same(s);
    case 'claim_settled': {
      const claimingEpoch = s.claimingEpoch === e.epoch ? 0 : s.claimingEpoch;
      // A failed claim lets the next table try again.
      return same({ ...s, claimingEpoch, seenAssignment: e.ok ? s.seenAssignment : false });
    }
    case 'lead_failed':
      // It steps down; the table still names it at an epoch it has applied, so the next
      // table makes it claim a fresh one and try again.
      return s.role === 'leader' && s.epoch === e.epoch ? stepDown(s, 'lead_failed') : same(s);
    case 'shutdown':
      return stepDown(s, 'shutdown');
  }
}

function onAssignment(
  s0: LeadershipState,
  a: { leaderNode: string; epoch: number; appliedLeaderEpoch: number },
  self: string,
): LeadershipStep {
  const first = !s0.seenAssignment;
  const s: LeadershipState = { ...s0, seenAssignment: true };
  // The table names this node at an epoch that cannot be led (again), so claim a fresh one:
  // - first table after a restart: that epoch may already hold an announce (and proposals)
  //   of a previous incarnation in the log;
  // - an epoch this node led and stepped down from (its lease ran out while the controller
  //   was unreachable or restarting, and the controller never noticed): nobody leads.
  const stale = first || (s.role === 'follower' && a.epoch <= a.appliedLeaderEpoch);
  if (a.leaderNode === self && a.epoch > 0 && stale) {
    if (s.claimingEpoch === a.epoch) return same(s); // one claim per epoch in flight
    return { state: { ...s, claimingEpoch: a.epoch }, effects: [{ kind: 'claim_epoch', epoch: a.epoch }] };
  }
  if (a.leaderNode === self) {
    if (a.epoch > a.appliedLeaderEpoch && a.epoch > s.announcingEpoch) return announce(s, a.epoch);
    return same(s);
  }
  if (s.role !== 'follower' && (a.leaderNode === '' || a.epoch >= s.epoch)) return stepDown(s, 'revoked');
  return same(s);
}

function announce(s: LeadershipState, epoch: number): LeadershipStep {
  const effects: LeadershipEffect[] = [];
  if (s.role === 'leader') effects.push({ kind: 'step_down', why: 'new_epoch', wasLeader: true });
  effects.push({ kind: 'announce', epoch });
  return { state: { ...s, announcingEpoch: epoch, role: 'candidate' }, effects };
}

function stepDown(s: LeadershipState, why: string): LeadershipStep {
  return {
    state: { ...s, role: 'follower' },
    effects: [{ kind: 'step_down', why, wasLeader: s.role === 'leader' }],
  };
}

function same(s: LeadershipState): LeadershipStep {
  return { state: s, effects: [] };
}
