// `--runtime docker` without an engine, or without the services image, is a usage error
// (exit 2) that names the script to run — checked before anything starts. The first case
// needs no engine and always runs; the second skips without one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { limboCommand } from '../../src/runtime/process.js';
import { dockerAvailable } from '../../src/runtime/docker.js';

const suite = fileURLToPath(new URL('../../../chaos/startup-race.ts', import.meta.url));

function limbo(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const cmd = limboCommand();
  const child = spawn(cmd.command, [...cmd.args, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

test('no engine: limbo run and limbo up --runtime docker exit 2 naming engine-up.sh', async () => {
  const env = { ...process.env, DOCKER_HOST: 'unix:///nonexistent/limbo-test/docker.sock' };
  for (const args of [
    ['run', suite, '--runtime', 'docker'],
    ['up', '--runtime', 'docker'],
  ]) {
    const { code, output } = await limbo(args, env);
    assert.equal(code, 2, output);
    assert.match(output, /--runtime docker: .*\n?.*scripts\/docker\/engine-up\.sh/);
  }
});

const engine = await dockerAvailable(5000);
test(
  'no services image: exit 2 naming the scripts that build it',
  { skip: engine.ok ? false : engine.reason.split('\n')[0] },
  async () => {
    const { code, output } = await limbo(
      ['run', suite, '--runtime', 'docker', '--services-image', 'limbo/absent:none'],
      {
        ...process.env,
      },
    );
    assert.equal(code, 2, output);
    assert.match(output, /no image limbo\/absent:none/);
    assert.match(output, /scripts\/docker\/build-image\.sh/);
  },
);
