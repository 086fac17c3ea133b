#!/usr/bin/env bash
# The chaos suites on --runtime docker, with the verdicts the local runtime gives:
# startup-race and leader-kill on `reference` (every verdict must pass) and on
# `reference:legacy` (--expect-documented: the bug is caught), then each docker verdict.json
# compared with the local run of the same suite and target — the one CI's local step left in
# LIMBO_LOCAL_RUNS (default runs-ci), or, when there is none, a local run made here.
# Needs a Docker engine with the services image (scripts/docker/ci.sh calls this while its
# engine is up). Prints the wall time of each step.
#
#   DOCKER_HOST=unix:///tmp/limbo-docker/docker.sock bash scripts/ci/docker-suites.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
LOCAL_RUNS=${LIMBO_LOCAL_RUNS:-runs-ci}
DOCKER_RUNS=${LIMBO_DOCKER_RUNS:-runs-ci-docker}
SUITES=(startup-race leader-kill)
TARGETS=(reference reference:legacy)

log() { printf '== %s\n' "$*" >&2; }
limbo() { node bin/limbo.js "$@"; }

# The verdict ("pass", "fail", …) of the latest run of suite $2 on target $3 under $1, if any.
verdict_of() {
  node --input-type=module -e '
    import { readdirSync, readFileSync, existsSync } from "node:fs";
    import { join } from "node:path";
    const [root, suite, target] = process.argv.slice(1);
    const dir = join(root, suite);
    let best;
    if (existsSync(dir))
      for (const run of readdirSync(dir)) {
        const file = join(dir, run, "verdict.json");
        if (!existsSync(file)) continue;
        const v = JSON.parse(readFileSync(file, "utf8"));
        if (v.target === target && (best === undefined || v.startedAt > best.startedAt)) best = v;
      }
    if (best !== undefined) console.log(best.verdict);
  ' "$1" "$2" "$3"
}

files=()
for s in "${SUITES[@]}"; do files+=("chaos/$s.ts"); done

mismatches=0
for target in "${TARGETS[@]}"; do
  flags=()
  [[ $target == reference:legacy ]] && flags=(--expect-documented)
  start=$SECONDS
  log "docker: ${SUITES[*]} on $target"
  limbo run "${files[@]}" --target "$target" --runtime docker "${flags[@]}" --out "$DOCKER_RUNS"
  log "docker: ${SUITES[*]} on $target: $((SECONDS - start)) s"
  for s in "${SUITES[@]}"; do
    local_verdict=$(verdict_of "$LOCAL_RUNS" "$s" "$target")
    if [[ -z $local_verdict ]]; then
      start=$SECONDS
      log "no local run of $s on $target under $LOCAL_RUNS: running it locally"
      limbo run "chaos/$s.ts" --target "$target" "${flags[@]}" --out "$DOCKER_RUNS-local"
      log "local: $s on $target: $((SECONDS - start)) s"
      local_verdict=$(verdict_of "$DOCKER_RUNS-local" "$s" "$target")
    fi
    docker_verdict=$(verdict_of "$DOCKER_RUNS" "$s" "$target")
    if [[ -n $docker_verdict && $docker_verdict == "$local_verdict" ]]; then
      log "$s on $target: docker $docker_verdict = local $local_verdict"
    else
      log "$s on $target: docker ${docker_verdict:-none} != local ${local_verdict:-none}"
      mismatches=$((mismatches + 1))
    fi
  done
done
((mismatches == 0)) || {
  log "$mismatches verdicts differ between --runtime docker and local"
  exit 1
}
log "every docker verdict equals the local one"
