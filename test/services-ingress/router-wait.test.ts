// The ingress router's wait for a table change (a request with no leader to send to waits
// here between resends) leaves no timer and no abort listener behind once it is over, however
// it ends: an armed timer kept a stopping ingress process alive for up to a backoff (1 s)
// after its last such wait. A real Router, pointed at an address where no log listens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Router } from '../../src/services/ingress/router.js';
import { silentLogger } from '../../src/telemetry/logger.js';

const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('a wait for a table change leaves no timer or listener behind, whichever way it ends', async () => {
  const router = new Router('127.0.0.1:9', 'router-wait-test', silentLogger);
  try {
    const before = timers();
    // Ended by the caller's abort, long before its 60 s bound.
    const abort = new AbortController();
    const aborted = router.waitForChange(60_000, abort.signal);
    assert.equal(timers(), before + 1, 'the wait holds one timer while it waits');
    abort.abort();
    await aborted;
    assert.equal(timers(), before, 'an aborted wait left its timer armed');
    // A signal that was already aborted: over at once.
    await router.waitForChange(60_000, abort.signal);
    assert.equal(timers(), before);
    // Ended by its bound.
    const live = new AbortController();
    await router.waitForChange(5, live.signal);
    assert.equal(timers(), before);
    // Ended by the router stopping (which wakes every waiter), as when the ingress stops.
    const waiting = router.waitForChange(60_000, live.signal);
    await router.stop();
    await waiting;
    assert.equal(timers(), before, 'a wait woken by the router left its timer armed');
    assert.equal(
      EventEmitter.getEventListeners(live.signal, 'abort').length,
      0,
      'abort listeners left on the signal',
    );
  } finally {
    await router.stop();
  }
});
