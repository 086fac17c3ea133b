// Services started through the NodeSDK honour the standard OTEL_* variables: service name,
// resource attributes, sampler, endpoint (a second, independent receiver process) and protocol.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startOtlpReceiver } from '../../src/observe/otlp-receiver.js';

const child = fileURLToPath(new URL('./sdk-child.js', import.meta.url));
const receiverChild = fileURLToPath(new URL('./receiver-child.js', import.meta.url));

function plainEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('OTEL_') && !k.startsWith('LIMBO_')) env[k] = v;
  return { ...env, ...extra };
}

async function runChild(env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [child], { env, timeout: 20_000 });
  return stdout;
}

for (const protocol of ['http/json', 'http/protobuf'] as const) {
  test(`OTEL_SERVICE_NAME and OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}`, async () => {
    await using receiver = await startOtlpReceiver();
    const out = await runChild(
      plainEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_SERVICE_NAME: 'custom-name',
      }),
    );
    assert.match(out, /enabled true/);
    assert.deepEqual(
      receiver.spans.map((s) => [s.service, s.name, s.attributes['limbo.invocation.id']]),
      [['custom-name', 'sdk span', 'inv_sdk']],
    );
  });
}

test('without OTEL_SERVICE_NAME the node name is the service; OTEL_RESOURCE_ATTRIBUTES is read', async () => {
  await using receiver = await startOtlpReceiver();
  await runChild(plainEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }));
  assert.deepEqual(
    receiver.spans.map((s) => s.service),
    ['node-name'],
  );
  // service.name from OTEL_RESOURCE_ATTRIBUTES (env detector) when OTEL_SERVICE_NAME is unset
  // is overridden by the node name (the testbed's contract); other attributes pass through.
  await runChild(
    plainEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=ci',
    }),
  );
  assert.equal(receiver.spans.length, 2);
});

test('OTEL_TRACES_SAMPLER=always_off records nothing', async () => {
  await using receiver = await startOtlpReceiver();
  const out = await runChild(
    plainEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'always_off' }),
  );
  assert.match(out, /sampled false/);
  assert.equal(receiver.spans.length, 0);
});

test('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT sends spans to another, independent receiver process', async (t) => {
  const other = spawn(process.execPath, [receiverChild], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => {
    if (other.exitCode === null) other.kill('SIGTERM');
  });
  let out = '';
  other.stdout.setEncoding('utf8');
  other.stdout.on('data', (d: string) => (out += d));
  for (let i = 0; i < 200 && !/url (\S+)/.test(out); i++) await new Promise((r) => setTimeout(r, 25));
  const url = /url (\S+)/.exec(out)?.[1];
  assert.ok(url, 'the receiver process is up');
  await using own = await startOtlpReceiver();
  await runChild(
    plainEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: own.url,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${url}/v1/traces`,
      OTEL_SERVICE_NAME: 'elsewhere',
    }),
  );
  for (let i = 0; i < 100 && !out.includes('span elsewhere sdk span'); i++)
    await new Promise((r) => setTimeout(r, 25));
  assert.match(out, /span elsewhere sdk span/);
  assert.equal(own.spans.length, 0, 'the traces endpoint wins over the generic one');
});
