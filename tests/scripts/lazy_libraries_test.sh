#!/usr/bin/env bash
# The optional libraries are mapped only when their feature is on: a relay node without store,
# REST or metrics maps neither libsqlite3, libmicrohttpd nor libpq; with --store (SQLite) and
# --rest it maps libsqlite3 and libmicrohttpd, still not libpq.
# Usage: lazy_libraries_test.sh <logosdelivery>
set -euo pipefail
bin=$1
work=$(mktemp -d)
pid=''
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

start() { # flags...
  (cd "$work" && exec "$bin" --relay=true --cluster-id=42 --shard=0 --listen-address=127.0.0.1 --tcp-port=0 \
     --log-level=INFO "$@" >"$work/node.log" 2>&1) &
  pid=$!
  for _ in $(seq 600); do
    grep -q 'Node setup complete' "$work/node.log" && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$work/node.log" >&2; fail "the node exited"; }
    sleep 0.1
  done
  fail "the node did not start"
}
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=''; }
mapped() { grep -q "/$1" "/proc/$pid/maps"; }

start --rest=false --metrics-server=false --store=false
for lib in libsqlite3 libmicrohttpd libpq; do mapped "$lib" && fail "$lib mapped by a node that does not use it"; done
stop

start --rest=true --rest-port=0 --store=true --store-message-db-url="sqlite://$work/store.sqlite3"
for _ in $(seq 100); do grep -q 'Archive open' "$work/node.log" && break; sleep 0.1; done
mapped libsqlite3 || fail "libsqlite3 not mapped with a SQLite archive"
mapped libmicrohttpd || fail "libmicrohttpd not mapped with REST on"
mapped libpq && fail "libpq mapped without a postgres:// archive"
stop
echo "lazy libraries: libsqlite3, libmicrohttpd and libpq mapped only with their feature"
