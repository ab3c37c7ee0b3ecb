#!/usr/bin/env bash
# Keeps libtrellis.so's interface exactly the documented one: its SONAME,
# and its exported symbols (demangled) equal to exported_symbols.txt. After a
# deliberate change of the interface, regenerate the list with
# TRELLIS_UPDATE_SYMBOLS=1 and review the diff.
# Usage: check_symbols.sh LIBRARY EXPECTED_SONAME SYMBOL_LIST
set -euo pipefail
lib=$1 soname=$2 list=$3
actual_soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
if [ "$actual_soname" != "$soname" ]; then
  echo "SONAME of $lib is '$actual_soname', expected '$soname'" >&2
  exit 1
fi
exported=$(nm -D --defined-only -C "$lib" | sed -E 's/^[0-9a-f]+ [A-Za-z] //; s/@@?TRELLIS_[0-9]+$//' | grep -v '^TRELLIS_[0-9]*$' | LC_ALL=C sort -u)
if [ "${TRELLIS_UPDATE_SYMBOLS:-0}" = 1 ]; then
  printf '%s\n' "$exported" >"$list"
  echo "wrote $list"
  exit 0
fi
if ! diff -u "$list" <(printf '%s\n' "$exported"); then
  echo "the symbols $lib exports differ from $list (- documented, + exported)" >&2
  exit 1
fi
echo "$(wc -l <"$list") symbols, SONAME $soname: as documented"
