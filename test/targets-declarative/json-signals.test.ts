// Signals from JSON endpoints, for a system without Prometheus: two real processes serve a
// NATS-like /jsz (a leader's name, arrays of streams), the declaration maps paths into it to
// limbo's signals, and the signal bridge serves them under limbo's names per service.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsonAt, jsonNumber } from '../../src/targets/declarative/json-path.js';
import { declarativeTarget } from '../../src/targets/declarative/target.js';
import { DeclarationError, validateDeclaration } from '../../src/targets/declarative/validate.js';
import { scrape, type Sample } from '../../src/telemetry/prom-text.js';
import { waitFor } from '../../src/util/wait.js';

test('a path indexes arrays by number and turns values into numbers', () => {
  const jsz = {
    meta_cluster: { leader: 'n2' },
    account_details: [{ stream_detail: [{ cluster: { leader: 'n1' }, state: { messages: 42 } }] }],
    ok: true,
    text: '7',
  };
  assert.equal(jsonAt(jsz, 'meta_cluster.leader'), 'n2');
  assert.equal(jsonAt(jsz, 'account_details.0.stream_detail.0.cluster.leader'), 'n1');
  assert.equal(jsonAt(jsz, 'account_details[0].stream_detail[0].state.messages'), 42);
  assert.equal(jsonAt(jsz, 'account_details.1.stream_detail'), undefined);
  assert.equal(jsonAt(jsz, 'account_details.x'), undefined, 'a word does not index an array');
  assert.equal(jsonAt(jsz, 'meta_cluster.leader.length'), undefined, 'a string has no fields');
  assert.equal(jsonNumber(jsz, 'account_details.0.stream_detail.0.state.messages'), 42);
  assert.equal(jsonNumber(jsz, 'ok'), 1);
  assert.equal(jsonNumber(jsz, 'text'), 7);
  assert.equal(jsonNumber(jsz, 'meta_cluster.leader'), undefined, 'a name is no number');
  assert.equal(jsonNumber(jsz, 'meta_cluster.leader', { equals: 'n2' }), 1);
  assert.equal(jsonNumber(jsz, 'meta_cluster.leader', { equals: 'n1' }), 0);
  assert.equal(jsonNumber(jsz, 'missing.leader', { equals: 'n1' }), 0, 'nobody named is not n1');
  assert.equal(
    jsonNumber(jsz, 'meta_cluster.leader', {
      equalsPath: 'account_details.0.stream_detail.0.cluster.leader',
    }),
    0,
  );
});

// Each service answers /jsz as a NATS server would: who leads the meta group (the test's
// choice, svc-2), and one stream led by svc-1 whose message count is the service's number times 10.
const server = [
  'const [port, me] = process.argv.slice(1);',
  "require('http').createServer((q, s) => {",
  "  if (q.url !== '/jsz') { s.writeHead(404); return s.end(); }",
  "  s.writeHead(200, { 'content-type': 'application/json' });",
  "  s.end(JSON.stringify({ server_name: me, meta_cluster: { leader: 'svc-2' },",
  '    account_details: [{ stream_detail: [{ state: { messages: 10 * Number(me.slice(4)) }, cluster: { leader: "svc-1" } }] }] }));',
  "}).listen(Number(port), '127.0.0.1');",
].join('\n');

function declaration(signals: Record<string, unknown>): Record<string, unknown> {
  const svc = (n: number) => ({
    name: `svc-${n}`,
    role: 'processor',
    command: process.execPath,
    args: ['-e', server, '{{port:monitor}}', '{{name}}'],
    ports: ['monitor'],
    ready: { http: 'http://127.0.0.1:{{port:monitor}}/jsz' },
  });
  return {
    name: 'toy-json',
    about: 'two processes serving JSON, no Prometheus',
    services: [svc(1), svc(2)],
    links: [{ from: 'client', to: 'svc-1', port: 'monitor' }],
    client: { api: 'reference', probe: false },
    signals,
  };
}

const valueOf = (samples: Sample[], name: string, labels: Record<string, string>): number | undefined =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

test('JSON endpoints feed limbo signals per service through the signal bridge', async (t) => {
  const runDir = mkdtempSync(join(tmpdir(), 'limbo-json-signals-'));
  t.after(() => rmSync(runDir, { recursive: true, force: true }));
  const d = validateDeclaration(
    declaration({
      limbo_processor_is_leader: {
        json: 'http://127.0.0.1:{{port:monitor}}/jsz',
        path: 'meta_cluster.leader',
        equals: '{{name}}',
      },
      limbo_processor_applied_lsn: {
        json: 'http://127.0.0.1:{{port:monitor}}/jsz',
        path: 'account_details.0.stream_detail.0.state.messages',
        labels: { partition: '0' },
      },
      limbo_processor_pending_rpcs: {
        json: 'http://127.0.0.1:{{port:monitor}}/jsz',
        path: 'account_details.0.stream_detail.0.cluster.leader',
        equalsPath: 'server_name',
      },
    }),
    'toy.json',
  );
  const target = declarativeTarget(d);
  assert.equal(target.profile!.missingSignals['limbo_processor_applied_lsn'], undefined);
  const started = await target.start({ processors: 2, partitions: 1 }, { runDir });
  t.after(() => started.stop());
  const url = started.extraMetricsUrls()['signals'];
  assert.ok(url !== undefined, 'JSON signals are served by the bridge');
  const samples = await waitFor(
    async () => {
      const s = await scrape(url, 1000);
      return s.filter((x) => x.name === 'limbo_processor_is_leader').length === 2 &&
        s.filter((x) => x.name === 'limbo_processor_applied_lsn').length === 2
        ? s
        : undefined;
    },
    { what: 'both services read', timeoutMs: 10_000 },
  );
  const is = 'limbo_processor_is_leader';
  assert.equal(valueOf(samples, is, { node: 'svc-1', partition: '0' }), 0);
  assert.equal(valueOf(samples, is, { node: 'svc-2', partition: '0' }), 1);
  assert.equal(valueOf(samples, 'limbo_processor_applied_lsn', { node: 'svc-1', partition: '0' }), 10);
  assert.equal(valueOf(samples, 'limbo_processor_applied_lsn', { node: 'svc-2', partition: '0' }), 20);
  assert.equal(valueOf(samples, 'limbo_processor_pending_rpcs', { node: 'svc-1' }), 1);
  assert.equal(valueOf(samples, 'limbo_processor_pending_rpcs', { node: 'svc-2' }), 0);

  // A service that stops serving drops out: no sample rather than its last value forever.
  await started.services.get('svc-1')!.kill();
  await waitFor(
    async () =>
      valueOf(await scrape(url, 1000), 'limbo_processor_applied_lsn', { node: 'svc-1' }) === undefined,
    { what: 'svc-1 gone from the signals', timeoutMs: 10_000 },
  );
});

test('a bad JSON signal is named before anything starts', () => {
  const problems = (signal: Record<string, unknown>): string => {
    try {
      validateDeclaration(declaration({ limbo_processor_applied_lsn: signal }), 'toy.json');
    } catch (err) {
      assert.ok(err instanceof DeclarationError, String(err));
      return err.message;
    }
    return assert.fail('accepted');
  };
  assert.match(
    problems({ json: 'ftp://x', path: 'a' }),
    /signals\.limbo_processor_applied_lsn\.json: must be an http/,
  );
  assert.match(
    problems({ json: 'http://127.0.0.1:{{port:nope}}/jsz', path: 'a' }),
    /\{\{port:nope\}\}: no service has a port nope/,
  );
  assert.match(problems({ json: 'http://127.0.0.1:1/jsz' }), /\.path: must be a path/);
  assert.match(
    problems({ json: 'http://127.0.0.1:1/jsz', path: 'a', equals: 1, equalsPath: 'b' }),
    /not both/,
  );
  assert.match(problems({ json: 'http://127.0.0.1:1/jsz', path: 'a', wat: 1 }), /\.wat: unknown field/);
});
