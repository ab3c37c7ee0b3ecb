#!/usr/bin/env bash
# `pip install ./bindings/python` works: installs a copy of the package
# source (pip leaves build files beside the source) into a scratch target
# with the setuptools already on the machine (no package index needed), then
# imports it from there, away from the source tree, and reads the library's
# version through it.
# Usage: check_pip_install.sh PYTHON PACKAGE_DIR LIBRARY
set -euo pipefail
python=$1 package=$2 library=$3
work=$(mktemp -d /tmp/trellis-pip-XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$package" "$work/src"
rm -rf "$work/src/build" "$work/src"/src/*.egg-info
"$python" -m pip install --quiet --no-build-isolation --no-deps --no-index --target "$work/site" \
  "$work/src"
cd "$work"
TRELLIS_LIBRARY=$library PYTHONPATH=$work/site "$python" -c '
import trellis, pathlib, sys
where = pathlib.Path(trellis.__file__).resolve()
assert str(where).startswith(sys.argv[1]), f"imported from {where}"
assert (where.parent / "py.typed").exists(), "py.typed is installed"
print("installed trellis", trellis.__version__ if hasattr(trellis, "__version__") else "",
      "over libtrellis", trellis.library_version())
' "$work/site"
