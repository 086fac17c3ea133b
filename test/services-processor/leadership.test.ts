import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  initialLeadership,
  transition,
  type LeadershipEffect,
  type LeadershipEvent,
  type LeadershipState,
} from '../../src/services/processor/leadership.js';

const self = 'p1';

/** Runs the events in order; returns the final state and every effect, in order. */
function run(
  events: LeadershipEvent[],
  from: LeadershipState = initialLeadership,
): { state: LeadershipState; effects: LeadershipEffect[] } {
  let state = from;
  const effects: LeadershipEffect[] = [];
  for (const e of events) {
    const step = transition(state, e, self);
    state = step.state;
    effects.push(...step.effects);
  }
  return { state, effects };
}

const assign = (leaderNode: string, epoch: number, appliedLeaderEpoch = 0): LeadershipEvent => ({
  kind: 'assignment',
  leaderNode,
  epoch,
  appliedLeaderEpoch,
});

/** A replica that claimed and announced epoch 2 and applied its own announce. */
function leaderAt2(): LeadershipState {
  const { state } = run([
    assign(self, 1),
    { kind: 'claim_settled', epoch: 1, ok: true },
    assign(self, 2, 1),
    { kind: 'announced', node: self, epoch: 2 },
  ]);
  assert.equal(state.role, 'leader');
  return state;
}

test('the first table after a restart naming this node claims a fresh epoch, once per epoch', () => {
  // The log already holds epoch 3 (a previous incarnation announced it): stale both times.
  const { state, effects } = run([assign(self, 3, 3), assign(self, 3, 3)]);
  assert.deepEqual(effects, [{ kind: 'claim_epoch', epoch: 3 }]);
  assert.equal(state.claimingEpoch, 3);
  assert.equal(state.role, 'follower');
});

test('the second table (not stale) names an epoch above the log: announce it', () => {
  const { state, effects } = run([assign(self, 3), assign(self, 3)]);
  assert.deepEqual(effects, [
    { kind: 'claim_epoch', epoch: 3 },
    { kind: 'announce', epoch: 3 },
  ]);
  assert.equal(state.role, 'candidate');
});

test('a failed claim lets the next table claim again; a settled one clears the claim', () => {
  const failed = run([assign(self, 3), { kind: 'claim_settled', epoch: 3, ok: false }, assign(self, 3)]);
  assert.deepEqual(failed.effects, [
    { kind: 'claim_epoch', epoch: 3 },
    { kind: 'claim_epoch', epoch: 3 },
  ]);
  const ok = run([assign(self, 3), { kind: 'claim_settled', epoch: 3, ok: true }]);
  assert.equal(ok.state.claimingEpoch, 0);
  assert.equal(ok.state.seenAssignment, true);
  // A claim settling for another epoch leaves the one in flight alone.
  const other = run([assign(self, 3), { kind: 'claim_settled', epoch: 2, ok: true }]);
  assert.equal(other.state.claimingEpoch, 3);
});

test('a fresh epoch above the applied one is announced; the announce applied makes a leader', () => {
  const { state, effects } = run([
    assign('p2', 1),
    assign(self, 2, 1),
    { kind: 'announced', node: self, epoch: 2 },
  ]);
  assert.deepEqual(effects, [
    { kind: 'announce', epoch: 2 },
    { kind: 'become_leader', epoch: 2 },
  ]);
  assert.deepEqual(state, {
    role: 'leader',
    epoch: 2,
    announcingEpoch: 2,
    seenAssignment: true,
    claimingEpoch: 0,
  });
});

test('a table naming this node at an epoch already applied (led before) claims again', () => {
  const { effects } = run([assign('p2', 1), assign(self, 2, 2)]);
  assert.deepEqual(effects, [{ kind: 'claim_epoch', epoch: 2 }]);
  // While a candidate, the same table is not stale: no claim, no second announce.
  const cand = run([assign('p2', 1), assign(self, 3, 2), assign(self, 3, 2)]);
  assert.deepEqual(cand.effects, [{ kind: 'announce', epoch: 3 }]);
  assert.equal(cand.state.role, 'candidate');
});

test('epoch 0 naming this node is never claimed', () => {
  const { effects, state } = run([assign(self, 0)]);
  assert.deepEqual(effects, []);
  assert.equal(state.role, 'follower');
});

test('a leader given a newer epoch steps down, then announces it', () => {
  const { state, effects } = run([assign(self, 5, 2)], leaderAt2());
  assert.deepEqual(effects, [
    { kind: 'step_down', why: 'new_epoch', wasLeader: true },
    { kind: 'announce', epoch: 5 },
  ]);
  assert.equal(state.role, 'candidate');
  assert.equal(state.announcingEpoch, 5);
});

test('a table naming someone else at this epoch or later revokes; an older one does not', () => {
  const older = run([assign('p2', 1, 2)], leaderAt2());
  assert.deepEqual(older.effects, []);
  assert.equal(older.state.role, 'leader');
  const same = run([assign('p2', 2, 2)], leaderAt2());
  assert.deepEqual(same.effects, [{ kind: 'step_down', why: 'revoked', wasLeader: true }]);
  assert.equal(same.state.role, 'follower');
  assert.equal(same.state.epoch, 2, 'the last epoch led is kept for the logs');
  const vacant = run([assign('', 0, 2)], leaderAt2());
  assert.deepEqual(vacant.effects, [{ kind: 'step_down', why: 'revoked', wasLeader: true }]);
  // A follower has nothing to step down from.
  assert.deepEqual(run([assign('p2', 1), assign('p3', 4)]).effects, []);
});

test('an announce by another node, or for another epoch, deposes a leader or candidate', () => {
  const other = run([{ kind: 'announced', node: 'p2', epoch: 3 }], leaderAt2());
  assert.deepEqual(other.effects, [{ kind: 'step_down', why: 'epoch 3 announced by p2', wasLeader: true }]);
  const cand = run([assign('p2', 1), assign(self, 4, 1), { kind: 'announced', node: self, epoch: 3 }]);
  assert.deepEqual(cand.effects.at(-1), {
    kind: 'step_down',
    why: 'epoch 3 announced by p1',
    wasLeader: false,
  });
  assert.equal(cand.state.role, 'follower');
  const follower = run([{ kind: 'announced', node: 'p2', epoch: 3 }]);
  assert.deepEqual(follower.effects, []);
});

test('the lease running out steps down a leader or candidate, not a follower', () => {
  assert.deepEqual(run([{ kind: 'lease_expired' }], leaderAt2()).effects, [
    { kind: 'step_down', why: 'lease_expired', wasLeader: true },
  ]);
  assert.deepEqual(run([{ kind: 'lease_expired' }]).effects, []);
  // After the lease ran out, the same table names this node at the epoch it led: claim anew.
  const after = run([{ kind: 'lease_expired' }, assign(self, 2, 2)], leaderAt2());
  assert.deepEqual(after.effects.at(-1), { kind: 'claim_epoch', epoch: 2 });
});

test('shutdown always steps down, saying whether it led', () => {
  assert.deepEqual(run([{ kind: 'shutdown' }], leaderAt2()).effects, [
    { kind: 'step_down', why: 'shutdown', wasLeader: true },
  ]);
  assert.deepEqual(run([{ kind: 'shutdown' }]).effects, [
    { kind: 'step_down', why: 'shutdown', wasLeader: false },
  ]);
});

test('transition never changes the state it is given', () => {
  const s = leaderAt2();
  const copy = { ...s };
  transition(s, assign(self, 9, 2), self);
  transition(s, { kind: 'shutdown' }, self);
  assert.deepEqual(s, copy);
});
