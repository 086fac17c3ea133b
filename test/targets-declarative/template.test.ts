// A declaration's placeholders: each form parsed and filled from the values a run knows, a
// malformed one named with the forms there are, a missing value named for its service.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fill, references, type TemplateValues } from '../../src/targets/declarative/template.js';

const values: TemplateValues = {
  name: 'redis-1',
  dataDir: '/d/redis-1',
  runDir: '/r',
  ports: { client: 7001 },
  portsOf: (s) => (s === 'redis-2' ? { client: 7002 } : undefined),
  linkAddress: (l) => (l === '*->redis-1' ? '127.0.0.1:41234' : undefined),
};

test('every placeholder fills: own port, another service, a link and its port alone, names and dirs', () => {
  assert.equal(
    fill(
      'port {{port:client}} addr {{addr:redis-2.client}} link {{link:*->redis-1}} ' +
        'announce-port {{linkport:*->redis-1}} {{name}} {{dataDir}} {{runDir}}',
      values,
    ),
    'port 7001 addr 127.0.0.1:7002 link 127.0.0.1:41234 announce-port 41234 redis-1 /d/redis-1 /r',
  );
  assert.deepEqual(references('{{linkport:*->redis-1}}'), [
    { kind: 'link', link: '*->redis-1', portOnly: true },
  ]);
});

test('a malformed placeholder is named with the forms there are; one without a value names the service', () => {
  const [bad] = references('{{linkport:redis-1}}');
  assert.ok(typeof bad === 'string', JSON.stringify(bad));
  assert.match(bad, /\{\{linkport:redis-1\}\} is not a placeholder \(use .*\{\{linkport:FROM->TO\}\}/);
  assert.throws(
    () => fill('{{linkport:*->redis-9}}', values),
    /\{\{linkport:\*->redis-9\}\} has no value for redis-1/,
  );
});
