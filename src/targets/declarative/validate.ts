// Checks a declaration before anything starts, and names the bad field: unknown fields, wrong
// types, duplicate names, a link to a service that does not exist or a port it does not have,
// a placeholder that cannot be filled, a command not found on PATH, a signal that is not one
// of limbo's. Every problem is listed; the first few go in one DeclarationError (exit 2).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { metricNames, serviceRoles } from '../../protocol/names.js';
import { UsageError } from '../../util/errors.js';
import { checkerFactory, checkerNames } from '../../checkers/registry.js';
import { linkName, type DeclaredTarget, type TargetDeclaration } from './declaration.js';
import { references } from './template.js';

export class DeclarationError extends UsageError {
  constructor(
    readonly where: string,
    readonly problems: readonly string[],
  ) {
    super(`${where}: ${problems.length === 1 ? problems[0] : `\n  ${problems.join('\n  ')}`}`);
  }
}

/** Canonical signals a target may map; the runner's own are served whatever the target. */
export const targetSignals: readonly string[] = Object.values(metricNames).filter(
  (n) => n !== metricNames.faultActive && n !== metricNames.workloadPending,
);

const SERVICE_FIELDS = [
  'name',
  'role',
  'command',
  'args',
  'env',
  'image',
  'ports',
  'dataDir',
  'dataLoss',
  'ready',
  'metrics',
  'startAfter',
];
const TOP_FIELDS = [
  'kind',
  'name',
  'about',
  'services',
  'links',
  'client',
  'leadership',
  'signals',
  'inapplicableChecks',
  'readyTimeoutMs',
  'slo',
];
const NAME = /^[A-Za-z0-9_-]+$/;

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');

/** Where a program would be found, or undefined. */
export function findCommand(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const executable = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return executable(command) ? command : undefined;
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const p = join(dir, command);
    if (executable(p)) return p;
  }
  return undefined;
}

export interface ValidateOptions {
  /** Check that every command is found (default true; false to validate on a machine without it). */
  checkCommands?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** The declaration if it is sound; else a DeclarationError listing every problem. */
export function validateDeclaration(
  x: unknown,
  where: string,
  options: ValidateOptions = {},
): DeclaredTarget {
  const problems: string[] = [];
  const bad = (field: string, what: string): void => void problems.push(`${field}: ${what}`);
  if (!isObj(x)) throw new DeclarationError(where, ['the default export must be defineTarget({...})']);
  unknownFields(x, TOP_FIELDS, '', bad);
  if (typeof x['name'] !== 'string' || !/^[A-Za-z0-9._:-]+$/.test(x['name']))
    bad('name', "must be letters, digits, '.', '_', ':' or '-'");
  if (typeof x['about'] !== 'string' || x['about'].trim() === '') bad('about', 'say what the system is');
  if (x['readyTimeoutMs'] !== undefined && !positive(x['readyTimeoutMs']))
    bad('readyTimeoutMs', 'must be a positive number of ms');

  // services
  const ports = new Map<string, Set<string>>();
  const roles = new Set<string>();
  const services = Array.isArray(x['services']) ? x['services'] : [];
  if (!Array.isArray(x['services']) || services.length === 0) bad('services', 'list at least one service');
  services.forEach((s: unknown, i) => {
    const at = `services[${i}]`;
    if (!isObj(s)) return bad(at, 'must be an object');
    const label = typeof s['name'] === 'string' ? `${at} (${s['name']})` : at;
    unknownFields(s, SERVICE_FIELDS, `${label}.`, bad);
    const name = s['name'];
    if (typeof name !== 'string' || !NAME.test(name) || name === 'client')
      bad(`${at}.name`, "must be letters, digits, '-' or '_' (and not 'client')");
    else if (ports.has(name)) bad(`${at}.name`, `${name} is declared twice`);
    else ports.set(name, new Set(isStrings(s['ports']) ? s['ports'] : []));
    if (!(serviceRoles as readonly unknown[]).includes(s['role']))
      bad(`${label}.role`, `must be one of ${serviceRoles.join(', ')} (got ${JSON.stringify(s['role'])})`);
    else roles.add(s['role'] as string);
    if (s['command'] === undefined && s['image'] === undefined)
      bad(label, 'give a command (local runtime) or an image (docker runtime)');
    if (s['command'] !== undefined && (typeof s['command'] !== 'string' || s['command'] === ''))
      bad(`${label}.command`, 'must be a program name or path');
    if (s['image'] !== undefined && typeof s['image'] !== 'string') bad(`${label}.image`, 'must be a string');
    if (s['args'] !== undefined && !isStrings(s['args'])) bad(`${label}.args`, 'must be a list of strings');
    if (
      s['env'] !== undefined &&
      !(isObj(s['env']) && Object.values(s['env']).every((v) => typeof v === 'string'))
    )
      bad(`${label}.env`, 'must map names to strings');
    if (s['ports'] !== undefined && !(isStrings(s['ports']) && s['ports'].every((p) => NAME.test(p))))
      bad(`${label}.ports`, 'must be a list of port names');
    if (s['dataDir'] !== undefined && s['dataDir'] !== 'keep' && s['dataDir'] !== 'fresh')
      bad(`${label}.dataDir`, "must be 'keep' or 'fresh'");
    if (s['dataLoss'] !== undefined && s['dataLoss'] !== 'survives')
      bad(`${label}.dataLoss`, "must be 'survives' (or absent: the service cannot lose its data)");
    if (s['metrics'] !== undefined && typeof s['metrics'] !== 'string')
      bad(`${label}.metrics`, 'must be a URL');
    if (s['startAfter'] !== undefined && !isStrings(s['startAfter']))
      bad(`${label}.startAfter`, 'must be a list of service names');
    checkWait(s['ready'], `${label}.ready`, bad);
  });
  for (const [i, s] of services.entries())
    if (isObj(s) && isStrings(s['startAfter']))
      for (const d of s['startAfter']) if (!ports.has(d)) bad(`services[${i}].startAfter`, `no service ${d}`);

  // links
  const links = new Set<string>();
  const list = Array.isArray(x['links']) ? x['links'] : [];
  if (!Array.isArray(x['links'])) bad('links', 'must be a list (empty if nothing is proxied)');
  list.forEach((l: unknown, i) => {
    const at = `links[${i}]`;
    if (!isObj(l)) return bad(at, 'must be an object');
    unknownFields(l, ['from', 'to', 'port', 'kind'], `${at}.`, bad);
    const { from, to, port, kind } = l;
    if (kind !== undefined && (typeof kind !== 'string' || !/^[A-Za-z0-9_-]+$/.test(kind)))
      bad(`${at}.kind`, 'must be a word (letters, digits, - or _), e.g. client, peer, storage');
    if (typeof from !== 'string' || (from !== '*' && from !== 'client' && !ports.has(from)))
      bad(`${at}.from`, `no service ${String(from)} (have ${[...ports.keys()].join(', ')}, client, *)`);
    if (typeof to !== 'string' || !ports.has(to))
      return bad(`${at}.to`, `no service ${String(to)} (have ${[...ports.keys()].join(', ')})`);
    if (typeof port !== 'string' || !ports.get(to)!.has(port))
      bad(
        `${at}.port`,
        `${to} has no port ${String(port)} (its ports: ${[...ports.get(to)!].join(', ') || 'none'})`,
      );
    const name = linkName({ from: String(from), to });
    if (links.has(name)) bad(at, `link ${name} is declared twice`);
    links.add(name);
  });
  if (![...links].some((l) => l.startsWith('client->')))
    bad('links', 'declare at least one link from client (how the workload reaches the system)');

  // placeholders, now that every service, port and link is known
  services.forEach((s: unknown, i) => {
    if (!isObj(s) || typeof s['name'] !== 'string') return;
    const own = ports.get(s['name']) ?? new Set<string>();
    const texts: [string, string][] = [];
    if (isStrings(s['args'])) s['args'].forEach((a, j) => texts.push([`args[${j}]`, a]));
    if (isObj(s['env'])) for (const [k, v] of Object.entries(s['env'])) texts.push([`env.${k}`, String(v)]);
    if (typeof s['metrics'] === 'string') texts.push(['metrics', s['metrics']]);
    const ready = s['ready'];
    if (isObj(ready))
      for (const k of ['http', 'tcp'] as const)
        if (typeof ready[k] === 'string') texts.push([`ready.${k}`, ready[k]]);
    for (const [field, text] of texts)
      for (const ref of references(text)) {
        const f = `services[${i}] (${s['name']}).${field}`;
        if (typeof ref === 'string') bad(f, ref);
        else if (ref.kind === 'port' && !own.has(ref.port))
          bad(f, `{{port:${ref.port}}}: ${s['name']} has no port ${ref.port}`);
        else if (ref.kind === 'addr' && !(ports.get(ref.service)?.has(ref.port) ?? false))
          bad(f, `{{addr:${ref.service}.${ref.port}}}: no such service port`);
        else if (ref.kind === 'link' && !links.has(ref.link))
          bad(f, `{{link:${ref.link}}}: no link ${ref.link} (have ${[...links].join(', ')})`);
      }
  });

  checkClient(x['client'], bad);
  checkLeadership(x['leadership'], ports, roles, bad);
  if (x['signals'] !== undefined) {
    if (!isObj(x['signals']))
      bad('signals', 'must map limbo signal names to { metric }, { native: true } or { missing }');
    else
      for (const [k, v] of Object.entries(x['signals'])) {
        if (!targetSignals.includes(k))
          bad(`signals.${k}`, `not a limbo signal (known: ${targetSignals.join(', ')})`);
        if (!isObj(v))
          bad(`signals.${k}`, 'must be { metric: name }, { native: true } or { missing: reason }');
        else if (typeof v['metric'] === 'string') unknownFields(v, ['metric', 'note'], `signals.${k}.`, bad);
        else if (typeof v['missing'] === 'string') unknownFields(v, ['missing'], `signals.${k}.`, bad);
        else if (v['native'] === true) unknownFields(v, ['native'], `signals.${k}.`, bad);
        else bad(`signals.${k}`, 'must be { metric: name }, { native: true } or { missing: reason }');
      }
  }

  if (x['inapplicableChecks'] !== undefined) {
    if (!isObj(x['inapplicableChecks']))
      bad('inapplicableChecks', 'must map check names to the reason they do not apply');
    else
      for (const [k, v] of Object.entries(x['inapplicableChecks'])) {
        if (checkerFactory(k) === undefined)
          bad(`inapplicableChecks.${k}`, `not a limbo check (known: ${checkerNames().join(', ')})`);
        if (typeof v !== 'string' || v.trim() === '')
          bad(`inapplicableChecks.${k}`, 'must be the reason it does not apply (a non-empty string)');
      }
  }

  if (x['slo'] !== undefined) {
    const slo = x['slo'];
    if (!isObj(slo))
      bad('slo', 'must be { failoverMs, p99DuringFaultMs, recoveryAfterHealMs } (numbers of ms)');
    else {
      unknownFields(
        slo,
        [
          'failoverMs',
          'p99DuringFaultMs',
          'recoveryAfterHealMs',
          'latencyCrossings',
          'silentPeerDetectionMs',
          'basis',
        ],
        'slo.',
        bad,
      );
      for (const k of ['failoverMs', 'p99DuringFaultMs', 'recoveryAfterHealMs'])
        if (!positive(slo[k])) bad(`slo.${k}`, 'must be a positive number of ms');
      if (slo['silentPeerDetectionMs'] !== undefined && !positive(slo['silentPeerDetectionMs']))
        bad('slo.silentPeerDetectionMs', 'must be a positive number of ms');
      if (slo['latencyCrossings'] !== undefined && !positive(slo['latencyCrossings']))
        bad('slo.latencyCrossings', 'must be a positive number');
      if (slo['basis'] !== undefined && typeof slo['basis'] !== 'string')
        bad('slo.basis', 'must be a sentence');
    }
  }

  if (problems.length === 0 && (options.checkCommands ?? true))
    services.forEach((s: unknown, i) => {
      if (!isObj(s) || typeof s['command'] !== 'string') return;
      if (findCommand(s['command'], options.env) === undefined)
        bad(
          `services[${i}] (${String(s['name'])}).command`,
          `${s['command']} not found (not on PATH, or not executable)`,
        );
    });
  const lead = x['leadership'];
  if (
    problems.length === 0 &&
    (options.checkCommands ?? true) &&
    isObj(lead) &&
    typeof lead['command'] === 'string' &&
    findCommand(lead['command'], options.env) === undefined
  )
    bad('leadership.command', `${lead['command']} not found (not on PATH, or not executable)`);
  if (problems.length > 0) throw new DeclarationError(where, problems);
  return { ...(x as unknown as TargetDeclaration), kind: 'limbo-target-declaration' };
}

function unknownFields(
  o: Obj,
  known: readonly string[],
  prefix: string,
  bad: (f: string, w: string) => void,
): void {
  for (const k of Object.keys(o))
    if (!known.includes(k))
      bad(`${prefix}${k}`, `unknown field (known: ${known.filter((f) => f !== 'kind').join(', ')})`);
}

const positive = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v > 0;

function checkWait(w: unknown, at: string, bad: (f: string, w: string) => void): void {
  if (!isObj(w))
    return bad(at, 'say how readiness shows: { http: url } | { tcp: host:port } | { logLine: regex }');
  const kinds = ['http', 'tcp', 'logLine'].filter((k) => w[k] !== undefined);
  if (kinds.length !== 1) return bad(at, 'exactly one of http, tcp, logLine');
  const kind = kinds[0]!;
  if (typeof w[kind] !== 'string') return bad(`${at}.${kind}`, 'must be a string');
  if (kind === 'http') unknownFields(w, ['http', 'method', 'body', 'status', 'bodyIncludes'], `${at}.`, bad);
  else unknownFields(w, [kind], `${at}.`, bad);
  if (kind === 'logLine')
    try {
      new RegExp(w[kind]);
    } catch (err) {
      bad(`${at}.logLine`, `not a regular expression: ${err instanceof Error ? err.message : String(err)}`);
    }
}

function checkClient(c: unknown, bad: (f: string, w: string) => void): void {
  if (!isObj(c)) return bad('client', "say how clients call: { api: 'reference' | 'restate' | an adapter }");
  unknownFields(c, ['api', 'probe', 'maxRatePerSec'], 'client.', bad);
  const api = c['api'];
  if (api !== 'reference' && api !== 'restate') {
    if (!isObj(api)) bad('client.api', "must be 'reference', 'restate' or a client adapter object");
    else
      for (const f of [
        'name',
        'invocationIdFor',
        'callPath',
        'sendPath',
        'attachPath',
        'idFrom',
        'counterValue',
      ] as const)
        if (f === 'name' ? typeof api[f] !== 'string' : typeof api[f] !== 'function')
          bad(`client.api.${f}`, f === 'name' ? 'must be a string' : 'must be a function');
  }
  if (c['probe'] !== undefined && c['probe'] !== false) bad('client.probe', 'false, or leave it out');
  if (c['maxRatePerSec'] !== undefined && !positive(c['maxRatePerSec']))
    bad('client.maxRatePerSec', 'must be a positive number');
}

function checkLeadership(
  l: unknown,
  ports: ReadonlyMap<string, ReadonlySet<string>>,
  roles: ReadonlySet<string>,
  bad: (f: string, w: string) => void,
): void {
  if (l === undefined) return;
  if (!isObj(l)) return bad('leadership', 'must be an object');
  if (!roles.has('processor'))
    bad('leadership', 'no service has the role processor (the ones asked who leads)');
  if (l['metric'] !== undefined) {
    unknownFields(l, ['metric', 'partitionLabel'], 'leadership.', bad);
    if (typeof l['metric'] !== 'string') bad('leadership.metric', 'must be a metric name');
    if (l['partitionLabel'] !== undefined && typeof l['partitionLabel'] !== 'string')
      bad('leadership.partitionLabel', 'must be a label name');
    return;
  }
  if (l['command'] !== undefined) {
    unknownFields(l, ['command', 'args', 'leaderWhen'], 'leadership.', bad);
    if (typeof l['command'] !== 'string' || l['command'] === '')
      bad('leadership.command', 'must be a program name or path');
    const args = l['args'];
    if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string')))
      bad('leadership.args', 'must be a list of strings');
    else
      for (const a of (args as string[] | undefined) ?? [])
        for (const ref of references(a)) {
          if (typeof ref === 'string') bad('leadership.args', ref);
          else if (ref.kind === 'port' && ![...ports.values()].some((p) => p.has(ref.port)))
            bad('leadership.args', `{{port:${ref.port}}}: no service has a port ${ref.port}`);
        }
    if (l['leaderWhen'] !== undefined) checkLeaderWhen(l['leaderWhen'], bad);
    return;
  }
  unknownFields(l, ['http', 'leaderWhen'], 'leadership.', bad);
  const h = l['http'];
  if (!isObj(h)) return bad('leadership', 'give http: { port, path } with leaderWhen, a command, or metric');
  unknownFields(h, ['port', 'path', 'method', 'body'], 'leadership.http.', bad);
  if (typeof h['port'] !== 'string') bad('leadership.http.port', 'must name a port');
  else if (![...ports.values()].some((p) => p.has(h['port'] as string)))
    bad('leadership.http.port', `no service has a port ${h['port']}`);
  if (typeof h['path'] !== 'string' || !h['path'].startsWith('/'))
    bad('leadership.http.path', 'must start with /');
  checkLeaderWhen(l['leaderWhen'], bad);
}

function checkLeaderWhen(w: unknown, bad: (f: string, w: string) => void): void {
  if (!isObj(w) || typeof w['jsonPath'] !== 'string')
    return bad('leadership.leaderWhen', 'must be { jsonPath, equalsJsonPath } or { jsonPath, equals }');
  unknownFields(w, ['jsonPath', 'equalsJsonPath', 'equals'], 'leadership.leaderWhen.', bad);
  if (w['equalsJsonPath'] === undefined && w['equals'] === undefined)
    bad('leadership.leaderWhen', 'give equalsJsonPath or equals');
}
