// Runs the Restate service endpoint as its own process:
//   node dist/src/targets/restate/endpoint-main.js [--port N]
// prints `limbo-ready {"role":"restate-services",…,"addresses":{"http":…}}` and serves until
// SIGTERM/SIGINT. A separate process so the testbed can kill, pause or cut it like a node.
import { formatReadyLine } from '../../launch/ready.js';
import { startRestateServices } from './services.js';

const portIndex = process.argv.indexOf('--port');
const port = portIndex >= 0 ? Number(process.argv[portIndex + 1]) : 0;
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`bad --port ${process.argv[portIndex + 1]}\n`);
  process.exit(2);
}
const services = await startRestateServices({ port });
// Listening before the ready line: the parent may stop us the moment it reads it.
const shutdown = (): void => {
  void services.stop().then(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
process.stdout.write(
  formatReadyLine({
    role: 'restate-services',
    node: 'restate-services',
    pid: process.pid,
    addresses: { http: services.url },
  }) + '\n',
);
