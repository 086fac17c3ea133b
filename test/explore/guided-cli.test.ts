// `limbo explore --guided` for real, on the reference cluster with --coverage: two short
// schedules; the first run reaches branch arms and fault-space cells no run had, so it joins
// the corpus (saved under --corpus); the search prints what it reached as it goes; a second
// search reads the corpus back and starts from it.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { limboSync } from '../helpers/limbo-cli.js';

const limbo = (...args: string[]) => limboSync(args, 240_000);

test(
  'explore --guided keeps the schedules that reached something new and reads them back',
  { timeout: 300_000 },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'limbo-guided-cli-'));
    try {
      const corpus = join(dir, 'corpus');
      const args = [
        'explore',
        '--target',
        'reference',
        '--guided',
        '--coverage',
        '--corpus',
        corpus,
        '--runs',
        '2',
        '--seed',
        '4',
        '--max-faults',
        '1',
        '--faults',
        'kill,latency',
        '--chaos',
        '3s',
        '--out',
        join(dir, 'runs'),
        '--seeds-dir',
        join(dir, 'seeds'),
        // A failure found is not shrunk or confirmed here: this test is about the corpus.
        '--shrink-runs',
        '0',
        '--confirm-runs',
        '0',
      ];
      // Exit 1 only means a run failed (saved as a seed): not what this test is about.
      const first = limbo(...args);
      assert.ok(first.status === 0 || first.status === 1, first.stdout + first.stderr);
      assert.match(
        first.stdout,
        /^guided by branches and fault-space cells; corpus .* \(0 schedule\(s\) to start from\)$/m,
      );
      // The first run of a search reaches everything it reaches for the first time.
      assert.match(
        first.stdout,
        /^ {2}reached [1-9]\d* branch arm\(s\) \(\+[1-9]\d*\) and [1-9]\d* fault-space cell\(s\) \(\+[1-9]\d*\); corpus 1 \(this schedule joined it\)$/m,
      );
      assert.match(
        first.stdout,
        /^reached \d+ branch arm\(s\) and \d+ fault-space cell\(s\); corpus [12] schedule\(s\) in /m,
      );
      const kept = readdirSync(corpus).filter((f) => f.endsWith('.json'));
      assert.ok(kept.length >= 1 && kept.length <= 2, kept.join(', '));
      // A bad entry is named, exit 2.
      mkdirSync(join(dir, 'bad'), { recursive: true });
      writeFileSync(join(dir, 'bad', 'x.json'), 'not json');
      const bad = limbo('explore', '--guided', '--corpus', join(dir, 'bad'), '--runs', '1');
      assert.equal(bad.status, 2, bad.stderr);
      assert.match(bad.stderr, /x\.json is not a corpus entry/);
      // The next search starts from the corpus (one run is enough to show it read it).
      const second = limbo(...args.map((a) => (a === '2' ? '1' : a)));
      assert.ok(second.status === 0 || second.status === 1, second.stdout + second.stderr);
      assert.match(second.stdout, new RegExp(`\\(${kept.length} schedule\\(s\\) to start from\\)`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
