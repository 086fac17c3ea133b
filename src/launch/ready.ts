// The one machine-readable line a service prints on stdout once it serves:
//   limbo-ready {"role":"log","node":"log","addresses":{"grpc":"127.0.0.1:4101","metrics":"http://127.0.0.1:4102/metrics"}}
// Runtimes (local processes, docker log waits) and tests wait for it.

export const READY_PREFIX = 'limbo-ready ';

export interface ReadyInfo {
  role: string;
  node: string;
  pid: number;
  /** Named endpoints, e.g. grpc, http, metrics. */
  addresses: Record<string, string>;
}

export function formatReadyLine(info: ReadyInfo): string {
  return READY_PREFIX + JSON.stringify(info);
}

export function parseReadyLine(line: string): ReadyInfo | undefined {
  if (!line.startsWith(READY_PREFIX)) return undefined;
  try {
    return JSON.parse(line.slice(READY_PREFIX.length)) as ReadyInfo;
  } catch {
    return undefined;
  }
}
