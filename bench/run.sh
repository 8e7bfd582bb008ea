#!/usr/bin/env bash
# Runs every benchmark (libp2p core, relay, service node, library) and prints one JSON line per
# figure: ours (C, Release build) beside js-libp2p's from the same run where there is a js peer. bench/RESULTS.md records the latest figures.
#
#   bash bench/run.sh            # all figures, about twenty minutes on two cores
#   LD_BENCH_PG_URL=postgres://… # the PostgreSQL archive figures too (LD_TEST_PG_URL also works)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh >/dev/null
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DLD_SANITIZE=OFF -DLD_TESTS=ON -DLD_WERROR=OFF >/dev/null
cmake --build build-rel -j"$(nproc)" --target bench_crypto bench_noise bench_p2p bench_relay \
  bench_ws bench_lightpush bench_filter bench_archive bench_lib bench_zk bench_zk_prove bench_discv5 \
  bench_peer_manager bench_relay_rln_prove ld_testpeer logosdelivery >/dev/null
(cd tests/interop && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

root=$(pwd)
export LD_TESTPEER="$root/build-rel/ld_testpeer" LD_BIN="$root/build-rel/logosdelivery"
export LD_BENCH_RELAY="$root/build-rel/bench_relay"
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# node $(node --version), js-libp2p $(node -p "require('./tests/interop/node_modules/libp2p/package.json').version")"

echo "# crypto and Noise on one core (ceilings)"
./build-rel/bench_crypto
./build-rel/bench_noise

echo "# RLN / zk on one core: BN254 arithmetic, pairing, Poseidon, RLN-v2 verification"
./build-rel/bench_zk
# the same proofs verified by zerokit's wasm build and by bench_zk (tests/interop/fixtures/rln-v2)
(cd tests/interop && LD_BENCH_ZK="$root/build-rel/bench_zk" node bench/zk-verify.mjs --proofs 4 --rounds 20)
# RLN-v2 proof generation: zerokit's wasm build and bench_zk_prove in the same run
(cd tests/interop && LD_BENCH_ZK_PROVE="$root/build-rel/bench_zk_prove" node bench/zk-prove.mjs --proofs 5)

echo "# C <-> C, one stream, one direction (sink), and connection set-ups"
./build-rel/bench_p2p serve >/tmp/ld-bench-serve.out &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q LISTEN /tmp/ld-bench-serve.out && break; sleep 0.1; done
addr=$(awk '/LISTEN/{print $2}' /tmp/ld-bench-serve.out)
for mux in yamux mplex; do
  ./build-rel/bench_p2p throughput "$addr" --mib 2048 --muxer "$mux"
  for p in 1 4; do
    ./build-rel/bench_p2p connections "$addr" --seconds 5 --parallel "$p" --muxer "$mux"
  done
done
kill $serve_pid

cd tests/interop
echo "# echo through /ld/echo/1.0.0 on one stream: js <-> js and C <-> C (same script)"
for mux in yamux mplex; do
  node bench/throughput.mjs --server js --client js --muxer "$mux" --runs 3
  node bench/throughput.mjs --server c --client c --muxer "$mux" --runs 3
done
echo "# connection set-ups per second from js dialers (TCP + Noise + muxer + identify)"
for mux in yamux mplex; do
  for p in 1 4; do
    node bench/connrate.mjs --server js --muxer "$mux" --seconds 5 --concurrency "$p"
    node bench/connrate.mjs --server node --muxer "$mux" --seconds 5 --concurrency "$p"
  done
done
echo "# resident memory, idle and holding 100 connections"
for mux in yamux mplex; do
  node bench/memory.mjs --server js --muxer "$mux" --connections 100
  node bench/memory.mjs --server node --muxer "$mux" --connections 100 \
    --server-arg=--max-connections=200
done
echo "# relay: 10 relay processes on one shard, each dialing 4 others, 1 KiB messages"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# js: REST publishing and log lines (relay-mesh.mjs); ours: bench_relay publishing and /metrics
node bench/relay-rate.mjs --impl js,node --ramp 1000,2000,3000,4000,5000,6000 --rates 50,1000 \
  --seconds 20
# instructions per delivered message: one fleet node under callgrind, 1,000 messages at 100/s
node bench/relay-rate.mjs --impl node --callgrind 100,1000
node bench/relay-memory.mjs --impl js,node --peers 50
node bench/relay-memory.mjs --impl node --peers 50 --rest false
# relay with RLN validation on, every message proved beforehand (bench/relay_rln.sh is the same
# with its own build): the short form, 3 nodes at 50 then 1,000 msg/s (about 1,050 proofs first)
LD_BENCH_RELAY_RLN_PROVE="$root/build-rel/bench_relay_rln_prove" \
  node bench/relay-rate.mjs --impl node --nodes 3 --degree 2 --rln 50:50,1000:1000
echo "# service node: WebSocket, lightpush, filter, archive and store"
cd "$root"
./build-rel/bench_ws
./build-rel/bench_lightpush --size 1024 --requests 50000
./build-rel/bench_lightpush
./build-rel/bench_filter --clients 1000 --rounds 30
./build-rel/bench_filter --clients 1000 --rounds 30 --muxer mplex
if [ -n "${LD_BENCH_PG_URL:-${LD_TEST_PG_URL:-}}" ]; then
  ./build-rel/bench_archive --queries 1000
else
  ./build-rel/bench_archive --sqlite-only --queries 1000
fi
echo "# library: contexts in one process through the public C API (bench/lib.c): idle memory,"
echo "# create + start, relay latency between two contexts, sends per second with confirmations"
./build-rel/bench_lib --log-level ERROR
echo "# HTTP: 500 keep-alive clients polling REST /health and 500 polling /metrics, 60 s, relay busy"
bash bench/http-load.sh 60 500
echo "# library: liblogosdelivery.so from a clean build directory, Release, -j2"
bash bench/build-time.sh 2
echo "# discv5: 200 engines in one process, in memory, then on UDP 127.0.0.1 beside @chainsafe/discv5"
./build-rel/bench_discv5 --nodes 200 --lookups 2000
./build-rel/bench_discv5 --udp --nodes 200 --lookups 1000
(cd tests/interop && node bench/discv5.mjs --nodes 200 --lookups 1000)
echo "# peer manager: one node holding 1,000 inbound relay connections, RSS and CPU per connection"
./build-rel/bench_peer_manager --clients 1000 --extra 100 --hold 10
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
