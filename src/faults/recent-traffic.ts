// Which links carry traffic now, not only since the warm-up: the proxies' counters read every
// half second while the run goes on, the last few seconds kept, so a fault that picks "a link
// with traffic" takes one that is busy at the moment it goes in — not one that was busy early
// and went quiet when an earlier fault killed its peer or its clients moved elsewhere.
//
//   every intervalMs: read() ─▶ ring of (time, counters), trimmed to keepMs
//   at(agoMs) ─▶ the newest sample at least agoMs old (the oldest kept while none is that old)
import type { ProxyCounterReader, ProxyCounters } from './evidence.js';

export interface RecentTraffic {
  /** The counters as they were about `agoMs` ago; undefined before the first read. */
  at(agoMs: number): ProxyCounters | undefined;
  stop(): void;
}

export interface RecentTrafficOptions {
  intervalMs?: number;
  keepMs?: number;
}

export function recordTraffic(read: ProxyCounterReader, options: RecentTrafficOptions = {}): RecentTraffic {
  const intervalMs = options.intervalMs ?? 500;
  const keepMs = options.keepMs ?? 5000;
  const samples: { atMs: number; counters: ProxyCounters }[] = [];
  let reading = false;
  const tick = async (): Promise<void> => {
    if (reading) return; // a slow read is never overlapped by the next
    reading = true;
    try {
      const counters = await read();
      const atMs = performance.now();
      samples.push({ atMs, counters });
      while (samples.length > 1 && samples[1]!.atMs <= atMs - keepMs) samples.shift();
    } catch {
      // A read that fails leaves a gap; the next one fills in.
    } finally {
      reading = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  return {
    at(agoMs) {
      const cutoff = performance.now() - agoMs;
      let found = samples[0]?.counters;
      for (const s of samples) if (s.atMs <= cutoff) found = s.counters;
      return found;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
