// What each registered check is for, in words: the source of docs/reference/checks.md
// (`npm run docs:reference` writes it; test/docs/reference-pages.test.ts fails when a
// registered check has no entry here, an entry names no registered check, or the page is
// stale). Each entry says what the checker's code does, not what it might do one day.
//
//   registerChecker(name) ─┐
//   checkDocs[name] ───────┼─▶ src/cli/reference-docs.ts ─▶ docs/reference/checks.md
//   chaos/**/*.ts expect ──┘

export interface CheckDoc {
  /** What must hold for the check to pass, in a sentence or two. */
  premise: string;
  /** What it reads from the run, and what a failure names. */
  evidence: string;
  /** When it answers inconclusive (or is skipped) rather than pass or fail. */
  inconclusiveWhen: string;
  /** How to watch it fail: a target, a bug switch or a schedule that breaks the premise. */
  seeItFail: string;
  /** Its options by name, each with its default. */
  options?: Readonly<Record<string, string>>;
  /** When the runner adds it to a run without the suite naming it. */
  addedBy?: string;
}

export const checkDocs: Readonly<Record<string, CheckDoc>> = {
  acknowledgedEffectsPresent: {
    premise:
      'Once the system acknowledged an invocation (a send answered 202 with its id, a call answered with its output), every later question about it finds it.',
    evidence:
      'The client ops: a send whose attach ended in 404 after its 202, and any op answered 404 for an invocation id an earlier op saw answered ok. Then the runner’s final attaches: after convergence it attaches once more to every invocation a call or send saw acknowledged with its id (16 at a time, all within 20 s), and one the system now says does not exist (404, or a client adapter’s `fail`) is lost — a failover that dropped what the old leader acknowledged shows only here, since the clients’ own attaches came before it. A failure names those invocation ids with up to 20 example ops (kind, path, status, error, latency); the summary counts the final attaches (found, not found, unanswered). Counter effects are left to `exactlyOnce`.',
    inconclusiveWhen: 'Nothing was acknowledged: no op ended ok and no send was accepted.',
    seeItFail:
      '`npx limbo run chaos/leader-transfer.ts --target reference+bug:fenced-ack`: a new leader drops its first proposals as duplicates and answers them as applied, so accepted sends are later not found.',
  },
  errorAnswersBounded: {
    premise:
      'A fault may slow calls down but does not turn them into error answers (4xx or 5xx): a correct system resends until it can serve them.',
    evidence:
      'Two views of the client ops. Per fault window (inject to `graceMs` after the heal), per op kind, and once for the ops outside every window: the share answered with an error. And bursts: error answers that end within `burstGapMs` of each other are one event, measured against the ops in flight at that moment. A failure names the window, the op kind, the share, the statuses, an example message and the invocation ids.',
    inconclusiveWhen: 'No client ops were recorded.',
    seeItFail:
      '`npx limbo run chaos/rolling-restart.ts --target reference+bug:lost-leadership-is-final`: the ingress answers a lost leadership with a 500 instead of resending.',
    options: {
      maxShare: 'largest share of error answers per window and op kind (default 0.02)',
      minErrors: 'fewer errors than this in a window and kind never fail it (default 2)',
      graceMs: 'how long after its heal a window lasts (default 3000)',
      burstShare: 'largest share of the ops in flight one burst may turn into errors (default 0.1)',
      burstMinErrors: 'fewer error answers than this together are no burst (default 3)',
      burstGapMs: 'error answers ending within this of the one before belong to one burst (default 100)',
    },
  },
  exactlyOnce: {
    premise:
      'Each counter add takes effect once: after convergence every counter holds its acknowledged adds plus some subset of those whose outcome the client never learnt.',
    evidence:
      'Counter adds grouped into effects by key and idempotency key (a retry is the same effect): applied if any op ended ok, unknown if one ended `info` or stayed open, failed otherwise. The final value is the last ok read invoked after every add on the key ended (the runner’s final read counts; after convergence it is asked again until one answers ok, within 20 s). Below the acknowledged sum is a lost effect; above acknowledged plus unknown, or a difference no subset of the unknown adds makes up, is a doubled one. A failure names the key, the values and the invocation ids of its adds.',
    inconclusiveWhen:
      'The workload made no counter adds (no `counterAdd` in its mix), or a key has no final value: it says, per key, what the final read answered (outcome, status, an excerpt of the body) or that none came after the adds.',
    seeItFail:
      "`--target reference+bug:idempotency-key-ignored` under a workload whose clients give up on adds and send them again with the same key (`giveUp: { retry: 'same-key' }`): the retry runs as a new invocation and the add lands twice.",
  },
  failoverTimeBounded: {
    premise:
      'When a processor is killed, paused, restarted or deposed, its partitions move and the ingress resends, so every op it met ends within `maxMs`, however long the node itself stays down.',
    evidence:
      'Fault windows of kill, pause, restart and transfer-leadership that hit a leader or a `processor-N`; for each, the ops live in it and how long each waited from the later of its invoke and the inject. A failure names the windows, the number of ops over the bound, the worst wait and its invocation id, with up to 20 examples. Faults on links are left out: nothing fails over.',
    inconclusiveWhen:
      'Never inconclusive; not applicable (skipped, counted for nothing, naming the run’s faults) when no fault struck a processor, e.g. a suite of link faults only.',
    seeItFail:
      '`npx limbo run chaos/leader-down.ts --target reference+bug:slow-failure-detection`: the controller notices the dead leader only after ten times its failure timeout.',
    options: { maxMs: 'the bound on each op’s wait (default 6000)' },
  },
  faultsHitTraffic: {
    premise:
      'Every fault met traffic of its own: a fault on a link nobody used, or on a service that held no work, tested nothing.',
    evidence:
      'Each fault’s own evidence, never the run’s traffic as a whole: the bytes, dials and cut connections its proxies counted between inject and heal in the directions it hurts; for a process fault also the bytes on its links in the second before the inject, or, with no proxied link, a leader with ops in flight; for a fault that refuses dials (link-down, isolate how `refuse`), which cannot see them, the dials within 1 s of its heal; for a fault hook inside a service, the hook’s own count of the work it acted on. Without counts of its own, the scraped byte counters of the proxies it names. The verdict lists every window with what it met.',
    inconclusiveWhen:
      'Any fault met nothing (it then names each such fault with its counts); it never fails. Not applicable (skipped) on a run without faults.',
    seeItFail:
      'It answers inconclusive, not fail: put a latency on a declared link no client dials, or cut `ingress->processor-1` in a run where processor-1 leads nothing, and the run exits 3 naming the fault and its 0 bytes.',
    addedBy: 'the runner, to every run with faults (unless the suite names it)',
  },
  gracefulStops: {
    premise:
      'A service asked to stop (SIGTERM, as a deploy or a rolling restart does) answers or hands off what it holds and exits within the grace period; one that has to be SIGKILLed lost that work the hard way.',
    evidence:
      'The stop outcomes the `restart` fault records per service (graceful or not, how long it took, the grace period). A failure names each service still running when the grace period ended, and its fault.',
    inconclusiveWhen:
      'Never: with no restart, or on a runtime that cannot tell how a stop went, it passes and says nothing was measured.',
    seeItFail:
      '`npx limbo run chaos/rolling-restart.ts --target reference+bug:reply-lost-on-shutdown`: a stopping processor drops its waiting replies and keeps its connections open while it drains.',
  },
  idempotentRetriesAgree: {
    premise:
      'A retry with the same idempotency key is the same invocation: every ok answer for one key carries the same invocation id and the same output.',
    evidence:
      'Ok answers grouped by path and idempotency key (a send and its attach count together; sends are compared by id only, as a 202 carries no output). A failure names each key whose answers differ, with their invocation ids and outputs.',
    inconclusiveWhen:
      'No idempotency key was answered ok more than once (the mix has no `idempotentRetry` or `sendRetry`, or no retry got through).',
    seeItFail:
      '`npx limbo run chaos/ingress-processor-reset.ts --target reference+bug:idempotency-key-ignored`: the ingress reads the key from the wrong header, so every retry gets a fresh invocation.',
  },
  keysFreeAfterHeal: {
    premise:
      'Every counter key is free again after the heal: a keyed service runs one invocation per key at a time, so one that never resumes holds its key and every later call on it waits.',
    evidence:
      'Per counter key, the ops on it invoked after the final heal (the runner’s first final read of the key counts, not the ones it asks again after a failed read): some must have ended ok. A failure names each held key, its ops after the heal and their invocation ids.',
    inconclusiveWhen:
      'No keyed ops were recorded, or some key had no op after the heal (it names those keys).',
    seeItFail:
      '`npx limbo run chaos/leader-transfer.ts --target reference+bug:never-resumes`: a new leader queues the keyed invocations it inherited but never starts them.',
  },
  latencyRecovers: {
    premise:
      'Once a fault heals, latency comes back near what it was before the first fault: no wedge after the heal.',
    evidence:
      'The baseline is the p90 latency of ok ops invoked before the first fault. Per fault window, the ops invoked from `recoverMs` after its heal until the next fault (or the end of chaos) must have a p90 under max(baseline × `factor`, baseline + `slackMs`); an op never answered counts with its time open, and two or more ops still open that far past the recovery wedge the window too. A failure names the window, its p90 or stuck ops, the baseline and the bound, with the slowest ops.',
    inconclusiveWhen:
      'Fewer than `minOps` ops ended ok before the first fault (it names that fault and when), or no window had `minOps` ops after its heal to judge (it gives each window’s count). Not applicable (skipped) on a run without faults.',
    seeItFail:
      '`npx limbo run chaos/partition-heal.ts --target reference+bug:dead-connection-after-heal`: the ingress keeps its dead connection after a brief partition heals.',
    options: {
      recoverMs: 'time after a heal before ops are judged (default 3000)',
      factor: 'bound as a multiple of the baseline (default 4)',
      slackMs: 'bound as the baseline plus this, if larger (default 1500)',
      minOps: 'fewer ops than this make a window or the baseline too thin to judge (default 10)',
    },
  },
  leadershipChanged: {
    premise:
      'Where a leader was killed, paused, restarted or asked to move, leadership moved: a leadership-change counter went up.',
    evidence:
      'For each such fault on a leader, the increase of `limbo_controller_leader_changes_total` and `limbo_processor_leadership_changes_total` from the inject to `graceMs` after the heal (counter resets by restarts accounted for). A failure names the windows in which neither moved.',
    inconclusiveWhen:
      'There were no samples of the counters around a window (it says where the samples it has lie); skipped on a target that has neither signal. Not applicable (skipped, naming the run’s faults) when no leader was killed, paused, restarted or moved.',
    seeItFail:
      'Pause a leader for less than the controller’s failure timeout (e.g. `pause(leaderOf({ partition: 0 }))` for 200 ms on `reference`): nobody takes over, so no counter moves.',
    options: { graceMs: 'how long after the heal a window still counts (default 5000)' },
  },
  noClientLeftHanging: {
    premise:
      'No client is left hanging: every op ends within `withinMsAfterHeal` of the final heal (or of its own invoke, if later), and no client had to give up for want of an answer.',
    evidence:
      'The client ops (the runner’s final reads left out): an op still open at the deadline, one that ended past its bound, and one that ended in a client-side timeout are hung. A failure names each hung op with its invocation and trace ids, and a `limbo trace` command for the first.',
    inconclusiveWhen: 'No client ops were recorded.',
    seeItFail:
      '`npx limbo run chaos/startup-race.ts --target reference:legacy`: on the legacy protocol a send made while the cluster starts is never acknowledged (the bug limbo grew from).',
    options: {
      withinMsAfterHeal: 'how long after the final heal every op must have ended (default 5000)',
      allowClientTimeouts: 'count a client-side timeout as an answer (default false)',
    },
  },
  noGhostCompletions: {
    premise:
      'What the servers did agrees with what the clients saw: no invocation completed on the server while its client kept waiting or gave up (a lost reply), no client ok without any server span, and no invocation ended twice.',
    evidence:
      'The run’s spans against its history. A ghost is a hung or timed-out op whose End the servers applied (`apply end`), the log acknowledged (`log append end`) or the log took from a proposer that died before the ack; it is named by span, service, epoch and time. Also: a client ok whose trace has no server span, and two `apply end` spans at different log positions for one invocation. On a target that exports no spans, a hung op the server itself reports as completed.',
    inconclusiveWhen:
      'The run has no spans (skipped), the target exports neither server spans nor invocation statuses (skipped), or ops stayed open and there are no End spans to reconcile them with.',
    seeItFail:
      '`npx limbo run chaos/leader-kill.ts --target reference:legacy`: an End applied during the leadership change is never pushed to the waiting client.',
  },
  noImpossibleErrors: {
    premise:
      'No error answer the protocol rules out: the workload only names services, handlers and invocation ids that exist, so a 4xx is a wrong final answer, and a 500 or 502 while the cluster went on serving calls is an error the ingress should have resent through.',
    evidence:
      'The client ops’ HTTP statuses: any 4xx but 429, and any 5xx but 503 and 504 that ended before the run’s last ok answer. A failure counts each kind and names the invocation ids, with up to 20 example ops.',
    inconclusiveWhen:
      'No client ops were recorded, or none carried an HTTP status (a client adapter’s answers have none: declare the check inapplicable on such a target).',
    seeItFail:
      '`npx limbo run chaos/rolling-restart.ts --target reference+bug:lost-leadership-is-final` (500s), or `chaos/lagging-successor.ts` on `reference+bug:stale-follower-not-found` (a lagging follower answers 404).',
  },
  pathCovered: {
    premise:
      'The rare path a suite exists to exercise actually ran: its counter moved during the run. It judges coverage, not outcome.',
    evidence:
      'The increase of the counter `metric` over the run, summed over its series (only those with `labels`, if given). The verdict names the metric, the labels and the increase.',
    inconclusiveWhen:
      'The counter did not move, or had no samples: the run proves nothing about that path. Skipped on a target that lacks the metric.',
    seeItFail:
      "It never fails; a path that did not run is inconclusive (exit 3). Name a counter the schedule cannot move, e.g. `pathCovered({ metric: 'limbo_processor_stale_proposals_dropped_total', what: 'stale proposals fenced' })` in a suite with no leadership change.",
    options: {
      metric: 'the counter that moves when the path runs (required)',
      labels: 'only series with these label values',
      what: 'the path in words, for the verdict (required)',
    },
  },
  partitionLeadership: {
    premise:
      'After the heal every partition has exactly one leader again: no partition is left without one, or with two, for longer than an election takes.',
    evidence:
      'The last `limbo_processor_is_leader{partition}` sample of every node after the heal; a partition without exactly one leader counts as stuck once that has lasted `stuckAfterMs`. The evidence is the leadership timeline: every change of a partition’s leader set, with its time.',
    inconclusiveWhen:
      'No leader samples at all, or none after the heal; skipped on a target without the leader gauge. A partition still electing (for less than `stuckAfterMs`) is not judged and the summary says so.',
    seeItFail:
      'Stop every processor of a partition’s replica set for longer than the converge phase (e.g. `kill` on `allOf(processor)` without a heal in time): after the final heal the partition has had no leader for more than `stuckAfterMs` at the deadline. The Restate probes (`chaos/restate/*`) use it on every run.',
    options: { stuckAfterMs: 'how long without exactly one leader is stuck (default 10000 ms)' },
  },
  pendingDrains: {
    premise:
      'After the heal and convergence nothing is still waiting inside the system: the ingress’s pending client requests and every leader’s pending RPCs are back at 0.',
    evidence:
      'The last sample at or before the deadline of each series of `limbo_ingress_pending_requests` and `limbo_processor_pending_rpcs` (or the `metrics` given). A series whose last sample predates the heal (its process died and stayed dead) is left out and listed. A failure names each gauge not at 0 with its service, labels and value.',
    inconclusiveWhen:
      'No series has a sample after the heal; skipped on a target that has none of the gauges.',
    seeItFail:
      '`npx limbo run chaos/link-flap.ts --target reference+bug:pending-gauge-leak`: a resent send that finds its invocation already accepted leaves the request table but not the gauge.',
    options: { metrics: 'the gauges that must drain (default the two above)' },
  },
  promql: {
    premise:
      'What the suite states of the run’s own Prometheus holds: a PromQL query, evaluated at the deadline or over the run, is empty, non-empty, or within bounds.',
    evidence:
      'The runner evaluates the query against the run’s Prometheus before it stops (at the deadline, or every 1 s from the chaos start to the deadline) and stores the answer; the check compares it. A failure names the series outside the bound and their values; PromQL that Prometheus rejects as bad data fails too (the suite is wrong).',
    inconclusiveWhen:
      'The run had no Prometheus, the query was not evaluated before it stopped, Prometheus could not evaluate it for any other reason, or a bound had no data to compare. Skipped on a target that lacks every `limbo_*` metric the query names (or `needs`).',
    seeItFail:
      "Assert something false: `promql({ query: 'limbo_ingress_pending_requests', expect: 'empty' })` fails on any run on `reference` with a Prometheus (`--prometheus on`, Prometheus installed), since that gauge is always exported.",
    options: {
      query: 'the PromQL expression (required)',
      expect: '`empty`, `nonEmpty`, `{ max }` and/or `{ min }` (required)',
      at: '`end` (one instant at the deadline, default) or `range`',
      name: 'the check’s name in verdicts (default `promql <query>`)',
      needs: 'the signals it reads (default every `limbo_*` metric in the query)',
    },
  },
  resendRateBounded: {
    premise:
      'Resends are bounded, even when every client is answered: amplification is a failure. Per partition, resends per second per request resending to it stay under a bound in every sliding window, and they settle after the heal.',
    evidence:
      '`limbo_ingress_resends_total` per partition over every `windowMs` window, divided by the requests that can have resent in it (`limbo_ingress_resending_requests` at its start plus the increase of `limbo_ingress_resent_requests_total`, at least 2); without those series, by the pending requests. Then the resends from `settleMs` after the final heal to the deadline. A failure names the worst window, its partition, rate and divisor, or the resends that never settled.',
    inconclusiveWhen: 'There are no samples of the resend counter; skipped on a target without it.',
    seeItFail:
      '`npx limbo run chaos/ingress-processor-blackhole.ts --target reference+bug:resend-storm`: the ingress resends every 50 ms, forever, with no backoff.',
    options: {
      maxPerPendingPerSec: 'the bound per resending request (default 5)',
      windowMs: 'the sliding window (default 2000)',
      settleMs: 'time after the final heal by which resends settle (default 5000)',
      maxAfterSettle: 'resends still allowed after that (default 5)',
    },
  },
  resendsObserved: {
    premise:
      'Where the way from the ingress to a processor was hurt (a fault whose links or services start with `ingress->` or `processor-`: a cut or toxic on an ingress link, a fault on a processor or its links), the ingress resent.',
    evidence:
      'For each such fault, the increase of `limbo_ingress_resends_total` from the inject to `graceMs` after the heal (counter resets accounted for). A failure names the windows in which it did not move.',
    inconclusiveWhen:
      'There were no samples of the counter around a window; skipped on a target without it. Not applicable (skipped, naming the run’s faults) when no such fault was injected.',
    seeItFail:
      '`npx limbo run chaos/ingress-processor-blackhole.ts --target reference:legacy`: the legacy protocol never resends.',
    options: { graceMs: 'how long after the heal a window still counts (default 5000)' },
  },
  serviceLevels: {
    premise:
      'Harm stays within the target’s declared service levels, per fault: failover (an op met by a processor fault ends within `failoverMs`), the tail during a fault (p99 of the ops invoked while it is in, net of what the faults impose, within `p99DuringFaultMs`), and recovery (ops live at a heal, or invoked just after it with no other fault in, end within `recoveryAfterHealMs`).',
    evidence:
      'Per fault window, each measure net of an op’s normal time (the p99 of the ops answered before the first fault, when at least 20 were): the worst failover wait, net also of what a latency fault the op met added; the p99 of the ops invoked in it (not judged under 20 ops, nor for processor faults), each op’s latency net of the time blocking faults held it, up to `latencyCrossings` × a latency fault’s added latency, and a processor fault’s wait up to `failoverMs`; and the worst recovery after its heal. A failure names each broken level with its fault, the number of ops over the bound, the worst op and its invocation id.',
    inconclusiveWhen: 'Never inconclusive; not applicable (skipped) on a run without faults.',
    seeItFail:
      '`npx limbo run chaos/leader-down.ts --target reference+bug:slow-failure-detection`: a dead leader is replaced only after 15 s, far past the reference cluster’s 3700 ms failover level.',
    options: {
      failoverMs: 'the failover level (required)',
      p99DuringFaultMs: 'the tail level during a fault (required)',
      recoveryAfterHealMs: 'the recovery level after a heal (required)',
      latencyCrossings: 'how many times one op may cross a slowed link in sequence (default 3)',
      silentPeerDetectionMs:
        'added to the failover level for a leader that went silent without closing its connections (paused, or isolated holding or dropping its bytes): how long keepalive takes to find it dead (default 0)',
    },
    addedBy:
      'the runner, to every run with faults on a target that declares service levels (the reference cluster does; a declaration’s `slo`)',
  },
  spansEnd: {
    premise:
      'Every span of an invocation ends: none is still open at `withinMsAfterHeal` after the final heal (or after it started, if later).',
    evidence:
      'The run’s spans, including those the open-span ledger knows never ended (by default every span with an invocation id, or those `select` picks). Open spans of a process that was killed or restarted are abandoned work, listed but not failed. A failure names each span still open on a live process, or ended past its bound (service, span, epoch, invocation and trace ids, why), never-ended ones first.',
    inconclusiveWhen: 'The run has no spans (tracing was off): skipped.',
    seeItFail:
      '`npx limbo run chaos/startup-race.ts --target reference:legacy`: the send whose notification never comes keeps its invocation’s spans open on live services.',
    options: {
      withinMsAfterHeal: 'how long after the final heal spans must have ended (default 5000)',
      select: 'which spans must end (a span selector; default every span with an invocation id)',
    },
  },
  traces: {
    premise:
      'What the suite expects of a selection of the run’s spans holds: their count, durations, status, or whether they ended.',
    evidence:
      'The spans its selector picks, by service, name (`*` wildcards), attributes, parent, the trace of a kind of client op, and time (during or started in a fault window, a phase, or after the heal). A failure names the first problem (span, trace, duration or status) and the traces and invocations picked.',
    inconclusiveWhen: 'The run has no spans (tracing was off): skipped.',
    seeItFail:
      "Expect what cannot be: `traces({ select: { service: 'log', name: 'log append' }, expect: { count: { max: 0 } } })` fails on any traced run on `reference`.",
    options: {
      select: 'the span selector (required)',
      expect:
        '`count` (`min`, `max`, `equals`), `durationMs` (`min`, `max`), `status` (`ok` or `error`), `ended` (required)',
      name: 'the check’s name in verdicts (default `traces`)',
    },
  },
};
