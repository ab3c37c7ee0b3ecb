#!/usr/bin/env bash
# `make install` into a scratch prefix, then builds tests/install/consumer
# against it with find_package(trellis) and a C program with pkg-config, and
# runs both against TRELLIS_DATABASE_URL (run_with_cluster.sh sets it).
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d /tmp/trellis-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/trellis include/trellis/trellis.h include/trellis/trellis.hpp \
         include/trellis/error.hpp include/trellis/status.hpp; do
  [ -e "$prefix/$f" ] || { echo "make install did not put $f in place" >&2; exit 1; }
done
libdir=$(dirname "$(find "$prefix" -name 'libtrellis.so.0' | head -1)")
[ -n "$libdir" ] && [ -e "$libdir/libtrellis.so" ] || { echo "libtrellis.so.0 (and its link) missing" >&2; exit 1; }
[ -e "$libdir/cmake/trellis/trellisConfig.cmake" ] || { echo "CMake package missing" >&2; exit 1; }
[ -e "$libdir/pkgconfig/trellis.pc" ] || { echo "pkg-config file missing" >&2; exit 1; }
"$prefix/bin/trellis" --help >/dev/null

cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/configure.log" || { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/consumer" >"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
"$work/consumer/consumer_c"
"$work/consumer/consumer_cpp"

export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046
cc -Wall -Werror -o "$work/pc_consumer" "$src/tests/install/consumer/consumer.c" \
  $(pkg-config --cflags --libs trellis) -Wl,-rpath,"$(pkg-config --variable=libdir trellis)"
"$work/pc_consumer"
echo "installed tree, find_package(trellis) and pkg-config: all work"
