#!/usr/bin/env bash
# scripts/check-layers.sh on small trees made here: a clean tree passes; a REST file including a
# node header, a metrics file including a messaging header and a base file including a waku
# header fail with each offending include named; an allow-listed include passes, and an
# allow-list entry without a reason or one that matches nothing fails; an unknown folder under
# src/ and an include that resolves to nothing fail.
#   check_layers_test.sh <source dir>
set -euo pipefail
check="$1/scripts/check-layers.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tree() { # a fresh tree in $work/t with one header per layer and a protobuf schema
  rm -rf "$work/t"
  mkdir -p "$work/t/proto" "$work/t/include"
  for l in base crypto p2p waku rest metrics node messaging lib; do
    mkdir -p "$work/t/src/$l"
    echo "/* $l */" >"$work/t/src/$l/$l.h"
  done
  touch "$work/t/proto/thing.proto" "$work/t/include/liblogosdelivery.h"
  printf '#include "node/node.h"\n#include "rest/rest.h"\n#include "base/base.h"\n' \
    >"$work/t/src/node/ok.c"
  printf '#include "thing.pb-c.h"\n#include "waku.h"\n' >"$work/t/src/waku/codec.c"
  printf '#include "liblogosdelivery.h"\n' >"$work/t/src/lib/api.c"
}

expect_pass() { # <what> [allow-list]
  if ! out=$(bash "$check" "$work/t" "${2:-/dev/null}" 2>&1); then
    echo "FAIL: $1 should pass: $out"
    exit 1
  fi
}

expect_fail() { # <what> <allow-list> <needle>...
  local what=$1 list=$2
  shift 2
  if out=$(bash "$check" "$work/t" "$list" 2>&1); then
    echo "FAIL: $what should fail: $out"
    exit 1
  fi
  for needle in "$@"; do
    if ! grep -qF -- "$needle" <<<"$out"; then
      echo "FAIL: $what: no '$needle' in: $out"
      exit 1
    fi
  done
}

tree
expect_pass "a clean tree"

printf '\n#include "node/node.h"\n' >"$work/t/src/rest/server.c"
printf '#include "base/base.h"\n#include "messaging/messaging.h"\n' >"$work/t/src/metrics/m.h"
printf '#include "waku/waku.h"\n' >"$work/t/src/base/b.c"
expect_fail "upward includes" /dev/null \
  "src/rest/server.c:2: rest (4) includes node/node.h (node (5))" \
  "src/metrics/m.h:2: metrics (4) includes messaging/messaging.h (messaging (6))" \
  "src/base/b.c:1: base (0) includes waku/waku.h (waku (3))"

printf 'src/rest/server.c node/node.h the reason\nsrc/metrics/m.h messaging/messaging.h why\n' \
  >"$work/allow"
expect_fail "a partial allow-list" "$work/allow" "src/base/b.c:1: base (0)"
rm "$work/t/src/base/b.c"
expect_pass "allowed includes" "$work/allow"
echo "src/p2p/x.c base/base.h no longer needed" >>"$work/allow"
expect_fail "a stale allow-list entry" "$work/allow" "stale entry 'src/p2p/x.c base/base.h'"
echo "src/rest/server.c node/node.h" >"$work/allow"
expect_fail "an entry without a reason" "$work/allow" "has no reason"

tree
mkdir -p "$work/t/src/mystery"
expect_fail "a folder without a layer" /dev/null "src/mystery: a folder without a layer"
tree
printf '#include "nowhere.h"\n' >"$work/t/src/p2p/p.c"
expect_fail "an unresolved include" /dev/null "src/p2p/p.c:1: p2p includes nowhere.h, which is no header"

bash "$check" "$1" >/dev/null # and the real tree
echo "check-layers: every case behaves"
