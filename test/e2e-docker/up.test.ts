// `limbo up --runtime docker` as a user runs it: the services as containers, up.json saying
// so (no host PIDs), spans from inside the containers reaching the OTLP endpoint given by
// --otlp-endpoint (a receiver on 127.0.0.1: host networking), what could not be started named
// with its reason, and no container left after SIGTERM. Skips when no engine or image is there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UpFile } from '../../src/cli/up.js';
import { limboCommand } from '../../src/runtime/process.js';
import { LABEL_RUN, dockerImages, imageExists } from '../../src/runtime/docker.js';
import { dockerClient } from '../../src/runtime/docker-engine.js';
import { startOtlpReceiver } from '../../src/observe/otlp-receiver.js';
import { dockerTestEnv } from '../helpers/docker.js';

const { skip } = await dockerTestEnv();

async function containersOfProcess(pid: number): Promise<string[]> {
  const client = await dockerClient();
  const all = await client.container.dockerode.listContainers({ all: true, filters: { label: [LABEL_RUN] } });
  return all.filter((c) => c.Labels[LABEL_RUN]?.startsWith(`p${pid}-`)).map((c) => c.Names.join(','));
}

async function waitFor(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test(
  'limbo up --runtime docker: containers, up.json, spans to --otlp-endpoint, cleanup on SIGTERM',
  { skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'limbo-up-docker-'));
    const receiver = await startOtlpReceiver();
    const cmd = limboCommand();
    const child = spawn(
      cmd.command,
      [
        ...cmd.args,
        'up',
        '--runtime',
        'docker',
        '--dir',
        dir,
        '--processors',
        '1',
        '--partitions',
        '2',
        '--otlp-endpoint',
        receiver.url,
        '--prometheus',
        'off',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const pid = child.pid!;
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const upFile = join(dir, 'up.json');
      await waitFor('up.json', () => existsSync(upFile) || child.exitCode !== null, 120_000);
      assert.ok(existsSync(upFile), output);
      const up = JSON.parse(readFileSync(upFile, 'utf8')) as UpFile;
      assert.equal(up.runtime, 'docker');
      assert.deepEqual(Object.keys(up.services).sort(), ['ingress-1', 'log', 'processor-1']);
      for (const s of Object.values(up.services)) assert.equal(s.pid, null, 'containers have no host PID');
      assert.equal((await containersOfProcess(pid)).length, 4, 'three services and the proxy');
      assert.equal(up.traces.otlpEndpoint, receiver.url);

      const res = await fetch(`${up.ingressUrls[0]}/Echo/echo`, { method: 'POST', body: '{"up":1}' });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { up: 1 });
      await waitFor(
        'spans from the containerised ingress and processor',
        () => {
          const services = new Set(receiver.spans.map((s) => s.service));
          return services.has('ingress-1') && services.has('processor-1');
        },
        20_000,
      );

      // What is not there is said, not failed on.
      assert.equal(up.prometheus, null);
      assert.match(up.notStarted['prometheus'] ?? '', /--prometheus off/);
      assert.equal(up.grafana, null);
      assert.match(up.notStarted['grafana'] ?? '', /no Prometheus/);
      if (!(await imageExists(await dockerClient(), dockerImages().traces))) assert.equal(up.traces.ui, null); // --otlp-endpoint wins anyway

      child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 60_000))]);
      assert.equal(code, 0, output);
      assert.ok(!existsSync(upFile), 'up.json removed');
      assert.deepEqual(await containersOfProcess(pid), []);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await receiver.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'limbo up --runtime docker with no Grafana/Jaeger image: null URLs with the reason; Prometheus from the host binary',
  { skip },
  async () => {
    const client = await dockerClient();
    const absent = async (image: string): Promise<boolean> => !(await imageExists(client, image));
    const dir = mkdtempSync(join(tmpdir(), 'limbo-up-docker-'));
    const cmd = limboCommand();
    // Images that cannot exist here stand in for "not present in the engine".
    const child = spawn(
      cmd.command,
      [
        ...cmd.args,
        'up',
        '--runtime',
        'docker',
        '--dir',
        dir,
        '--processors',
        '1',
        '--partitions',
        '1',
        '--grafana-image',
        'limbo/absent-grafana:none',
        '--traces-image',
        'limbo/absent-jaeger:none',
        '--prometheus-image',
        'limbo/absent-prometheus:none',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      assert.ok(await absent('limbo/absent-grafana:none'));
      const upFile = join(dir, 'up.json');
      await waitFor('up.json', () => existsSync(upFile) || child.exitCode !== null, 120_000);
      assert.ok(existsSync(upFile), output);
      const up = JSON.parse(readFileSync(upFile, 'utf8')) as UpFile;
      assert.match(up.notStarted['traces'] ?? '', /limbo\/absent-jaeger:none is not present/);
      assert.equal(up.traces.ui, null);
      assert.ok(up.traces.spansFile !== null, 'the built-in receiver took over');
      assert.match(up.notStarted['prometheus'] ?? '', /limbo\/absent-prometheus:none is not present/);
      if (up.prometheus !== null) {
        assert.match(up.notStarted['prometheus'] ?? '', /host prometheus binary runs instead/);
        assert.match(up.notStarted['grafana'] ?? '', /limbo\/absent-grafana:none is not present/);
      }
      assert.equal(up.grafana, null);
      assert.match(output, /grafana {6}not started \(/);
      child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 60_000))]);
      assert.equal(code, 0, output);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

const prometheusImage = process.env.LIMBO_PROMETHEUS_LOCAL_IMAGE ?? 'limbo/prometheus:local';
const hasPrometheusImage =
  skip === false && (await imageExists(await dockerClient(), prometheusImage).catch(() => false));

test(
  'limbo up --runtime docker with a Prometheus image: Prometheus in a container scrapes every service, alert rules loaded',
  {
    skip:
      skip || (hasPrometheusImage ? false : `no ${prometheusImage}: run scripts/docker/prometheus-image.sh`),
  },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'limbo-up-docker-'));
    const cmd = limboCommand();
    const child = spawn(
      cmd.command,
      [
        ...cmd.args,
        'up',
        '--runtime',
        'docker',
        '--dir',
        dir,
        '--processors',
        '1',
        '--partitions',
        '1',
        '--prometheus-image',
        prometheusImage,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const pid = child.pid!;
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const upFile = join(dir, 'up.json');
      await waitFor('up.json', () => existsSync(upFile) || child.exitCode !== null, 120_000);
      assert.ok(existsSync(upFile), output);
      const up = JSON.parse(readFileSync(upFile, 'utf8')) as UpFile;
      assert.ok(up.prometheus !== null, output);
      assert.equal(up.notStarted['prometheus'], undefined);
      assert.ok((await containersOfProcess(pid)).some((n) => n.endsWith('-prometheus')));
      // Every service (and the runner and the proxy) scraped from inside the container.
      const jobs = Object.keys(up.metrics).sort();
      let upJobs: string[] = [];
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const res = (await (await fetch(`${up.prometheus}/api/v1/query?query=up==1`)).json()) as {
          data: { result: { metric: { job: string } }[] };
        };
        upJobs = res.data.result.map((r) => r.metric.job).sort();
        if (upJobs.length === jobs.length) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      assert.deepEqual(upJobs, jobs);
      const rules = (await (await fetch(`${up.prometheus}/api/v1/rules`)).json()) as {
        data: { groups: unknown[] };
      };
      assert.ok(rules.data.groups.length > 0, 'dashboards/alerts.yml loaded');
      child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 60_000))]);
      assert.equal(code, 0, output);
      assert.deepEqual(await containersOfProcess(pid), []);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
