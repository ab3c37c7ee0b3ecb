#!/usr/bin/env bash
# `make package`: builds the Debian package with CPack, checks its metadata
# and contents, unpacks it into a scratch root and runs the packaged
# `trellis demo` from there.
# Usage: check_package.sh BUILD_DIR
set -euo pipefail
build=$1
work=$(mktemp -d /tmp/trellis-package-XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log") || { cat "$work/cpack.log" >&2; exit 1; }
deb=$(ls "$work"/out/trellis_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
for dep in libpq5 postgresql-15; do
  grep -q "$dep" <<<"$depends" || { echo "$deb: Depends lacks $dep: $depends" >&2; exit 1; }
done
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/trellis ./usr/include/trellis/trellis.h ./usr/lib/libtrellis.so.0 \
         ./usr/lib/cmake/trellis/trellisConfig.cmake ./usr/lib/pkgconfig/trellis.pc; do
  grep -q " $f" <<<"$contents" || { echo "$deb lacks $f" >&2; exit 1; }
done
dpkg-deb -x "$deb" "$work/root"
"$work/root/usr/bin/trellis" demo >"$work/demo.log" 2>&1 || { tail -30 "$work/demo.log" >&2; exit 1; }
echo "$(basename "$deb"): Depends: $depends; its trellis demo ran"
