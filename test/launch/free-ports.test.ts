// Reserved ports for servers that take fixed ports: distinct, bindable right after, and (on
// Linux) below the ephemeral range, where outgoing connections never take them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePorts } from '../../src/launch/free-ports.js';

test('freePorts gives distinct bindable ports below the ephemeral range', async () => {
  const ports = await freePorts(12);
  assert.equal(new Set(ports).size, 12);
  const rangeFile = '/proc/sys/net/ipv4/ip_local_port_range';
  if (existsSync(rangeFile)) {
    const lo = Number(readFileSync(rangeFile, 'utf8').trim().split(/\s+/)[0]);
    for (const p of ports) assert.ok(p >= 10_000 && p < lo, `port ${p} is outside [10000, ${lo})`);
  }
  for (const p of ports) {
    const s = createServer();
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(p, '127.0.0.1', () => resolve());
    });
    await new Promise((r) => s.close(r));
  }
});

test('a port someone holds is never handed out', async (t) => {
  const held = await freePorts(1);
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(held[0], '127.0.0.1', () => resolve()));
  t.after(() => s.close());
  for (let i = 0; i < 20; i++) assert.ok(!(await freePorts(5)).includes(held[0]!));
});
