#!/usr/bin/env bash
# Runs the three public Toxiproxy client suites against `limbo proxy`, each against a fresh
# server on 127.0.0.1:8474 (the port all three hard-code), and prints their counts:
#
#   bash scripts/proxy/client-suites.sh [--node DIR] [--ruby DIR] [--python DIR] [options]
#
# DIR is a local checkout of, in order, toxiproxy-node-client (with its own `npm ci` done),
# Shopify/toxiproxy-ruby and douglas/toxiproxy-python. This script downloads nothing and
# never changes a checkout; docs/proxy.md says how to get them and what to install.
#
# options:
#   --node DIR      toxiproxy-node-client checkout    env LIMBO_CLIENT_NODE
#   --ruby DIR      toxiproxy-ruby checkout           env LIMBO_CLIENT_RUBY
#   --python DIR    toxiproxy-python checkout         env LIMBO_CLIENT_PYTHON
#   --only LIST     run only these of node,ruby,python (default: all three, each required)
#   --timeout S     bound on each suite's run, seconds [default 300]  env LIMBO_CLIENT_TIMEOUT
#   --logs DIR      keep each suite's and server's output here [default: a new temp dir]
#   --help          show this help
# env LIMBO_CLIENT_RUBY_BIN (default ruby), LIMBO_CLIENT_PYTHON_BIN (default python3).
#
# Exit: 0 when every test of every suite run passed, 1 when one failed (or gave no counts),
# 2 on bad input (a missing checkout or tool, port 8474 taken), 130 on Ctrl-C.
set -uo pipefail

me=client-suites
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
port=8474

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() {
  echo "$me: $*" >&2
  exit 2
}

node_dir=${LIMBO_CLIENT_NODE:-}
ruby_dir=${LIMBO_CLIENT_RUBY:-}
python_dir=${LIMBO_CLIENT_PYTHON:-}
only=node,ruby,python
timeout_s=${LIMBO_CLIENT_TIMEOUT:-300}
logs=
ruby_bin=${LIMBO_CLIENT_RUBY_BIN:-ruby}
python_bin=${LIMBO_CLIENT_PYTHON_BIN:-python3}

while [ $# -gt 0 ]; do
  case "$1" in
    --help | -h)
      usage
      exit 0
      ;;
    --node | --ruby | --python | --only | --timeout | --logs)
      [ $# -ge 2 ] || die "$1 needs a value (see --help)"
      case "$1" in
        --node) node_dir=$2 ;;
        --ruby) ruby_dir=$2 ;;
        --python) python_dir=$2 ;;
        --only) only=$2 ;;
        --timeout) timeout_s=$2 ;;
        --logs) logs=$2 ;;
      esac
      shift 2
      ;;
    *) die "unknown argument \"$1\" (see --help)" ;;
  esac
done

case "$timeout_s" in
  '' | *[!0-9]* | 0) die "--timeout must be a whole number of seconds above 0, got \"$timeout_s\"" ;;
esac
suites=()
IFS=',' read -r -a wanted <<<"$only"
for s in "${wanted[@]}"; do
  case "$s" in
    node | ruby | python) suites+=("$s") ;;
    *) die "--only takes node, ruby and python, got \"$s\"" ;;
  esac
done
[ ${#suites[@]} -gt 0 ] || die "--only names no suite"

# --- preflight: every checkout and tool is there before the first server starts -----------
dir_of() {
  case "$1" in
    node) echo "$node_dir" ;;
    ruby) echo "$ruby_dir" ;;
    python) echo "$python_dir" ;;
  esac
}
for s in "${suites[@]}"; do
  d=$(dir_of "$s")
  [ -n "$d" ] || die "no $s checkout: give --$s DIR or LIMBO_CLIENT_${s^^} (or leave $s out with --only)"
  [ -d "$d" ] || die "$s checkout \"$d\" is not a directory"
  case "$s" in
    node)
      grep -q '"name": *"toxiproxy-node-client"' "$d/package.json" 2>/dev/null ||
        die "\"$d\" is not a toxiproxy-node-client checkout (no package.json naming it)"
      [ -x "$d/node_modules/.bin/jest" ] ||
        die "no jest in \"$d/node_modules\": run \`npm ci\` in that checkout first"
      ;;
    ruby)
      { [ -f "$d/lib/toxiproxy.rb" ] && [ -d "$d/test" ]; } ||
        die "\"$d\" is not a toxiproxy-ruby checkout (no lib/toxiproxy.rb and test/)"
      command -v "$ruby_bin" >/dev/null || die "no \"$ruby_bin\" (apt-get install ruby ruby-minitest ruby-webmock)"
      "$ruby_bin" -e 'require "minitest"; require "webmock"' 2>/dev/null ||
        die "$ruby_bin lacks minitest or webmock (apt-get install ruby-minitest ruby-webmock)"
      ;;
    python)
      { [ -f "$d/toxiproxy/__init__.py" ] && [ -d "$d/test" ]; } ||
        die "\"$d\" is not a toxiproxy-python checkout (no toxiproxy/__init__.py and test/)"
      command -v "$python_bin" >/dev/null || die "no \"$python_bin\" (set LIMBO_CLIENT_PYTHON_BIN)"
      "$python_bin" -c 'import pytest, requests, future' 2>/dev/null ||
        die "$python_bin lacks pytest, requests or future (apt-get install python3-pytest python3-requests python3-future, then LIMBO_CLIENT_PYTHON_BIN=/usr/bin/python3 if python3 is another one)"
      ;;
  esac
done
[ -f "$repo/dist/src/cli/main.js" ] || die "limbo is not built: run \`npx tsc -p tsconfig.json\` in $repo"

if [ -z "$logs" ]; then logs=$(mktemp -d "${TMPDIR:-/tmp}/limbo-client-suites.XXXXXX"); fi
mkdir -p "$logs" || die "cannot create --logs \"$logs\""

# --- the server: one fresh `limbo proxy` a suite, stopped by its PID ----------------------
proxy_pid=
stop_proxy() {
  [ -n "$proxy_pid" ] || return 0
  if kill -0 "$proxy_pid" 2>/dev/null; then
    kill -TERM "$proxy_pid" 2>/dev/null
    for _ in $(seq 1 150); do # up to 15 s, then KILL
      kill -0 "$proxy_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$proxy_pid" 2>/dev/null && kill -KILL "$proxy_pid" 2>/dev/null
  fi
  wait "$proxy_pid" 2>/dev/null
  proxy_pid=
}
suite_pid=
# shellcheck disable=SC2317 # called from the trap
stop_suite() { # timeout(1) passes the TERM on to the suite
  [ -n "$suite_pid" ] || return 0
  kill -TERM "$suite_pid" 2>/dev/null
  wait "$suite_pid" 2>/dev/null
  suite_pid=
}
trap 'stop_proxy' EXIT
trap 'echo "$me: interrupted" >&2; stop_suite; stop_proxy; exit 130' INT TERM

start_proxy() { # $1 = log file; returns 0 once the ready line is out, else exits 2
  node "$repo/bin/limbo.js" proxy --host 127.0.0.1 --port "$port" >"$1" 2>&1 &
  proxy_pid=$!
  for _ in $(seq 1 150); do # up to 15 s
    if grep -q '^limbo-ready ' "$1"; then return 0; fi
    if ! kill -0 "$proxy_pid" 2>/dev/null; then
      wait "$proxy_pid" 2>/dev/null
      proxy_pid=
      if grep -q EADDRINUSE "$1"; then die "port $port is taken (the suites hard-code it): stop what listens there"; fi
      cat "$1" >&2
      die "limbo proxy exited before it was ready (log above)"
    fi
    sleep 0.1
  done
  cat "$1" >&2
  die "limbo proxy not ready within 15 s (log above)"
}

# --- counts: each runner's own closing line -> "passed failed skipped" ---------------------
count_word() { # $1 = text, $2 = word: the number before it, 0 when absent
  local n
  n=$(grep -oE "[0-9]+ $2" <<<"$1" | tail -n 1 | cut -d' ' -f1)
  echo "${n:-0}"
}
counts() { # $1 = suite, $2 = log; prints "passed failed skipped" or nothing
  local line p f e sk r
  case "$1" in
    node) # Tests:       1 failed, 17 passed, 18 total
      line=$(grep -E '^Tests: ' "$2" | tail -n 1)
      [ -n "$line" ] || return 0
      p=$(count_word "$line" passed)
      f=$(count_word "$line" failed)
      sk=$(($(count_word "$line" skipped) + $(count_word "$line" todo)))
      ;;
    ruby) # 43 runs, 69 assertions, 0 failures, 0 errors, 0 skips
      line=$(grep -E '^[0-9]+ runs, [0-9]+ assertions, ' "$2" | tail -n 1)
      [ -n "$line" ] || return 0
      r=$(count_word "$line" runs)
      f=$(count_word "$line" failures)
      e=$(count_word "$line" errors)
      sk=$(count_word "$line" skips)
      f=$((f + e))
      p=$((r - f - sk))
      ;;
    python) # ==== 1 failed, 24 passed, 1 warning in 3.60s ====
      line=$(grep -E '^=+ .*[0-9]+ (passed|failed|errors?|skipped|deselected|xfailed|xpassed|no tests ran).* in [0-9.]+s' "$2" | tail -n 1)
      [ -n "$line" ] || return 0
      p=$(count_word "$line" passed)
      f=$(($(count_word "$line" failed) + $(count_word "$line" error) + $(count_word "$line" errors)))
      sk=$(count_word "$line" skipped)
      ;;
  esac
  echo "$p $f $sk"
}

run_suite() { # $1 = suite, $2 = checkout, $3 = log; run in the background: it execs timeout(1)
  cd "$2" || exit 1
  exec >"$3" 2>&1
  case "$1" in
    node) exec timeout -k 10 "$timeout_s" node_modules/.bin/jest --runInBand --ci ;;
    ruby) exec timeout -k 10 "$timeout_s" "$ruby_bin" -Ilib -Itest \
      -e 'Dir["test/*_test.rb"].sort.each { |f| require File.expand_path(f) }' ;;
    python) export PYTHONDONTWRITEBYTECODE=1; exec timeout -k 10 "$timeout_s" "$python_bin" -m pytest -p no:cacheprovider ;;
  esac
}

echo "$me: limbo proxy on 127.0.0.1:$port, $(node --version); logs in $logs"
total_p=0
total_f=0
total_sk=0
status=0
for s in "${suites[@]}"; do
  d=$(cd "$(dir_of "$s")" && pwd)
  log="$logs/$s.log"
  start_proxy "$logs/$s-proxy.log"
  started=$SECONDS
  # In the background and waited for, so that Ctrl-C reaches the trap at once.
  run_suite "$s" "$d" "$log" &
  suite_pid=$!
  wait "$suite_pid"
  rc=$?
  suite_pid=
  stop_proxy
  c=$(counts "$s" "$log")
  if [ -z "$c" ]; then
    echo "$s ($d): no counts in its output (exit $rc, $((SECONDS - started)) s); last lines:"
    tail -n 40 "$log" | sed 's/^/  | /'
    status=1
    continue
  fi
  read -r p f sk <<<"$c"
  total_p=$((total_p + p))
  total_f=$((total_f + f))
  total_sk=$((total_sk + sk))
  echo "$s ($d): $p passed, $f failed, $sk skipped (exit $rc, $((SECONDS - started)) s)"
  if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
    [ "$rc" -eq 124 ] && echo "  $s did not finish within $timeout_s s"
    tail -n 40 "$log" | sed 's/^/  | /'
    status=1
  fi
done
echo "$me: $total_p passed, $total_f failed, $total_sk skipped"
exit "$status"
