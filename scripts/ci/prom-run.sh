#!/usr/bin/env bash
# Proves the Prometheus side of limbo as CI does: the run's own Prometheus
# (`limbo run --prometheus`), every dashboard panel and alert rule evaluated against real
# `reference` and `reference:legacy` runs, the hanging alert firing on legacy only, PromQL
# suite assertions — all with LIMBO_PROMETHEUS_REQUIRED=1, so a missing prometheus binary
# fails instead of skipping. Then the report's browser test, whose screenshot is the CI
# artefact artifacts/report.png. Prints the wall time of each step.
#
#   bash scripts/ci/prom-run.sh        (after npm ci; builds with tsc)
set -euo pipefail
cd "$(dirname "$0")/../.."
export LIMBO_PROMETHEUS_REQUIRED=1

step() {
  local name=$1 start=$SECONDS
  shift
  echo "-- $name"
  "$@"
  echo "-- $name: $((SECONDS - start)) s"
}

need() {
  command -v "$1" >/dev/null 2>&1 || {
    echo "prom-run: $1 is not installed (apt-get install --no-install-recommends prometheus chromium)" >&2
    exit 1
  }
}

need prometheus
need promtool
[[ -x "${LIMBO_CHROMIUM:-/usr/bin/chromium}" ]] || need chromium
prometheus --version 2>&1 | sed -n 1p

step "build" npx tsc -p tsconfig.json
step "Prometheus server, file_sd, PromQL assertions, limbo run --prometheus" \
  node --test --test-concurrency=1 dist/test/observe/prometheus-server.test.js dist/test/checkers/promql-checker.test.js \
    dist/test/cli/cli-prometheus.test.js
step "dashboards and alerts on real runs (reference, reference:legacy)" \
  node --test --test-concurrency=1 --test-timeout=600000 dist/test/dashboards/*.test.js
step "report.html in Chromium (screenshot)" node --test dist/test/report/report-html.test.js
[[ -s artifacts/report.png ]] || { echo "prom-run: artifacts/report.png was not written" >&2; exit 1; }
echo "CI artefact: $(pwd)/artifacts/report.png (report.html of a sample run, full page)"
