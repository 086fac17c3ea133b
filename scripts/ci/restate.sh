#!/usr/bin/env bash
# CI for `--target restate`: the real Restate server (npm packages, 3 nodes) under
# leader-kill, startup-race and the two Restate probe suites, each required to give the verdict
# its suite documents for restate (--expect-documented: a change in either direction fails).
# About 3-4 minutes of wall time on 2 cores; the workload is capped at 40 ops/s on restate.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${LIMBO_CI_OUT:-runs-ci}
started=$SECONDS
for suite in chaos/leader-kill.ts chaos/startup-race.ts chaos/restate/leader-inbound-cut.ts chaos/restate/total-partition.ts; do
  t0=$SECONDS
  echo "== restate: $suite"
  npx limbo run "$suite" --target restate --expect-documented --out "$out"
  echo "== restate: $suite took $((SECONDS - t0)) s"
done
echo "== restate suites done in $((SECONDS - started)) s"
