// What each registered fault does, in words: the source of docs/reference/faults.md
// (`npm run docs:reference` writes it; test/docs/reference-pages.test.ts fails when a
// registered fault has no entry here, an entry names no registered fault, or the page is
// stale). Parameters are those of the registered name (how seed files and `createFault` give
// them); `helper` is how a suite file writes the same fault.
//
//   registerFault(name) ────┐
//   faultDocs[name] ────────┼─▶ src/cli/reference-docs.ts ─▶ docs/reference/faults.md
//   chaos/**/*.ts schedule ─┘

export interface FaultDoc {
  /** The call in a suite file, e.g. `latency(link, { latencyMs, jitterMs }, { stream })`. */
  helper: string;
  /** What it does while it is in. */
  does: string;
  /** Its parameters by name (as data), each with its default or `required`. */
  parameters: Readonly<Record<string, string>>;
  /** What its heal undoes. */
  heal: string;
  /** What proves it landed (the evidence faultsHitTraffic judges it on). */
  landedWhen: string;
}

const link =
  'the link: its name (`ingress->processor-1`) or a link selector (`link(from, to)`, `linkInto(service)`, `anyLink()`), resolved at the inject (required)';
const service =
  'the service: its name (`processor-2`) or a service selector (`leaderOf({ partition })`, `randomOf(role)`, `allOf(role)`), resolved at the inject (required)';
const logPartitions = 'only appends to these partitions (`partition` for one; default all)';

/** Landed-when for a toxic that hurts one stream. */
const streamEvidence =
  'Its proxy read bytes in the toxic’s stream while it was in, or a connection was dialled into the proxy, or connections closed at the inject.';
/** Landed-when for a toxic that hurts the connection as a whole. */
const connectionEvidence =
  'Its proxy read bytes in either direction while it was in, or a connection was dialled into it, or connections closed at the inject.';
/** Landed-when for a process fault: the service held work. */
const heldWork =
  'The service held work: the proxies of every link into or out of it carried bytes or dials while the fault was in, connections on them were cut at the inject, or they carried bytes in the second before it. A leader with no proxied link counts when ops were in flight at the inject.';
/** Landed-when for a fault hook inside a service. */
const hookEvidence = (hook: string): string =>
  `The hook \`${hook}\` acted on work: its own count of hits, read just before the heal and summed over the hooked services, is above 0. That count alone decides, whatever the service’s links carried; a count that could not be read counts as nothing met.`;
const hookHeal =
  'The hook switched off in each service (one restarted meanwhile has it off already); the hits at the heal are kept in the fault’s details.';

export const faultDocs: Readonly<Record<string, FaultDoc>> = {
  bandwidth: {
    helper: '`bandwidth(link, { rateKBps }, { stream, toxicity })`',
    does: 'Throttles the link’s server → client bytes to `rateKBps` (a Toxiproxy `bandwidth` toxic).',
    parameters: { on: link, rateKBps: 'kilobytes per second let through (required)' },
    heal: 'The toxic removed.',
    landedWhen: streamEvidence,
  },
  'clients-before-processors': {
    helper: '`clientsBeforeProcessors()`',
    does: 'Every processor down while the clients already call: the start-up race limbo grew from. The warm-up defaults to 0 with it.',
    parameters: {},
    heal: 'The target starts its processors, and any processor not running is started again.',
    landedWhen: 'The clients’ links (`client->…`) carried bytes or dials while no processor was up.',
  },
  'clock-step': {
    helper: '`clockStep(service, { offsetMs })`',
    does: 'Steps the wall clock of the selected services by `offsetMs`, as an NTP step would: `Date.now()` and `new Date()` move, `performance.now()` does not (the `clock.step` fault hook, which every reference service has).',
    parameters: { on: service, offsetMs: 'the step, forward or (negative) back (required)' },
    heal: 'The offset taken away (the hook switched off).',
    landedWhen: hookEvidence('clock.step') + ' A hit is a read of the stepped clock.',
  },
  'data-loss-restart': {
    helper: '`restartWithDataLoss(service)`',
    does: "A restart that loses the service’s data dir: stopped, its data gone, started again. Only on services whose target says they survive that (a reference processor keeps no data dir and rebuilds from the log; a declared service with `dataLoss: 'survives'`); the reference log holds the log’s only copy, so it is never offered.",
    parameters: { on: service },
    heal: 'A one-shot: the heal only starts the service again if it is not running.',
    landedWhen: heldWork,
  },
  'follower-lag': {
    helper: '`followerLag({ partition, latencyMs })`',
    does: 'Every processor except the partition’s current leader reads the log late (a downstream latency toxic on each follower’s `processor-N->log` link), so whoever leads next starts behind what the old leader acknowledged.',
    parameters: {
      partition: 'the partition whose followers lag (required)',
      latencyMs: 'the latency added to each follower’s log reads (required)',
    },
    heal: 'Each toxic removed.',
    landedWhen: 'The followers’ log proxies read bytes downstream (log → follower) while it was in.',
  },
  isolate: {
    helper: '`isolate(service, { direction, kinds, how })`',
    does: 'A network partition of the service: every link into and out of it cut at once. A proxy every dialer shares (`*->node-2`) is cut for its inbound half only, and left alone (named in `notCut`) for another service’s outbound half.',
    parameters: {
      on: service,
      direction: '`both` (default), `inbound` or `outbound`: an asymmetric partition keeps one half',
      kinds: 'only links of these kinds (`client`, `peer`, `storage`, or a declared kind)',
      how: '`hold` (default: a latency toxic each way longer than any run, so every byte is held until the heal and then delivered, as TCP does across a real partition), `drop` (a timeout toxic each way: the bytes thrown away, the connections left open, so a stream that lost bytes mid-frame is broken after the heal) or `refuse` (the proxies disabled: dials refused, open connections closed)',
    },
    heal: 'Each toxic removed (a `hold` toxic then sends what it held) or proxy enabled again; one already gone counts as healed.',
    landedWhen:
      'Its proxies read bytes in either direction or were dialled while it was in, or the inject cut open connections.',
  },
  kill: {
    helper: '`kill(service)`',
    does: 'kill -9 of the selected services.',
    parameters: { on: service },
    heal: 'Each service not running is started again, with the same data.',
    landedWhen: heldWork,
  },
  latency: {
    helper: '`latency(link, { latencyMs, jitterMs }, { stream, toxicity })`',
    does: 'Delays every chunk on the link by `latencyMs` ± `jitterMs` (a Toxiproxy `latency` toxic), server → client unless `stream` says otherwise.',
    parameters: {
      on: link,
      latencyMs: 'the delay added (required)',
      jitterMs: 'random variation around it (default 0)',
      stream:
        '`downstream` (server → client, default) or `upstream` (client → server: e.g. a deposed leader’s appends held back)',
    },
    heal: 'The toxic removed.',
    landedWhen: streamEvidence,
  },
  'leadership-step-failure': {
    helper: '`leadershipStepFailure({ partition, steps, to })`',
    does: 'A leadership change whose chosen steps fail in the processor that takes it up: the `processor.leadership-step` hook goes on in that processor, then the controller moves the partition there. `claim` fails the answer to its fresh-epoch claim, `announce` the append of its announce record, `catch-up` its log read before it has applied the announce, `resume` taking up the invocations a previous leader left. The processor retries or steps down and claims again, and leads once healed.',
    parameters: {
      partition: 'the partition whose leadership moves (required)',
      steps:
        'the failing steps, some of `claim`, `announce`, `catch-up`, `resume` (`step` for one; default `announce`)',
      to: 'the processor that takes it up (default a seeded pick among those that do not lead it)',
    },
    heal: hookHeal,
    landedWhen: hookEvidence('processor.leadership-step') + ' A hit is a step it failed.',
  },
  limit_data: {
    helper: '`limitData(link, { bytes }, { stream, toxicity })`',
    does: 'Lets `bytes` through each connection on the link server → client (cutting the chunk that crosses the limit), then closes it (a Toxiproxy `limit_data` toxic).',
    parameters: { on: link, bytes: 'the bytes let through per connection (required)' },
    heal: 'The toxic removed.',
    landedWhen: streamEvidence,
  },
  'link-down': {
    helper: '`linkDown(link)`',
    does: 'The link’s proxy disabled: new connections refused, open ones closed.',
    parameters: { on: link },
    heal: 'The proxy enabled again.',
    landedWhen:
      'Its proxy read bytes or was dialled up to the cut, or the inject closed open connections (a disabled proxy does not see the dials it refuses).',
  },
  'log-append-errors': {
    helper: '`logAppendErrors({ partitions })`',
    does: 'The log refuses every append (UNAVAILABLE, nothing written) while every leader stays up: errors, not latency (the `log.append-error` hook in the log server).',
    parameters: { partitions: logPartitions },
    heal: hookHeal,
    landedWhen: hookEvidence('log.append-error') + ' A hit is an append it refused.',
  },
  'log-write-errors': {
    helper: '`logWriteErrors({ written, partitions })`',
    does: 'The log’s disk fails each durable write (EIO) while every leader stays up (the `log.write-error` hook in the log server): the appends of the write are answered with the error, and the partition recovers from its file a moment later, as a restart would. `written` says what reached the disk first: `none`; `torn` (every frame but half of the last: recovery cuts the torn one, the whole ones become records); `all` (appends answered failed whose records are in the log: an ambiguous failure the writer must tolerate).',
    parameters: { written: '`none` (default), `torn` or `all`', partitions: logPartitions },
    heal: hookHeal,
    landedWhen: hookEvidence('log.write-error') + ' A hit is a write it failed.',
  },
  pause: {
    helper: '`pause(service)`',
    does: 'SIGSTOP of the selected services: alive to the kernel, silent to everyone else.',
    parameters: { on: service },
    heal: 'SIGCONT.',
    landedWhen: heldWork,
  },
  reset_peer: {
    helper: '`resetPeer(link, { timeoutMs }, { stream, toxicity })`',
    does: 'On the first server → client data of each connection on the link, drops it, waits `timeoutMs` and resets the connection with a TCP RST, as a crashed peer would (a Toxiproxy `reset_peer` toxic).',
    parameters: { on: link, timeoutMs: 'how long after the first data to reset (default 0: at once)' },
    heal: 'The toxic removed.',
    landedWhen: connectionEvidence,
  },
  restart: {
    helper: '`restart(service)`',
    does: 'A graceful stop (SIGTERM, SIGKILL after the grace period) and a start, of each selected service; how each stop went is recorded for `gracefulStops` where the runtime can tell.',
    parameters: { on: service },
    heal: 'A one-shot: the heal only starts the service again if it is not running.',
    landedWhen: heldWork,
  },
  slicer: {
    helper: '`slicer(link, { averageSize, sizeVariation, delayUs }, { stream, toxicity })`',
    does: 'Slices the link’s server → client data into small chunks, optionally with a delay between them (a Toxiproxy `slicer` toxic).',
    parameters: {
      on: link,
      averageSize: 'the average chunk size in bytes (required)',
      sizeVariation: 'how much a chunk’s size varies (default 0)',
      delayUs: 'the delay between chunks in microseconds (default 0)',
    },
    heal: 'The toxic removed.',
    landedWhen: streamEvidence,
  },
  'slow-fsync': {
    helper: '`slowFsync({ delayMs, partitions })`',
    does: 'Each durable write of the log completes `delayMs` late: a slow disk (the `log.slow-fsync` hook).',
    parameters: { delayMs: 'the delay per durable write (required)', partitions: logPartitions },
    heal: hookHeal,
    landedWhen: hookEvidence('log.slow-fsync') + ' A hit is a write it held back.',
  },
  slow_close: {
    helper: '`slowClose(link, { delayMs }, { stream, toxicity })`',
    does: 'Data passes, but each close on the link is held back `delayMs` (a Toxiproxy `slow_close` toxic).',
    parameters: { on: link, delayMs: 'the delay before a close goes through (required)' },
    heal: 'The toxic removed.',
    landedWhen: connectionEvidence,
  },
  'table-updates': {
    helper: '`tableUpdates({ how, delayMs, watcher })`',
    does: 'The controller’s partition-table updates to the ingresses delayed, dropped, or reordered (an update held until a newer one has gone, then sent after it, or after `delayMs`): the `controller.table-updates` hook in the log server.',
    parameters: {
      how: '`delay` (default), `drop` or `reorder`',
      delayMs: 'how long an update is held (the hook’s default 1000)',
      watcher: 'only ingresses whose name starts with this (default all)',
    },
    heal: hookHeal + ' An update still held goes out after the next newer one.',
    landedWhen: hookEvidence('controller.table-updates') + ' A hit is an update it held back or dropped.',
  },
  timeout: {
    helper: '`timeout(link, { timeoutMs }, { stream, toxicity })`, or `blackhole(link)`',
    does: 'A black hole (a Toxiproxy `timeout` toxic): drops every byte in its stream and closes the connection once `timeoutMs` pass with no data arriving; with 0 (and `blackhole`) the connections stay open and silent until the heal. An end in either direction closes the whole connection.',
    parameters: {
      on: link,
      timeoutMs: 'when to close a held connection (default 0: never)',
      stream: '`downstream` (default) or `upstream`',
    },
    heal: 'The toxic removed; that closes the connections it held.',
    landedWhen: connectionEvidence,
  },
  'transfer-leadership': {
    helper: '`transferLeadership({ partition, to })`',
    does: 'The controller moves the partition’s leadership from its leader to `to`, or to a seeded pick among the other running processors. On a declared target, its `leadershipTransfer` command does, and the move is done once the leadership probe names `to`; a declaration without one does not offer this fault (suites using it are skipped with the reason, explore does not draw it).',
    parameters: {
      partition: 'the partition to move (required)',
      to: 'the processor to move it to (default a seeded pick)',
    },
    heal: 'Nothing to undo: a one-shot.',
    landedWhen:
      'The old leader held work: the proxies of its links carried bytes or dials in the second before the move or while the fault was in, or connections on them were cut at it. With no proxied link, ops were in flight at the move.',
  },
};
