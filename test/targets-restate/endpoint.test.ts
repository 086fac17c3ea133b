// The SDK service endpoint on its own: the child process prints its ready line, serves the
// four services over HTTP/2 discovery, and exits on SIGTERM. (Calls through Restate are
// tested in cluster.test.ts: the SDK protocol is only meaningful with the real server.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startProcess } from '../../src/runtime/process.js';
import '../../src/targets/restate/promise-polyfill.js';
import { discover } from '../helpers/restate.js';

const endpointMain = fileURLToPath(new URL('../../src/targets/restate/endpoint-main.js', import.meta.url));

test('Promise.withResolvers exists after the polyfill and works', async () => {
  const { promise, resolve } = (
    Promise as unknown as { withResolvers<T>(): { promise: Promise<T>; resolve: (v: T) => void } }
  ).withResolvers<number>();
  resolve(7);
  assert.equal(await promise, 7);
});

test('endpoint process: ready line, discovery lists Echo, Sleep, Counter (object), Flaky; SIGTERM exits', async () => {
  await using proc = await startProcess({
    name: 'restate-services',
    command: process.execPath,
    args: [endpointMain],
  });
  assert.equal(proc.ready.role, 'restate-services');
  const url = proc.ready.addresses['http']!;
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const res = await discover(url);
  assert.equal(res.status, 200, res.body);
  const manifest = JSON.parse(res.body) as {
    services: { name: string; ty: string; handlers: { name: string }[] }[];
  };
  const shape = Object.fromEntries(
    manifest.services.map((s) => [
      s.name,
      `${s.ty}:${s.handlers
        .map((h) => h.name)
        .sort()
        .join(',')}`,
    ]),
  );
  assert.deepEqual(shape, {
    Echo: 'SERVICE:echo',
    Sleep: 'SERVICE:sleep',
    Counter: 'VIRTUAL_OBJECT:add,get',
    Flaky: 'SERVICE:call',
  });
  proc.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    proc.exited,
    new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), 10_000))),
  ]);
  clearTimeout(timer);
  assert.equal(code, 0);
});
