#!/usr/bin/env bash
# Sets up the machine, builds the release binary and starts a node. Extra arguments are passed
# to the node, e.g. scripts/run-node.sh --tcp-port=60000 --log-level=DEBUG
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target logosdelivery
exec ./build/logosdelivery "$@"
