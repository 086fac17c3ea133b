// limbo's own reference cluster in the declarative form — the proof that the form carries the
// system limbo ships: one log server (log, metadata, controller), three processors leading four
// partitions, one ingress, every link proxied as the coded target (src/targets/reference.ts)
// proxies it. `--target reference` stays the coded one (it follows a suite's topology; a
// declaration is fixed: 3 processors, 4 partitions); this one is `--target reference-declared`.
//
//   client ─[client->ingress]─▶ ingress ─[ingress->processor-N]─▶ processor-N ─[processor-N->log]─▶ log
//                                  └────────────[ingress->log]──────────────────────────────────▶ log
import { fileURLToPath } from 'node:url';
import { defineTarget, type ServiceDeclaration, type SignalDeclaration } from 'limbo';

const PROCESSORS = [1, 2, 3];
const PARTITIONS = 4;
const main = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));

/** `limbo serve <role>` from this checkout on fixed ports (main: gRPC, or the ingress's HTTP); ready at its `limbo-ready` line. */
const serve = (
  role: string,
  args: string[],
): Pick<ServiceDeclaration, 'command' | 'args' | 'ready' | 'metrics' | 'ports'> => ({
  command: process.execPath,
  args: [main, 'serve', role, '--port', '{{port:main}}', '--metrics-port', '{{port:metrics}}', ...args],
  ports: ['main', 'metrics'],
  ready: { logLine: '^limbo-ready ' },
  metrics: 'http://127.0.0.1:{{port:metrics}}/metrics',
});

export default defineTarget({
  name: 'reference-declared',
  about: "limbo's reference cluster (rpc protocol) declared: log, 3 processors, 1 ingress.",
  services: [
    {
      name: 'log',
      role: 'log',
      ...serve('log', [
        '--partitions',
        String(PARTITIONS),
        '--failure-timeout-ms',
        '1500',
        '--data-dir',
        '{{dataDir}}',
      ]),
      dataDir: 'keep',
    },
    ...PROCESSORS.map((i): ServiceDeclaration => ({
      name: `processor-${i}`,
      role: 'processor',
      ...serve('processor', [
        '--node',
        `processor-${i}`,
        '--log-address',
        `{{link:processor-${i}->log}}`,
        '--advertised-address',
        `{{link:ingress->processor-${i}}}`,
        '--protocol',
        'rpc',
      ]),
      startAfter: ['log'],
    })),
    {
      name: 'ingress',
      role: 'ingress',
      ...serve('ingress', [
        '--node',
        'ingress',
        '--log-address',
        '{{link:ingress->log}}',
        '--protocol',
        'rpc',
      ]),
      startAfter: ['log'],
    },
  ],
  links: [
    { from: 'client', to: 'ingress', port: 'main' },
    { from: 'ingress', to: 'log', port: 'main' },
    ...PROCESSORS.flatMap((i) => [
      { from: 'ingress', to: `processor-${i}`, port: 'main' },
      { from: `processor-${i}`, to: 'log', port: 'main' },
    ]),
  ],
  client: { api: 'reference' },
  leadership: { metric: 'limbo_processor_is_leader', partitionLabel: 'partition' },
  // A limbo-instrumented system: every canonical signal is served under its own name.
  signals: Object.fromEntries(
    [
      'limbo_ingress_requests_total',
      'limbo_ingress_pending_requests',
      'limbo_ingress_oldest_pending_seconds',
      'limbo_ingress_request_duration_seconds',
      'limbo_ingress_rpc_attempts_total',
      'limbo_ingress_resends_total',
      'limbo_ingress_resending_requests',
      'limbo_ingress_resent_requests_total',
      'limbo_processor_is_leader',
      'limbo_processor_leader_epoch',
      'limbo_processor_leadership_changes_total',
      'limbo_processor_pending_rpcs',
      'limbo_processor_rpcs_failed_total',
      'limbo_processor_applied_lsn',
      'limbo_processor_stale_proposals_dropped_total',
      'limbo_processor_invocations',
      'limbo_log_appends_total',
      'limbo_log_append_duration_seconds',
      'limbo_controller_leader_changes_total',
    ].map((n): [string, SignalDeclaration] => [n, { native: true }]),
  ),
});
