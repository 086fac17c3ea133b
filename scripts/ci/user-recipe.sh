#!/usr/bin/env bash
# The body of the CI recipe for users (docs/ci/limbo.yml runs exactly this, then uploads the
# artefacts): install, run the suites so that only the documented verdicts pass, collect each
# run's junit.xml and report.html, exit non-zero on a red verdict. Run it locally to see what
# CI will do:
#
#   bash scripts/ci/user-recipe.sh [suite files or folders… (default: chaos)]
#
# Environment (all optional):
#   LIMBO_TARGET          target to run against (default reference)
#   LIMBO_OUT             root of the run directories (default runs-ci)
#   LIMBO_ARTIFACTS       where junit.xml and report.html are gathered (default limbo-artifacts)
#   LIMBO_RECIPE_INSTALL  1 = npm ci first (default), 0 = use the installed node_modules
#   LIMBO_SEED            one seed for every suite (default: a random one each, printed)
set -euo pipefail

if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

target=${LIMBO_TARGET:-reference}
out=${LIMBO_OUT:-runs-ci}
artifacts=${LIMBO_ARTIFACTS:-limbo-artifacts}
install=${LIMBO_RECIPE_INSTALL:-1}
if [ $# -eq 0 ]; then set -- chaos; fi
case "$install" in 0 | 1) ;; *)
  echo "user-recipe: LIMBO_RECIPE_INSTALL must be 0 or 1, got \"$install\"" >&2
  exit 2
  ;;
esac
for suite in "$@"; do
  [ -e "$suite" ] || { echo "user-recipe: no suite file or folder \"$suite\"" >&2; exit 2; }
done

started=$SECONDS
step() { echo; echo "== $* ($((SECONDS - started)) s)"; }

step "node $(node --version), npm $(npm --version)"

if [ "$install" = 1 ]; then
  step "install: npm ci"
  npm ci --no-audit --no-fund
fi

# Only this invocation's runs are collected, whatever $out held before.
mkdir -p "$out" "$artifacts"
marker=$(mktemp "$out/.recipe-start.XXXXXX")
trap 'rm -f "$marker"' EXIT

step "suites on $target: every verdict must be the documented one"
status=0
npx limbo run "$@" --target "$target" --expect-documented --out "$out" || status=$?

step "artefacts: junit.xml and report.html of each run into $artifacts/"
collected=0
while IFS= read -r -d '' file; do
  run_dir=$(dirname "$file")
  # runs-ci/<suite>/<timestamp>/junit.xml → limbo-artifacts/<suite>/<timestamp>/junit.xml
  dest="$artifacts/${run_dir#"$out"/}"
  mkdir -p "$dest"
  cp "$file" "$dest/"
  collected=$((collected + 1))
done < <(find "$out" -newer "$marker" \( -name junit.xml -o -name report.html \) -print0)
echo "$collected files in $artifacts/"
if [ "$status" -eq 0 ] && [ "$collected" -eq 0 ]; then
  echo "user-recipe: the suites passed but wrote no junit.xml or report.html" >&2
  status=1
fi

if [ "$status" -eq 0 ]; then step "green"; else step "red: limbo run exited $status"; fi
exit "$status"
