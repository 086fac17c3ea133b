// A service stand-in for the ledger tests: traces through createTracing (OTLP + ledger from its
// environment), then leaves spans in each state and says "ready" so the test can kill -9 it.
//   short: started and ended long before the kill (exported over OTLP)
//   ended-unexported: ended 150 ms before the kill (the ledger saw its end; its export queued)
//   open: started, never ended
import { createTracing } from '../../src/telemetry/tracing.js';
import { silentLogger } from '../../src/telemetry/logger.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const tracing = createTracing(process.env.SERVICE_NAME ?? 'child', silentLogger);
const short = tracing.tracer.startSpan('short', { attributes: { 'limbo.invocation.id': 'inv_short' } });
short.end();
await sleep(1200);
const late = tracing.tracer.startSpan('ended-unexported', {
  attributes: { 'limbo.invocation.id': 'inv_late' },
});
const open = tracing.tracer.startSpan('open', {
  attributes: { 'limbo.invocation.id': 'inv_open', 'limbo.leader.epoch': 3 },
});
await sleep(250);
late.end();
await sleep(150);
process.stdout.write(`ready ${open.spanContext().spanId}\n`);
await sleep(60_000);
