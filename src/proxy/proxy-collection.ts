// The server's proxies by name, and the operations the API performs on them (Toxiproxy's
// ProxyCollection + ToxicCollection). Every mutation runs alone, in arrival order.
import { ApiError } from './api-error.js';
import { badBody, decodeInto } from './go-json.js';
import { Proxy, type ProxyHooks, type ProxyJson } from './proxy.js';
import type { Direction, ToxicConfig, ToxicDefinition } from './toxic.js';
import { resolveTcpAddress } from './resolve-address.js';
import { toxicRegistry } from './toxics/registry.js';

export interface ToxicJson {
  attributes: Record<string, number>;
  name: string;
  type: string;
  stream: Direction;
  toxicity: number;
}
export interface ProxyWithToxicsJson extends ProxyJson {
  toxics: ToxicJson[];
}

export function toxicJson(t: ToxicConfig): ToxicJson {
  return {
    attributes: { ...t.attributes },
    name: t.name,
    type: t.type,
    stream: t.stream,
    toxicity: t.toxicity,
  };
}

export function proxyJson(p: Proxy): ProxyWithToxicsJson {
  const ordered = [
    ...p.toxics.filter((t) => t.stream === 'upstream'),
    ...p.toxics.filter((t) => t.stream === 'downstream'),
  ];
  return { ...p.toJson(), toxics: ordered.map(toxicJson) };
}

interface ProxyInput {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
}
const proxyFields = { name: 'string', listen: 'string', upstream: 'string', enabled: 'bool' } as const;

function parseStream(value: string): Direction {
  const lower = value.toLowerCase();
  if (lower === 'upstream' || lower === 'downstream') return lower;
  throw new ApiError(400, 'stream was invalid, can be either upstream or downstream');
}

export class ProxyCollection {
  private readonly proxies = new Map<string, Proxy>();
  private lock: Promise<unknown> = Promise.resolve();

  constructor(private readonly hooks: ProxyHooks) {}

  /** Runs `op` after every earlier mutation has finished. */
  exclusive<T>(op: () => Promise<T>): Promise<T> {
    const next = this.lock.then(op);
    this.lock = next.catch(() => {});
    return next;
  }

  all(): Proxy[] {
    return [...this.proxies.values()];
  }

  get(name: string): Proxy {
    const p = this.proxies.get(name);
    if (!p) throw new ApiError(404, 'proxy not found');
    return p;
  }

  async create(body: unknown): Promise<Proxy> {
    const input: ProxyInput = { name: '', listen: '', upstream: '', enabled: true };
    decodeInto(body, proxyFields, 'proxy.Proxy', input as unknown as Record<string, unknown>);
    if (input.name === '') throw new ApiError(400, 'missing required field: name');
    if (input.upstream === '') throw new ApiError(400, 'missing required field: upstream');
    if (this.proxies.has(input.name)) throw new ApiError(409, 'proxy already exists');
    return this.add(input);
  }

  async populate(body: unknown): Promise<{ proxies: Proxy[]; error?: ApiError }> {
    if (!Array.isArray(body)) {
      if (body === null) return { proxies: [] };
      throw badBody(`json: cannot unmarshal ${typeof body} into Go value of type []proxy.Proxy`);
    }
    const inputs: ProxyInput[] = body.map((entry: unknown) => {
      const input: ProxyInput = { name: '', listen: '', upstream: '', enabled: true };
      decodeInto(entry, proxyFields, 'proxy.Proxy', input as unknown as Record<string, unknown>);
      return input;
    });
    inputs.forEach((input, i) => {
      if (input.name === '') throw new ApiError(400, `missing required field: name at proxy ${i + 1}`);
      if (input.upstream === '')
        throw new ApiError(400, `missing required field: upstream at proxy ${i + 1}`);
    });
    // Extension: each entry may carry `toxics` (ignored by 2.12); all are checked before
    // anything changes, and a proxy starts listening with its toxics already in place.
    const toxicLists = body.map((entry: unknown, i) => this.parseEntryToxics(entry, i));
    const created: Proxy[] = [];
    for (const [i, input] of inputs.entries()) {
      const toxics = toxicLists[i] ?? [];
      try {
        const existing = this.proxies.get(input.name);
        if (existing && !(await differs(existing, input))) {
          if (toxics.length > 0 && !sameToxics(existing.toxics, toxics)) {
            await existing.removeAllToxics();
            for (const t of toxics) await existing.addToxic(t);
          }
          created.push(existing);
          continue;
        }
        if (existing) await this.remove(existing.name);
        created.push(await this.add(input, toxics));
      } catch (err) {
        if (err instanceof ApiError) return { proxies: created, error: err };
        throw err;
      }
    }
    return { proxies: created };
  }

  async update(name: string, body: unknown): Promise<Proxy> {
    const proxy = this.get(name);
    const input: ProxyInput = {
      name,
      listen: proxy.listen,
      upstream: proxy.upstream,
      enabled: proxy.enabled,
    };
    decodeInto(body, proxyFields, 'proxy.Proxy', input as unknown as Record<string, unknown>);
    if (await differs(proxy, input)) {
      await proxy.stop();
      proxy.listen = input.listen;
      proxy.upstream = input.upstream;
    }
    if (input.enabled && !proxy.enabled) await proxy.start();
    if (!input.enabled && proxy.enabled) await proxy.stop();
    this.hooks.logger.info('proxy updated', { ...proxy.toJson() });
    return proxy;
  }

  async remove(name: string): Promise<void> {
    const proxy = this.get(name);
    this.proxies.delete(name);
    await proxy.stop();
    this.hooks.logger.info('proxy removed', { name });
  }

  /** Every proxy enabled, every toxic removed; listeners and connections kept. */
  async reset(): Promise<void> {
    for (const proxy of this.proxies.values()) {
      await proxy.removeAllToxics();
      if (!proxy.enabled) await proxy.start();
    }
  }

  async stopAll(): Promise<void> {
    const all = this.all();
    this.proxies.clear();
    await Promise.all(all.map((p) => p.stop({ drained: true })));
  }

  findToxic(proxy: Proxy, name: string): ToxicConfig {
    const t = proxy.toxics.find((x) => x.name === name);
    if (!t) throw new ApiError(404, 'toxic not found');
    return t;
  }

  async addToxic(proxy: Proxy, body: unknown): Promise<ToxicConfig> {
    const config = parseToxic(new Set(proxy.toxics.map((t) => t.name)), body);
    await proxy.addToxic(config);
    this.hooks.logger.info('toxic added', { proxy: proxy.name, ...toxicJson(config) });
    return config;
  }

  /** The `toxics` of one populate entry, checked; none when absent, null or empty. */
  private parseEntryToxics(entry: unknown, i: number): ToxicConfig[] {
    const list = (entry as { toxics?: unknown } | null)?.toxics;
    if (list === undefined || list === null) return [];
    if (!Array.isArray(list))
      throw new ApiError(400, `bad request body: toxics must be an array at proxy ${i + 1}`);
    const names = new Set<string>();
    return list.map((body: unknown, j) => {
      try {
        const config = parseToxic(names, body);
        names.add(config.name);
        return config;
      } catch (err) {
        if (err instanceof ApiError)
          throw new ApiError(err.status, `${err.message} at proxy ${i + 1} toxic ${j + 1}`);
        throw err;
      }
    });
  }

  async updateToxic(proxy: Proxy, name: string, body: unknown): Promise<ToxicConfig> {
    const toxic = this.findToxic(proxy, name);
    const input = { toxicity: toxic.toxicity, attributes: {} as unknown };
    decodeInto(
      body,
      { toxicity: 'float', attributes: 'object' },
      'struct { Attributes interface {}; Toxicity float32 }',
      input,
    );
    const attributes = { ...toxic.attributes };
    decodeAttributes(input.attributes, toxic.definition, attributes);
    toxic.attributes = attributes;
    toxic.toxicity = input.toxicity;
    await proxy.updateToxic(toxic);
    this.hooks.logger.info('toxic updated', { proxy: proxy.name, ...toxicJson(toxic) });
    return toxic;
  }

  async removeToxic(proxy: Proxy, name: string): Promise<void> {
    await proxy.removeToxic(this.findToxic(proxy, name));
    this.hooks.logger.info('toxic removed', { proxy: proxy.name, name });
  }

  private async add(input: ProxyInput, toxics: readonly ToxicConfig[] = []): Promise<Proxy> {
    const proxy = new Proxy(input.name, input.listen, input.upstream, this.hooks);
    for (const t of toxics) await proxy.addToxic(t);
    if (input.enabled) await proxy.start();
    this.proxies.set(proxy.name, proxy);
    this.hooks.logger.info('proxy created', { ...proxy.toJson() });
    return proxy;
  }
}

/** A toxic from an API body, checked; `names` are those already taken on its proxy. */
function parseToxic(names: ReadonlySet<string>, body: unknown): ToxicConfig {
  const input = { name: '', type: '', stream: 'downstream', toxicity: 1, attributes: {} as unknown };
  decodeInto(
    body,
    { name: 'string', type: 'string', stream: 'string', toxicity: 'float' },
    'toxics.ToxicWrapper',
    input,
  );
  const stream = parseStream(input.stream);
  const name = input.name === '' ? `${input.type}_${stream}` : input.name;
  const definition = toxicRegistry.get(input.type);
  if (!definition) throw new ApiError(400, 'invalid toxic type');
  if (names.has(name)) throw new ApiError(409, 'toxic already exists');
  const attributes = Object.fromEntries(definition.attributes.map((a) => [a, definition.defaults?.[a] ?? 0]));
  decodeInto(body, { attributes: 'object' }, 'toxics.ToxicWrapper', input);
  decodeAttributes(input.attributes, definition, attributes);
  return { name, type: definition.type, stream, toxicity: input.toxicity, attributes, definition };
}

function sameToxics(a: readonly ToxicConfig[], b: readonly ToxicConfig[]): boolean {
  const key = (list: readonly ToxicConfig[]): string => JSON.stringify(list.map(toxicJson));
  return key(a) === key(b);
}

/** Toxiproxy's Proxy.Differs: the new listen address resolved first, the upstream as given. */
async function differs(proxy: Proxy, input: ProxyInput): Promise<boolean> {
  return (await resolveTcpAddress(input.listen)) !== proxy.listen || input.upstream !== proxy.upstream;
}

function decodeAttributes(body: unknown, definition: ToxicDefinition, target: Record<string, number>): void {
  const goType = `toxics.${definition.type.replace(/(^|_)(\w)/g, (_m, _u, c: string) => c.toUpperCase())}Toxic`;
  const floats = new Set(definition.floatAttributes ?? []);
  const spec = Object.fromEntries(
    Object.keys(target).map((k) => [k, floats.has(k) ? ('float64' as const) : ('int' as const)]),
  );
  decodeInto(body, spec, goType, target);
}
