// Validation of the declaration's JSON signals and leadership transfer, called by validate.ts
// beside its own checks: each problem is reported through `bad(field, what)` so a mistake
// exits 2 naming the field before anything starts.
import { withoutTransferPlaceholders, transferPorts } from './leadership-transfer.js';
import { references } from './template.js';

type Obj = Record<string, unknown>;
type Bad = (field: string, what: string) => void;
type Ports = ReadonlyMap<string, ReadonlySet<string>>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

const JSON_FIELDS = ['json', 'path', 'equals', 'equalsPath', 'labels', 'note'];

/** Every placeholder of `text` is one, and each port it names is some service's. */
function checkTemplates(text: string, field: string, ports: Ports, bad: Bad): void {
  for (const ref of references(text)) {
    if (typeof ref === 'string') bad(field, ref);
    else if (ref.kind === 'port' && ![...ports.values()].some((p) => p.has(ref.port)))
      bad(field, `{{port:${ref.port}}}: no service has a port ${ref.port}`);
    else if (ref.kind === 'addr' && ports.get(ref.service)?.has(ref.port) !== true)
      bad(field, `{{addr:${ref.service}.${ref.port}}}: no service ${ref.service} with a port ${ref.port}`);
  }
}

/** `signals.NAME: { json, path, … }`. */
export function checkJsonSignal(v: Obj, at: string, ports: Ports, bad: Bad): void {
  for (const k of Object.keys(v)) if (!JSON_FIELDS.includes(k)) bad(`${at}.${k}`, 'unknown field');
  if (typeof v['json'] !== 'string' || !/^https?:\/\//.test(v['json']))
    bad(`${at}.json`, 'must be an http:// URL (templated, e.g. http://127.0.0.1:{{port:monitor}}/varz)');
  else checkTemplates(v['json'], `${at}.json`, ports, bad);
  if (typeof v['path'] !== 'string' || v['path'].trim() === '')
    bad(
      `${at}.path`,
      'must be a path into the JSON answer, e.g. meta_cluster.leader or streams.0.state.messages',
    );
  if (v['equals'] !== undefined && v['equalsPath'] !== undefined)
    bad(at, 'give equals or equalsPath, not both');
  if (typeof v['equals'] === 'string') checkTemplates(v['equals'], `${at}.equals`, ports, bad);
  if (v['equalsPath'] !== undefined && typeof v['equalsPath'] !== 'string')
    bad(`${at}.equalsPath`, 'must be a path into the JSON answer');
  const labels = v['labels'];
  if (labels !== undefined && (!isObj(labels) || Object.values(labels).some((x) => typeof x !== 'string')))
    bad(`${at}.labels`, 'must map label names to strings');
}

/** `leadershipTransfer: { command, args, timeoutMs }`. */
export function checkLeadershipTransfer(t: unknown, hasLeadership: boolean, ports: Ports, bad: Bad): void {
  const at = 'leadershipTransfer';
  if (!isObj(t)) return bad(at, 'must be { command, args } (run to move leadership)');
  for (const k of Object.keys(t))
    if (!['command', 'args', 'timeoutMs'].includes(k)) bad(`${at}.${k}`, 'unknown field');
  if (!hasLeadership) bad(at, 'needs leadership (the probe that says who leads, and that it moved)');
  if (typeof t['command'] !== 'string' || t['command'] === '')
    bad(`${at}.command`, 'must be a program name or path');
  const args = t['args'];
  if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string')))
    bad(`${at}.args`, 'must be a list of strings');
  else
    for (const a of (args as string[] | undefined) ?? []) {
      for (const [who, port] of transferPorts(a))
        if (![...ports.values()].some((p) => p.has(port)))
          bad(`${at}.args`, `{{${who}:${port}}}: no service has a port ${port}`);
      checkTemplates(withoutTransferPlaceholders(a), `${at}.args`, ports, bad);
    }
  const timeoutMs = t['timeoutMs'];
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !(timeoutMs > 0)))
    bad(`${at}.timeoutMs`, 'must be a positive number of ms');
}
