#!/usr/bin/env bash
# Install what building and testing need, when missing: Debian -dev packages
# through apt-get, Python packages through pip. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_pkgs=(build-essential cmake ninja-build pkg-config libzstd-dev libsnappy-dev liblz4-dev
          zlib1g-dev clang clang-format libclang-rt-14-dev llvm)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

req="${1:-requirements-test.txt}"
if ! python3 -c "import sys, importlib.metadata as m
reqs=[l.split('>=')[0].split('==')[0].strip() for l in open('$req') if l.strip() and not l.startswith('#')]
sys.exit(any(not __import__('importlib.util').util.find_spec(r.replace('-','_').split('[')[0]) and
          not [d for d in m.distributions() if d.metadata['Name'].lower()==r.lower()] for r in reqs))" 2>/dev/null; then
  echo "setup: installing Python packages from $req"
  python3 -m pip install -q --disable-pip-version-check -r "$req"
fi
