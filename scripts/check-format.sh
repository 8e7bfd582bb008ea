#!/usr/bin/env bash
# Fails when any C file tracked or added in the tree is not formatted with the repository's
# .clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
dirs='^(src|include|apps|tests|fuzz|bench|examples)/'
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h' | grep -E "$dirs" |
  grep -v '/node_modules/')
[ ${#files[@]} -eq 0 ] && exit 0
clang-format --dry-run --Werror "${files[@]}"
echo "clang-format: ${#files[@]} files formatted"
