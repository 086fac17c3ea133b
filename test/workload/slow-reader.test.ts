// Slow readers: what the option accepts (each bad field named), that the decisions replay from
// the seed, and, on a real HTTP server, that a slow reader makes the server's writes wait for
// the client (TCP backpressure: write() returns false and 'drain' comes late) while a client
// that reads at once does not. The server writes an answer larger than loopback's socket
// buffers (several MB here), since smaller answers fit in the kernel's buffers whatever the
// client does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createRandom } from '../../src/util/random.js';
import { UsageError } from '../../src/util/errors.js';
import { createHttpClient, type HttpClient } from '../../src/workload/http-client.js';
import { parseSlowReaders, slowReadingClient, type SlowRead } from '../../src/workload/slow-reader.js';
import { checkWorkloadSpec } from '../../src/workload/workload.js';

test('parseSlowReaders: a good spec as given, absent stays off, each bad field named', () => {
  assert.equal(parseSlowReaders(undefined), undefined);
  assert.deepEqual(parseSlowReaders({ fraction: 0.2, bytesPerSec: 4096 }), {
    fraction: 0.2,
    read: { bytesPerSec: 4096 },
  });
  assert.deepEqual(parseSlowReaders({ fraction: 1, pauseMs: 0 }), { fraction: 1, read: { pauseMs: 0 } });
  const bad: [unknown, RegExp][] = [
    [{ fraction: 1.5, pauseMs: 10 }, /workload\.slowReaders\.fraction must be a number from 0 to 1/],
    [{ fraction: Number.NaN, pauseMs: 10 }, /fraction/],
    [{ fraction: 0.1 }, /exactly one of bytesPerSec and pauseMs/],
    [{ fraction: 0.1, pauseMs: 10, bytesPerSec: 4096 }, /exactly one of bytesPerSec and pauseMs/],
    [{ fraction: 0.1, bytesPerSec: 10 }, /workload\.slowReaders\.bytesPerSec must be a whole number ≥ 64/],
    [{ fraction: 0.1, bytesPerSec: 100.5 }, /bytesPerSec/],
    [{ fraction: 0.1, pauseMs: -1 }, /workload\.slowReaders\.pauseMs must be whole ms/],
    [{ fraction: 0.1, pauseMs: 700_000 }, /pauseMs/],
    [null, /must be an object/],
  ];
  for (const [spec, message] of bad) {
    assert.throws(
      () => checkWorkloadSpec({ slowReaders: spec as never }),
      (e: unknown) => e instanceof UsageError && message.test(e.message),
      JSON.stringify(spec),
    );
  }
});

test('slow-read decisions replay from the seed, one draw a request', async () => {
  const plan = parseSlowReaders({ fraction: 0.5, pauseMs: 0 })!;
  const seen: (SlowRead | undefined)[][] = [[], []];
  for (const run of [0, 1]) {
    const inner: HttpClient = {
      request: (_url, init) => {
        seen[run]!.push(init.slowRead);
        return Promise.resolve({ status: 200, headers: {}, body: undefined });
      },
      close: () => {},
    };
    const client = slowReadingClient(inner, plan, createRandom(42).fork('slow-reader-0'));
    for (let i = 0; i < 40; i++) await client.request('http://x/', { method: 'GET', timeoutMs: 1 });
  }
  assert.deepEqual(seen[0], seen[1]);
  const slow = seen[0]!.filter((s) => s !== undefined).length;
  assert.ok(slow > 5 && slow < 35, `about half read slowly: ${slow} of 40`);
});

/** A real server answering 16 MB in 64 KiB writes, timing how long its writes waited for 'drain'. */
async function bigAnswerServer(): Promise<{ url: string; waits: number[]; close(): Promise<void> }> {
  const size = 16 << 20;
  const chunk = Buffer.alloc(64 << 10, 120);
  const waits: number[] = [];
  const server = http.createServer((_req, res) => {
    void (async () => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': size });
      let waited = 0;
      for (let sent = 0; sent < size; sent += chunk.length) {
        if (!res.write(chunk)) {
          const t = performance.now();
          await once(res, 'drain');
          waited += performance.now() - t;
        }
      }
      res.end();
      waits.push(waited);
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    waits,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

test('a slow reader makes a real server wait for the client; a prompt reader does not', async () => {
  const server = await bigAnswerServer();
  const client = createHttpClient({ maxSockets: 4 });
  try {
    const timed = async (slowRead?: SlowRead): Promise<number> => {
      const t = performance.now();
      const answer = await client.request(server.url, {
        method: 'GET',
        timeoutMs: 30_000,
        ...(slowRead !== undefined ? { slowRead } : {}),
      });
      assert.equal(answer.status, 200);
      return performance.now() - t;
    };
    await timed();
    const pausedMs = await timed({ pauseMs: 2000 });
    const rateMs = await timed({ bytesPerSec: 8 << 20 });
    const [prompt, paused, rate] = server.waits;
    assert.ok(pausedMs >= 2000, `the paused read took ${Math.round(pausedMs)} ms`);
    assert.ok(rateMs >= 1500, `16 MB at 8 MB/s took ${Math.round(rateMs)} ms`);
    // What the server felt: its writes waited on the paused client for most of the pause, and
    // on the rate-bound one for what did not fit in the socket buffers (loopback's grow to
    // several MB, so the answer is twice that: the wait is about a second).
    assert.ok(paused! >= 1000, `server waited ${Math.round(paused!)} ms on the paused reader`);
    assert.ok(rate! >= 500, `server waited ${Math.round(rate!)} ms on the rate-bound reader`);
    assert.ok(prompt! < paused! / 2, `server waited ${Math.round(prompt!)} ms on the prompt reader`);
  } finally {
    client.close();
    await server.close();
  }
});
