#!/usr/bin/env bash
# Checks hetero's C, C++ and CUDA sources against .clang-format (LLVM style);
# with --fix, formats them in place. Tests are left as written: their RUN
# and CHECK lines must not be re-wrapped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CLANG_FORMAT="${CLANG_FORMAT:-clang-format-22}"

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.h' '*.c' '*.cpp' '*.cu' ':!:test/')
else
  mapfile -t files < <(find include lib dialect passes runtime tools unittests \
    bench -type f \( -name '*.h' -o -name '*.c' -o -name '*.cpp' -o -name '*.cu' \) | sort)
fi

if [[ "${1:-}" == --fix ]]; then
  exec "$CLANG_FORMAT" -i "${files[@]}"
fi
if ! "$CLANG_FORMAT" --dry-run -Werror "${files[@]}"; then
  echo "format: the files above differ from .clang-format; run scripts/format.sh --fix" >&2
  exit 1
fi
echo "format: ${#files[@]} files follow .clang-format"
