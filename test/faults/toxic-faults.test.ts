import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Toxiproxy } from 'toxiproxy-node-client';
import { startToxiproxyServer } from '../../src/proxy/server.js';
import { createClock } from '../../src/util/clock.js';
import { createRandom } from '../../src/util/random.js';
import {
  at,
  blackhole,
  latency,
  link,
  leaderOf,
  linkDown,
  startSchedule,
  type FaultContext,
} from '../../src/faults/index.js';
import { startToyTarget } from '../helpers/toy-target.js';
import { startEcho } from '../helpers/echo.js';

/** Round trip of one small message through `address`; rejects on refusal, resolves undefined on timeout. */
function roundTrip(address: string, timeoutMs: number): Promise<number | undefined> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const s = net.connect(Number(port), host, () => s.write('ping'));
    const timer = setTimeout(() => {
      s.destroy();
      resolve(undefined);
    }, timeoutMs);
    s.once('data', () => {
      clearTimeout(timer);
      s.destroy();
      resolve(performance.now() - started);
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

test('toxic faults and link down against the embedded Toxiproxy server: inject hurts, heal restores', async (t) => {
  const server = await startToxiproxyServer({ host: '127.0.0.1', port: 0 });
  t.after(() => server.stop());
  const echo = await startEcho();
  t.after(() => echo.stop());
  const toxiproxy = new Toxiproxy(server.url);
  const proxy = await toxiproxy.createProxy({
    name: 'ingress->processor-1',
    listen: '127.0.0.1:0',
    upstream: echo.address,
  });
  const target = await startToyTarget(1);
  t.after(() => target.stop());
  const ctx: FaultContext = { target: { ...target, toxiproxy }, toxiproxy, random: createRandom(1) };
  const listen = proxy.listen;

  const base = await roundTrip(listen, 5000);
  assert.ok(base !== undefined && base < 150, `baseline ${base} ms`);

  // latency on the link to partition 0's leader, chosen by selectors
  const slow = latency(link('ingress', leaderOf({ partition: 0 })), { latencyMs: 300 });
  const injected = await slow.inject(ctx);
  assert.equal(injected.target, 'ingress->processor-1');
  assert.deepEqual(injected.affects, ['ingress->processor-1']);
  assert.equal(injected.leader, true);
  const slowed = await roundTrip(listen, 5000);
  assert.ok(slowed !== undefined && slowed >= 280, `with latency ${slowed} ms`);
  await slow.heal(ctx, injected);
  const toxics = await fetch(`${server.url}/proxies/${encodeURIComponent('ingress->processor-1')}/toxics`);
  assert.deepEqual(await toxics.json(), []);

  // a black hole: nothing comes back until healed
  const hole = blackhole('ingress->processor-1');
  const h = await hole.inject(ctx);
  assert.equal(await roundTrip(listen, 400), undefined);
  await hole.heal(ctx, h);
  assert.ok((await roundTrip(listen, 5000)) !== undefined);

  // link down through the scheduler, healed by the final heal
  const sched = startSchedule([at(0, linkDown('ingress->processor-1'))], ctx, createClock());
  const deadline = Date.now() + 5000;
  while (sched.windows.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await assert.rejects(roundTrip(listen, 2000), /ECONNREFUSED|ECONNRESET/);
  await sched.finalHeal();
  assert.ok((await roundTrip(listen, 5000)) !== undefined);
  assert.equal((await toxiproxy.get('ingress->processor-1')).enabled, true);
});
