// Checks a declaration before anything starts, and names the bad field: unknown fields, wrong
// types, duplicate names, a link to a service that does not exist or a port it does not have,
// a placeholder that cannot be filled, a command not found on PATH, a signal that is not one
// of limbo's. Every problem is listed in one DeclarationError (exit 2), one line each; one
// mistake repeated in many fields (a wrong template in nine args) is one line naming where.
//
//   declaration ─checks─▶ [{ field, what }, …] ─groupProblems─▶ lines ─▶ DeclarationError
//                                     └ none ─▶ DeclaredTarget (describeDeclaration: its summary)
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { metricNames, serviceRoles } from '../../protocol/names.js';
import { UsageError } from '../../util/errors.js';
import { checkerFactory, checkerNames } from '../../checkers/registry.js';
import { linkName, type DeclaredTarget, type TargetDeclaration } from './declaration.js';
import { references } from './template.js';
import { checkJsonSignal, checkLeadershipTransfer } from './validate-additions.js';

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
  'stopGraceMs',
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
  'leadershipTransfer',
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
  const problems: Problem[] = [];
  const bad = (field: string, what: string): void => void problems.push({ field, what });
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
    const grace = s['stopGraceMs'];
    if (
      grace !== undefined &&
      (!Number.isInteger(grace) || (grace as number) < 0 || (grace as number) > 600_000)
    )
      bad(`${label}.stopGraceMs`, 'must be a whole number of ms from 0 to 600000');
    if (s['metrics'] !== undefined && typeof s['metrics'] !== 'string')
      bad(`${label}.metrics`, 'must be a URL');
    if (s['startAfter'] !== undefined && !isStrings(s['startAfter']))
      bad(`${label}.startAfter`, 'must be a list of service names');
    checkWait(s['ready'], `${label}.ready`, bad);
  });
  for (const [i, s] of services.entries())
    if (isObj(s) && isStrings(s['startAfter']))
      for (const d of s['startAfter']) if (!ports.has(d)) bad(`services[${i}].startAfter`, `no service ${d}`);
  const cycle = startAfterCycle(services);
  if (cycle !== undefined)
    bad('services[].startAfter', `a cycle: ${cycle.join(' → ')} (none of them could start)`);

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
  checkLeadership(x['leadership'], ports, roles, links, bad);
  if (x['leadershipTransfer'] !== undefined)
    checkLeadershipTransfer(x['leadershipTransfer'], x['leadership'] !== undefined, ports, bad);
  if (x['signals'] !== undefined) {
    if (!isObj(x['signals']))
      bad('signals', 'must map limbo signal names to { metric }, { native: true } or { missing }');
    else
      for (const [k, v] of Object.entries(x['signals'])) {
        if (!targetSignals.includes(k)) bad(`signals.${k}`, `not a limbo signal (${knownSignalsLike(k)})`);
        if (!isObj(v))
          bad(`signals.${k}`, 'must be { metric: name }, { native: true } or { missing: reason }');
        else if (typeof v['metric'] === 'string') unknownFields(v, ['metric', 'note'], `signals.${k}.`, bad);
        else if (v['json'] !== undefined) checkJsonSignal(v, `signals.${k}`, ports, bad);
        else if (typeof v['missing'] === 'string') unknownFields(v, ['missing'], `signals.${k}.`, bad);
        else if (v['native'] === true) unknownFields(v, ['native'], `signals.${k}.`, bad);
        else
          bad(
            `signals.${k}`,
            'must be { metric: name }, { json: url, path }, { native: true } or { missing: reason }',
          );
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

  // Commands are looked for whatever else is wrong, so one pass lists every problem.
  if (options.checkCommands ?? true)
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
    (options.checkCommands ?? true) &&
    isObj(lead) &&
    typeof lead['command'] === 'string' &&
    findCommand(lead['command'], options.env) === undefined
  )
    bad('leadership.command', `${lead['command']} not found (not on PATH, or not executable)`);
  const transfer = x['leadershipTransfer'];
  if (
    (options.checkCommands ?? true) &&
    isObj(transfer) &&
    typeof transfer['command'] === 'string' &&
    findCommand(transfer['command'], options.env) === undefined
  )
    bad('leadershipTransfer.command', `${transfer['command']} not found (not on PATH, or not executable)`);
  if (problems.length > 0) throw new DeclarationError(where, groupProblems(problems));
  return { ...(x as unknown as TargetDeclaration), kind: 'limbo-target-declaration' };
}

/** One problem: the field it is in and what is wrong there. */
export interface Problem {
  field: string;
  what: string;
}

const SERVICE_FIELD = /^services\[\d+\] \(([^)]*)\)\.([A-Za-z]+)/;
const MAX_PLACES = 8;
const PART_WORDS: Readonly<Record<string, string>> = {
  args: 'args',
  env: 'env entries',
  command: 'commands',
  metrics: 'metrics URLs',
  ready: 'readiness probes',
};

/**
 * One line per mistake: problems saying the same thing in several fields become one line
 * naming where (`{{link:a->b}}: no link a->b (in 9 args of services x, y)`), in first-seen order.
 */
export function groupProblems(problems: readonly Problem[]): string[] {
  const byWhat = new Map<string, string[]>();
  for (const p of problems) {
    const fields = byWhat.get(p.what);
    if (fields === undefined) byWhat.set(p.what, [p.field]);
    else if (!fields.includes(p.field)) fields.push(p.field);
  }
  return [...byWhat].map(([what, fields]) =>
    fields.length === 1 ? `${fields[0]}: ${what}` : `${what} (in ${placesOf(fields)})`,
  );
}

/** Fields in words: `9 args of services x, y; links[0].from, links[2].from`. */
function placesOf(fields: readonly string[]): string {
  const parts = new Map<string, { fields: string[]; services: Set<string> }>();
  const other: string[] = [];
  for (const f of fields) {
    const m = SERVICE_FIELD.exec(f);
    if (m === null) {
      other.push(f);
      continue;
    }
    const part = parts.get(m[2]!) ?? { fields: [], services: new Set<string>() };
    part.fields.push(f);
    part.services.add(m[1]!);
    parts.set(m[2]!, part);
  }
  const said = [...parts].flatMap(([part, p]) =>
    p.fields.length === 1
      ? p.fields
      : [
          `${p.fields.length} ${PART_WORDS[part] ?? `${part} fields`} of service${p.services.size > 1 ? 's' : ''} ${[...p.services].join(', ')}`,
        ],
  );
  said.push(...other);
  return (
    said.slice(0, MAX_PLACES).join(', ') +
    (said.length > MAX_PLACES ? ` and ${said.length - MAX_PLACES} more` : '')
  );
}

/** A cycle of startAfter among the services (names, the first repeated at the end), if any. */
function startAfterCycle(services: readonly unknown[]): string[] | undefined {
  const after = new Map<string, string[]>();
  for (const s of services)
    if (isObj(s) && typeof s['name'] === 'string')
      after.set(s['name'], isStrings(s['startAfter']) ? s['startAfter'] : []);
  const done = new Set<string>();
  const visit = (name: string, path: string[]): string[] | undefined => {
    const at = path.indexOf(name);
    if (at >= 0) return [...path.slice(at), name];
    if (done.has(name)) return undefined;
    for (const d of after.get(name) ?? []) {
      const c = visit(d, [...path, name]);
      if (c !== undefined) return c;
    }
    done.add(name);
    return undefined;
  };
  for (const name of after.keys()) {
    const c = visit(name, []);
    if (c !== undefined) return c;
  }
  return undefined;
}

/** The limbo signals of the family `name` claims (`limbo_processor_…`), else the families. */
function knownSignalsLike(name: string): string {
  const family = /^limbo_[a-z]+_/.exec(name)?.[0];
  const same = targetSignals.filter((s) => family !== undefined && s.startsWith(family));
  if (same.length > 0) return `${family}*: ${same.map((s) => s.slice(family!.length)).join(', ')}`;
  const families = [...new Set(targetSignals.map((s) => /^limbo_[a-z]+_/.exec(s)?.[0] ?? s))];
  return `known: ${families.map((f) => `${f}*`).join(', ')}; docs/architecture.md#metrics names each`;
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
  if (!isObj(c))
    return bad(
      'client',
      "say how clients call: { api: 'reference' | 'restate' | an HTTP API } or { adapter }",
    );
  unknownFields(c, ['api', 'adapter', 'probe', 'maxRatePerSec'], 'client.', bad);
  const api = c['api'];
  const adapter = c['adapter'];
  if (adapter !== undefined) {
    if (api !== undefined) bad('client', 'give either api (HTTP) or adapter (any protocol), not both');
    if (!isObj(adapter) || adapter['kind'] !== 'limbo-client-adapter')
      bad('client.adapter', 'must be made with defineClientAdapter({ name, connect })');
    else {
      if (typeof adapter['name'] !== 'string') bad('client.adapter.name', 'must be a string');
      if (typeof adapter['connect'] !== 'function') bad('client.adapter.connect', 'must be a function');
      if (adapter['invocationIdFor'] !== undefined && typeof adapter['invocationIdFor'] !== 'function')
        bad('client.adapter.invocationIdFor', 'must be a function');
    }
  } else if (api !== 'reference' && api !== 'restate') {
    if (!isObj(api))
      bad('client.api', "must be 'reference', 'restate' or an HTTP API object (or give adapter)");
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
  links: ReadonlySet<string>,
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
    unknownFields(l, ['command', 'args', 'leaderWhen', 'noAnswerExit'], 'leadership.', bad);
    if (typeof l['command'] !== 'string' || l['command'] === '')
      bad('leadership.command', 'must be a program name or path');
    const noAnswer = l['noAnswerExit'];
    if (
      noAnswer !== undefined &&
      (!Number.isInteger(noAnswer) || (noAnswer as number) < 1 || (noAnswer as number) > 255)
    )
      bad('leadership.noAnswerExit', 'must be an exit code from 1 to 255');
    const args = l['args'];
    if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string')))
      bad('leadership.args', 'must be a list of strings');
    else
      for (const a of (args as string[] | undefined) ?? [])
        for (const ref of references(a)) {
          if (typeof ref === 'string') bad('leadership.args', ref);
          else if (ref.kind === 'port' && ![...ports.values()].some((p) => p.has(ref.port)))
            bad('leadership.args', `{{port:${ref.port}}}: no service has a port ${ref.port}`);
          else if (ref.kind === 'addr' && !(ports.get(ref.service)?.has(ref.port) ?? false))
            bad('leadership.args', `{{addr:${ref.service}.${ref.port}}}: no such service port`);
          else if (ref.kind === 'link' && !links.has(ref.link))
            bad(
              'leadership.args',
              `{{link:${ref.link}}}: no link ${ref.link} (have ${[...links].join(', ')})`,
            );
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

/**
 * A sound declaration in one line, for `limbo validate`: its services, links, the commands
 * found (and where), the client, who leads, its signals and the checks it calls inapplicable.
 */
export function describeDeclaration(d: DeclaredTarget, env: NodeJS.ProcessEnv = process.env): string {
  const commands = [
    ...new Set(
      [
        ...d.services.map((s) => s.command),
        d.leadership !== undefined && 'command' in d.leadership ? d.leadership.command : undefined,
        d.leadershipTransfer?.command,
      ].filter((c): c is string => c !== undefined),
    ),
  ];
  const found = commands.map((c) => {
    const at = findCommand(c, env);
    return at === undefined || at === c ? c : `${c} (${at})`;
  });
  const api = d.client.api;
  const client =
    d.client.adapter !== undefined
      ? `adapter ${d.client.adapter.name}`
      : typeof api === 'string'
        ? `${api} API`
        : `HTTP API ${api?.name ?? '?'}`;
  const lead = d.leadership;
  const leads =
    lead === undefined
      ? 'no leadership'
      : 'metric' in lead
        ? `leadership by metric ${lead.metric}`
        : 'command' in lead
          ? `leadership by command ${lead.command}`
          : `leadership by http port ${lead.http.port} ${lead.http.path}`;
  const signals = Object.values(d.signals ?? {});
  const missing = signals.filter((s) => 'missing' in s).length;
  return [
    `${d.name}: ${d.services.length} service${d.services.length === 1 ? '' : 's'} (${d.services.map((s) => `${s.name} ${s.role}`).join(', ')})`,
    `${d.links.length} link${d.links.length === 1 ? '' : 's'} (${d.links.map(linkName).join(', ')})`,
    commands.length > 0 ? `commands found: ${found.join(', ')}` : 'no commands (images only)',
    `client: ${client}`,
    leads + (d.leadershipTransfer !== undefined ? ' with a transfer command' : ''),
    `${signals.length - missing} signal(s) mapped, ${missing} declared missing`,
    ...(Object.keys(d.inapplicableChecks ?? {}).length > 0
      ? [`inapplicable: ${Object.keys(d.inapplicableChecks ?? {}).join(', ')}`]
      : []),
    ...(d.slo !== undefined ? ['service levels declared'] : []),
  ].join('; ');
}
