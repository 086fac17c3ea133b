// `limbo validate` as a user runs it, on temporary *.limbo.ts files: a sound declaration is
// "ok: <summary>" and exit 0; a bad one is every problem on its own line, naming the field,
// and exit 2 — with a mistake repeated in many fields said once — and nothing is started.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { limboSync, packageRoot } from '../helpers/limbo-cli.js';

// Inside the package, so `import … from 'limbo'` resolves through its self-reference.
mkdirSync(join(packageRoot, '.limbo'), { recursive: true });
const dir = mkdtempSync(join(packageRoot, '.limbo', 'validate-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `<name>.limbo.ts` declaring `body` (a TypeScript object literal); its path as limbo shows it. */
function declaration(name: string, body: string, prelude = ''): string {
  const file = join(dir, `${name}.limbo.ts`);
  writeFileSync(
    file,
    `import { defineTarget } from 'limbo';\n${prelude}\nexport default defineTarget(${body});\n`,
  );
  return relative(packageRoot, file);
}

const service = (name: string, args: string[], extra = ''): string => `{
  name: '${name}', role: 'processor', command: 'sleep', args: ${JSON.stringify(args)},
  ports: ['http', 'peer'], ready: { tcp: '127.0.0.1:{{port:http}}' }${extra}
}`;

/** A sound toy declaration: two sleeping processes, `a` dialling `b` through a link. */
const toy = (aArgs = ['60', '{{link:a->b}}'], bArgs = ['60', '{{addr:a.peer}}']): string => `{
  name: 'toy',
  about: 'two sleeping processes standing in for a system',
  services: [${service('a', aArgs)}, ${service('b', bArgs)}],
  links: [{ from: 'client', to: 'a', port: 'http' }, { from: 'a', to: 'b', port: 'peer' }],
  client: { api: 'reference' },
  leadership: { http: { port: 'http', path: '/leader' }, leaderWhen: { jsonPath: 'leader', equals: '{{name}}' } },
  signals: { limbo_ingress_resends_total: { missing: 'it never resends' } },
}`;

function validate(file: string): { status: number | null; stdout: string; lines: string[] } {
  const r = limboSync(['validate', '--target', file], 60_000);
  return { status: r.status, stdout: r.stdout, lines: r.stderr.split('\n').filter((l) => l !== '') };
}

test('a sound declaration is ok with its summary, exit 0', () => {
  const r = validate(declaration('good', toy()));
  assert.equal(r.status, 0, r.lines.join('\n'));
  assert.match(
    r.stdout,
    /^ok: .*good\.limbo\.ts: toy: 2 services \(a processor, b processor\); 2 links \(client->a, a->b\); commands found: sleep/,
  );
  assert.match(r.stdout, /leadership by http port http \/leader; 0 signal\(s\) mapped, 1 declared missing/);
  assert.deepEqual(r.lines, []);
});

test('a wrong template in many args of several services is one line naming where', () => {
  const wrong = Array.from({ length: 5 }, (_, i) => `--peer${i}={{link:a->c}}`);
  const file = declaration('repeated', toy(wrong, wrong.slice(0, 4)));
  const r = validate(file);
  assert.equal(r.status, 2);
  assert.deepEqual(r.lines, [
    `${file}: {{link:a->c}}: no link a->c (have client->a, a->b) (in 9 args of services a, b)`,
  ]);
});

test('every problem of a bad declaration is its own line naming the field, exit 2', () => {
  const file = declaration(
    'bad',
    `{
  name: 'toy',
  about: 'broken on purpose',
  services: [${service('a', ['{{port:nope}}'], ", restart: 'always'")}, {
    name: 'b', role: 'processor', command: 'no-such-program-limbo', ports: ['peer'], ready: { tcp: '127.0.0.1:{{port:peer}}' }
  }],
  links: [{ from: 'client', to: 'a', port: 'http' }, { from: 'a', to: 'c', port: 'peer' }, { from: 'a', to: 'b', port: 'http' }],
  client: { api: { name: 'half', callPath: () => '/' } },
  leadership: { http: { port: 'admin', path: 'leader' }, leaderWhen: { jsonPath: 'leader', equals: 1 } },
  signals: { limbo_made_up_total: { metric: 'x' } },
}`,
  );
  const r = validate(file);
  assert.equal(r.status, 2);
  const expected = [
    /services\[0\] \(a\)\.restart: unknown field/,
    /links\[1\]\.to: no service c \(have a, b\)/,
    /links\[2\]\.port: b has no port http \(its ports: peer\)/,
    /services\[0\] \(a\)\.args\[0\]: \{\{port:nope\}\}: a has no port nope/,
    // one mistake of the API object in five fields: one line naming them
    /: must be a function \(in client\.api\.invocationIdFor, client\.api\.sendPath, client\.api\.attachPath, client\.api\.idFrom, client\.api\.counterValue\)$/,
    /leadership\.http\.port: no service has a port admin/,
    /leadership\.http\.path: must start with \//,
    /signals\.limbo_made_up_total: not a limbo signal \(known: limbo_ingress_\*, limbo_processor_\*/,
    /services\[1\] \(b\)\.command: no-such-program-limbo not found/,
  ];
  for (const e of expected)
    assert.equal(r.lines.filter((l) => e.test(l)).length, 1, `one line matching ${e}\n${r.lines.join('\n')}`);
  for (const l of r.lines) assert.ok(l.startsWith(`${file}: `), l);
  assert.ok(
    r.lines.every((l) => l.length < 300),
    'no line runs on',
  );
});

test('a client module that does not load, a missing --target and an unknown name exit 2 with one line', () => {
  const broken = declaration('broken', toy(), `import './no-such-client-module.js';`);
  const r = validate(broken);
  assert.equal(r.status, 2);
  assert.equal(r.lines.length, 1, r.lines.join('\n'));
  assert.match(r.lines[0]!, /broken\.limbo\.ts: cannot load: .*no-such-client-module/);
  const none = limboSync(['validate'], 60_000);
  assert.equal(none.status, 2);
  assert.equal(none.stderr.trim(), 'limbo validate: --target: name the declared target to validate');
  const unknown = limboSync(['validate', '--target', 'no-such-target'], 60_000);
  assert.equal(unknown.status, 2);
  assert.match(
    unknown.stderr,
    /^limbo validate: --target no-such-target: no targets\/no-such-target\.limbo\.ts/,
  );
});

test('a startAfter cycle is found before anything starts', () => {
  const file = declaration(
    'cycle',
    toy().replace(
      `services: [${service('a', ['60', '{{link:a->b}}'])}, ${service('b', ['60', '{{addr:a.peer}}'])}]`,
      `services: [${service('a', ['60'], ", startAfter: ['b']")}, ${service('b', ['60'], ", startAfter: ['a']")}]`,
    ),
  );
  const r = validate(file);
  assert.equal(r.status, 2, r.stdout);
  assert.deepEqual(r.lines, [
    `${file}: services[].startAfter: a cycle: a → b → a (none of them could start)`,
  ]);
});
