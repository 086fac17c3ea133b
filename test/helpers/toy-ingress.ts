// A small real HTTP server speaking the ingress API (docs/architecture.md#ingress) for workload and runner
// tests: Echo, Sleep, Flaky, keyed Counter with idempotency keys, send/attach, and switches to
// misbehave (hang, 504, reset, double-apply) so tests can see each outcome class.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeInvocationId } from '../../src/protocol/ids.js';
import { startMetricsServer, type StartedMetricsServer } from '../../src/telemetry/metrics.js';
import { Gauge, Registry } from 'prom-client';

export interface ToyIngressBehaviour {
  hang?: boolean;
  status504?: boolean;
  reset?: boolean;
  /** Applies every counter add again on an idempotent retry (an exactly-once bug). */
  doubleApply?: boolean;
}

export interface ToyIngress {
  url: string;
  behaviour: ToyIngressBehaviour;
  counters: Map<string, number>;
  requests: number;
  metrics: StartedMetricsServer;
  pending: Gauge;
  stop(): Promise<void>;
}

export async function startToyIngress(behaviour: ToyIngressBehaviour = {}): Promise<ToyIngress> {
  const counters = new Map<string, number>();
  const outputs = new Map<string, unknown>();
  const applied = new Set<string>();
  const hanging = new Set<http.ServerResponse>();
  const registry = new Registry();
  const pending = new Gauge({
    name: 'limbo_ingress_pending_requests',
    help: 'pending',
    labelNames: ['kind'],
    registers: [registry],
  });
  pending.set({ kind: 'call' }, 0);
  const state: ToyIngress = {
    url: '',
    behaviour,
    counters,
    requests: 0,
    metrics: undefined as unknown as StartedMetricsServer,
    pending,
    stop: async () => {},
  };
  const server = http.createServer((req, res) => {
    state.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.behaviour.reset) return req.socket.destroy();
      if (state.behaviour.hang) {
        hanging.add(res);
        return;
      }
      const path = (req.url ?? '/').split('?')[0]!;
      const idem = req.headers['idempotency-key'] as string | undefined;
      const body =
        chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>) : {};
      const reply = (status: number, out: unknown, id?: string): void => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (id !== undefined) headers['x-limbo-invocation-id'] = id;
        res.writeHead(status, headers);
        res.end(JSON.stringify(out));
      };
      const attach = /^\/invocations\/([^/]+)\/attach$/.exec(path);
      if (attach)
        return reply(
          200,
          outputs.get(decodeURIComponent(attach[1]!)) ?? null,
          decodeURIComponent(attach[1]!),
        );
      const m = /^\/(\w+)(?:\/([^/]+))?\/(\w+)(\/send)?$/.exec(path);
      if (!m) return reply(404, { error: 'no route' });
      const [, service, key = '', handler, send] = m as unknown as [
        string,
        string,
        string | undefined,
        string,
        string | undefined,
      ];
      const id = makeInvocationId({ service, key: decodeURIComponent(key), handler }, idem);
      if (state.behaviour.status504) return reply(504, { invocationId: id }, id);
      let out: unknown;
      if (service === 'Echo') out = body;
      else if (service === 'Sleep' || service === 'Flaky') out = { ok: true };
      else if (service === 'Counter') {
        const k = decodeURIComponent(key);
        if (handler === 'add') {
          if (!applied.has(id) || state.behaviour.doubleApply)
            counters.set(k, (counters.get(k) ?? 0) + Number(body['delta']));
          applied.add(id);
        }
        out = counters.get(k) ?? 0;
      } else return reply(404, { error: 'unknown service' });
      if (!outputs.has(id)) outputs.set(id, out);
      if (send) return reply(202, { invocationId: id, status: 'Accepted' }, id);
      reply(200, handler === 'add' || handler === 'get' ? out : outputs.get(id), id);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.metrics = await startMetricsServer(registry, '127.0.0.1', 0);
  state.stop = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await state.metrics.stop();
  };
  return state;
}
