#!/usr/bin/env bash
# The portable tarballs of `make dist` (docs/dist.md): the x86_64 one is packaged from this
# build; with GW_DIST_CROSS=1 (`make dist-check`) the aarch64 one is cross-built too and run
# under qemu-user-static. Each must give the same JSON (byte for byte) as this build on real
# traces, Kineto and Nsight, and the same refusal of a malformed one; every library must
# resolve inside the tarball, even in an empty root directory (no host userland at all); NVML
# must still load from the host by soname, and a job started by `run` must see the host's
# libraries and its environment unchanged.
# The aarch64 half is opt-in because a cold cross-build takes minutes on 2 cores (and the
# toolchain is a few hundred MB of packages): `make test` stays short, `make dist-check` runs
# both. With GW_DIST_CROSS=1 it is skipped (77) without the cross toolchain, unless run as
# root, which installs it (scripts/deps.sh dist). Skipped in sanitizer builds (the tarballs
# come from a normal one).
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}" "${GW_SOURCE_DIR:?}" "${GW_BINARY_DIR:?}"
if readelf -d "$GW_BIN" | grep -q 'NEEDED.*lib[at]san'; then
  echo "SKIP: sanitizer build; the tarballs are made from a normal build"
  exit 77
fi
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the dist test is set up on x86_64 only"; exit 77; }
cross=${GW_DIST_CROSS:-0}
have_cross() {
  command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64-static >/dev/null &&
    [ -e /usr/lib/aarch64-linux-gnu/pkgconfig/sqlite3.pc ] && [ -e /usr/lib/aarch64-linux-gnu/libc.so.6 ]
}
if [ "$cross" = 1 ] && ! have_cross; then
  if [ "$(id -u)" = 0 ]; then
    "$GW_SOURCE_DIR/scripts/deps.sh" dist || { echo "FAIL - scripts/deps.sh dist"; exit 1; }
  else
    echo "SKIP: no aarch64 cross toolchain or qemu-user-static (as root: scripts/deps.sh dist)"
    exit 77
  fi
fi

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

archs=(x86_64)
if [ "$cross" = 1 ]; then
  archs+=(aarch64)
else
  echo "# x86_64 only: GW_DIST_CROSS=1 (make dist-check) adds the aarch64 tarball under qemu"
fi
out=$GW_BINARY_DIR/dist
if ! GW_DIST_OUT=$out GW_DIST_WORK=$out/work GW_DIST_UNIT_TESTS=0 GW_DIST_BUILD_x86_64=$GW_BINARY_DIR \
     "$GW_SOURCE_DIR/scripts/dist.sh" "${archs[@]}" >"$tmp/dist.log" 2>&1; then
  cat "$tmp/dist.log"
  echo "FAIL - scripts/dist.sh"
  exit 1
fi
version=$("$GW_BIN" --version | awk '{print $2}')
for arch in "${archs[@]}"; do
  tar -xzf "$out/gpuwhy-$version-$arch-linux.tar.gz" -C "$tmp" || { echo "FAIL - cannot extract the $arch tarball"; exit 1; }
  (cd "$out" && sha256sum --quiet -c "gpuwhy-$version-$arch-linux.tar.gz.sha256") && ok "$arch: checksum file matches" || bad "$arch: checksum"
done
X=$tmp/gpuwhy-$version-x86_64-linux
A=$tmp/gpuwhy-$version-aarch64-linux

machine() { readelf -h "$1" | sed -n 's/^ *Machine: *//p'; }
pairs=("$X:X86-64")
[ "$cross" = 1 ] && pairs+=("$A:AArch64")
for pair in "${pairs[@]}"; do
  dir=${pair%%:*} want=${pair##*:}
  for f in bin/gpuwhy lib/gpuwhy/gpuwhy-bin lib/gpuwhy/libc.so.6; do
    case "$(machine "$dir/$f")" in
      *"$want"*) ;;
      *) bad "$(basename "$dir")/$f is $(machine "$dir/$f"), not $want"; continue 2 ;;
    esac
  done
  if readelf -l "$dir/bin/gpuwhy" | grep -q INTERP; then
    bad "$(basename "$dir"): the launcher is dynamically linked"
  else
    ok "$(basename "$dir"): $want binaries, static launcher"
  fi
done

# The aarch64 binary as its launcher starts it (bundled loader and libraries), through qemu
# named explicitly: binfmt_misc may be missing, so the launcher's own exec cannot be emulated.
L=$A/lib/gpuwhy
arm() { qemu-aarch64-static "$L/gpuwhy" --library-path "$L" --argv0 gpuwhy "$L/gpuwhy-bin" "$@"; }

pairs=("x86_64:$X/lib/gpuwhy")
[ "$cross" = 1 ] && pairs+=("aarch64:$L")
for pair in "${pairs[@]}"; do
  arch=${pair%%:*} lib=${pair#*:}
  if [ "$arch" = aarch64 ]; then
    listing=$(qemu-aarch64-static "$lib/gpuwhy" --library-path "$lib" --list "$lib/gpuwhy-bin" 2>&1)
  else
    listing=$("$lib/gpuwhy" --library-path "$lib" --list "$lib/gpuwhy-bin" 2>&1)
  fi
  outside=$(echo "$listing" | grep '=>' | grep -v "=> $lib/")
  n=$(echo "$listing" | grep -c "=> $lib/")
  [ -z "$outside" ] && [ "$n" -ge 5 ] && ok "$arch: all $n libraries resolve inside the tarball" ||
    bad "$arch: libraries from outside: $outside ($listing)"
done

# serve loads libmicrohttpd with dlopen (not a NEEDED library): the tarball must carry it, and
# serve must find it there (a refused --listen comes after the library is loaded).
if [ -e "$X/lib/gpuwhy/libmicrohttpd.so.12" ]; then
  "$X/bin/gpuwhy" serve --listen 999.1.1.1:80 >/dev/null 2>"$tmp/serve.err"; rs=$?
  [ "$rs" = 64 ] && grep -q "is not an IP address" "$tmp/serve.err" &&
    ok "x86_64: serve loads the bundled libmicrohttpd (refuses a bad --listen with exit 64)" ||
    bad "x86_64: serve from the tarball: exit $rs, $(head -2 "$tmp/serve.err")"
else
  bad "x86_64: the tarball has no libmicrohttpd.so.12 for serve"
fi

K=$GW_SHARED_DIR/traces/kineto
N=$GW_SHARED_DIR/traces/nsys
RESNET=$K/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz
same_json() { # name trace expected-rc
  local name=$1 trace=$2 want=$3 rb rx ra
  "$GW_BIN" analyze --json "$trace" >"$tmp/$name.build.json" 2>"$tmp/$name.build.err"; rb=$?
  "$X/bin/gpuwhy" analyze --json "$trace" >"$tmp/$name.x86_64.json" 2>"$tmp/$name.x86_64.err"; rx=$?
  if [ "$cross" != 1 ]; then
    if [ "$rb $rx" != "$want $want" ]; then
      bad "$name: exit codes build $rb, x86_64 $rx (want $want): $(head -3 "$tmp/$name.x86_64.err")"
    elif ! cmp -s "$tmp/$name.build.json" "$tmp/$name.x86_64.json" || ! cmp -s "$tmp/$name.build.err" "$tmp/$name.x86_64.err"; then
      bad "$name: the x86_64 tarball differs from the build: $(diff "$tmp/$name.build.json" "$tmp/$name.x86_64.json" | head -5)"
    else
      ok "$name: same JSON and stderr from the x86_64 tarball as from the build ($(wc -c <"$tmp/$name.x86_64.json") bytes, exit $want)"
    fi
    return
  fi
  arm analyze --json "$trace" >"$tmp/$name.aarch64.json" 2>"$tmp/$name.aarch64.err"; ra=$?
  if [ "$rb $rx $ra" != "$want $want $want" ]; then
    bad "$name: exit codes build $rb, x86_64 $rx, aarch64 $ra (want $want): $(head -3 "$tmp/$name.aarch64.err")"
  elif ! cmp -s "$tmp/$name.build.json" "$tmp/$name.x86_64.json" || ! cmp -s "$tmp/$name.build.err" "$tmp/$name.x86_64.err"; then
    bad "$name: the x86_64 tarball differs from the build: $(diff "$tmp/$name.build.json" "$tmp/$name.x86_64.json" | head -5)"
  elif ! cmp -s "$tmp/$name.x86_64.json" "$tmp/$name.aarch64.json" || ! cmp -s "$tmp/$name.x86_64.err" "$tmp/$name.aarch64.err"; then
    bad "$name: aarch64 differs from x86_64: $(diff "$tmp/$name.x86_64.json" "$tmp/$name.aarch64.json" | head -5)$(diff "$tmp/$name.x86_64.err" "$tmp/$name.aarch64.err" | head -3)"
  else
    ok "$name: same JSON and stderr on x86_64 and aarch64 ($(wc -c <"$tmp/$name.aarch64.json") bytes, exit $want)"
  fi
}
same_json resnet50 "$RESNET" 0
last=${archs[-1]}
# The JSON must hold the diagnosis, not merely agree: an empty output would agree too.
grep -q '"verdict": "GPU 0 busy 66% of steps #17-#21; main cause: waiting for data (data.loader_wait' \
  "$tmp/resnet50.$last.json" && ok "$last: resnet50 verdict is data.loader_wait" ||
  bad "$last: resnet50 verdict: $(grep '"verdict"' "$tmp/resnet50.$last.json")"
same_json d2h_sync "$K/GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz" 0
same_json nccl_ddp "$K/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz" 0
same_json nsys_weatherbench "$N/frasertajima__WeatherBench2/report1.sqlite" 0
same_json nsys_uvm "$N/CO18326__uvmTorch/report1.sqlite" 0
same_json malformed "$K/GPUPuzzlers/streams/same_priority_streams.json.gz" 2
grep -q "same_priority_streams" "$tmp/malformed.$last.err" && ok "$last: the refusal names the file" ||
  bad "$last: refusal: $(cat "$tmp/malformed.$last.err")"

# The HTML report (number formatting, SVG geometry) is the same on both too.
if [ "$cross" = 1 ]; then
  "$X/bin/gpuwhy" report -o "$tmp/x.html" "$RESNET" 2>/dev/null && arm report -o "$tmp/a.html" "$RESNET" 2>/dev/null &&
    cmp -s "$tmp/x.html" "$tmp/a.html" && ok "HTML report identical on x86_64 and aarch64" || bad "HTML report differs or failed"
fi

# A job under the tarball's `run`: host libraries and the caller's environment, nothing from
# the tarball mapped in; its recording reads the same on both architectures.
LD_LIBRARY_PATH=/gw-test-path "$X/bin/gpuwhy" run -o "$tmp/job.db" -- \
  sh -c 'echo "$LD_LIBRARY_PATH" >"$1/job_env"; grep -c "$2" /proc/$$/maps >"$1/job_maps"; sleep 1' job "$tmp" "$X" \
  >"$tmp/run.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(cat "$tmp/job_env" 2>/dev/null)" = /gw-test-path ] && [ "$(cat "$tmp/job_maps" 2>/dev/null)" = 0 ]; then
  ok "run: the job gets LD_LIBRARY_PATH unchanged and maps nothing from the tarball"
else
  bad "run: rc=$rc env=$(cat "$tmp/job_env" 2>/dev/null) maps=$(cat "$tmp/job_maps" 2>/dev/null) $(tail -3 "$tmp/run.out")"
fi
[ -s "$tmp/job.db" ] && same_json recording "$tmp/job.db" 0

# NVML is found by soname, as on a GPU node (here a fake driver through LD_LIBRARY_PATH,
# which the launcher hands to the bundled loader after its own directory).
if [ -n "${GW_FAKE_NVML:-}" ]; then
  mkdir -p "$tmp/driver"
  cp "$GW_FAKE_NVML" "$tmp/driver/libnvidia-ml.so.1"
  printf 'gpus 2\ndriver 550.54.15\ngpu 0 name NVIDIA GH200\ngpu 1 name NVIDIA GH200\n' >"$tmp/scenario"
  env -u GW_NVML_LIB LD_LIBRARY_PATH="$tmp/driver" GW_FAKE_NVML_SCENARIO="$tmp/scenario" \
    "$X/bin/gpuwhy" doctor >"$tmp/doctor.txt" 2>&1
  grep -q "driver 550.54.15, 2 GPUs" "$tmp/doctor.txt" && ok "x86_64: NVML loaded by soname from LD_LIBRARY_PATH" ||
    bad "x86_64: NVML not loaded: $(grep -i nvml "$tmp/doctor.txt")"
fi

# `run --trace` finds its CUDA library inside the tarball (beside the running loader), and
# the doctor names it whole wherever the tarball was unpacked. Without GW_CUPTI_LIB, which
# ctest sets to the build tree's copy and which would take precedence.
if [ -e "$X/lib/gpuwhy/libgpuwhy-cupti.so" ]; then
  env -u GW_CUPTI_LIB "$X/bin/gpuwhy" doctor >"$tmp/doctor_cupti.txt" 2>&1
  grep -qE "CUDA tracing +$X/lib/gpuwhy/libgpuwhy-cupti.so (loads|does not load)" "$tmp/doctor_cupti.txt" &&
    ok "x86_64: the doctor finds lib/gpuwhy/libgpuwhy-cupti.so in the tarball" ||
    bad "x86_64: CUDA tracing library: $(grep 'CUDA tracing' "$tmp/doctor_cupti.txt")"
fi

# The launcher under qemu: with binfmt for aarch64 it runs; without, its exec of the bundled
# loader (the path it worked out) is what fails.
if [ "$cross" = 1 ]; then
  launch=$(qemu-aarch64-static "$A/bin/gpuwhy" --version 2>&1)
  if [ "$launch" = "gpuwhy $version" ] ||
     [ "$launch" = "gpuwhy: cannot start $L/gpuwhy: Exec format error" ]; then
    ok "aarch64 launcher starts $L/gpuwhy ($launch)"
  else
    bad "aarch64 launcher: $launch"
  fi
fi

# No host userland at all: each tarball alone in an empty root directory (root only).
if [ "$(id -u)" = 0 ] && command -v chroot >/dev/null; then
  root=$tmp/emptyroot
  mkdir -p "$root/$(dirname "$RESNET")"
  cp "$RESNET" "$root/$RESNET"
  cp -a "$X" "$root/x86_64"
  chroot "$root" /x86_64/bin/gpuwhy analyze --json "$RESNET" >"$tmp/root.x86_64.json" 2>&1
  if [ "$cross" = 1 ]; then
    cp -a "$A" "$root/aarch64"
    cp "$(command -v qemu-aarch64-static)" "$root/qemu"
    chroot "$root" /qemu /aarch64/lib/gpuwhy/gpuwhy --library-path /aarch64/lib/gpuwhy --argv0 gpuwhy \
      /aarch64/lib/gpuwhy/gpuwhy-bin analyze --json "$RESNET" >"$tmp/root.aarch64.json" 2>&1
  fi
  for arch in "${archs[@]}"; do
    cmp -s "$tmp/resnet50.build.json" "$tmp/root.$arch.json" && ok "$arch: same JSON in an empty root (no host libraries)" ||
      bad "$arch in an empty root: $(head -3 "$tmp/root.$arch.json")"
  done
else
  echo "# not root: the empty-root check is skipped"
fi

echo "# gpuwhy-bin needs $(objdump -T "$X/lib/gpuwhy/gpuwhy-bin" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1), bundled: $(strings "$X/lib/gpuwhy/libc.so.6" | grep -m1 -o 'release version [0-9.]*')"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
