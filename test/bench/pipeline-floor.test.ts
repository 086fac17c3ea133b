// The cluster bench's no-work floor (bench/pipeline-floor.ts) must do a cluster call's work
// and no less, or the ceiling it sets is too high: every call answered with its own body
// after two durable appends (both records in its partition's file), across all partitions,
// and every process gone after dispose.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { connectFrames, frameTypes, type Conn } from '../../bench/frames.js';
import { startLogFloor, startPipelineFloor } from '../../bench/pipeline-floor.js';
import { processRuns } from '../helpers/process-state.js';

test('the floor pipeline answers each call with its own body after appending two records', async () => {
  const floor = await startPipelineFloor(3, 4);
  const pids = floor.pids;
  try {
    assert.equal(pids.length, 5);
    const bodies = Array.from({ length: 60 }, (_, i) => JSON.stringify({ call: i, pad: 'x'.repeat(i) }));
    const answers = await Promise.all(
      bodies.map((b) =>
        fetch(`${floor.url}/Echo/echo`, {
          method: 'POST',
          body: b,
          signal: AbortSignal.timeout(10_000),
        }).then(async (r) => ({ status: r.status, body: await r.text() })),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      bodies.map(() => 200),
    );
    assert.deepEqual(
      answers.map((a) => a.body),
      bodies,
    );
    // Each call's two records (6 bytes of header each) are on disk, spread over every partition.
    const files = readdirSync(floor.dataDir).map((f) => statSync(join(floor.dataDir, f)).size);
    assert.equal(files.length, 4);
    assert.ok(files.every((size) => size > 0));
    const expected = bodies.reduce((sum, b) => sum + 2 * (6 + Buffer.byteLength(b)), 0);
    assert.equal(
      files.reduce((a, b) => a + b, 0),
      expected,
    );
  } finally {
    await floor[Symbol.asyncDispose]();
  }
  for (const pid of pids) assert.equal(processRuns(pid), false, `pipeline process ${pid} still running`);
});

test('the floor pipeline ends with the process that started it, even one killed with SIGKILL', async () => {
  const starter = `import { startPipelineFloor } from ${JSON.stringify(new URL('../../bench/pipeline-floor.js', import.meta.url).href)};
const f = await startPipelineFloor(3, 4);
process.stdout.write(f.pids.join(' ') + '\\n');
setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ['--input-type=module', '-e', starter], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the floor did not start in 15 s')), 15_000);
    createInterface({ input: parent.stdout }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
  });
  const pids = line.split(' ').map(Number);
  assert.equal(pids.length, 5);
  parent.kill('SIGKILL');
  const deadline = Date.now() + 10_000;
  while (pids.some(processRuns) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const left = pids.filter(processRuns);
  // What each one left was doing (state, parent, kernel wait), so a failure says why.
  const doing = left.map((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return `${pid}: state ${state}, parent ${ppid}, wchan ${readFileSync(`/proc/${pid}/wchan`, 'utf8')}`;
    } catch {
      return `${pid}: gone`;
    }
  });
  for (const pid of left) process.kill(pid, 'SIGKILL');
  assert.deepEqual(left, [], `pipeline processes outlived their parent (${doing.join('; ')})`);
});

test('a floor node ends with its starter even when the starter dies before the node has started', async () => {
  // The starter spawns one node (its output going nowhere, so nothing but the parent watch can
  // end it), says its pid and is killed at once, long before the node is up: the node must
  // still see that the process that started it is gone.
  const dataDir = mkdtempSync(join(tmpdir(), 'limbo-floor-orphan-'));
  const node = new URL('../../bench/pipeline-node.js', import.meta.url).pathname;
  const watch = new URL('../../bench/parent-watch.js', import.meta.url).href;
  const starter = `import { spawn } from 'node:child_process';
import { childEnv } from ${JSON.stringify(watch)};
const c = spawn(process.execPath, [${JSON.stringify(node)}, 'log', ${JSON.stringify(dataDir)}, '1'], { stdio: 'ignore', env: childEnv() });
process.stdout.write(c.pid + '\\n');
setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ['--input-type=module', '-e', starter], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the starter did not start in 15 s')), 15_000);
      createInterface({ input: parent.stdout }).once('line', (l) => {
        clearTimeout(timer);
        resolve(l);
      });
    });
    parent.kill('SIGKILL');
    const pid = Number(line);
    const deadline = Date.now() + 10_000;
    while (processRuns(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const left = processRuns(pid);
    if (left) process.kill(pid, 'SIGKILL');
    assert.equal(left, false, `floor node ${pid} outlived a starter that died while it started`);
  } finally {
    parent.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("the log bench's floor acknowledges each append once its bytes are in the partition's file", async () => {
  const floor = await startLogFloor(1);
  const { pid, dataDir } = floor;
  const acked = new Set<number>();
  const conns: Conn[] = [];
  try {
    for (let i = 0; i < 2; i++)
      conns.push(
        await connectFrames(floor.port, (f) => {
          if (f.type !== frameTypes.ack) return;
          // Every acknowledged append's 100 bytes are in the file by the time its ACK arrives.
          acked.add(f.id);
          const size = statSync(join(dataDir, 'p0.log')).size;
          assert.ok(size >= 100 * acked.size, `${acked.size} appends acknowledged, ${size} bytes on disk`);
        }),
      );
    for (let id = 1; id <= 50; id++) conns[id % 2]!.send(frameTypes.append, id, 0, Buffer.alloc(100, id));
    const deadline = Date.now() + 10_000;
    while (acked.size < 50 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(acked.size, 50, 'every append acknowledged');
    assert.equal(statSync(join(dataDir, 'p0.log')).size, 50 * 100);
  } finally {
    for (const c of conns) c.socket.destroy();
    await floor[Symbol.asyncDispose]();
  }
  assert.equal(processRuns(pid), false, 'the log floor is still running');
});
