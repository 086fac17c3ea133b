// Toxics whose effect is time: latency (each direction, stacked, pipelined, released on
// removal), bandwidth and slicer. Tolerances are docs/proxy.md's (#what-the-acceptance-suite-checks);
// where a noisy machine can only add delay, the best of a few trials is compared with the upper bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  connect,
  createProxy,
  echoRoundTrip,
  portOf,
  readBytes,
  startTestServer,
  useTargetAndEcho,
  withProxy,
} from './helpers.js';

const fx = useTargetAndEcho();

async function timedRoundTrip(port: number, trials: number): Promise<number[]> {
  const socket = await connect(port);
  try {
    const times: number[] = [];
    for (let i = 0; i < trials; i++) {
      const start = performance.now();
      await echoRoundTrip(socket, Buffer.from(`ping ${i}`), 10_000);
      times.push(performance.now() - start);
    }
    return times;
  } finally {
    socket.destroy();
  }
}

for (const stream of ['upstream', 'downstream'] as const) {
  test(`latency ${stream}: each round trip is delayed by latency ± jitter (+10 ms)`, async () => {
    const proxy = await createProxy(fx.target, fx.echo.address, `lat_${stream}`);
    try {
      await proxy.addToxic({
        name: 'lat',
        type: 'latency',
        stream,
        toxicity: 1,
        attributes: { latency: 100, jitter: 20 },
      });
      const times = await timedRoundTrip(portOf(proxy), 4);
      for (const t of times)
        assert.ok(t >= 80 - 1, `round trip ${t.toFixed(1)} ms is shorter than latency - jitter`);
      const best = Math.min(...times);
      assert.ok(
        best <= 100 + 20 + 10,
        `best round trip ${best.toFixed(1)} ms exceeds latency + jitter + 10 ms`,
      );
    } finally {
      await proxy.remove();
    }
  });
}

test('latency: two stacked 500 ms toxics give about 1000 ms', async () => {
  await withProxy(fx.target, fx.echo.address, 'stacked', async (proxy) => {
    for (const name of ['a', 'b'])
      await proxy.addToxic({
        name,
        type: 'latency',
        stream: 'downstream',
        toxicity: 1,
        attributes: { latency: 500, jitter: 0 },
      });
    const [t] = await timedRoundTrip(portOf(proxy), 1);
    assert.ok(
      t !== undefined && t >= 1000 - 1 && t <= 1000 + 150,
      `stacked latency took ${t?.toFixed(1)} ms`,
    );
  });
});

test('latency is pipelined: 10 chunks 20 ms apart under 300 ms latency take about 300 + 180 ms, not 3 s', async () => {
  await withProxy(fx.target, fx.echo.address, 'pipelined', async (proxy) => {
    await proxy.addToxic({
      name: 'lat',
      type: 'latency',
      stream: 'downstream',
      toxicity: 1,
      attributes: { latency: 300, jitter: 0 },
    });
    const socket = await connect(portOf(proxy));
    try {
      const start = performance.now();
      const reading = readBytes(socket, 10 * 100, 10_000);
      for (let i = 0; i < 10; i++) {
        socket.write(Buffer.alloc(100, i));
        await new Promise((r) => setTimeout(r, 20));
      }
      await reading;
      const took = performance.now() - start;
      assert.ok(took >= 300 && took < 1000, `10 chunks took ${took.toFixed(0)} ms`);
    } finally {
      socket.destroy();
    }
  });
});

test('removing a latency toxic lets through what it held back at once', async () => {
  await withProxy(fx.target, fx.echo.address, 'release', async (proxy) => {
    const toxic = await proxy.addToxic({
      name: 'lat',
      type: 'latency',
      stream: 'downstream',
      toxicity: 1,
      attributes: { latency: 5000, jitter: 0 },
    });
    const socket = await connect(portOf(proxy));
    try {
      const start = performance.now();
      const reading = readBytes(socket, 5, 10_000);
      socket.write('hello');
      await new Promise((r) => setTimeout(r, 200));
      await toxic.remove();
      const { data } = await reading;
      assert.equal(data.toString(), 'hello');
      const took = performance.now() - start;
      assert.ok(took < 2000, `held data arrived after ${took.toFixed(0)} ms`);
    } finally {
      socket.destroy();
    }
  });
});

test('bandwidth: 480 KB at 1000 KB/s takes about 480 ms', async () => {
  const payload = randomBytes(480_000);
  await using source = await startTestServer((s) => s.end(payload));
  await withProxy(fx.target, source.address, 'bw', async (proxy) => {
    await proxy.addToxic({
      name: 'bw',
      type: 'bandwidth',
      stream: 'downstream',
      toxicity: 1,
      attributes: { rate: 1000 },
    });
    const start = performance.now();
    const socket = await connect(portOf(proxy));
    try {
      const { data } = await readBytes(socket, payload.length, 10_000);
      const took = performance.now() - start;
      assert.deepEqual(data, payload);
      assert.ok(took >= 480 - 10 && took <= 480 + 200, `480 KB at 1000 KB/s took ${took.toFixed(0)} ms`);
    } finally {
      socket.destroy();
    }
  });
});

test('slicer: 480 KB at average 1024 / variation 512 arrives intact in 240–720 reads', async () => {
  const payload = randomBytes(480_000);
  await using source = await startTestServer((s) => s.write(payload));
  await withProxy(fx.target, source.address, 'slicer', async (proxy) => {
    await proxy.addToxic({
      name: 'slicer',
      type: 'slicer',
      stream: 'downstream',
      toxicity: 1,
      attributes: { average_size: 1024, size_variation: 512, delay: 1000 },
    });
    const socket = await connect(portOf(proxy));
    try {
      const { data, reads } = await readBytes(socket, payload.length, 20_000);
      assert.deepEqual(data, payload);
      assert.ok(reads >= 240 && reads <= 720, `${reads} reads`);
    } finally {
      socket.destroy();
    }
  });
});
