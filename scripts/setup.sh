#!/usr/bin/env bash
# Installs the Debian packages Trellis builds and tests with. As root it runs
# apt-get; otherwise it prints the command to run.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libpq-dev libpg-query-dev nlohmann-json3-dev
      libcli11-dev libfmt-dev libspdlog-dev googletest libgtest-dev postgresql-15
      postgresql-client-15 libprotobuf-c-dev clang-format prometheus-cpp-dev
      python3 python3-pytest python3-setuptools python3-wheel python3-pip dpkg-dev binutils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "Trellis needs these packages; run as root:" >&2
  echo "  apt-get install -y ${missing[*]}" >&2
  exit 1
fi
