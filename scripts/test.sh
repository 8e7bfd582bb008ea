#!/usr/bin/env bash
# Sets up the machine, builds everything with AddressSanitizer and UndefinedBehaviorSanitizer,
# installs the pinned npm peers for the interop tests, and runs every test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh

# PostgreSQL for the archive tests: start the installed cluster (creating one if the package made
# none), then a role and a database `ldtest` with password `ldtest`. Safe to run again.
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi
}
start_postgres() {
  local sudo="" line ver name port status
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  line=$(pg_lsclusters --no-header 2>/dev/null | head -n1)
  if [ -z "$line" ]; then
    ver=$(ls /usr/lib/postgresql | sort -V | tail -n1)
    $sudo pg_createcluster "$ver" main >/dev/null
    line=$(pg_lsclusters --no-header | head -n1)
  fi
  read -r ver name port status _ <<<"$line"
  case "$status" in
  online*) ;;
  *) $sudo pg_ctlcluster "$ver" "$name" start ;;
  esac
  for _ in $(seq 100); do
    pg_isready -q -h 127.0.0.1 -p "$port" && break
    sleep 0.2
  done
  as_postgres psql -q -p "$port" -v ON_ERROR_STOP=1 -c "DO \$\$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ldtest') THEN
      CREATE ROLE ldtest LOGIN PASSWORD 'ldtest';
    END IF; END \$\$;"
  if [ "$(as_postgres psql -p "$port" -tAc "SELECT 1 FROM pg_database WHERE datname = 'ldtest'")" != 1 ]; then
    as_postgres createdb -p "$port" -O ldtest ldtest
  fi
  export LD_TEST_PG_URL="postgres://ldtest:ldtest@127.0.0.1:$port/ldtest"
  export LD_REQUIRE_PG=1
  echo "postgres: cluster $ver/$name on port $port, LD_TEST_PG_URL set"
}
start_postgres
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLD_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)"
(cd tests/interop && npm ci --no-audit --no-fund --loglevel=error)
(cd tests/rlnchain && npm ci --no-audit --no-fund --loglevel=error)

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" "$@"

# The optimised build of the README (scripts/run-node.sh makes it without the tests): GCC warns
# differently at -O2, and the build treats warnings as errors.
if [ $# -eq 0 ]; then
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-release -j"$(nproc)"
fi

# The README's fuzzing recipe, exactly as written, so that it keeps building; its fuzz targets
# then replay their corpora through libFuzzer itself (which starts with the empty input).
if [ $# -eq 0 ]; then
  cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DLD_LIBFUZZER=ON -DLD_SANITIZE=ON >/dev/null
  cmake --build build-fuzz -j"$(nproc)"
  ctest --test-dir build-fuzz --output-on-failure -j"$(nproc)" -L fuzz
fi
