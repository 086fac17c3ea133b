// Restate only: cut only the inbound side of the node that leads partition 0
// — every connection other nodes open to its fabric port (`*->node-N`) — while it keeps running
// and keeps its own outbound connections. Seen in a probe: no failover, and calls reaching its
// partitions through the other nodes' ingresses hung for 30 s or more. Clients give up after
// 10 s here, so a call that waits longer than that is a hang in the verdict, with the leadership
// timeline (partitionLeadership's evidence, leadership.jsonl) showing the leader never moved.
import { at, defineSuite, leaderOf, link, linkDown, noClientLeftHanging, partitionLeadership } from 'limbo';

export default defineSuite({
  name: 'restate-leader-inbound-cut',
  why: 'A leader that can talk out but not be talked to must be replaced, or calls to its partitions hang.',
  topology: { processors: 3, partitions: 4 },
  workload: { concurrency: 12, opTimeoutMs: 10_000, mix: { call: 0.6, send: 0.2, counterAdd: 0.2 } },
  schedule: [at('3s', linkDown(link('*', leaderOf({ partition: 0 }))), { for: '25s' })],
  expect: [noClientLeftHanging({ withinMsAfterHeal: 10_000 }), partitionLeadership()],
  onlyOn: { targets: ['restate'], reason: 'cuts the fabric port of a Restate node (`*->node-N`)' },
  // Restate 1.7.12 fails it in every run so far (see docs/restate.md): no failover.
  expectedToFailOn: ['restate'],
});
