// The reference cluster's service levels are derived from its settings: this holds the two in
// step, so a changed failure timeout, lease, keepalive or backoff cap changes the bounds or fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { referenceServiceLevels } from '../../src/targets/reference.js';
import { processorDefaults } from '../../src/services/processor/processor.js';
import { logServerDefaults } from '../../src/services/log/log-server.js';
import { Backoff } from '../../src/util/backoff.js';
import { clientChannelOptions } from '../../src/transport/grpc.js';

test('the reference service levels follow the failure timeout, lease and backoff cap', () => {
  // The cap: the longest delay a backoff draws once it stops doubling (jitter at its top).
  const backoff = new Backoff({ random: () => 1 });
  let cap = 0;
  for (let i = 0; i < 20; i++) cap = Math.max(cap, backoff.next());
  assert.equal(cap, 1000);
  const s = referenceServiceLevels;
  assert.equal(s.failoverMs, logServerDefaults.failureTimeoutMs + processorDefaults.leaseMs + cap + 1500);
  assert.equal(s.p99DuringFaultMs, cap + logServerDefaults.failureTimeoutMs + 300);
  const keepalive =
    Number(clientChannelOptions['grpc.keepalive_time_ms']) +
    Number(clientChannelOptions['grpc.keepalive_timeout_ms']);
  assert.equal(Number(clientChannelOptions['grpc.max_reconnect_backoff_ms']), cap);
  assert.equal(s.recoveryAfterHealMs, keepalive + cap + cap + 500);
  assert.equal(s.silentPeerDetectionMs, keepalive);
});
