// `{{...}}` placeholders in a declaration's args, env and URLs (declaration.ts lists them).
// references() lets the validator check every placeholder before anything starts; fill()
// replaces them at start, when ports, proxies and directories exist.

export type Reference =
  | { kind: 'port'; port: string }
  | { kind: 'addr'; service: string; port: string }
  /** A link's proxy listen address (`127.0.0.1:PORT`), or its port alone (`{{linkport:…}}`). */
  | { kind: 'link'; link: string; portOnly?: boolean }
  | { kind: 'name' | 'dataDir' | 'runDir' };

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Every placeholder in `text`, parsed; a malformed one is returned as its error message. */
export function references(text: string): (Reference | string)[] {
  const out: (Reference | string)[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) out.push(parse(m[1] ?? ''));
  return out;
}

function parse(body: string): Reference | string {
  if (body === 'name' || body === 'dataDir' || body === 'runDir') return { kind: body };
  const colon = body.indexOf(':');
  const head = colon < 0 ? body : body.slice(0, colon);
  const rest = colon < 0 ? '' : body.slice(colon + 1);
  if (head === 'port' && rest !== '') return { kind: 'port', port: rest };
  if (head === 'link' && rest.includes('->')) return { kind: 'link', link: rest };
  if (head === 'linkport' && rest.includes('->')) return { kind: 'link', link: rest, portOnly: true };
  if (head === 'addr') {
    const dot = rest.lastIndexOf('.');
    if (dot > 0 && dot < rest.length - 1)
      return { kind: 'addr', service: rest.slice(0, dot), port: rest.slice(dot + 1) };
  }
  return `{{${body}}} is not a placeholder (use {{port:NAME}}, {{addr:SERVICE.PORT}}, {{link:FROM->TO}}, {{linkport:FROM->TO}}, {{name}}, {{dataDir}} or {{runDir}})`;
}

export interface TemplateValues {
  name: string;
  dataDir: string;
  runDir: string;
  /** This service's ports by name. */
  ports: Readonly<Record<string, number>>;
  /** Every service's ports by name. */
  portsOf: (service: string) => Readonly<Record<string, number>> | undefined;
  /** A link's proxy listen address. */
  linkAddress: (link: string) => string | undefined;
}

/** `text` with every placeholder replaced; an unknown one throws (the validator should have caught it). */
export function fill(text: string, v: TemplateValues): string {
  return text.replace(PLACEHOLDER, (_, body: string) => {
    const ref = parse(body.trim());
    if (typeof ref === 'string') throw new Error(ref);
    const value = valueOf(ref, v);
    if (value === undefined) throw new Error(`{{${body}}} has no value for ${v.name}`);
    return value;
  });
}

function valueOf(ref: Reference, v: TemplateValues): string | undefined {
  switch (ref.kind) {
    case 'name':
      return v.name;
    case 'dataDir':
      return v.dataDir;
    case 'runDir':
      return v.runDir;
    case 'port':
      return v.ports[ref.port]?.toString();
    case 'addr':
      return portAddress(v.portsOf(ref.service)?.[ref.port]);
    case 'link': {
      const address = v.linkAddress(ref.link);
      return ref.portOnly === true ? address?.slice(address.lastIndexOf(':') + 1) : address;
    }
  }
}

const portAddress = (port: number | undefined): string | undefined =>
  port === undefined ? undefined : `127.0.0.1:${port}`;
