#!/usr/bin/env bash
# Makes sure the Debian 12 packages gpuwhy needs to build and test are installed.
# As root it installs what is missing; otherwise it prints the exact apt line and fails.
# Usage: scripts/deps.sh [build|test|browser|fuzz|dist]   (build < test < browser; fuzz = test
# without the browser; dist = build + test + the aarch64 cross toolchain, the arm64 libraries
# and qemu for `make dist`)
#        scripts/deps.sh slurm   (Slurm and MUNGE for tests/cli/slurm_map_reduce.sh only)
set -euo pipefail
level=${1:-build}
pkgs=(build-essential cmake pkg-config libsqlite3-dev zlib1g-dev libisal-dev libncurses-dev libmicrohttpd-dev sqlite3)
if [ "$level" = slurm ]; then
  pkgs=(slurm-wlm munge)
fi
if [ "$level" = dist ]; then
  # The arm64 libraries come from Debian's multiarch archive; qemu-user-static runs the
  # aarch64 unit tests and binary on this machine (through the arm64 loader of libc6:arm64).
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "gpuwhy: make dist needs the arm64 architecture. Run as root:" >&2
      echo "  dpkg --add-architecture arm64 && apt-get update" >&2
      exit 1
    fi
    dpkg --add-architecture arm64
    apt-get update -qq >&2
  fi
  pkgs+=(libcmocka-dev gcc-aarch64-linux-gnu qemu-user-static libc6:arm64 libsqlite3-dev:arm64
         zlib1g-dev:arm64 libncurses-dev:arm64 libmicrohttpd-dev:arm64 libcmocka-dev:arm64)
fi
if [ "$level" = test ] || [ "$level" = browser ] || [ "$level" = fuzz ]; then
  pkgs+=(libcmocka-dev python3 util-linux procps)
  # The libFuzzer targets (tests/fuzz): their smoke run is part of the suite.
  pkgs+=(clang libclang-rt-14-dev)
  # serve's tests: a real Prometheus and promtool, the manifests' YAML, systemd-analyze
  pkgs+=(prometheus python3-yaml systemd)
  # python3-torch/-torchvision (CPU): real training jobs under `gpuwhy run` and the Python
  # companion's end-to-end test, which installs it into a venv (python3-venv)
  pkgs+=(python3-torch python3-torchvision python3-venv)
fi
if [ "$level" = browser ]; then
  pkgs+=(chromium)
  # Node.js may come from elsewhere than Debian (a newer nodejs package that bundles npm);
  # Debian's npm conflicts with it, so only install Debian's when the commands are missing.
  command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
  command -v npm >/dev/null 2>&1 || pkgs+=(npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "gpuwhy: installing missing Debian packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  echo "gpuwhy: missing Debian packages. Run as root:" >&2
  echo "  apt-get install -y ${missing[*]}" >&2
  exit 1
fi
