// The run's span sink: an OTLP/HTTP receiver that services export to (through OTEL_* in the
// environment the testbed gives them), every span appended to the run directory's
// spans.jsonl, and the runner's own tracer, which records one span per fault window. Or, when
// the user names an OTLP endpoint (Jaeger, Tempo, a Collector), just that endpoint.
//
//   services ──OTLP──▶ receiver ─▶ spans.jsonl        runner ─▶ "fault <name>" spans ─┘
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Span } from '@opentelemetry/api';
import { runFiles } from '../run-data/files.js';
import { silentLogger } from '../telemetry/logger.js';
import { createTracing } from '../telemetry/tracing.js';
import { startOtlpReceiver } from './otlp-receiver.js';

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
  /** Opens (on) or ends (off) the runner's span of one fault window. */
  faultWindow(fault: string, target: string, on: boolean, seed: number): void;
  /** Ends open fault spans, flushes the runner's tracer, stops the receiver, closes the file. */
  stop(): Promise<void>;
}

export async function startSpanSink(options: SpanSinkOptions): Promise<StartedSpanSink> {
  const base = options.env ?? process.env;
  const trace = options.trace ?? true;
  if (trace === false)
    return {
      env: base,
      otlpEndpoint: undefined,
      spansFile: undefined,
      faultWindow: () => {},
      stop: () => Promise.resolve(),
    };
  let stopReceiver = (): Promise<void> => Promise.resolve();
  let otlpEndpoint: string;
  let spansFile: string | undefined;
  if (trace === true) {
    spansFile = join(options.runDir, runFiles.spans);
    const out = createWriteStream(spansFile, { flags: 'w' });
    const receiver = await startOtlpReceiver({
      maxSpans: 0,
      onSpans: (spans) => {
        for (const s of spans) out.write(JSON.stringify(s) + '\n');
      },
    });
    otlpEndpoint = receiver.url;
    stopReceiver = async () => {
      await receiver.stop();
      await new Promise<void>((resolve) => out.end(() => resolve()));
    };
  } else otlpEndpoint = trace.otlpEndpoint;
  const env: NodeJS.ProcessEnv = {
    ...base,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
  };
  delete env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const tracing = createTracing('runner', silentLogger, env);
  const open = new Map<string, Span>();
  let stopped: Promise<void> | undefined;
  return {
    env,
    otlpEndpoint,
    spansFile,
    faultWindow(fault, target, on, seed) {
      const key = `${fault}\0${target}`;
      if (on) {
        open.set(
          key,
          tracing.tracer.startSpan(`fault ${fault}`, {
            attributes: { 'limbo.fault': fault, 'limbo.fault.target': target, 'limbo.seed': seed },
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
        await tracing.shutdown();
        await stopReceiver();
      })()),
  };
}
