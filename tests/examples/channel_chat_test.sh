#!/usr/bin/env bash
# The channel chats (examples/channel_chat.c and examples/channel_chat.py) as three participants
# of one reliable channel over loopback, driven through their standard input:
#   alice (C, the others dial her), bob (Python), carol (C);
#   each says one line; every history holds the three;
#   carol stops; alice and bob say one more line each while she is away;
#   carol starts again with the same name and folder (the channel's state and her history are
#   there), receives what she missed and says one more line;
#   at the end the three histories hold the same six lines, each once — checked again a while
#   later, so that a late duplicate would show.
#   channel_chat_test.sh <channel_chat binary> <liblogosdelivery.so> <source dir> <sanitized>
set -euo pipefail
chat=$1 lib=$2 src=$3 sanitized=${4:-OFF}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

export LOGOSDELIVERY_LIB=$lib
py_env=()
if [ "$sanitized" = ON ]; then
  # python itself is not instrumented: the sanitizer runtimes go first, leak checks off for it
  py_env=(env "LD_PRELOAD=$(cc -print-file-name=libasan.so):$(cc -print-file-name=libubsan.so)"
    "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")
fi

fail() {
  echo "FAIL: $*"
  for f in "$work"/*.out "$work"/*.err "$work"/*/history.log; do
    [ -f "$f" ] && { echo "--- $f"; cat "$f"; }
  done
  exit 1
}

# wait_for <seconds> <description> <command…>: polls the command every 0.2 s
wait_for() {
  local secs=$1 what=$2
  shift 2
  for _ in $(seq $((secs * 5))); do
    "$@" && return 0
    sleep 0.2
  done
  fail "timed out: $what"
}

lines() { # <participant> → lines in its history
  [ -f "$work/$1/history.log" ] && wc -l <"$work/$1/history.log" || echo 0
}
has_lines() { [ "$(lines "$1")" -ge "$2" ]; }
printed() { grep -q "$2" "$work/$1.out" 2>/dev/null; }

# start <participant> <fd> <language> [peer]: runs it with its stdin on a FIFO held open on fd
start() {
  local who=$1 fd=$2 lang=$3 peer=${4:-}
  mkdir -p "$work/$who"
  rm -f "$work/$who.in"
  mkfifo "$work/$who.in"
  if [ "$lang" = c ]; then
    "$chat" --fast "$who" "$work/$who" 0 $peer <"$work/$who.in" >>"$work/$who.out" \
      2>>"$work/$who.err" &
  else
    "${py_env[@]}" python3 "$src/examples/channel_chat.py" --fast "$who" "$work/$who" 0 $peer \
      <"$work/$who.in" >>"$work/$who.out" 2>>"$work/$who.err" &
  fi
  pids+=($!)
  eval "exec $fd>\"$work/$who.in\""
  wait_for 60 "$who joins" printed "$who" "joined chat-room as $who"
}

# stop <participant> <fd> <pid>: end of input, then it stops its node and exits
stop() {
  eval "exec $2>&-"
  wait "$3" || fail "$1 exited with $?"
}

start alice 3 c
addr=$(sed -n 's/^listening on //p' "$work/alice.out" | tr ',' '\n' | grep -m1 '/ip4/127\.0\.0\.1/' ||
  sed -n 's/^listening on //p' "$work/alice.out" | cut -d, -f1)
[ -n "$addr" ] || fail "alice printed no address"
start bob 4 py "$addr"
start carol 5 c "$addr"
carol_pid=${pids[2]}

echo "alice says hello" >&3
echo "bob says hello" >&4
echo "carol says hello" >&5
for who in alice bob carol; do wait_for 120 "$who has the three greetings" has_lines "$who" 3; done

stop carol 5 "$carol_pid"
echo "alice: carol is away" >&3
echo "bob: so she is" >&4
for who in alice bob; do wait_for 120 "$who has five lines" has_lines "$who" 5; done
[ "$(lines carol)" -eq 3 ] || fail "carol's history changed while she was away"

start carol 5 c "$addr"
wait_for 120 "carol catches up" has_lines carol 5
echo "carol is back" >&5
for who in alice bob carol; do wait_for 120 "$who has six lines" has_lines "$who" 6; done

same_six() {
  for who in alice bob carol; do
    sort "$work/$who/history.log" >"$work/$who.sorted"
    [ "$(wc -l <"$work/$who.sorted")" -eq 6 ] || fail "$who holds $(lines "$who") lines"
    [ -z "$(uniq -d "$work/$who.sorted")" ] || fail "$who holds a line twice"
  done
  cmp -s "$work/alice.sorted" "$work/bob.sorted" || fail "alice and bob differ"
  cmp -s "$work/alice.sorted" "$work/carol.sorted" || fail "alice and carol differ"
}
same_six
sleep 5 # retransmissions, syncs and repairs keep flowing: nothing may arrive twice
same_six
grep -q "^carol: carol says hello$" "$work/carol/history.log" || fail "carol lost her own line"

exec 3>&- 4>&- 5>&-
for p in "${pids[@]}"; do
  [ "$p" = "$carol_pid" ] && continue
  wait "$p" || fail "a participant exited with $?"
done
pids=()
echo "examples: three channel chats (C and Python) kept one history across a restart"
