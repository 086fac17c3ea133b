// A small parser for the Prometheus text exposition format (what prom-client and Toxiproxy
// serve): `name{label="v",…} value [timestamp]`, comments skipped, label values unescaped.
export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(?:\s+\S+)?\s*$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/g;

export function parsePromText(text: string, keep: (name: string) => boolean = () => true): ParsedSample[] {
  const out: ParsedSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const name = m[1]!;
    if (!keep(name)) continue;
    const labels: Record<string, string> = {};
    if (m[3] !== undefined) {
      for (const lm of m[3].matchAll(LABEL))
        labels[lm[1]!] = lm[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    const v = m[4]!;
    const value = v === '+Inf' ? Infinity : v === '-Inf' ? -Infinity : Number(v);
    if (Number.isNaN(value) && v !== 'NaN') continue;
    out.push({ name, labels, value });
  }
  return out;
}
