// One line per `limbo <command>`, for `limbo --help` and each command's own help: kept apart
// from the commands so the command table can list them without loading every command.
export const commandSummaries = {
  run: 'run chaos suites against a target and report verdicts',
  up: 'start a topology and keep it up until Ctrl-C (writes .limbo/up.json)',
  validate:
    'check a declared target (fields, templates, links, leadership, signals, client, commands) without starting it',
  trace: "show one invocation's spans as a waterfall",
  explore: 'search random fault schedules for a failure; save each (shrunk) under seeds/',
  replay:
    'rerun seed or suite files N times each and report how often each gives its recorded verdict (replay fidelity)',
  detect: 'measure detection power: run each bug switch against the suites that claim it',
  coverage:
    "print the fault space runs covered and, for runs made with --coverage, what they reached of limbo's own code",
  soak: 'run every suite for N seeds and check for hangs, lost or duplicated effects and leaks',
  merge:
    'combine the shards of a run, explore, detect or soak (--shard k/N) into one result with the unsharded exit code',
  proxy: 'run the embedded Toxiproxy-compatible server (drop-in for toxiproxy-server)',
  serve: 'run one service of the reference cluster (log, processor, ingress)',
} as const;
