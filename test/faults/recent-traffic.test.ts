// The recent view of the proxies' counters, read from a real embedded Toxiproxy server through
// real sockets: at(ago) gives the counters as they were that long ago (the oldest kept while none
// is that old), old samples are dropped past keepMs, a failing read leaves a gap, stop ends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Toxiproxy } from 'toxiproxy-node-client';
import { startToxiproxyServer } from '../../src/proxy/server.js';
import { scrape } from '../../src/telemetry/prom-text.js';
import { proxyCountersOf, recordTraffic, type ProxyCounters } from '../../src/faults/index.js';
import { startEcho } from '../helpers/echo.js';

function bytes(c: ProxyCounters | undefined, proxy: string): number {
  const x = c?.get(proxy);
  return (x?.upstream ?? 0) + (x?.downstream ?? 0);
}

async function send(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write('hello'));
    s.once('data', () => {
      s.destroy();
      resolve();
    });
    s.once('error', reject);
  });
}

test('at(ago) is the counters as they were that long ago; samples older than keepMs are dropped', async (t) => {
  const server = await startToxiproxyServer({ host: '127.0.0.1', port: 0 });
  t.after(() => server.stop());
  const echo = await startEcho();
  t.after(() => echo.stop());
  const proxy = await new Toxiproxy(server.url).createProxy({
    name: 'a->b',
    listen: '127.0.0.1:0',
    upstream: echo.address,
  });
  const port = Number(proxy.listen.split(':')[1]);
  let reads = 0;
  let failNext = false;
  const recent = recordTraffic(
    async () => {
      reads++;
      if (failNext) {
        failNext = false;
        throw new Error('scrape failed');
      }
      return proxyCountersOf(await scrape(`${server.url}/metrics`));
    },
    { intervalMs: 50, keepMs: 600 },
  );
  t.after(() => recent.stop());
  assert.equal(recent.at(0), undefined, 'nothing before the first read');
  await delay(200);
  assert.equal(bytes(recent.at(0), 'a->b'), 0);
  await send(port);
  failNext = true;
  await delay(300);
  const now = bytes(recent.at(0), 'a->b');
  assert.ok(now > 0, 'the newest sample has the bytes');
  assert.equal(bytes(recent.at(250), 'a->b'), 0, 'a sample from before the bytes');
  // Once the quiet samples are older than keepMs, the oldest kept already has the bytes.
  await delay(900);
  assert.equal(bytes(recent.at(10_000), 'a->b'), now);
  recent.stop();
  const stoppedAt = reads;
  await delay(200);
  assert.ok(reads <= stoppedAt + 1, `no reads after stop (${reads - stoppedAt} more)`);
});
