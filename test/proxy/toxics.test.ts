// Toxics whose effect is on bytes and connection ends: limit_data, reset_peer (a real
// TCP RST), timeout, slow_close, and toxicity.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type net from 'node:net';
import {
  connect,
  createProxy,
  echoRoundTrip,
  portOf,
  readUntilClose,
  sleepMs,
  startTestServer,
  withTimeout,
  type TestServer,
  useTargetAndEcho,
  withProxy,
} from './helpers.js';

const fx = useTargetAndEcho();

/** A server that records what each connection received and when it closed. */
async function startRecorder(): Promise<TestServer & { received: () => Promise<Buffer> }> {
  let closed: Promise<Buffer> | undefined;
  const server = await startTestServer((s: net.Socket) => {
    const parts: Buffer[] = [];
    s.on('data', (d: Buffer) => parts.push(d));
    closed ??= new Promise((resolve) => {
      s.on('end', () => s.end());
      s.on('close', () => resolve(Buffer.concat(parts)));
    });
  });
  const received = async (): Promise<Buffer> => {
    for (let i = 0; i < 500 && closed === undefined; i++) await sleepMs(10);
    if (closed === undefined) throw new Error('the upstream was never dialled');
    return withTimeout(closed, 5000, 'upstream close');
  };
  return { ...server, received };
}

const limitCases: { name: string; writes: number[]; expect: number; closes: boolean }[] = [
  { name: '50 passes', writes: [50], expect: 50, closes: false },
  { name: '100 passes', writes: [100], expect: 100, closes: true },
  { name: '150 gives 100', writes: [150], expect: 100, closes: true },
  { name: '4×25 pass', writes: [25, 25, 25, 25], expect: 100, closes: true },
  { name: '90+20 gives 90+10', writes: [90, 20], expect: 100, closes: true },
];
for (const c of limitCases) {
  test(`limit_data 100: ${c.name}`, async () => {
    await using recorder = await startRecorder();
    const proxy = await createProxy(fx.target, recorder.address, 'limit');
    try {
      await proxy.addToxic({
        name: 'limit',
        type: 'limit_data',
        stream: 'upstream',
        toxicity: 1,
        attributes: { bytes: 100 },
      });
      const socket = await connect(portOf(proxy));
      const closing = readUntilClose(socket, 5000);
      let sent = 0;
      for (const n of c.writes) {
        socket.write(Buffer.alloc(n, sent % 251));
        sent += n;
        await sleepMs(20);
      }
      if (c.closes) {
        await closing;
      } else {
        await sleepMs(200);
        assert.equal(socket.destroyed, false, 'the connection stays open below the limit');
        socket.end();
        await closing;
      }
      const got = await recorder.received();
      assert.equal(got.length, c.expect);
    } finally {
      await proxy.remove();
    }
  });
}

test('limit_data 0 sends nothing and closes', async () => {
  await using recorder = await startRecorder();
  await withProxy(fx.target, recorder.address, 'limit0', async (proxy) => {
    await proxy.addToxic({
      name: 'limit',
      type: 'limit_data',
      stream: 'upstream',
      toxicity: 1,
      attributes: { bytes: 0 },
    });
    const socket = await connect(portOf(proxy));
    const closing = readUntilClose(socket, 5000);
    socket.write('anything');
    await closing;
    assert.equal((await recorder.received()).length, 0);
  });
});

for (const stream of ['upstream', 'downstream'] as const) {
  for (const timeoutMs of [0, 100]) {
    test(`reset_peer ${stream} timeout ${timeoutMs}: ECONNRESET, then the end`, async () => {
      // Only the toxic's own direction carries data: data arriving at a Node client in
      // the same poll as the RST would make libuv report a clean end instead.
      await using greeter = await startTestServer((s) => {
        if (stream === 'downstream') s.write('hello from upstream');
      });
      const proxy = await createProxy(fx.target, greeter.address, 'reset');
      try {
        await proxy.addToxic({
          name: 'rst',
          type: 'reset_peer',
          stream,
          toxicity: 1,
          attributes: { timeout: timeoutMs },
        });
        const socket = await connect(portOf(proxy));
        const start = performance.now();
        const closing = readUntilClose(socket, 5000);
        if (stream === 'upstream') socket.write('hello from client');
        const result = await closing;
        assert.equal(result.errorCode, 'ECONNRESET');
        assert.ok(performance.now() - start >= timeoutMs - 5, 'the reset waits for the timeout');
      } finally {
        await proxy.remove();
      }
    });
  }
}

test('timeout 0: removing it ends both sides within 1 s', async () => {
  let serverSide: net.Socket | undefined;
  await using server = await startTestServer((s) => (serverSide = s));
  await withProxy(fx.target, server.address, 'timeout_rm', async (proxy) => {
    const toxic = await proxy.addToxic({
      name: 't',
      type: 'timeout',
      stream: 'downstream',
      toxicity: 1,
      attributes: { timeout: 0 },
    });
    const socket = await connect(portOf(proxy));
    for (let i = 0; i < 100 && serverSide === undefined; i++) await sleepMs(10);
    assert.ok(serverSide, 'the upstream was dialled');
    const serverClosed = readUntilClose(serverSide, 1500);
    const clientClosed = readUntilClose(socket, 1500);
    await sleepMs(50);
    await toxic.remove();
    const start = performance.now();
    await Promise.all([clientClosed, serverClosed]);
    assert.ok(performance.now() - start < 1000, 'both sides ended within 1 s');
  });
});

test('timeout with toxicity 0 passes data; updated to toxicity 1 / 100 ms it ends the connection', async () => {
  await withProxy(fx.target, fx.echo.address, 'timeout_tox', async (proxy) => {
    const toxic = await proxy.addToxic({
      name: 't',
      type: 'timeout',
      stream: 'downstream',
      toxicity: 0,
      attributes: { timeout: 100 },
    });
    assert.equal(toxic.toxicity, 0);
    const socket = await connect(portOf(proxy));
    assert.deepEqual(await echoRoundTrip(socket, Buffer.from('still here'), 5000), Buffer.from('still here'));
    const closing = readUntilClose(socket, 5000);
    const start = performance.now();
    const updated = await toxic.update({ ...toxic.toJson(), toxicity: 1 });
    assert.equal(updated.toxicity, 1);
    await closing;
    const took = performance.now() - start;
    assert.ok(took >= 100 - 5 && took <= 150 + 150, `closed ${took.toFixed(0)} ms after the update`);
  });
});

test('timeout drops data and closes after the timeout without input', async () => {
  await withProxy(fx.target, fx.echo.address, 'timeout_drop', async (proxy) => {
    await proxy.addToxic({
      name: 't',
      type: 'timeout',
      stream: 'upstream',
      toxicity: 1,
      attributes: { timeout: 200 },
    });
    const socket = await connect(portOf(proxy));
    const start = performance.now();
    const closing = readUntilClose(socket, 5000);
    socket.write('dropped');
    const result = await closing;
    assert.equal(result.data.length, 0, 'nothing reached the echo server');
    assert.ok(performance.now() - start >= 200 - 5);
  });
});

test('slow_close: data passes at once, the close comes after the delay', async () => {
  await using server = await startTestServer((s) => s.end('bye'));
  await withProxy(fx.target, server.address, 'slowclose', async (proxy) => {
    await proxy.addToxic({
      name: 'sc',
      type: 'slow_close',
      stream: 'downstream',
      toxicity: 1,
      attributes: { delay: 300 },
    });
    const socket = await connect(portOf(proxy));
    const start = performance.now();
    let firstDataMs = -1;
    socket.once('data', () => (firstDataMs = performance.now() - start));
    const result = await readUntilClose(socket, 5000);
    assert.equal(result.data.toString(), 'bye');
    assert.ok(firstDataMs >= 0 && firstDataMs < 250, `data arrived after ${firstDataMs.toFixed(0)} ms`);
    assert.ok(result.afterMs >= 300 - 5, `closed after ${result.afterMs.toFixed(0)} ms`);
  });
});
