#!/usr/bin/env bash
# The examples against an installed library: `cmake --install` into a temporary prefix, the C chat
# built with the installed pkg-config file, then the C chat and the Python (ctypes) chat talking
# to each other in both directions over loopback.
#   chat_test.sh <build dir> <source dir> <sanitized: ON|OFF>
set -euo pipefail
build=$1 src=$2 sanitized=${3:-OFF}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(find "$work/prefix" -name liblogosdelivery.pc -printf '%h')
libdir=$(pkg-config --variable=libdir liblogosdelivery)
for h in liblogosdelivery.h liblogosdelivery_kernel.h; do
  test -f "$(pkg-config --variable=includedir liblogosdelivery)/$h"
done
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$src/examples/chat.c" -o "$work/chat" \
  $(pkg-config --cflags --libs liblogosdelivery) -lpthread -Wl,-rpath,"$libdir"

if [ "$sanitized" = ON ]; then
  export LD_PRELOAD
  LD_PRELOAD="$(cc -print-file-name=libasan.so):$(cc -print-file-name=libubsan.so)"
  export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
fi
export LOGOSDELIVERY_LIB=$libdir/liblogosdelivery.so

mkfifo "$work/c.in" "$work/py.in"
"$work/chat" 0 <"$work/c.in" >"$work/c.out" 2>"$work/c.err" &
pids+=($!)
exec 3>"$work/c.in"
for _ in $(seq 100); do grep -q "listening on" "$work/c.out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's/^listening on //p' "$work/c.out" | tr ',' '\n' | grep -m1 '/ip4/127\.0\.0\.1/' ||
  sed -n 's/^listening on //p' "$work/c.out" | cut -d, -f1)
[ -n "$addr" ] || { echo "the C chat printed no address"; cat "$work/c.err"; exit 1; }

python3 "$src/examples/chat.py" 0 "$addr" <"$work/py.in" >"$work/py.out" 2>"$work/py.err" &
pids+=($!)
exec 4>"$work/py.in"

# Repeat until the other side shows it: the first lines may go out before the peers have
# exchanged their subscriptions.
deliver() { # <writer fd> <line> <reader output>
  for i in $(seq 60); do
    echo "$2 $i" >&"$1"
    sleep 0.5
    grep -q "^> $2 " "$3" && return 0
  done
  echo "not delivered: $2"; cat "$work"/*.err; return 1
}
deliver 4 "hello from python" "$work/c.out"
deliver 3 "hello from C" "$work/py.out"
exec 3>&- 4>&-
wait "${pids[0]}"
wait "${pids[1]}"
pids=()
echo "examples: C and Python chats exchanged messages both ways"
