// A declared service for tests of declared targets: a processor that is only a TCP listener
// (node) on its own named port `p`, ready once it accepts connections.
export function listenerService(n: number): Record<string, unknown> {
  return {
    name: `svc-${n}`,
    role: 'processor',
    command: process.execPath,
    args: ['-e', "require('net').createServer().listen(Number(process.argv[1]), '127.0.0.1')", '{{port:p}}'],
    ports: ['p'],
    ready: { tcp: '127.0.0.1:{{port:p}}' },
  };
}
