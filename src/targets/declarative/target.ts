// A validated declaration as the runner's Target (src/targets/target.ts) — the one file that
// knows that interface. Start: free ports for every declared port; a Toxiproxy proxy on every
// link (listen on port 0, upstream the service's real port, so restarts never re-point);
// templates filled; services started in waves (`startAfter`), each wave together (a raft
// cluster needs its peers up to become ready); readiness by the one wait-strategy module;
// then one call through every client link. Anything that fails on the way stops all started.
//
//   declaration ─▶ ports ─▶ proxies (links) ─▶ services (waves, ready) ─▶ client probe ─▶ StartedTarget
//                                                     └─▶ signal bridge (/metrics under limbo names:
//                                                         renamed metrics, JSON endpoints, the
//                                                         leadership probe's is-leader and changes)
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createCleanup, type Cleanup } from '../../runtime/cleanup.js';
import { createLocalService, type LocalService } from '../../runtime/local.js';
import { startContainer } from '../../runtime/docker.js';
import { dockerAvailable, imageExists, LABEL_ROLE } from '../../runtime/docker-engine.js';
import { containerEnv, containerService } from '../../runtime/docker-runtime.js';
import type { ServiceHandle } from '../../runtime/service-handle.js';
import { startProcess } from '../../runtime/process.js';
import type { RuntimeChoice } from '../../runtime/service-runtime.js';
import { freePorts } from '../../launch/free-ports.js';
import { UsageError } from '../../util/errors.js';
import {
  httpRequestOf,
  referenceClientApi,
  restateClientApi,
  type ClientApi,
} from '../../workload/client-api.js';
import { openToxiproxy } from '../../runtime/toxiproxy.js';
import {
  TargetError,
  type StartedTarget,
  type Target,
  type TargetContext,
  type TargetProfile,
  type TargetRequirement,
} from '../target.js';
import { httpProbe, waitFor } from '../../util/wait.js';
import { linkName, type DeclaredTarget, type ServiceDeclaration } from './declaration.js';
import { startSignalBridge, type JsonSignal } from './signal-bridge.js';
import { askLeader, leads, probeLeader, type AskedService } from './leadership-probe.js';
import { startLeadershipSignals } from './leadership-signals.js';
import { leadershipTransferBoundMs, transferLeadership } from './leadership-transfer.js';
import { metricNames } from '../../protocol/names.js';
import { fill, type TemplateValues } from './template.js';
import { targetSignals } from './validate.js';
import { waitingFor } from './wait-strategy.js';
import { AdapterClient, type ClientAdapter } from '../../workload/client-adapter.js';

const DEFAULT_READY_MS = 20_000;
/** How often the leadership probe is asked for the leadership signals (a command costs a process a service). */
const LEADERSHIP_POLL_MS = 500;
const LEADERSHIP_COMMAND_POLL_MS = 1000;

export function clientApiOf(d: DeclaredTarget): ClientApi {
  const api = d.client.api;
  // An adapter target has no HTTP API; the reference one stands in where an API is asked for.
  return api === undefined || api === 'reference'
    ? referenceClientApi
    : api === 'restate'
      ? restateClientApi
      : api;
}

/** Canonical signals the declaration does not map, with the reason (declared, or "not declared"). */
export function missingSignalsOf(d: DeclaredTarget): Record<string, string> {
  const missing: Record<string, string> = {};
  const derived = derivedSignalsOf(d);
  for (const name of targetSignals) {
    const s = d.signals?.[name];
    if (derived.includes(name)) continue;
    if (s === undefined) missing[name] = `the ${d.name} declaration maps no metric to it`;
    else if ('missing' in s) missing[name] = s.missing;
  }
  return missing;
}

/** The signals limbo derives from the leadership probe: declared leadership, and no metric or JSON for them. */
export function derivedSignalsOf(d: DeclaredTarget): string[] {
  if (d.leadership === undefined) return [];
  return [metricNames.processorIsLeader, metricNames.processorLeadershipChangesTotal].filter((name) => {
    const s = d.signals?.[name];
    return s === undefined || 'missing' in s;
  });
}

/**
 * Why a suite needing these (scheduleRequirements of its faults) cannot run on this declaration
 * (a service, role, link or leadership it lacks), or undefined: so the suite is skipped with
 * the reason before anything starts.
 */
export function unsupportedBy(d: DeclaredTarget, needs: readonly TargetRequirement[]): string | undefined {
  const services = new Map(d.services.map((s) => [s.name, s.role]));
  const links = new Set(d.links.map(linkName));
  const roles = new Set(d.services.map((s) => s.role));
  for (const need of needs) {
    if (need.kind === 'transferLeadership' && d.leadershipTransfer === undefined)
      return `${d.name} declares no way to transfer leadership (leadershipTransfer)`;
    if (need.kind === 'transferLeadership' && d.leadership === undefined)
      return `${d.name} declares leadershipTransfer but no leadership probe (who leads, and whether it moved)`;
    if (need.kind === 'faultHook')
      return `${d.name} runs no limbo fault hooks (${need.hook} is a hook inside the reference cluster's services)`;
    if (need.kind === 'dataLoss') {
      const survivors = d.services.filter((s) => s.dataLoss === 'survives').map((s) => s.name);
      if (survivors.length === 0)
        return `${d.name} declares no service that survives losing its data dir (dataLoss: 'survives')`;
      if (need.service !== undefined && !survivors.includes(need.service))
        return `${d.name}: ${need.service} does not declare dataLoss: 'survives' (those that do: ${survivors.join(', ')})`;
    }
    if (need.kind === 'service' && !services.has(need.name))
      return `${d.name} has no service ${need.name} (it has ${[...services.keys()].join(', ')})`;
    if (need.kind === 'role' && !roles.has(need.role as ServiceDeclaration['role']))
      return `${d.name} has no ${need.role} service`;
    if (need.kind === 'leader' && d.leadership === undefined)
      return `${d.name} declares no leadership (leaderOf cannot be answered)`;
    if (need.kind === 'linkFrom' && ![...links].some((l) => l.startsWith(`${need.from}->`)))
      return `${d.name} has no link from ${need.from} (its links: ${[...links].join(', ')})`;
    if (need.kind === 'link' && !links.has(need.name) && !links.has(`*->${need.name.split('->')[1] ?? ''}`))
      return `${d.name} has no link ${need.name} (its links: ${[...links].join(', ')})`;
  }
  return undefined;
}

/** What the runner knows of a declared target before it starts. */
export function profileOf(d: DeclaredTarget): TargetProfile {
  const keep = new Set(Object.values(renamesOf(d)));
  return {
    clientApi: clientApiOf(d),
    ...(d.client.adapter !== undefined ? { clientAdapter: d.client.adapter } : {}),
    missingSignals: missingSignalsOf(d),
    inapplicableChecks: { ...d.inapplicableChecks },
    keepMetric: (name) => keep.has(name),
    extraCheckers: [],
    workloadLimits: d.client.maxRatePerSec !== undefined ? { maxRatePerSec: d.client.maxRatePerSec } : {},
    ...(d.slo !== undefined ? { slo: d.slo } : {}),
  };
}

/** limbo signal → the system's metric, for the ones the declaration maps (native ones need none). */
function renamesOf(d: DeclaredTarget): Record<string, string> {
  const renames: Record<string, string> = {};
  for (const [limbo, s] of Object.entries(d.signals ?? {})) if ('metric' in s) renames[limbo] = s.metric;
  return renames;
}

/** The signals read from JSON endpoints, their templates filled per service (none where one does not fill). */
function jsonSignalsOf(d: DeclaredTarget, valuesOf: (service: string) => TemplateValues): JsonSignal[] {
  const tryFill = (text: string, service: string): string | undefined => {
    try {
      return fill(text, valuesOf(service));
    } catch {
      return undefined;
    }
  };
  return Object.entries(d.signals ?? {}).flatMap(([signal, s]) =>
    'json' in s
      ? [
          {
            signal,
            path: s.path,
            url: (service: string) => tryFill(s.json, service),
            rule: (service: string) => ({
              ...(s.equals !== undefined
                ? {
                    equals:
                      typeof s.equals === 'string' ? (tryFill(s.equals, service) ?? s.equals) : s.equals,
                  }
                : {}),
              ...(s.equalsPath !== undefined ? { equalsPath: s.equalsPath } : {}),
            }),
            ...(s.labels !== undefined ? { labels: s.labels } : {}),
          },
        ]
      : [],
  );
}

export function declarativeTarget(
  d: DeclaredTarget,
  runtime: RuntimeChoice = { name: 'local' },
): Target & {
  unsupported(needs: readonly TargetRequirement[]): string | undefined;
} {
  const missing = d.services.filter((s) => (runtime.name === 'docker' ? s.image : s.command) === undefined);
  if (missing.length > 0)
    throw new UsageError(
      runtime.name === 'docker'
        ? `target ${d.name} on --runtime docker: ${missing.map((s) => s.name).join(', ')} declare(s) no image`
        : `target ${d.name}: ${missing.map((s) => s.name).join(', ')} declare(s) no command (an image only: use --runtime docker)`,
    );
  return {
    name: d.name,
    runtime: runtime.name,
    profile: profileOf(d),
    unsupported: (needs) => unsupportedBy(d, needs),
    shape: {
      links: d.links.map(linkName),
      services: d.services.map((s) => ({ name: s.name, role: s.role })),
    },
    start: (_topology, ctx) => startDeclared(d, ctx, runtime),
  };
}

async function startDeclared(
  d: DeclaredTarget,
  ctx: TargetContext,
  runtime: RuntimeChoice,
): Promise<StartedTarget> {
  const cleanup = createCleanup();
  const env = ctx.env ?? process.env;
  const readyMs = ctx.readyTimeoutMs ?? d.readyTimeoutMs ?? DEFAULT_READY_MS;
  try {
    if (runtime.name === 'docker') await checkImages(d);
    const tp = await openToxiproxy(ctx.toxiproxyUrl, { env });
    cleanup.add('toxiproxy', () => tp.stop());

    const wanted = d.services.flatMap((s) => (s.ports ?? []).map((p) => [s.name, p] as const));
    const free = await freePorts(wanted.length);
    const ports = new Map<string, Record<string, number>>();
    wanted.forEach(([svc, p], i) => (ports.set(svc, { ...ports.get(svc) }), (ports.get(svc)![p] = free[i]!)));

    const proxyAddress = new Map<string, string>();
    for (const l of d.links) {
      const name = linkName(l);
      const p = await tp.client.createProxy({
        name,
        listen: '127.0.0.1:0',
        upstream: `127.0.0.1:${ports.get(l.to)![l.port]!}`,
        enabled: true,
      });
      proxyAddress.set(name, p.listen);
      cleanup.add(`proxy ${name}`, () => p.remove());
    }

    const values = (s: ServiceDeclaration): TemplateValues => ({
      name: s.name,
      dataDir: join(ctx.runDir, 'data', s.name),
      runDir: ctx.runDir,
      ports: ports.get(s.name) ?? {},
      portsOf: (name) => ports.get(name),
      linkAddress: (name) => proxyAddress.get(name),
    });
    const handles = new Map<string, DeclaredHandle>();
    /** What each service's readiness waits for, filled in, for messages. */
    const awaited = new Map<string, string>();
    for (const s of d.services) {
      const svc =
        runtime.name === 'docker'
          ? containerDeclaredService(s, values(s), env, readyMs, ctx.runDir, cleanup)
          : declaredService(s, values(s), env, readyMs, ctx.runDir, cleanup);
      handles.set(s.name, svc.handle);
      awaited.set(s.name, svc.awaited);
      if (s.dataLoss === 'survives') {
        // data-loss-restart: stopped, its data dir gone, started again (an empty one is made at start).
        const h = svc.handle;
        const dir = values(s).dataDir;
        h.restartWithoutData = async () => {
          await h.stop();
          rmSync(dir, { recursive: true, force: true });
          await h.start();
        };
      }
    }

    const startAll = async (which: (s: ServiceDeclaration) => boolean): Promise<void> => {
      const todo = d.services.filter((s) => which(s) && !handles.get(s.name)!.isRunning());
      const done = new Set(d.services.filter((s) => !todo.includes(s)).map((s) => s.name));
      while (todo.length > 0) {
        const wave = todo.filter((s) => (s.startAfter ?? []).every((a) => done.has(a)));
        if (wave.length === 0)
          throw new UsageError(
            `${d.name}: startAfter makes a cycle among ${todo.map((s) => s.name).join(', ')}`,
          );
        const started = await Promise.allSettled(wave.map((s) => handles.get(s.name)!.start()));
        const failed = started.flatMap((r, i) =>
          r.status === 'rejected' ? [[wave[i]!, r.reason as unknown] as const] : [],
        );
        if (failed.length > 0) {
          const [s, reason] = failed[0]!;
          throw new UsageError(
            `target ${d.name}: service ${s.name} did not become ready (${awaited.get(s.name)}): ${reason instanceof Error ? reason.message : String(reason)}`,
          );
        }
        for (const s of wave) {
          done.add(s.name);
          todo.splice(todo.indexOf(s), 1);
        }
      }
    };
    const deferred = (s: ServiceDeclaration): boolean =>
      ctx.deferProcessors === true && s.role === 'processor';
    await startAll((s) => !deferred(s));

    const api = clientApiOf(d);
    const ingressUrls = d.links
      .filter((l) => l.from === 'client')
      .map((l) => `http://${proxyAddress.get(linkName(l))!}`);
    if (ctx.deferProcessors !== true && d.client.probe !== false)
      for (const url of ingressUrls) await probeClient(d, url, api, readyMs);

    // Native signals come straight from the services' own /metrics (the scraper keeps limbo_*).
    const renames = renamesOf(d);
    const byName = new Map(d.services.map((s) => [s.name, s]));
    const asked = (name: string): AskedService => {
      const s = byName.get(name)!;
      return { values: values(s), metricsUrl: handles.get(name)!.metricsUrl() };
    };
    const json = jsonSignalsOf(d, (name) => values(byName.get(name)!));
    const lead = d.leadership;
    const derived =
      lead !== undefined && derivedSignalsOf(d).length > 0
        ? startLeadershipSignals({
            services: () =>
              d.services
                .filter((s) => s.role === 'processor' && handles.get(s.name)!.isRunning())
                .map((s) => s.name),
            ask: (name) => askLeader(lead, asked(name), env),
            intervalMs: 'command' in lead ? LEADERSHIP_COMMAND_POLL_MS : LEADERSHIP_POLL_MS,
            only: derivedSignalsOf(d),
          })
        : undefined;
    if (derived !== undefined) cleanup.add('leadership signals', () => Promise.resolve(derived.stop()));
    const bridge = await startSignalBridge(
      () => [...handles.values()].filter((h) => h.isRunning()),
      renames,
      { json, ...(derived !== undefined ? { derived: [derived] } : {}) },
    );
    cleanup.add('signal bridge', () => bridge.stop());
    const bridged = Object.keys(renames).length > 0 || json.length > 0 || derived !== undefined;
    const leaderNow = async (partition: number): Promise<string | undefined> => {
      if (lead === undefined) throw new TargetError(`${d.name} declares no leadership`);
      const running = d.services.filter((s) => s.role === 'processor' && handles.get(s.name)!.isRunning());
      const answers = await Promise.all(running.map((s) => askLeader(lead, asked(s.name), env)));
      // Several may say "I" while leadership moves; the first asked wins.
      const i = answers.findIndex((a) => a !== undefined && leads(lead, a, partition));
      return i < 0 ? undefined : running[i]!.name;
    };

    const links: Record<string, string> = {};
    const linkKinds: Record<string, string> = {};
    for (const l of d.links) {
      links[linkName(l)] = linkName(l);
      if (l.kind !== undefined) linkKinds[linkName(l)] = l.kind;
    }
    const stop = (): Promise<void> => cleanup.runAll();
    return {
      name: d.name,
      runtime: runtime.name,
      toxiproxyDescription: tp.description ?? 'Toxiproxy',
      ingressUrls,
      links,
      linkKinds,
      ports: Object.fromEntries(ports),
      toxiproxy: tp.client,
      toxiproxyUrl: tp.url,
      services: handles,
      extraMetricsUrls: () => ({
        toxiproxy: `${tp.url.replace(/\/$/, '')}/metrics`,
        ...(bridged ? { signals: bridge.metricsUrl } : {}),
      }),
      leaderOf: leaderNow,
      explainNoLeader: async (partition) => {
        if (lead === undefined) return `${d.name} declares no leadership`;
        const running = d.services.filter((s) => s.role === 'processor' && handles.get(s.name)!.isRunning());
        if (running.length === 0) return 'no processor is running';
        const said = await Promise.all(running.map((s) => probeLeader(lead, asked(s.name), env)));
        const how =
          'command' in lead
            ? 'the leadership command'
            : 'metric' in lead
              ? `${lead.metric}`
              : `GET ${lead.http.path}`;
        return `asked ${how} for partition ${partition}: ${running.map((s, i) => `${s.name}: ${said[i]!.said}`).join('; ')}`;
      },
      ...(d.leadershipTransfer !== undefined
        ? { transferLeadershipBoundMs: leadershipTransferBoundMs(d.leadershipTransfer) }
        : {}),
      transferLeadership: async (partition, next) => {
        const t = d.leadershipTransfer;
        if (t === undefined || lead === undefined)
          throw new TargetError(`${d.name} declares no way to transfer leadership`);
        const from = await leaderNow(partition);
        if (from === undefined)
          throw new TargetError(`${d.name}: no leader of partition ${partition} to move`);
        if (from === next) return;
        const to = byName.get(next);
        if (to === undefined) throw new TargetError(`${d.name} has no service ${next}`);
        await transferLeadership(t, values(byName.get(from)!), values(to), env, async () => {
          const a = await askLeader(lead, asked(next), env);
          return a !== undefined && leads(lead, a, partition);
        });
      },
      startProcessors: async () => {
        await startAll(deferred);
        if (d.client.probe !== false) for (const url of ingressUrls) await probeClient(d, url, api, readyMs);
      },
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (err) {
    await cleanup.runAll();
    throw err;
  }
}

/** A declared service as the runner drives it: a child process (local) or a container (docker). */
type DeclaredHandle = ServiceHandle & { start(): Promise<void> };

/**
 * A service's arguments, environment, metrics URL and readiness with its templates filled in,
 * and the wait for that readiness (one per service: it holds no state between starts).
 */
function filledIn(s: ServiceDeclaration, v: TemplateValues, readyTimeoutMs: number) {
  const args = (s.args ?? []).map((a) => fill(a, v));
  const env: Record<string, string> = {};
  for (const [k, val] of Object.entries(s.env ?? {})) env[k] = fill(val, v);
  const metrics = s.metrics === undefined ? undefined : fill(s.metrics, v);
  const ready = s.ready;
  const filled =
    'http' in ready
      ? { ...ready, http: fill(ready.http, v) }
      : 'tcp' in ready
        ? { tcp: fill(ready.tcp, v) }
        : ready;
  const waiting = waitingFor(
    filled,
    { role: s.role, node: s.name, addresses: metrics !== undefined ? { metrics } : {} },
    readyTimeoutMs,
  );
  return { args, env, metrics, ready: filled, waiting };
}

/** Before each start: a fresh data directory is wiped; either kind exists. */
function prepareDataDir(s: ServiceDeclaration, v: TemplateValues): void {
  if (s.dataDir === 'fresh') rmSync(v.dataDir, { recursive: true, force: true });
  mkdirSync(v.dataDir, { recursive: true });
}

/** Every declared image must be in the engine (there is no registry to pull from). */
async function checkImages(d: DeclaredTarget): Promise<void> {
  const engine = await dockerAvailable(10_000);
  if (!engine.ok) throw new UsageError(`--runtime docker: ${engine.reason.split('\n')[0] ?? engine.reason}`);
  for (const image of new Set(d.services.map((s) => s.image!)))
    if (!(await imageExists(engine.client, image, 10_000)))
      throw new UsageError(
        `target ${d.name}: the engine has no image ${image} (declared by ${d.services
          .filter((s) => s.image === image)
          .map((s) => s.name)
          .join(', ')}): build, load or import it into this engine first (there is no registry here)`,
      );
}

/**
 * Docker runtime: the service's image on the host network, its filled-in arguments as the
 * container's command (the image's entrypoint runs them; `command` is the local runtime's),
 * `{{dataDir}}` bind-mounted at the same path (so templates and restarts work as locally),
 * readiness by the same wait strategy, probed from the host.
 */
function containerDeclaredService(
  s: ServiceDeclaration,
  v: TemplateValues,
  env: NodeJS.ProcessEnv,
  readyTimeoutMs: number,
  runDir: string,
  cleanup: Cleanup,
): { handle: DeclaredHandle; awaited: string } {
  const f = filledIn(s, v, readyTimeoutMs);
  const w = f.waiting;
  const handle = containerService(
    {
      name: s.name,
      role: s.role,
      ...(s.stopGraceMs !== undefined ? { stopGraceMs: s.stopGraceMs } : {}),
      beforeStart: () => prepareDataDir(s, v),
      create: () =>
        startContainer({
          name: s.name,
          image: s.image!,
          command: f.args,
          env: { ...containerEnv(env), ...f.env },
          runDir,
          readyTimeoutMs,
          mounts: [{ source: v.dataDir, target: v.dataDir }],
          labels: { [LABEL_ROLE]: s.role },
          ...(w.matchReady !== undefined
            ? {
                matchReady: w.matchReady,
                readyLog: new RegExp((f.ready as { logLine: string }).logLine, 'm'),
              }
            : {}),
          ...(w.waitReady !== undefined ? { waitReady: w.waitReady } : {}),
        }),
    },
    cleanup,
  );
  return { handle, awaited: w.describe };
}

function declaredService(
  s: ServiceDeclaration,
  v: TemplateValues,
  env: NodeJS.ProcessEnv,
  readyTimeoutMs: number,
  runDir: string,
  cleanup: Cleanup,
): { handle: LocalService; awaited: string } {
  const f = filledIn(s, v, readyTimeoutMs);
  const { args, waiting: w } = f;
  const ownEnv: NodeJS.ProcessEnv = { ...env, ...f.env };
  const svc = createLocalService(
    {
      name: s.name,
      role: s.role,
      ...(s.stopGraceMs !== undefined ? { stopGraceMs: s.stopGraceMs } : {}),
      start: (logFile, onSpawn) => {
        prepareDataDir(s, v);
        return startProcess({
          name: s.name,
          command: s.command ?? '',
          args,
          env: ownEnv,
          logFile,
          onSpawn,
          readyTimeoutMs,
          ...(w.matchReady !== undefined ? { matchReady: w.matchReady } : {}),
          ...(w.waitReady !== undefined ? { waitReady: w.waitReady } : {}),
        });
      },
    },
    runDir,
    cleanup,
  );
  cleanup.add(`service ${s.name}`, () => svc.stop());
  return { handle: svc, awaited: w.describe };
}

/** The target answers a call through this client link: by its HTTP API, or by its client adapter. */
function probeClient(d: DeclaredTarget, url: string, api: ClientApi, timeoutMs: number): Promise<void> {
  return d.client.adapter !== undefined
    ? probeAdapter(d.name, url, d.client.adapter, timeoutMs)
    : probe(d.name, url, api, timeoutMs);
}

/** A call through the client adapter, on a session of its own through this link, answers ok. */
async function probeAdapter(
  target: string,
  url: string,
  adapter: ClientAdapter,
  timeoutMs: number,
): Promise<void> {
  const client = new AdapterClient(adapter, { address: new URL(url).host, url, client: -1 });
  let n = 0;
  try {
    await waitFor(
      async () => {
        const r = await client.perform(
          {
            op: 'call',
            target: { service: 'Echo', key: '', handler: 'echo' },
            body: { probe: n },
            idempotencyKey: `limbo-probe-${n++}`,
          },
          { timeoutMs: Math.min(5000, timeoutMs), traceparent: '' },
        );
        if ('stopped' in r) throw new Error(`no answer (${r.stopped})`);
        if (r.result.outcome !== 'ok') throw new Error(`${r.result.outcome}: ${r.result.error ?? ''}`);
        return true;
      },
      { what: `a call through ${adapter.name} at ${new URL(url).host}`, timeoutMs },
    );
  } catch (err) {
    throw new UsageError(`target ${target}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await client.close();
  }
}

/** One call through a client link answers 2xx, within the bound (the testbed's one wait). */
async function probe(target: string, url: string, api: ClientApi, timeoutMs: number): Promise<void> {
  let n = 0;
  const call = (): ReturnType<typeof httpProbe> => {
    const req = httpRequestOf(api, {
      op: 'call',
      target: { service: 'Echo', key: '', handler: 'echo' },
      body: { probe: n },
      idempotencyKey: `limbo-probe-${n++}`,
    });
    return httpProbe(url + req.path, {
      method: req.method,
      ...(req.body !== undefined
        ? { body: JSON.stringify(req.body), headers: { 'content-type': 'application/json' } }
        : {}),
      accept: (status, body) => (status >= 200 && status < 300) || `HTTP ${status}: ${body.slice(0, 200)}`,
    });
  };
  try {
    await waitFor(() => call()(), { what: `a call through ${url}`, timeoutMs });
  } catch (err) {
    throw new UsageError(`target ${target}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
