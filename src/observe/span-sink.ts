// The run's span sink: an OTLP/HTTP receiver that services export to (through OTEL_* in the
// environment the testbed gives them), every span appended to the run directory's
// spans.jsonl, and the runner's own tracer, which records one span per fault window. Or, when
// the user names an OTLP endpoint (Jaeger, Tempo, a Collector), just that endpoint.
//
//   services ──OTLP──▶ receiver ─▶ spans.jsonl        runner ─▶ "fault <name>" spans ─┘
//   services ──ledger (open spans)──▶ receiver ─▶ run.spans (ended + never ended, marked)
//   workload ─▶ one "client" span per op ─┘ (in process: in-process-tracing.ts)
//
// The services' open-span ledger (LIMBO_SPAN_LEDGER_ENDPOINT) posts each span's start at once,
// so the work a killed process had in flight is still known; ended spans still go out as
// plain OTLP, so any backend works.
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Span, Tracer } from '@opentelemetry/api';
import { clientServiceName, runnerServiceName, spanAttributes as A, spanNames } from '../protocol/names.js';
import { runFiles } from '../run-data/files.js';
import type { RunData, RunSpan } from '../run-data/run-data.js';
import { silentLogger } from '../telemetry/logger.js';
import { SPAN_LEDGER_PATH } from '../telemetry/span-ledger.js';
import { createTracing, SPAN_LEDGER_ENV, type Tracing } from '../telemetry/tracing.js';
import { inProcessTracing } from './in-process-tracing.js';
import type { Observer } from './observer.js';
import { startOtlpReceiver, type StartedOtlpReceiver } from './otlp-receiver.js';
import { runSpans } from './run-spans.js';

export interface SpanSinkOptions {
  /** Where spans.jsonl goes (the built-in receiver only). */
  runDir: string;
  /** false: no tracing at all; an endpoint: services export there and nothing is written here. */
  trace?: boolean | { otlpEndpoint: string };
  env?: NodeJS.ProcessEnv;
}

export interface StartedSpanSink {
  /** The environment services start with (OTEL_EXPORTER_OTLP_ENDPOINT set when tracing). */
  readonly env: NodeJS.ProcessEnv;
  /** Where services export, undefined when tracing is off. */
  readonly otlpEndpoint: string | undefined;
  /** spans.jsonl, when the built-in receiver writes one. */
  readonly spansFile: string | undefined;
  /** The workload's tracer: one client span per op (service `client`); undefined when not traced here. */
  readonly clientTracer: Tracer | undefined;
  /** Opens (on) or ends (off) the runner's span of one fault window. */
  faultWindow(fault: string, target: string, on: boolean, seed: number): void;
  /** As a run observer: its collect puts the run's spans (ended and open) into the run data. */
  readonly observer: Observer;
  /**
   * Ends open fault spans, flushes the runner's and the client tracers, appends the spans only
   * the ledger knows (marked from the last collected run) to spans.jsonl, stops the receiver.
   */
  stop(): Promise<void>;
}

/**
 * The services' batch delay (OTEL_BSP_SCHEDULE_DELAY) unless the user set one: at the end of a
 * run the runner waits it out (plus the ledger's 50 ms tick and the export itself) for the
 * spans that ended last, so a shorter one ends every run sooner; under load batches fill
 * before the delay anyway, so it costs a few more small exports only when idle.
 */
export const DEFAULT_BSP_DELAY_MS = 200;
const SETTLE_MARGIN_MS = 300;
/** Spans kept in memory for the checkers; spans.jsonl has them all. */
const MAX_RUN_SPANS = 500_000;

export async function startSpanSink(options: SpanSinkOptions): Promise<StartedSpanSink> {
  const base = options.env ?? process.env;
  const trace = options.trace ?? true;
  if (trace === false)
    return {
      env: base,
      otlpEndpoint: undefined,
      spansFile: undefined,
      clientTracer: undefined,
      faultWindow: () => {},
      observer: { name: 'spans', stop: () => Promise.resolve() },
      stop: () => Promise.resolve(),
    };
  let collected: RunData | undefined;
  let receiver: StartedOtlpReceiver | undefined;
  let write = (_spans: readonly RunSpan[]): void => {};
  let stopReceiver = (): Promise<void> => Promise.resolve();
  let otlpEndpoint: string;
  let spansFile: string | undefined;
  if (trace === true) {
    spansFile = join(options.runDir, runFiles.spans);
    const out = createWriteStream(spansFile, { flags: 'w' });
    write = (spans) => {
      for (const s of spans) out.write(JSON.stringify(s) + '\n');
    };
    const started = await startOtlpReceiver({ maxSpans: MAX_RUN_SPANS, onSpans: write });
    receiver = started;
    otlpEndpoint = started.url;
    stopReceiver = async () => {
      await started.stop();
      await new Promise<void>((resolve) => out.end(() => resolve()));
    };
  } else otlpEndpoint = trace.otlpEndpoint;
  const bspDelayMs = Number(base.OTEL_BSP_SCHEDULE_DELAY ?? '') || DEFAULT_BSP_DELAY_MS;
  const settleMs = bspDelayMs + SETTLE_MARGIN_MS;
  const env: NodeJS.ProcessEnv = {
    ...base,
    OTEL_BSP_SCHEDULE_DELAY: String(bspDelayMs),
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    ...(receiver !== undefined ? { [SPAN_LEDGER_ENV]: `${receiver.url}${SPAN_LEDGER_PATH}` } : {}),
  };
  delete env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  // Each service is named after its node (processor-1 …): checks and fault windows read them.
  delete env.OTEL_SERVICE_NAME;
  // The runner's own spans go straight into its receiver when it has one; else over OTLP.
  const tracerOf = (service: string): Tracing =>
    receiver !== undefined ? inProcessTracing(service, receiver) : createTracing(service, silentLogger, env);
  const tracing = tracerOf(runnerServiceName);
  const client = tracerOf(clientServiceName);
  const open = new Map<string, Span>();
  let stopped: Promise<void> | undefined;
  return {
    env,
    otlpEndpoint,
    spansFile,
    clientTracer: client.tracer,
    observer: {
      name: 'spans',
      async collect(run) {
        collected = run;
        if (receiver === undefined) return;
        // Spans ended just now are still in the export queues: the runner's own are flushed,
        // each service is asked to flush over its ledger stream, and only when one cannot be
        // asked or does not answer is the rest of the batch delay waited out (bounded).
        const t0 = performance.now();
        await Promise.all([tracing.forceFlush?.(), client.forceFlush?.()]);
        if (!(await receiver.flushLedgers(settleMs))) {
          const rest = settleMs - (performance.now() - t0);
          if (rest > 0) await new Promise((r) => setTimeout(r, rest));
        }
        run.spans = runSpans(receiver.spans, receiver.unexportedSpans(), run);
        run.spansDropped = receiver.dropped;
      },
      stop: () => Promise.resolve(),
    },
    faultWindow(fault, target, on, seed) {
      const key = `${fault}\0${target}`;
      if (on) {
        open.set(
          key,
          tracing.tracer.startSpan(spanNames.faultWindow(fault), {
            attributes: { [A.fault]: fault, [A.faultTarget]: target, [A.seed]: seed },
          }),
        );
      } else {
        open.get(key)?.end();
        open.delete(key);
      }
    },
    stop: () =>
      (stopped ??= (async () => {
        for (const span of open.values()) span.end();
        open.clear();
        await Promise.all([tracing.shutdown(), client.shutdown()]);
        // Spans only the ledger knows: ended ones whose export was lost, and those never ended.
        // The run's spans are brought up to what spans.jsonl holds (the spans that came after
        // collect too), so the report reads them here instead of parsing the file back.
        if (receiver !== undefined && collected !== undefined) {
          const unexported = receiver.unexportedSpans();
          write(runSpans([], unexported, collected));
          collected.spans = runSpans(receiver.spans, unexported, collected);
          collected.spansDropped = receiver.dropped;
        }
        await stopReceiver();
      })()),
  };
}
