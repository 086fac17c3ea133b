// Parses the Prometheus text exposition format (what every /metrics here serves) into
// samples, and picks values out of them. Enough of the format for prom-client output:
// comments, labels with escaped quotes, NaN/+Inf, optional timestamps. The runner's scraper
// and the tests both read /metrics through it.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(?:\s+\S+)?\s*$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/g;

/** A series' name and labels, shared by every sample of it that a cache has seen. */
export type SeriesKey = Pick<Sample, 'name' | 'labels'>;

/**
 * A string of its own: the substrings a parse takes (names, label values) point into the
 * whole text they came from, and keeping one keeps that text alive.
 */
const detach = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

/**
 * Samples of `text`, only those whose name `keep` accepts; unparsable values are dropped.
 * With a `series` cache (one per scraper), samples of a series seen before share its name and
 * labels objects (to be treated as read-only), which hold no reference into `text`: a run
 * that keeps every sample then keeps each scraped page only as long as the parse.
 */
export function parsePrometheusText(
  text: string,
  keep: (name: string) => boolean = () => true,
  series?: Map<string, SeriesKey>,
): Sample[] {
  const samples: Sample[] = [];
  // Only what a cache keeps for later samples needs strings of its own.
  const own = series !== undefined ? detach : (s: string): string => s;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const name = m[1]!;
    if (!keep(name)) continue;
    const v = m[4]!;
    const value = v === '+Inf' ? Infinity : v === '-Inf' ? -Infinity : Number(v);
    if (Number.isNaN(value) && v !== 'NaN') continue;
    const key = m[2] === undefined ? name : name + m[2];
    let known = series?.get(key);
    if (known === undefined) {
      const labels: Record<string, string> = {};
      if (m[3] !== undefined) {
        // One pass, so `\\n` is a backslash then `n`, not a newline.
        for (const l of m[3].matchAll(LABEL))
          labels[own(l[1]!)] = own(l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c)));
      }
      known = { name: own(name), labels };
      series?.set(own(key), known);
    }
    samples.push({ name: known.name, labels: known.labels, value });
  }
  return samples;
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
