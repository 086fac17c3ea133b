// Parses the Prometheus text exposition format (what every /metrics here serves) into
// samples, and picks values out of them. Enough of the format for prom-client output:
// comments, labels with escaped quotes, NaN/+Inf, optional timestamps.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\S+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/g;

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[3] !== undefined) {
      for (const l of m[3].matchAll(LABEL)) {
        labels[l[1] as string] = (l[2] as string)
          .replace(/\\n/g, '\n')
          .replace(/\\"/g, '"')
          .replace(/\\\\/g, '\\');
      }
    }
    samples.push({ name: m[1] as string, labels, value: parseValue(m[4] as string) });
  }
  return samples;
}

function parseValue(v: string): number {
  if (v === '+Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  return Number(v);
}

/** Sum of every sample named `name` whose labels include `match`. */
export function sumSamples(
  samples: readonly Sample[],
  name: string,
  match: Record<string, string> = {},
): number {
  let total = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) total += s.value;
  }
  return total;
}

export async function scrape(url: string, timeoutMs = 2000): Promise<Sample[]> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return parsePrometheusText(await res.text());
}
