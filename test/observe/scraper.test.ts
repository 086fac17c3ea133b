// The metrics scraper's explicit scrape (the runner's look at the deadline) must sample the
// present even when an interval scrape of the same target is still under way: under load a
// slow /metrics answer used to make scrapeOnce() skip the target, and a check then judged a
// sample from before the deadline (a pendingDrains false alarm seen in a soak).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startScraper } from '../../src/observe/scraper.js';
import { createClock } from '../../src/util/clock.js';

test('scrapeOnce waits out a scrape under way and samples the state after it was called', async (t) => {
  let served = 0;
  const server = http.createServer((_req, res) => {
    served++;
    const n = served;
    // Slow answers: an interval scrape is nearly always in flight.
    setTimeout(() => res.end(`# TYPE limbo_probe gauge\nlimbo_probe ${n}\n`), 120);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  const clock = createClock();
  const scraper = startScraper({ clock, targets: () => ({ svc: url }), intervalMs: 50, timeoutMs: 1000 });
  t.after(() => scraper.stop());
  for (let round = 0; round < 5; round++) {
    await new Promise((r) => setTimeout(r, 70));
    const calledAt = clock.nowMs();
    await scraper.scrapeOnce();
    const last = scraper.samples.filter((s) => s.name === 'limbo_probe').at(-1);
    assert.ok(last !== undefined, 'a sample');
    assert.ok(
      last.tMs >= calledAt,
      `round ${round}: the newest sample was taken at ${last.tMs} ms, before scrapeOnce was called at ${calledAt} ms`,
    );
  }
});
