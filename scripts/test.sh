#!/usr/bin/env bash
# Sets up the machine, builds everything with AddressSanitizer and UndefinedBehaviorSanitizer,
# installs the pinned npm peers for the interop tests, and runs every test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLD_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)"
(cd tests/interop && npm ci --no-audit --no-fund --loglevel=error)

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" "$@"
