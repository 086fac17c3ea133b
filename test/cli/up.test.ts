// `limbo up` as a user runs it: a child process that starts the topology, writes up.json,
// serves until SIGTERM, then leaves no service process and no up.json behind — for the
// reference cluster and for declared targets (etcd, NATS), which say their own services and links.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { limboCommand } from '../../src/runtime/process.js';
import type { UpFile } from '../../src/cli/up.js';
import { findCommand } from '../../src/targets/declarative/validate.js';
import { pidAlive } from '../../src/util/pid-alive.js';

/** Runs `limbo up <args>` until up.json is written, hands it (and the output so far) to `use`, then SIGTERMs it. */
async function whileUp(
  args: string[],
  use: (up: UpFile, output: () => string) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'limbo-up-'));
  const cmd = limboCommand();
  const child = spawn(cmd.command, [...cmd.args, 'up', '--dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const upFile = join(dir, 'up.json');
    const deadline = Date.now() + 90_000;
    while (!existsSync(upFile) && Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(existsSync(upFile), `up.json written\n${output}`);
    const up = JSON.parse(readFileSync(upFile, 'utf8')) as UpFile;
    const upDeadline = Date.now() + 10_000;
    while (!output.includes('up; Ctrl-C to stop') && Date.now() < upDeadline)
      await new Promise((r) => setTimeout(r, 100));
    await use(up, () => output);
    const pids = Object.values(up.services)
      .map((s) => s.pid)
      .filter((p): p is number => p !== null);
    assert.ok(pids.length > 0, 'service pids listed');
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 30_000))]);
    assert.equal(code, 0, output);
    assert.ok(!existsSync(upFile), 'up.json removed');
    for (const pid of pids) assert.ok(!pidAlive(pid), `service ${pid} stopped`);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

async function proxiesOf(up: UpFile): Promise<Record<string, unknown>> {
  return (await (await fetch(`${up.toxiproxy.api}/proxies`)).json()) as Record<string, unknown>;
}

test('limbo up starts a topology, describes it in up.json, and cleans up on SIGTERM', async () => {
  await whileUp(['--processors', '2', '--partitions', '2'], async (up, output) => {
    assert.equal(up.target, 'reference');
    assert.match(output(), /starting reference: 2 processors, 2 partitions/);
    const res = await fetch(`${up.ingressUrls[0]}/Echo/echo`, { method: 'POST', body: '{"up":1}' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { up: 1 });

    const proxies = await proxiesOf(up);
    for (const link of ['client->ingress', 'ingress->processor-1', 'processor-2->log', 'ingress->log']) {
      const name = up.toxiproxy.proxies[link];
      assert.ok(name !== undefined && proxies[name] !== undefined, `proxy for ${link}`);
    }
    for (const [name, url] of Object.entries(up.metrics)) {
      const m = await fetch(url);
      assert.equal(m.status, 200, name);
      await m.arrayBuffer();
    }
    assert.ok(up.services['log']?.pid, 'the log has a pid');
    if (up.prometheus !== null) {
      const q = await fetch(`${up.prometheus}/api/v1/query?query=up`);
      assert.equal(q.status, 200);
      await q.arrayBuffer();
    }
  });
});

test(
  'limbo up --target etcd says the declared services and links, not a reference topology',
  { skip: findCommand('etcd') === undefined && 'etcd is not installed (apt-get install etcd-server)' },
  async () => {
    await whileUp(['--target', 'etcd', '--prometheus', 'off'], async (up, output) => {
      assert.equal(up.target, 'etcd');
      assert.match(
        output(),
        /starting etcd: etcd-1 \(processor\), etcd-2 \(processor\), etcd-3 \(processor\); 6 proxied links/,
      );
      assert.doesNotMatch(output(), /partitions/);
      assert.match(output(), /services {5}child processes \(3\): etcd-1, etcd-2, etcd-3/);
      assert.deepEqual(Object.keys(up.services).sort(), ['etcd-1', 'etcd-2', 'etcd-3']);
      const proxies = await proxiesOf(up);
      for (const link of ['client->etcd-1', '*->etcd-3'])
        assert.ok(proxies[up.toxiproxy.proxies[link] ?? ''] !== undefined, `proxy for ${link}`);
      const put = await fetch(`${up.ingressUrls[0]}/v3/kv/put`, {
        method: 'POST',
        body: JSON.stringify({ key: Buffer.from('up').toString('base64'), value: 'MQ==' }),
      });
      assert.equal(put.status, 200, await put.text());
    });
  },
);

test('limbo up --target reference-declared prints and writes every service port and every link with its upstream', async () => {
  await whileUp(['--target', 'reference-declared', '--prometheus', 'off'], async (up, output) => {
    const services = ['log', 'processor-1', 'processor-2', 'processor-3', 'ingress'];
    assert.deepEqual(Object.keys(up.ports).sort(), [...services].sort());
    for (const s of services) {
      const p = up.ports[s]!;
      assert.ok(p['main']! > 0 && p['metrics']! > 0, `${s} has its ports`);
      assert.match(output(), new RegExp(`^ports {8}${s} main=${p['main']} metrics=${p['metrics']}$`, 'm'));
    }
    assert.deepEqual(Object.keys(up.links).sort(), Object.keys(up.toxiproxy.proxies).sort());
    assert.equal(Object.keys(up.links).length, 8);
    for (const [link, l] of Object.entries(up.links)) {
      const to = link.split('->')[1]!;
      assert.equal(l.upstream, `127.0.0.1:${up.ports[to]!['main']}`, `${link} forwards to ${to}'s main port`);
      assert.match(l.listen, /^127\.0\.0\.1:\d+$/);
      assert.ok(output().includes(`link         ${link} ${l.listen} → ${l.upstream}`), `${link} printed`);
    }
    // The printed client link is the way in: a call through it is answered.
    const res = await fetch(`http://${up.links['client->ingress']!.listen}/Echo/echo`, {
      method: 'POST',
      body: '{"through":"the link"}',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { through: 'the link' });
  });
});

test(
  'limbo up --target nats: a client-adapter target prints its client links as addresses (no HTTP ingress), every route link and its upstream',
  {
    skip:
      findCommand('nats-server') === undefined &&
      'nats-server is not installed (apt-get install nats-server)',
  },
  async () => {
    await whileUp(['--target', 'nats', '--prometheus', 'off'], (up, output) => {
      const clients = ['nats-1', 'nats-2', 'nats-3'].map((s) => up.links[`client->${s}`]!.listen);
      assert.match(
        output(),
        new RegExp(`^clients {6}${clients.join(' ')} \\(client adapter nats-jetstream\\)$`, 'm'),
      );
      assert.doesNotMatch(output(), /^ingress /m);
      for (const route of ['nats-1->nats-2', 'nats-1->nats-3', 'nats-2->nats-3']) {
        const l = up.links[route]!;
        const to = route.split('->')[1]!;
        assert.equal(
          l.upstream,
          `127.0.0.1:${up.ports[to]!['cluster']}`,
          `${route} forwards to ${to}'s cluster port`,
        );
        assert.ok(output().includes(`link         ${route} ${l.listen} → ${l.upstream}`), `${route} printed`);
      }
      return Promise.resolve();
    });
  },
);
