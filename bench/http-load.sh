#!/usr/bin/env bash
# The full "many dashboards" scenario of tests/integration/test_http_load.c on the Release build:
# the node program with REST, metrics and relay; CLIENTS keep-alive clients poll GET /health on
# REST and CLIENTS more GET /metrics on the metrics server, each once a second, for SECONDS, while
# two relay nodes publish 50 messages/s each to one another through it. CI runs the same test for
# 10 s under the sanitizers. Prints one JSON line per endpoint (requests, answered, errors,
# latency percentiles), one for the relay and one for the node program's CPU and memory; the
# run fails if a request was not answered 200, a connection dropped or a message was lost.
#
#   bash bench/http-load.sh            # 500 clients per server, 60 s
#   bash bench/http-load.sh 120 800    # SECONDS CLIENTS
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
clients=${2:-500}
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DLD_SANITIZE=OFF -DLD_TESTS=ON -DLD_WERROR=OFF >/dev/null
cmake --build build-rel -j"$(nproc)" --target integration_http_load logosdelivery >/dev/null

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# The test raises its own open-file limit (both ends of every connection are on this machine).
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
if ! LD_BIN="$(pwd)/build-rel/logosdelivery" LD_HTTP_LOAD_SECONDS="$seconds" \
  LD_HTTP_LOAD_CLIENTS="$clients" ./build-rel/integration_http_load >"$out" 2>"$err"; then
  cat "$out"
  grep -v '^INF' "$err" | tail -30
  exit 1
fi
grep '^{' "$out"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
