#!/usr/bin/env bash
# Wall time to build the shared library (liblogosdelivery.so, target ld_shared) from a clean tree:
# a fresh build directory, Release, no compiler cache, `cmake --build --target ld_shared -j2`.
# Prints the configure time, the build time and the size of the library; the build directory is
# removed afterwards.
#
#   bash bench/build-time.sh [JOBS]     # JOBS defaults to 2
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${1:-2}
dir=$(mktemp -d "${TMPDIR:-/tmp}/ld-build-time.XXXXXX")
trap 'rm -rf "$dir"' EXIT

now() { date +%s.%N; }

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(now)
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DLD_SANITIZE=OFF -DLD_TESTS=OFF \
  -DCMAKE_C_COMPILER_LAUNCHER= >/dev/null
t1=$(now)
cmake --build "$dir" --target ld_shared -j"$jobs" >/dev/null
t2=$(now)
lib=$(find "$dir" -maxdepth 1 -name 'liblogosdelivery.so.*.*' | head -n1)
sources=$(find src -name '*.c' | wc -l)
printf 'build-time: configure %.1f s, cmake --build --target ld_shared -j%s %.1f s (%s C files in src/ plus the protobuf sources); %s: %s bytes\n' \
  "$(echo "$t1 - $t0" | bc)" "$jobs" "$(echo "$t2 - $t1" | bc)" "$sources" "$(basename "$lib")" \
  "$(stat -c %s "$lib")"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
