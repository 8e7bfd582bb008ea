#!/usr/bin/env bash
# Relay throughput with RLN validation on: a fleet of logosdelivery relay nodes with
# --rln-relay (a static group of one member), every message carrying an RLN-v2 proof made
# beforehand by bench_relay_rln_prove and published by bench_relay at its planned time, every
# node verifying every message (tests/interop/bench/relay-rate.mjs --rln; figures in
# bench/RESULTS.md, "RLN-v2 batch verification and relay throughput with RLN").
#
#   bash bench/relay_rln.sh                     # short form: 3 nodes, 50 msg/s then 1,000 msg/s
#                                               # for one second (about 1,050 proofs first)
#   NODES=10 DEGREE=4 SEGMENTS=50:50,1000:2000 bash bench/relay_rln.sh
#
# The proofs take most of the time (about 0.1 s of CPU each, on THREADS threads); the runs
# themselves last as long as their segments plus the fleet's drain. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DLD_SANITIZE=OFF -DLD_TESTS=ON -DLD_WERROR=OFF >/dev/null
cmake --build build-rel -j2 --target logosdelivery bench_relay bench_relay_rln_prove >/dev/null
[ -d tests/interop/node_modules ] || (cd tests/interop && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

root=$(pwd)
echo "# $(uptime)"
cd tests/interop
LD_BIN="$root/build-rel/logosdelivery" LD_BENCH_RELAY="$root/build-rel/bench_relay" \
  LD_BENCH_RELAY_RLN_PROVE="$root/build-rel/bench_relay_rln_prove" \
  node bench/relay-rate.mjs --impl node --nodes "${NODES:-3}" --degree "${DEGREE:-2}" \
  --rln "${SEGMENTS:-50:50,1000:1000}" --rln-threads "${THREADS:-2}" --rln-gap-ms "${GAP_MS:-20000}"
echo "# $(uptime)"
