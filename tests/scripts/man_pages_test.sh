#!/usr/bin/env bash
# The man pages as built: logosdelivery(1) (generated from the option tables) and
# liblogosdelivery(3) render without a groff warning, and liblogosdelivery(3) names every function
# the two public headers export. The bash completion loads and completes.
# Usage: man_pages_test.sh <build dir> <source dir>
set -euo pipefail
build=$1 src=$2
man1=$build/man/logosdelivery.1 man3=$src/man/liblogosdelivery.3 completion=$build/completion/logosdelivery
fail() { echo "FAIL: $*" >&2; exit 1; }

for page in "$man1" "$man3"; do
  [ -s "$page" ] || fail "$page missing"
  warnings=$(groff -k -man -Tutf8 -ww -z "$page" 2>&1 || true)
  [ -z "$warnings" ] || fail "$page: $warnings"
done

# the functions of the public headers (lines starting with LOGOSDELIVERY_EXPORT), against the page's
# text without its font escapes
text=$(sed 's/\\f[BIRP]//g' "$man3")
functions=$(grep -h '^LOGOSDELIVERY_EXPORT' "$src"/include/liblogosdelivery.h "$src"/include/liblogosdelivery_kernel.h |
  sed 's/(.*//; s/.*[ *]//')
missing=0
for f in $functions; do
  grep -qw -- "$f" <<<"$text" || { echo "liblogosdelivery(3) lacks $f" >&2; missing=1; }
done
[ $missing -eq 0 ] || fail "functions missing from liblogosdelivery(3)"
n=$(wc -w <<<"$functions")
[ "$n" -gt 40 ] || fail "only $n exported functions found in the headers"

# The completion: sub-commands at the first word, a sub-command's flags, bool values.
out=$(bash -c "source '$completion'
  COMP_WORDS=(logosdelivery q); COMP_CWORD=1; _logosdelivery; echo \"\${COMPREPLY[*]}\"
  COMP_WORDS=(logosdelivery query --pa); COMP_CWORD=2; _logosdelivery; echo \"\${COMPREPLY[*]}\"
  COMP_WORDS=(logosdelivery --rest-adm); COMP_CWORD=1; _logosdelivery; echo \"\${COMPREPLY[*]}\"
  COMP_WORDS=(logosdelivery --relay = t); COMP_CWORD=3; _logosdelivery; echo \"\${COMPREPLY[*]}\"")
expected=$'query\n--page-size\n--rest-admin\ntrue'
[ "$out" = "$expected" ] || fail "completion answered:
$out
expected:
$expected"
echo "man pages: logosdelivery(1) and liblogosdelivery(3) render cleanly; $n exported functions documented; completion works"
