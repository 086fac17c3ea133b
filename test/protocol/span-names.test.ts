// The span contract (src/protocol/names.ts): every span name and span attribute key is spelled
// there once, and the bytes on the wire stay what dashboards, trace checks and the report read.
//
//   - the table's names and keys, pinned as the literal strings they put on the wire;
//   - src/ scanned with the TypeScript parser: every span started (tracer.startSpan, and any
//     function that passes one of its parameters on as a span's name, e.g. startLogSpan) gets
//     its name from `spanNames`, never a string or template literal of its own;
//   - no attribute key (`limbo.*`, `http.*`, `url.*`) and no span name of the table spelled as a
//     literal anywhere in src/ outside the table;
//   - the scan itself catches a literal name, a template name and a literal key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { logServerSpanNames, spanAttributes, spanNamePatterns, spanNames } from '../../src/protocol/names.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const TABLE_FILE = 'src/protocol/names.ts';

test('the table builds the span names on the wire, byte for byte', () => {
  assert.deepEqual(
    [
      spanNames.clientOp('call'),
      spanNames.clientOp('counterAdd'),
      spanNames.ingressRequest('call'),
      spanNames.ingressRequest('attach'),
      spanNames.ingressAttempt('submit'),
      spanNames.ingressAttempt('get_output'),
      spanNames.processorSubmit,
      spanNames.processorGetOutput,
      spanNames.invoke('Counter', 'add'),
      spanNames.processorAppend('invoke'),
      spanNames.processorAppend('end'),
      spanNames.processorAppend('announce_leader'),
      spanNames.apply('invoke'),
      spanNames.apply('end'),
      spanNames.logAppend,
      spanNames.logGetTail,
      spanNames.logRead,
      spanNames.logFenceEpoch,
      spanNames.logFenceCasLeader,
      spanNames.logFenceTransfer,
      spanNames.faultWindow('kill'),
    ],
    [
      'client call',
      'client counterAdd',
      'ingress call',
      'ingress attach',
      'ingress submit attempt',
      'ingress get_output attempt',
      'processor submit',
      'processor get_output',
      'invoke Counter/add',
      'log append invoke',
      'log append end',
      'log append announce_leader',
      'apply invoke',
      'apply end',
      'log append',
      'log get_tail',
      'log read',
      'log fence epoch',
      'log fence cas_leader',
      'log fence transfer',
      'fault kill',
    ],
  );
  assert.deepEqual([...logServerSpanNames].sort(), [
    'log append',
    'log fence cas_leader',
    'log fence epoch',
    'log fence transfer',
    'log get_tail',
    'log read',
  ]);
});

test('each family pattern reads back the part its builder put in, and only its own names', () => {
  const built: Record<keyof typeof spanNamePatterns, [string, string]> = {
    clientOp: [spanNames.clientOp('send'), 'send'],
    ingressRequest: [spanNames.ingressRequest('output'), 'output'],
    ingressAttempt: [spanNames.ingressAttempt('get_output'), 'get_output'],
    invoke: [spanNames.invoke('Greeter', 'greet'), 'Greeter/greet'],
    processorAppend: [spanNames.processorAppend('end'), 'end'],
    apply: [spanNames.apply('invoke'), 'invoke'],
    faultWindow: [spanNames.faultWindow('partition'), 'partition'],
  };
  for (const [family, [name, part]] of Object.entries(built)) {
    const pattern = spanNamePatterns[family as keyof typeof spanNamePatterns];
    assert.equal(pattern.exec(name)?.[1], part, `${family}: ${name}`);
    for (const [other, [otherName]] of Object.entries(built))
      if (other !== family) assert.ok(!pattern.test(otherName), `${family} matches ${otherName}`);
    for (const fixed of logServerSpanNames) assert.ok(!pattern.test(fixed), `${family} matches ${fixed}`);
  }
});

test('the attribute keys on the wire, byte for byte', () => {
  assert.deepEqual(spanAttributes, {
    invocationId: 'limbo.invocation.id',
    partition: 'limbo.partition',
    leaderEpoch: 'limbo.leader.epoch',
    attempt: 'limbo.attempt',
    resendReason: 'limbo.resend.reason',
    targetAddress: 'limbo.target.address',
    requestId: 'limbo.request.id',
    reply: 'limbo.reply',
    handlerAttempts: 'limbo.handler.attempts',
    outcome: 'limbo.outcome',
    node: 'limbo.node',
    lsn: 'limbo.lsn',
    lsnFirst: 'limbo.lsn.first',
    logRecords: 'limbo.log.records',
    logFromLsn: 'limbo.log.from_lsn',
    logEntries: 'limbo.log.entries',
    fenceFrom: 'limbo.fence.from',
    fenceLeader: 'limbo.fence.leader',
    fenceReason: 'limbo.fence.reason',
    fenceNode: 'limbo.fence.node',
    fenceExpectedEpoch: 'limbo.fence.expected_epoch',
    fenceOk: 'limbo.fence.ok',
    opKind: 'limbo.op.kind',
    opId: 'limbo.op.id',
    opOutcome: 'limbo.op.outcome',
    opErrorCode: 'limbo.op.error.code',
    clientProcess: 'limbo.client.process',
    fault: 'limbo.fault',
    faultTarget: 'limbo.fault.target',
    seed: 'limbo.seed',
    spanSource: 'limbo.span.source',
    httpMethod: 'http.request.method',
    urlPath: 'url.path',
    httpStatus: 'http.response.status_code',
  });
});

// ------------------------------------------------------------------ the scan

/** The OpenTelemetry calls that start a span, their name the first argument. */
const OTEL_STARTERS = new Set(['startSpan', 'startActiveSpan']);
/** A key in the shape of a span attribute's. */
const ATTRIBUTE_KEY = /^(limbo|http|url)\.[a-z_]+(\.[a-z_]+)*$/;
/** The table's names that a literal may not repeat: the fixed ones and the families' known members. */
const TABLE_NAMES: ReadonlySet<string> = new Set([
  ...logServerSpanNames,
  spanNames.processorSubmit,
  spanNames.processorGetOutput,
  ...(['submit', 'get_output'] as const).map((r) => spanNames.ingressAttempt(r)),
  ...['call', 'send', 'attach', 'output'].map((k) => spanNames.ingressRequest(k)),
  ...(['announce_leader', 'invoke', 'end'] as const).flatMap((t) => [
    spanNames.processorAppend(t),
    spanNames.apply(t),
  ]),
]);
const TABLE_KEYS: ReadonlySet<string> = new Set(Object.values(spanAttributes));

interface Source {
  path: string;
  file: ts.SourceFile;
}

interface SpanStart {
  where: string;
  callee: string;
  name: string;
}

interface ScanResult {
  starts: SpanStart[];
  /** Function name → the index of the parameter it passes on as a span's name. */
  wrappers: Map<string, number>;
  problems: string[];
}

const parse = (path: string, text: string): Source => ({
  path,
  file: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS),
});

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  node.forEachChild((c) => walk(c, visit));
}

function calleeName(call: ts.CallExpression): string | undefined {
  const e = call.expression;
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return undefined;
}

type FunctionLike = ts.FunctionDeclaration | ts.MethodDeclaration | ts.ArrowFunction | ts.FunctionExpression;

function enclosingFunction(node: ts.Node): FunctionLike | undefined {
  for (let n = node.parent; n !== undefined; n = n.parent)
    if (
      ts.isFunctionDeclaration(n) ||
      ts.isMethodDeclaration(n) ||
      ts.isArrowFunction(n) ||
      ts.isFunctionExpression(n)
    )
      return n;
  return undefined;
}

/** The name a function is called by: its own, its method's, or the variable it is assigned to. */
function functionName(f: FunctionLike): string | undefined {
  if ((ts.isFunctionDeclaration(f) || ts.isMethodDeclaration(f)) && f.name !== undefined)
    return ts.isIdentifier(f.name) ? f.name.text : undefined;
  const p = f.parent;
  if (ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) return p.name.text;
  if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.name)) return p.name.text;
  return undefined;
}

/** The index of `expr` among its function's parameters, when it is one of them. */
function parameterIndex(expr: ts.Expression): number | undefined {
  if (!ts.isIdentifier(expr)) return undefined;
  const f = enclosingFunction(expr);
  const i = f?.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === expr.text);
  return i === undefined || i < 0 ? undefined : i;
}

/** The file imports `spanNames` from the protocol's table. */
function importsTable(src: Source): boolean {
  return src.file.statements.some(
    (s) =>
      ts.isImportDeclaration(s) &&
      ts.isStringLiteral(s.moduleSpecifier) &&
      /(^|\/)protocol\/names\.js$|^\.\/names\.js$/.test(s.moduleSpecifier.text) &&
      s.importClause?.namedBindings !== undefined &&
      ts.isNamedImports(s.importClause.namedBindings) &&
      s.importClause.namedBindings.elements.some(
        (e) => (e.propertyName ?? e.name).text === 'spanNames' && e.name.text === 'spanNames',
      ),
  );
}

/** A name taken from the table: `spanNames.x`, `spanNames.x(…)`, or either branch of a choice of them. */
function fromTable(expr: ts.Expression): boolean {
  if (ts.isParenthesizedExpression(expr)) return fromTable(expr.expression);
  if (ts.isConditionalExpression(expr)) return fromTable(expr.whenTrue) && fromTable(expr.whenFalse);
  const target = ts.isCallExpression(expr) ? expr.expression : expr;
  return (
    ts.isPropertyAccessExpression(target) &&
    ts.isIdentifier(target.expression) &&
    target.expression.text === 'spanNames'
  );
}

function scan(sources: readonly Source[]): ScanResult {
  const calls: { src: Source; call: ts.CallExpression; callee: string }[] = [];
  for (const src of sources)
    walk(src.file, (n) => {
      if (!ts.isCallExpression(n)) return;
      const callee = calleeName(n);
      if (callee !== undefined) calls.push({ src, call: n, callee });
    });
  // The starters: OpenTelemetry's, then every function that hands a parameter on to one as the
  // span's name, until no new one turns up.
  const wrappers = new Map<string, number>();
  const nameIndex = (callee: string): number | undefined =>
    OTEL_STARTERS.has(callee) ? 0 : wrappers.get(callee);
  for (let grew = true; grew;) {
    grew = false;
    for (const { call, callee } of calls) {
      const i = nameIndex(callee);
      const arg = i === undefined ? undefined : call.arguments[i];
      if (arg === undefined) continue;
      const p = parameterIndex(arg);
      const f = p === undefined ? undefined : enclosingFunction(arg);
      const name = f === undefined ? undefined : functionName(f);
      if (p !== undefined && name !== undefined && !wrappers.has(name) && !OTEL_STARTERS.has(name)) {
        wrappers.set(name, p);
        grew = true;
      }
    }
  }
  const starts: SpanStart[] = [];
  const problems: string[] = [];
  const where = (src: Source, node: ts.Node): string =>
    `${src.path}:${src.file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  for (const { src, call, callee } of calls) {
    const i = nameIndex(callee);
    const arg = i === undefined ? undefined : call.arguments[i];
    if (arg === undefined) continue;
    const at = where(src, call);
    starts.push({ where: at, callee, name: arg.getText(src.file) });
    const forwarded = parameterIndex(arg) !== undefined;
    if (forwarded) continue;
    if (!fromTable(arg))
      problems.push(`${at}: ${callee}(${arg.getText(src.file)}): a span name not from spanNames`);
    else if (!importsTable(src))
      problems.push(`${at}: spanNames is not the protocol's table (import it from protocol/names.js)`);
  }
  for (const src of sources) {
    if (src.path === TABLE_FILE) continue;
    walk(src.file, (n) => {
      if (!ts.isStringLiteral(n) && !ts.isNoSubstitutionTemplateLiteral(n)) return;
      const p = n.parent;
      const asKey =
        (ts.isPropertyAssignment(p) && p.name === n) ||
        (ts.isComputedPropertyName(p) && p.expression === n) ||
        (ts.isElementAccessExpression(p) && p.argumentExpression === n) ||
        (ts.isCallExpression(p) && p.arguments[0] === n && calleeName(p) === 'setAttribute');
      if (TABLE_KEYS.has(n.text) || (asKey && ATTRIBUTE_KEY.test(n.text)))
        problems.push(`${where(src, n)}: attribute key '${n.text}' spelled outside spanAttributes`);
      else if (TABLE_NAMES.has(n.text))
        problems.push(`${where(src, n)}: span name '${n.text}' spelled outside spanNames`);
    });
  }
  return { starts, wrappers, problems };
}

function sourcesUnder(dir: string): Source[] {
  const out: Source[] = [];
  const visit = (d: string): void => {
    for (const entry of readdirSync(d).sort()) {
      const path = join(d, entry);
      if (statSync(path).isDirectory()) visit(path);
      else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts'))
        out.push(parse(relative(repo, path), readFileSync(path, 'utf8')));
    }
  };
  visit(dir);
  return out;
}

test('src/ starts every span with a name from spanNames and spells no attribute key of its own', () => {
  const { starts, wrappers, problems } = scan(sourcesUnder(join(repo, 'src')));
  assert.deepEqual(problems, []);
  // The scan sees what it must: the helpers that pass a name on, and a span from every producer.
  assert.equal(wrappers.get('startLogSpan'), 1);
  assert.equal(wrappers.get('rpcSpan'), 0);
  for (const producer of [
    'src/services/log',
    'src/services/processor',
    'src/services/ingress',
    'src/workload/client-span.ts',
    'src/observe/span-sink.ts',
  ])
    assert.ok(
      starts.some((s) => s.where.startsWith(producer)),
      `no span start found in ${producer}`,
    );
  assert.ok(starts.length >= 15, `only ${starts.length} span starts found`);
});

test('the scan catches a literal name, a template name, a literal key and a name from elsewhere', () => {
  const bad = parse(
    'src/services/x/bad.ts',
    [
      "import { spanNames } from '../../protocol/names.js';",
      'const other = { apply: (t: string) => t };',
      'export function run(tracer: any, type: string, node: string) {',
      "  tracer.startSpan('log compact');",
      '  tracer.startSpan(`apply ${type}`);',
      "  tracer.startSpan(spanNames.logRead, { attributes: { 'limbo.shard': 1 } });",
      "  startMySpan(tracer, 'mine', node);",
      '  startMySpan(tracer, spanNames.apply(type), node);',
      '  tracer.startSpan(other.apply(type));',
      "  const s = tracer.startSpan(spanNames.logAppend); s.setAttribute('limbo.lsn', 1);",
      "  return s.attributes['limbo.node'] === node || s.name === 'apply end';",
      '}',
      'function startMySpan(tracer: any, name: string, node: string) {',
      '  return tracer.startSpan(name, { attributes: { node } });',
      '}',
    ].join('\n'),
  );
  const { wrappers, problems } = scan([bad]);
  assert.equal(wrappers.get('startMySpan'), 1);
  const lines = problems.map((p) => p.replace(/^src\/services\/x\/bad\.ts:(\d+): .*$/, '$1'));
  assert.deepEqual(lines, ['4', '5', '7', '9', '6', '10', '11', '11'], problems.join('\n'));
  // The same file, spanNames not imported: a look-alike table is not the table.
  const { problems: unimported } = scan([
    parse('src/services/x/bad2.ts', 'export const f = (t: any) => t.startSpan(spanNames.logRead);'),
  ]);
  assert.equal(unimported.length, 1);
  assert.match(unimported[0]!, /not the protocol's table/);
});
