#!/usr/bin/env bash
# Sets up the machine, builds the release binary and starts a node: by default a service node on
# cluster 0 with autosharding over 8 shards, with relay, lightpush, filter, store (SQLite archive
# ./store.sqlite3) and peer exchange, on TCP port 60000 and WebSocket port 8000, with the REST API
# (nwaku's and the Messaging API's) on 127.0.0.1:8645 and metrics on 127.0.0.1:8008. Arguments replace the defaults, e.g.
# scripts/run-node.sh --tcp-port=60001 --log-level=DEBUG
# With LOGOSDELIVERY_BIN=<program> it runs that program in the current directory instead, without
# the setup and the build (the test of the README's demo starts the node so, with the ports in
# WAKUNODE2_* variables).
set -euo pipefail

bin=${LOGOSDELIVERY_BIN:-}
if [ -z "$bin" ]; then
  cd "$(dirname "$0")/.."
  bash scripts/deps.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLD_TESTS=OFF >/dev/null
  cmake --build build -j"$(nproc)" --target logosdelivery
  bin=./build/logosdelivery
fi
if [ $# -eq 0 ]; then
  set -- --num-shards-in-network=8 --relay=true --lightpush=true --filter=true --store=true --peer-exchange=true \
    --store-message-db-url=sqlite://store.sqlite3 --websocket-support=true \
    --rest=true --rest-address=127.0.0.1 --rest-admin=true \
    --metrics-server=true --metrics-server-address=127.0.0.1
fi
exec "$bin" "$@"
