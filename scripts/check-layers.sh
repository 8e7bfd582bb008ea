#!/usr/bin/env bash
# Checks the include layering of the architecture (ARCHITECTURE.md, "Layers"): a file under
# src/<folder>/ includes only headers of its own layer or of layers below:
#   base 0, crypto 1, zk 1, p2p 2, waku 3, rest 4, metrics 4, node 5, messaging 6, channels 7,
#   lib 8.
# Headers named without a folder resolve to the including file's folder (same layer), to a
# protobuf-c header generated from proto/ (any layer may use it) or to a public header in
# include/ (the C API's: layer lib). apps/ may include anything and is not checked.
#
# Every offending include is printed as "<file>:<line>: <layer> (<n>) includes <header>
# (<layer> (<m>))", and so is an include that resolves to nothing known and a folder of src/
# that has no layer. Exceptions are listed in scripts/layering-allowlist.txt, one per line:
#   <file> <header> <reason>
# (a reason is required; an entry that no longer matches an offending include is reported as
# stale). Exit status 0 when all is well, 1 otherwise.
#
#   check-layers.sh [<root> [<allow-list>]]   (default: this checkout and its allow-list)
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
allow=${2:-"$root/scripts/layering-allowlist.txt"}
cd "$root"

declare -A layer=([base]=0 [crypto]=1 [zk]=1 [p2p]=2 [waku]=3 [rest]=4 [metrics]=4 [node]=5
  [messaging]=6 [channels]=7 [lib]=8)

declare -A allowed=() used=()
if [ -f "$allow" ]; then
  while read -r file header reason; do
    case "$file" in '' | '#'*) continue ;; esac
    if [ -z "$reason" ]; then
      echo "$allow: '$file $header' has no reason"
      exit 1
    fi
    allowed["$file $header"]=1
  done <"$allow"
fi

bad=0
report() { # <file> <line> <header> <text>
  if [ -n "${allowed["$1 $3"]:-}" ]; then
    used["$1 $3"]=1
  else
    echo "$1:$2: $4"
    bad=1
  fi
}

# Sets `to` to the layer folder of a header named in `file`'s #include ("proto" for a generated
# protobuf-c header), or "" when it resolves to none.
resolve() { # <file> <header>
  local dir=${1%/*} h=$2 top=${2%%/*} rel=${1#src/}
  to=""
  if [[ "$h" == */* && -n "${layer[$top]:-}" ]]; then
    to=$top
  elif [ -f "$dir/$h" ]; then
    to=${rel%%/*}
  elif [[ "$h" == *.pb-c.h && -f "proto/${h%.pb-c.h}.proto" ]]; then
    to=proto
  elif [[ "$h" != */* && -f "include/$h" ]]; then
    to=lib
  fi
}

[ -d src ] || { echo "check-layers: no src/ in $PWD"; exit 1; }
for d in src/*/; do
  d=${d%/}
  if [ -z "${layer[${d#src/}]:-}" ]; then
    echo "$d: a folder without a layer (add it to ARCHITECTURE.md and scripts/check-layers.sh)"
    bad=1
  fi
done

checked=0
while IFS= read -r -d '' file; do
  own=${file#src/}
  own=${own%%/*}
  [ -n "${layer[$own]:-}" ] || continue
  checked=$((checked + 1))
  while IFS=: read -r line header; do
    resolve "$file" "$header"
    if [ -z "$to" ]; then
      report "$file" "$line" "$header" "$own includes $header, which is no header of src/, proto/ or include/"
    elif [ "$to" != proto ] && [ "${layer[$to]}" -gt "${layer[$own]}" ]; then
      report "$file" "$line" "$header" \
        "$own (${layer[$own]}) includes $header ($to (${layer[$to]})): a layer includes only its own or lower layers"
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
    sed -E 's/^([0-9]+):.*"([^"]+)".*/\1:\2/')
done < <(find src -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)

for key in "${!allowed[@]}"; do
  if [ -z "${used[$key]:-}" ]; then
    echo "$allow: stale entry '$key': that include is gone or allowed by the layers"
    bad=1
  fi
done

[ "$bad" -eq 0 ] || exit 1
echo "layering: $checked files of src/ include only their own or lower layers (${#allowed[@]} allowed exceptions)"
