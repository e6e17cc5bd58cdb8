#!/usr/bin/env bash
# Checks that every tracked C++ file is laid out as .clang-format says, with clang-format 19
# (the LLVM release the build uses; scripts/deps.sh installs it). Lists the files that differ
# and exits 1 if any. `scripts/check_format.sh --fix` formats them in place.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tool=clang-format-19
if ! command -v "$tool" >/dev/null; then
  echo "check_format: $tool is missing (scripts/deps.sh installs it)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${1:-}" = "--fix" ]; then
  "$tool" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$tool" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} file(s) differ from .clang-format's layout:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix: scripts/check_format.sh --fix (or $tool -i FILE)" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
