// Data path: payloads of every size arrive intact through a proxy, and 65,535 ordered
// writes arrive complete and in order while toxics are added, updated and removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  connect,
  echoRoundTrip,
  portOf,
  readUntilClose,
  sleepMs,
  startTestServer,
  withTimeout,
  useTargetAndEcho,
  withProxy,
} from './helpers.js';

const fx = useTargetAndEcho();

test('small, 64 KB and multi-part payloads round-trip intact', async () => {
  await withProxy(fx.target, fx.echo.address, 'rt', async (proxy) => {
    const socket = await connect(portOf(proxy));
    try {
      const small = Buffer.from('hello toxiproxy\n');
      assert.deepEqual(await echoRoundTrip(socket, small), small);
      const big = randomBytes(64 * 1024);
      assert.deepEqual(await echoRoundTrip(socket, big), big);
      const parts = Array.from({ length: 20 }, (_v, i) => randomBytes(1000 + i * 337));
      const all = Buffer.concat(parts);
      const got = new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let n = 0;
        const timer = setTimeout(() => reject(new Error('multi-part timed out')), 10_000);
        socket.on('data', (d: Buffer) => {
          chunks.push(d);
          n += d.length;
          if (n >= all.length) {
            clearTimeout(timer);
            resolve(Buffer.concat(chunks));
          }
        });
      });
      for (const p of parts) {
        socket.write(p);
        await sleepMs(1);
      }
      assert.deepEqual(await got, all);
    } finally {
      socket.destroy();
    }
  });
});

test('65,535 ordered writes arrive complete and in order while toxics come and go', async () => {
  // Through the echo server: every byte crosses both directions, and toxics churn on both.
  const writes = 65_535;
  const total = writes * 2;
  await withProxy(fx.target, fx.echo.address, 'order', async (proxy) => {
    const socket = await connect(portOf(proxy));
    const received: Buffer[] = [];
    let receivedBytes = 0;
    const allArrived = new Promise<void>((resolve) =>
      socket.on('data', (d: Buffer) => {
        received.push(d);
        receivedBytes += d.length;
        if (receivedBytes >= total) resolve();
      }),
    );
    let stopChurn = false;
    const churn = (async () => {
      const specs = [
        { type: 'latency', attributes: { latency: 1, jitter: 1 } },
        { type: 'bandwidth', attributes: { rate: 100_000 } },
        { type: 'slicer', attributes: { average_size: 64, size_variation: 32, delay: 0 } },
        { type: 'slow_close', attributes: { delay: 10 } },
      ] as const;
      let i = 0;
      while (!stopChurn) {
        const spec = specs[i % specs.length]!;
        const toxic = await proxy.addToxic({
          name: `churn_${i}`,
          type: spec.type,
          stream: i % 2 === 0 ? 'upstream' : 'downstream',
          toxicity: 1,
          attributes: spec.attributes as never,
        });
        await sleepMs(3);
        await toxic.update({ ...toxic.toJson(), toxicity: i % 3 === 0 ? 0.5 : 1 });
        await sleepMs(3);
        await toxic.remove();
        i += 1;
      }
      return i;
    })();
    for (let i = 0; i < writes; i++) {
      const b = Buffer.alloc(2);
      b.writeUInt16BE(i);
      if (!socket.write(b)) await new Promise((r) => socket.once('drain', r));
      if (i % 512 === 511) await sleepMs(5); // spread the writes over the toxic churn
    }
    try {
      await withTimeout(allArrived, 60_000, `${receivedBytes} of ${total} bytes arrived`);
    } finally {
      stopChurn = true;
    }
    const rounds = await churn;
    const data = Buffer.concat(received);
    assert.equal(data.length, total);
    for (let i = 0; i < writes; i++) {
      const v = data.readUInt16BE(i * 2);
      if (v !== i) assert.fail(`write ${i} arrived as ${v}`);
    }
    assert.ok(rounds >= 2, 'toxics were added, updated and removed while writing');
    socket.destroy();
  });
});

test('an unreachable upstream: the client is accepted, then closed at once', async () => {
  const gone = await startTestServer();
  const address = gone.address;
  await gone.stop();
  await withProxy(fx.target, address, 'down', async (proxy) => {
    const socket = await connect(portOf(proxy));
    const closing = await readUntilClose(socket, 5000);
    assert.equal(closing.data.length, 0);
  });
});

test('a disabled proxy refuses connections; enabled again it listens on the same address', async () => {
  await withProxy(fx.target, fx.echo.address, 'toggle', async (proxy) => {
    const port = portOf(proxy);
    const live = await connect(port);
    const liveClosed = readUntilClose(live, 5000);
    const disabled = await proxy.update({ ...proxy.toJson(), enabled: false });
    assert.equal(disabled.enabled, false);
    await liveClosed;
    await assert.rejects(connect(port), /ECONNREFUSED/);
    const enabled = await disabled.update({ ...disabled.toJson(), enabled: true });
    assert.equal(portOf(enabled), port);
    const socket = await connect(port);
    assert.deepEqual(await echoRoundTrip(socket, Buffer.from('again')), Buffer.from('again'));
    socket.destroy();
  });
});

test('changing the upstream restarts the proxy: live connections drop, new ones reach the new upstream', async () => {
  await using other = await startTestServer((s) => s.end('other'));
  await withProxy(fx.target, fx.echo.address, 'move', async (proxy) => {
    await proxy.addToxic({
      name: 'keep',
      type: 'latency',
      stream: 'upstream',
      toxicity: 1,
      attributes: { latency: 1, jitter: 0 },
    });
    const live = await connect(portOf(proxy));
    assert.deepEqual(await echoRoundTrip(live, Buffer.from('echo')), Buffer.from('echo'));
    const liveClosed = readUntilClose(live, 5000);
    const moved = await proxy.update({ ...proxy.toJson(), upstream: other.address });
    assert.equal(moved.upstream, other.address);
    await liveClosed;
    const s = await connect(portOf(moved));
    const result = await readUntilClose(s, 5000);
    assert.equal(result.data.toString(), 'other');
    const toxics = (await (await fetch(`${fx.target.url}/proxies/${proxy.name}/toxics`)).json()) as {
      name: string;
    }[];
    assert.deepEqual(
      toxics.map((t) => t.name),
      ['keep'],
      'toxics survive a restart',
    );
  });
});
