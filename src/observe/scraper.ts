// The metrics observer: scrapes every service's /metrics every 250 ms into the run's series.
// Each scrape is bounded by a timeout shorter than the interval, a target whose last scrape is
// still running is skipped (a paused process must not pile up requests), and the series has a
// bound on its size. Only limbo_* and toxiproxy_* metrics are kept by default, and each
// process's start time (checkers tell a restarted process's counters by it).
//
//   tick ─▶ for each service: GET /metrics ─▶ parse ─▶ samples{service, name, labels, tMs, value}
import http from 'node:http';
import type { Clock } from '../util/clock.js';
import { parsePrometheusText, type SeriesKey } from '../telemetry/prom-text.js';
import type { RunData, SeriesSample } from '../run-data/run-data.js';
import type { Observer } from './observer.js';
import { processStartMetric } from '../protocol/names.js';

export interface ScraperOptions {
  /** Current scrape targets: service name → /metrics URL (asked again every tick). */
  targets: () => Record<string, string | undefined>;
  clock: Clock;
  intervalMs?: number;
  timeoutMs?: number;
  keep?: (name: string) => boolean;
  maxSamples?: number;
}

export interface StartedScraper {
  readonly samples: SeriesSample[];
  /** Scrapes every target once now (e.g. a final scrape after convergence). */
  scrapeOnce(): Promise<void>;
  scrapes(): number;
  errors(): number;
  stop(): Promise<void>;
}

export const keepLimboMetrics = (name: string): boolean =>
  name.startsWith('limbo_') || name.startsWith('toxiproxy_') || name === processStartMetric;

function fetchText(url: string, timeoutMs: number, agent: http.Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString('utf8'))
          : reject(new Error(`HTTP ${res.statusCode}`)),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`scrape timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

export function startScraper(options: ScraperOptions): StartedScraper {
  const intervalMs = options.intervalMs ?? 250;
  const timeoutMs = options.timeoutMs ?? Math.max(100, intervalMs - 50);
  const keep = options.keep ?? keepLimboMetrics;
  const maxSamples = options.maxSamples ?? 2_000_000;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  const samples: SeriesSample[] = [];
  /** Each series' name and labels, shared by its samples (none holds on to a scraped page). */
  const series = new Map<string, SeriesKey>();
  /** The scrape under way per target: the interval skips a busy target, an explicit scrape waits for it. */
  const busy = new Map<string, Promise<void>>();
  let scrapes = 0;
  let errors = 0;
  let stopped = false;

  const scrapeTarget = (service: string, url: string): Promise<void> => {
    if (busy.has(service)) return Promise.resolve();
    const tMs = options.clock.nowMs();
    const scrape = (async () => {
      try {
        const text = await fetchText(url, timeoutMs, agent);
        scrapes++;
        for (const s of parsePrometheusText(text, keep, series)) {
          if (samples.length >= maxSamples) break;
          samples.push({ service, name: s.name, labels: s.labels, tMs, value: s.value });
        }
      } catch {
        errors++; // a dead or paused service is expected during chaos
      } finally {
        busy.delete(service);
      }
    })();
    busy.set(service, scrape);
    return scrape;
  };
  const scrapeOnce = async (): Promise<void> => {
    const targets = Object.entries(options.targets()).filter(
      (e): e is [string, string] => e[1] !== undefined,
    );
    // An interval scrape still under way began before now: wait for it, then take this moment's.
    await Promise.all(
      targets.map(async ([service, url]) => {
        await busy.get(service);
        // One the interval began since is of this moment too.
        await (busy.get(service) ?? scrapeTarget(service, url));
      }),
    );
  };
  const tick = (): void => {
    for (const [service, url] of Object.entries(options.targets()))
      if (url !== undefined) void scrapeTarget(service, url);
  };
  const timer = setInterval(() => {
    if (!stopped) tick();
  }, intervalMs);
  return {
    samples,
    scrapeOnce,
    scrapes: () => scrapes,
    errors: () => errors,
    stop: () => {
      stopped = true;
      clearInterval(timer);
      agent.destroy();
      return Promise.resolve();
    },
  };
}

/**
 * The scraper as a run observer: one scrape of the state at convergence, a last one once the
 * clients stopped, and its samples become the run's series.
 */
export function metricsObserver(scraper: StartedScraper): Observer {
  return {
    name: 'metrics scraper',
    settle: () => scraper.scrapeOnce(),
    async collect(run: RunData) {
      await scraper.scrapeOnce();
      await scraper.stop();
      run.series = scraper.samples;
    },
    stop: () => scraper.stop(),
  };
}
