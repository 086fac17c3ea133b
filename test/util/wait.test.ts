// The one wait strategy (src/util/wait.ts) against real sockets: it waits for an HTTP server
// that comes up late, a TCP listener, a log line, and it times out naming what it waited for
// and why it was not there, or gives up at once when told the awaited thing is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { TimeoutError } from '../../src/util/errors.js';
import { httpProbe, lineProbe, predicateProbe, tcpProbe, waitFor } from '../../src/util/wait.js';

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

test('httpProbe waits for a server that starts late and for the answer it accepts', async (t) => {
  const port = await freePort();
  let calls = 0;
  const server = http.createServer((_req, res) => {
    calls++;
    res.writeHead(calls < 3 ? 503 : 200).end(calls < 3 ? 'warming' : 'ok');
  });
  t.after(() => server.close());
  setTimeout(() => server.listen(port, '127.0.0.1'), 300);
  const started = Date.now();
  await waitFor(httpProbe(`http://127.0.0.1:${port}/ready`), {
    what: 'ready',
    timeoutMs: 5000,
    intervalMs: 50,
  });
  assert.ok(Date.now() - started >= 250, 'it did wait for the server');
  assert.equal(calls, 3, 'two 503s were "not yet"');
});

test('a wait that never comes times out naming what and the last reason', async () => {
  const port = await freePort();
  await assert.rejects(
    waitFor(httpProbe(`http://127.0.0.1:${port}/`), { what: 'the dead server answers', timeoutMs: 300 }),
    (err: unknown) =>
      err instanceof TimeoutError &&
      /the dead server answers: not within 300 ms \(last: .*fetch failed/.test(err.message),
  );
});

test('tcpProbe, lineProbe and predicateProbe', async (t) => {
  const server = net.createServer((s) => s.end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  assert.equal(await waitFor(tcpProbe('127.0.0.1', port), { what: 'tcp', timeoutMs: 2000 }), true);

  const lines: string[] = ['starting'];
  setTimeout(() => lines.push('noise', 'listening on 4242'), 100);
  const portSeen = await waitFor(
    lineProbe(
      () => lines,
      (l) => /listening on (\d+)/.exec(l)?.[1],
    ),
    { what: 'the listening line', timeoutMs: 2000, intervalMs: 20 },
  );
  assert.equal(portSeen, '4242');

  let flag = false;
  setTimeout(() => (flag = true), 50);
  assert.equal(
    await waitFor(
      predicateProbe(() => flag),
      { what: 'flag', timeoutMs: 2000, intervalMs: 10 },
    ),
    true,
  );
});

test('giveUpIf ends the wait at once with its error', async () => {
  const started = Date.now();
  let gone = false;
  setTimeout(() => (gone = true), 50);
  await assert.rejects(
    waitFor(() => Promise.resolve(undefined), {
      what: 'never',
      timeoutMs: 10_000,
      intervalMs: 10,
      giveUpIf: () => (gone ? new Error('the process exited') : undefined),
    }),
    /the process exited/,
  );
  assert.ok(Date.now() - started < 5000);
});
