import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseOptions, formatHelp, type OptionSpecs } from '../../src/util/options.js';
import { UsageError } from '../../src/util/errors.js';

const specs = {
  port: { type: 'int', default: 0, min: 0, max: 65535, description: 'port' },
  dataDir: { type: 'string', description: 'data dir' },
  protocol: { type: 'enum', values: ['rpc', 'legacy'], default: 'rpc', description: 'protocol' },
  fsync: { type: 'bool', default: true, description: 'fsync' },
  partitions: { type: 'list', description: 'partitions' },
} satisfies OptionSpecs;

test('flags win over env, env over defaults', () => {
  const r = parseOptions(specs, ['--port', '5', '--data-dir=/x'], {
    LIMBO_PORT: '7',
    LIMBO_PROTOCOL: 'legacy',
  });
  assert.equal(r.options.port, 5);
  assert.equal(r.options.dataDir, '/x');
  assert.equal(r.options.protocol, 'legacy');
  assert.equal(r.options.fsync, true);
  assert.equal(r.options.partitions, undefined);
});

test('bool flags, lists and positionals', () => {
  const r = parseOptions(specs, ['a', '--fsync=false', '--partitions', '1,2', '--partitions=3', 'b'], {});
  assert.deepEqual(r.positionals, ['a', 'b']);
  assert.equal(r.options.fsync, false);
  assert.deepEqual(r.options.partitions, ['1', '2', '3']);
});

test('bad values name the option', () => {
  assert.throws(
    () => parseOptions(specs, ['--port', 'x'], {}),
    (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.match(e.message, /--port/);
      return true;
    },
  );
  assert.throws(() => parseOptions(specs, [], { LIMBO_PORT: '70000' }), /LIMBO_PORT: must be at most 65535/);
  assert.throws(
    () => parseOptions(specs, ['--protocol', 'x'], {}),
    /--protocol: expected one of rpc, legacy/,
  );
  assert.throws(() => parseOptions(specs, ['--nope'], {}), /unknown option --nope/);
  assert.throws(() => parseOptions(specs, ['--port'], {}), /--port needs a value/);
});

test('help lists every option with its env form', () => {
  const text = formatHelp('limbo x', 'does x', specs);
  for (const flag of ['--port', '--data-dir', '--protocol', '--fsync', '--partitions', 'LIMBO_DATA_DIR']) {
    assert.ok(text.includes(flag), flag);
  }
});
