// A StartedTarget made of real child processes (tiny Node scripts that print a ready line and
// idle) for testing faults, the local runtime and the runner without the reference services.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toxiproxy } from 'toxiproxy-node-client';
import { createCleanup, type Cleanup } from '../../src/runtime/cleanup.js';
import { createLocalService, type LocalService } from '../../src/runtime/local.js';
import { startProcess } from '../../src/runtime/process.js';
import { startToxiproxyServer } from '../../src/proxy/server.js';
import type { StartedTarget } from '../../src/targets/target.js';

export interface ToyTarget extends StartedTarget {
  runDir: string;
  cleanup: Cleanup;
  leaders: Map<number, string>;
  transfers: { partition: number; node: string }[];
  local: Map<string, LocalService>;
}

const script = (name: string): string =>
  `process.stdout.write('limbo-ready ' + JSON.stringify({role:'processor',node:${JSON.stringify(name)},pid:process.pid,addresses:{}}) + '\\n'); setInterval(() => {}, 1000);`;

export async function startToyTarget(
  processors = 3,
  extra: {
    metricsUrls?: Record<string, string>;
    ingressUrls?: string[];
    /** The clients reach the first ingress through a real embedded Toxiproxy (link `client->ingress`). */
    proxyIngress?: boolean;
  } = {},
): Promise<ToyTarget> {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-toy-'));
  const cleanup = createCleanup();
  const local = new Map<string, LocalService>();
  let toxiproxyUrl = 'http://127.0.0.1:9';
  let ingressUrls = extra.ingressUrls ?? [];
  const links: Record<string, string> = { 'ingress->processor-1': 'ingress->processor-1' };
  const first = ingressUrls[0];
  if (extra.proxyIngress === true && first !== undefined) {
    const server = await startToxiproxyServer({ host: '127.0.0.1', port: 0 });
    cleanup.add('toxiproxy', () => server.stop());
    toxiproxyUrl = server.url;
    const proxy = await new Toxiproxy(server.url).createProxy({
      name: 'client->ingress',
      listen: '127.0.0.1:0',
      upstream: new URL(first).host,
    });
    ingressUrls = [`http://${proxy.listen}`, ...ingressUrls.slice(1)];
    links['client->ingress'] = 'client->ingress';
  }
  for (let i = 1; i <= processors; i++) {
    const name = `processor-${i}`;
    const svc = createLocalService(
      {
        name,
        role: 'processor',
        start: (logFile) =>
          startProcess({
            name,
            command: process.execPath,
            args: ['-e', script(name)],
            logFile,
            readyTimeoutMs: 10_000,
          }),
      },
      runDir,
      cleanup,
    );
    await svc.start();
    cleanup.add(name, () => svc.stop());
    local.set(name, svc);
  }
  const leaders = new Map<number, string>([[0, 'processor-1']]);
  const transfers: { partition: number; node: string }[] = [];
  const target: ToyTarget = {
    name: 'toy',
    runDir,
    cleanup,
    leaders,
    transfers,
    local,
    ingressUrls,
    links,
    toxiproxy: new Toxiproxy(toxiproxyUrl),
    toxiproxyUrl,
    services: local,
    extraMetricsUrls: () => extra.metricsUrls ?? {},
    leaderOf: (p) => Promise.resolve(leaders.get(p)),
    transferLeadership: (partition, node) => {
      transfers.push({ partition, node });
      leaders.set(partition, node);
      return Promise.resolve();
    },
    startProcessors: async () => {
      for (const s of local.values()) if (!s.isRunning()) await s.start();
    },
    stop: async () => {
      await cleanup.runAll();
      rmSync(runDir, { recursive: true, force: true });
    },
    [Symbol.asyncDispose]: () => target.stop(),
  };
  return target;
}
