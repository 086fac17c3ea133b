// Detection's catalogue (src/detect/catalogue.ts): every bug switch has its entry, each field
// says something, and the switches that fail limbo detect when missed are most of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bugDetection, detectionCatalogue } from '../../src/detect/catalogue.js';
import { bugNames } from '../../src/services/bugs.js';

test('every switch has a catalogue entry and the catalogue names no other', () => {
  assert.deepEqual(Object.keys(detectionCatalogue).sort(), [...bugNames].sort());
  for (const name of bugNames) {
    const d = bugDetection(name);
    for (const f of [d.description, d.source, d.effect, d.signal]) assert.ok(f.length > 10, `${name}: ${f}`);
  }
  assert.ok(bugNames.filter((n) => bugDetection(n).mustCatch).length > bugNames.length / 2);
});
