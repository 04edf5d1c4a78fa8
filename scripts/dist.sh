#!/usr/bin/env bash
# `make dist`: portable tarballs of gpuwhy for x86_64 and aarch64 (Grace Hopper, GB200), built
# on Debian 12 and runnable on other Linux distributions. Each tarball carries gpuwhy with every
# library it links, the C library and loader included, and a static launcher (dist/launcher.c)
# that starts it through that loader: why, and what the host still has to provide, is in
# docs/dist.md. aarch64 is cross-built (dist/aarch64-linux-gnu.cmake); its unit tests run
# under qemu-user-static. Kept apart from packaging (make install, .deb), which installs into
# a known distribution and links against its libraries.
#
# Usage: scripts/dist.sh [ARCH...]            (default: x86_64 aarch64)
# Environment:
#   GW_DIST_OUT=DIR          where the tarballs go (default: build-dist)
#   GW_DIST_WORK=DIR         build trees and staging (default: build-dist/work)
#   GW_DIST_UNIT_TESTS=0     skip the unit tests of each build (the dist test does)
#   GW_DIST_BUILD_<ARCH>=DIR package that existing build tree instead of building one
#   GW_DIST_CUDA_HOME_<ARCH>=DIR  CUDA root with that architecture's CUPTI: the tarball then
#                            carries libgpuwhy-cupti.so (run --trace); the native build finds
#                            /usr/local/cuda by itself
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${GW_DIST_OUT:-$src/build-dist}
work=${GW_DIST_WORK:-$out/work}
unit_tests=${GW_DIST_UNIT_TESTS:-1}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(x86_64 aarch64)
version=$(sed -n 's/^project(gpuwhy VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || { echo "dist: no version in CMakeLists.txt" >&2; exit 1; }
# Reproducible archives: file times and order come from the commit, not from this build.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)}
host_arch=$(uname -m)

die() { echo "dist: $*" >&2; exit 1; }

# glibc pieces that are not linked by gpuwhy itself but that a library dlopen'ed from the host
# (libnvidia-ml.so.1, an NSS module) may name: they must resolve to the bundled glibc, since
# a host copy beside the bundled libc.so.6 fails on GLIBC_PRIVATE symbols. libgcc_s: glibc
# loads it to unwind a cancelled thread.
glibc_extras=(libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libresolv.so.2 libutil.so.1
              libnss_files.so.2 libnss_dns.so.2 libgcc_s.so.1)

arch_setup() { # ARCH -> triplet, cross, emulator, cmake_args
  local arch=$1
  triplet=$arch-linux-gnu
  cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGW_WERROR=ON)
  cross='' emulator=''
  if [ "$arch" = "$host_arch" ]; then
    return 0
  fi
  if [ "$arch" = aarch64 ] && [ "$host_arch" = x86_64 ]; then
    cross=aarch64-linux-gnu- emulator=qemu-aarch64-static
    cmake_args+=(-DCMAKE_TOOLCHAIN_FILE="$src/dist/aarch64-linux-gnu.cmake")
    # The x86_64 CUDA of this machine would be found otherwise, and its libcupti cannot link.
    local cuda_var=GW_DIST_CUDA_HOME_$arch
    cmake_args+=(-DCUDA_HOME="${!cuda_var:-/nonexistent}")
    if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64-static >/dev/null ||
       [ ! -e /usr/lib/aarch64-linux-gnu/pkgconfig/sqlite3.pc ]; then
      "$src/scripts/deps.sh" dist
    fi
    return 0
  fi
  die "building for $arch on $host_arch is not set up (x86_64 natively, aarch64 natively or from x86_64)"
}

# Finds a library by soname the way the target's loader would on a Debian system.
find_lib() { # SONAME
  local d
  for d in "/lib/$triplet" "/usr/lib/$triplet" "/usr/$triplet/lib"; do
    if [ -e "$d/$1" ]; then
      echo "$d/$1"
      return 0
    fi
  done
  return 1
}

needed_of() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

# Copies SONAMEs and everything they need into DIR (the closure), resolving symlinks.
bundle_closure() { # DIR SONAME...
  local dir=$1 lib path
  shift
  local queue=("$@")
  while [ ${#queue[@]} -gt 0 ]; do
    lib=${queue[0]}
    queue=("${queue[@]:1}")
    [ -e "$dir/$lib" ] && continue
    path=$(find_lib "$lib") || die "$lib (needed by the $triplet build) not found in /lib/$triplet or /usr/lib/$triplet"
    cp -L "$path" "$dir/$lib"
    chmod 0755 "$dir/$lib"
    bundled_from+=("$path")
    mapfile -t more < <(needed_of "$dir/$lib")
    queue+=("${more[@]}")
  done
}

# Copyright files of the Debian packages the bundled libraries come from: they are
# redistributed here, so their licences travel with them.
copy_licences() { # DEST PATH...
  local dest=$1 path pkg
  shift
  mkdir -p "$dest"
  for path in "$@"; do
    pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(realpath "$path")" 2>/dev/null ||
          dpkg -S "${path#/usr}" 2>/dev/null || true)
    pkg=${pkg%%:*}
    pkg=${pkg%%,*}
    [ -n "$pkg" ] || die "no Debian package owns $path (cannot ship its licence)"
    [ -r "/usr/share/doc/$pkg/copyright" ] || die "no copyright file for $pkg ($path)"
    cp "/usr/share/doc/$pkg/copyright" "$dest/$pkg.copyright"
  done
}

# Runs a program of the target architecture on this machine.
run_target() { if [ -n "$emulator" ]; then "$emulator" "$@"; else "$@"; fi; }

build_one() { # ARCH
  local arch=$1
  arch_setup "$arch"
  local build_var=GW_DIST_BUILD_$arch
  local build=${!build_var:-}
  if [ -z "$build" ]; then
    build=$work/build-$arch
    echo "== dist $arch: configure and build in $build" >&2
    cmake -S "$src" -B "$build" "${cmake_args[@]}" >/dev/null
    if [ "$unit_tests" = 1 ]; then
      cmake --build "$build" -j "$jobs" >/dev/null
    else
      local targets=(gpuwhy)
      [ -d "$build/CMakeFiles/gpuwhy-cupti.dir" ] && targets+=(gpuwhy-cupti)
      cmake --build "$build" -j "$jobs" --target "${targets[@]}" >/dev/null
    fi
  fi
  [ -x "$build/gpuwhy" ] || die "no gpuwhy in $build"
  if readelf -d "$build/gpuwhy" | grep -q 'NEEDED.*lib[at]san'; then
    die "$build is a sanitizer build: not for distribution"
  fi
  if [ "$unit_tests" = 1 ]; then
    # test_collect_live counts this process's threads and children in /proc; qemu-user adds
    # a thread of its own to every emulated process, so it runs natively only.
    # test_nsys_direct reads every Nsight export in ../shared/traces twice (page reader and
    # SQLite): 11 s natively, more than its 300 s limit under qemu on a loaded 2-core machine
    # (81 CPU-s spent in its first of 7 cases). The aarch64 page reader is still checked: the
    # dist test analyses two Nsight exports with the aarch64 binary, byte for byte against x86_64.
    local exclude='^$'
    [ -n "$emulator" ] && exclude='^(test_collect_live|test_nsys_direct)$'
    echo "== dist $arch: unit tests${emulator:+ under $emulator}" >&2
    (cd "$build" && ctest -R '^test_' -E "$exclude" -j "$jobs" --output-on-failure >"$work/unit-$arch.log" 2>&1) ||
      { tail -40 "$work/unit-$arch.log" >&2; die "unit tests of the $arch build failed (log: $work/unit-$arch.log)"; }
    grep -E "tests passed|Total Test time" "$work/unit-$arch.log" | sed "s/^/   /" >&2
  fi

  local name=gpuwhy-$version-$arch-linux
  local stage=$work/stage-$arch/$name
  rm -rf "$work/stage-$arch"
  mkdir -p "$stage/bin" "$stage/lib/gpuwhy" "$stage/share/doc/gpuwhy"
  local lib=$stage/lib/gpuwhy
  "${cross}gcc" -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -static -s \
    "$src/dist/launcher.c" -o "$stage/bin/gpuwhy"
  "${cross}strip" -o "$lib/gpuwhy-bin" "$build/gpuwhy"
  local interp
  interp=$(readelf -l "$build/gpuwhy" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  [ -n "$interp" ] || die "$build/gpuwhy names no program interpreter"
  local loader
  loader=$(basename "$interp")
  bundled_from=()
  bundle_closure "$lib" "$loader" "${glibc_extras[@]}"
  mapfile -t direct < <(needed_of "$build/gpuwhy")
  bundle_closure "$lib" "${direct[@]}"
  # `gpuwhy serve` loads libmicrohttpd with dlopen (src/cli/mhd_dl.c): not among the NEEDED
  # libraries, bundled all the same in a build with serve.
  if grep -q 'libmicrohttpd\.so\.12' "$build/gpuwhy"; then
    bundle_closure "$lib" libmicrohttpd.so.12
  fi
  # The kernel names a process after the file it executes: this link makes it "gpuwhy".
  ln -s "$loader" "$lib/gpuwhy"
  if [ -e "$build/libgpuwhy-cupti.so" ]; then
    # Loaded into the job (host C library), found beside the running loader by
    # gw_trace_find_inject_lib: /proc/self/exe is lib/gpuwhy/ld-linux-*.
    "${cross}strip" --strip-unneeded -o "$lib/libgpuwhy-cupti.so" "$build/libgpuwhy-cupti.so"
  fi
  cp "$src/README.md" "$stage/share/doc/gpuwhy/"
  cp -r "$src/docs" "$stage/share/doc/gpuwhy/docs"
  copy_licences "$stage/share/doc/gpuwhy/third-party" "${bundled_from[@]}"

  # Every library the binary or a bundled library needs is in the tarball...
  local f n
  for f in "$lib"/*.so* "$lib/gpuwhy-bin"; do
    # libgpuwhy-cupti.so runs in the job, beside the host's C library and CUDA's libcupti.
    [ -L "$f" ] || [ "${f##*/}" = libgpuwhy-cupti.so ] && continue
    while read -r n; do
      [ -e "$lib/$n" ] || die "$(basename "$f") needs $n, which is not bundled"
    done < <(needed_of "$f")
  done
  # ...and the bundled loader resolves each one there, not on this machine.
  local listing
  listing=$(run_target "$lib/$loader" --library-path "$lib" --list "$lib/gpuwhy-bin") ||
    die "the bundled loader cannot list $name's libraries"
  if echo "$listing" | grep '=>' | grep -v "=> $lib/" | grep -q .; then
    echo "$listing" >&2
    die "$name resolves libraries outside the tarball"
  fi
  run_target "$lib/gpuwhy" --library-path "$lib" --argv0 gpuwhy "$lib/gpuwhy-bin" --version >/dev/null ||
    die "the $arch binary does not start through its bundled loader"

  mkdir -p "$out"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -C "$work/stage-$arch" -czf "$out/$name.tar.gz.part" "$name"
  mv "$out/$name.tar.gz.part" "$out/$name.tar.gz"
  (cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
  echo "$out/$name.tar.gz"
}

mkdir -p "$work"
for arch in "${archs[@]}"; do
  build_one "$arch"
done
