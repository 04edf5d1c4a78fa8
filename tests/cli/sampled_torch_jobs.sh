#!/usr/bin/env bash
# Real PyTorch training jobs (Debian's python3-torch, CPU) under `gpuwhy run`, each with a
# counterpart that must stay silent; the GPU side is the fake NVML's idle-ish GPU at 30%:
#   transforms  1 worker decoding JPEGs with heavy torchvision transforms, a light loop:
#               data.workers_cpu_bound and data.loader_wait (the loop asleep on the worker
#               queue while the worker runs); not pipe.oversubscribed (2 threads, 2+ CPUs)
#   prefetch    light transforms from cached files, a loop computing 30 steps per batch:
#               the workers wait ahead, so no data.workers_cpu_bound, data.loader_wait or
#               data.storage_bound (counterpart of the three)
#   inline      the transforms job with num_workers=0: pipe.no_workers (one busy process),
#               no data.loader_wait (no worker to wait on); the transforms run is its
#               counterpart (no pipe.no_workers with a worker)
#   threads     4 workers x 8 intra-op threads (torch.set_num_threads in worker_init_fn) and
#               a 4-thread loop: pipe.oversubscribed, the job's own runnable threads beyond
#               the CPUs (the transforms run is its counterpart: 1 worker x 1 thread)
#   throttled   the prefetch job's files evicted from the page cache and read through a
#               cgroup read limit (io.max, or blkio.throttle on a cgroup v1 io controller):
#               data.storage_bound (reads held back above the disk); skipped, saying why,
#               where no limit can be set
# Every decision rests on states and counts that hold on a loaded 2-core machine (a starved
# process is runnable, R; a waiting one asleep, S or D), never on timing.
set -u
# Real PyTorch jobs, each a minute of wall time: the scenarios are judged once, in the normal
# suite. The sampler and the rules they run are sanitized through the cli_sampled_* tests.
if [ "${GW_SANITIZE:-0}" = "1" ]; then echo "SKIP: the real torch jobs belong to the normal suite"; exit 77; fi
: "${GW_BIN:?GW_BIN must point at the gpuwhy binary}"
[ -n "${GW_FAKE_NVML:-}" ] || { echo "SKIP: no fake NVML"; exit 77; }
SRC=${GW_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
JOB=$SRC/tests/torch/loader_job.py
# Debian's python3-torch lives under /usr/bin/python3, not a version manager's python3.
PYT=
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import torch, torchvision' 2>/dev/null; then PYT=$(command -v "$p"); break; fi
done
[ -n "$PYT" ] || { echo "SKIP: no python3 with torch and torchvision (scripts/deps.sh test installs python3-torch python3-torchvision)"; exit 77; }

# The dataset files live under the build tree: a real disk, where /tmp may be tmpfs.
WORK=$(mktemp -d "${GW_BINARY_DIR:-/tmp}/gw-torch-jobs-XXXXXX")
CGROUP=
cleanup() {
  if [ -n "$CGROUP" ]; then
    for _ in 1 2 3 4 5; do rmdir "$CGROUP" 2>/dev/null && break; sleep 1; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' INT TERM  # a ctest timeout still removes the cgroup (through EXIT)
cd "$WORK" || exit 1
failures=0
passes=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok - $*"; passes=$((passes + 1)); }
printf 'gpus 1\ngpu 0 name Fake H100\ngpu 0 util 30 5\n' >gpu_waits.txt

# record NAME -- loader_job args: the job under gpuwhy run, then NAME.json
record() {
  local name=$1
  shift 2
  GW_NVML_LIB=$GW_FAKE_NVML GW_FAKE_NVML_SCENARIO=$WORK/gpu_waits.txt \
    timeout 300 "$GW_BIN" run -o "$name.db" --interval 100ms -- "$PYT" "$JOB" "$@" >"$name.run" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || { fail "$name: the job under gpuwhy run exited $rc: $(tail -5 "$name.run")"; return 1; }
  "$GW_BIN" analyze --json -o "$name.json" "$name.db" 2>"$name.err" ||
    { fail "$name: analyze failed: $(cat "$name.err")"; return 1; }
  echo "# $name: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['verdict'])" "$name.json")"
}
# finding NAME ID: prints the finding's title and evidence, exit 1 when absent
finding() {
  python3 - "$1.json" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
f = next((f for f in doc["findings"] if f["id"] == sys.argv[2]), None)
if f is None:
    sys.exit(1)
print(f["title"] + " | " + " | ".join(f["evidence"]))
PY
}
ids() { python3 -c "import json,sys; print([f['id'] for f in json.load(open(sys.argv[1]))['findings']])" "$1.json"; }
# expect NAME ID TEXT...: the finding is there and its text holds every TEXT
expect() {
  local name=$1 id=$2 text
  shift 2
  text=$(finding "$name" "$id") || { fail "$name: no $id; found $(ids "$name")"; return; }
  for want in "$@"; do
    [[ $text == *"$want"* ]] || { fail "$name: $id without '$want': $text"; return; }
  done
  pass "$name: $id: ${text:0:300}"
}
refuse() {
  if finding "$1" "$2" >/dev/null; then fail "$1: raised $2 (false alarm): $(finding "$1" "$2")"; else pass "$1: no $2"; fi
}

# --- CPU-bound workers, the loop waiting on them ---------------------------------------------
if record transforms -- --source jpeg --transforms heavy --workers 1 --seconds 6; then
  expect transforms data.workers_cpu_bound "1 worker process(es) of the job"
  expect transforms data.loader_wait "asleep (state S" "running or waiting for a CPU in"
  refuse transforms pipe.oversubscribed
  refuse transforms pipe.no_workers
fi

# --- loading in the training process (num_workers=0) -----------------------------------------
if record inline -- --source jpeg --transforms heavy --workers 0 --seconds 6; then
  expect inline pipe.no_workers "the job is one process"
  refuse inline data.loader_wait
  refuse inline data.workers_cpu_bound
fi

# --- the counterpart: the loop computes, the workers wait ahead (files in the page cache) ------
mkdir data
"$PYT" - <<'PY' || fail "cannot write the dataset"
import os
for i in range(64):
    with open("data/%03d.bin" % i, "wb") as f:
        f.write(os.urandom(256 * 1024))
        f.flush()
        os.fsync(f.fileno())  # written back, so that eviction can drop the pages later
PY
if record prefetch -- --source files --data "$WORK/data" --transforms light --workers 2 --compute 30 --seconds 6; then
  refuse prefetch data.workers_cpu_bound
  refuse prefetch data.loader_wait
  refuse prefetch data.storage_bound
fi

# --- workers x intra-op threads beyond the CPUs --------------------------------------------------
if record threads -- --source jpeg --transforms heavy --workers 4 --worker-threads 8 --main-threads 4 --seconds 6; then
  expect threads pipe.oversubscribed "the job alone asks for more CPUs than the machine has"
fi

# --- reads held back by a cgroup limit ---------------------------------------------------------
# Sets CGROUP and LIMIT_FILE/LIMIT_LINE, or prints why no read limit can be set here.
setup_read_limit() {
  [ "$(id -u)" -eq 0 ] || { echo "not root: cannot create a cgroup"; return 1; }
  local dev
  dev=$("$PYT" - "$WORK/data" <<'PY'
import os, sys
st = os.stat(sys.argv[1])
node = "/sys/dev/block/%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
if not os.path.exists(node):
    sys.exit("the dataset's filesystem has no block device (%d:%d): overlay, tmpfs or a virtual fs"
             % (os.major(st.st_dev), os.minor(st.st_dev)))
if os.path.exists(node + "/partition"):  # limits apply to whole disks
    node = os.path.realpath(node + "/..")
print(open(node + "/dev").read().strip())
PY
) || return 1
  local v2=
  if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then v2=/sys/fs/cgroup
  elif [ -f /sys/fs/cgroup/unified/cgroup.controllers ]; then v2=/sys/fs/cgroup/unified; fi
  if [ -n "$v2" ] && grep -qw io "$v2/cgroup.controllers" 2>/dev/null; then
    grep -qw io "$v2/cgroup.subtree_control" || echo +io >"$v2/cgroup.subtree_control" ||
      { echo "cannot enable the io controller in $v2/cgroup.subtree_control"; return 1; }
    CGROUP=$(mktemp -d "$v2/gw-torch-XXXXXX") || { echo "cannot create a cgroup under $v2"; return 1; }
    LIMIT_FILE=$CGROUP/io.max
    LIMIT_LINE="$dev rbps=1048576"
  elif [ -f /sys/fs/cgroup/blkio/blkio.throttle.read_bps_device ]; then
    # Hybrid hierarchy: the io controller is bound to cgroup v1's blkio, so the v2 tree has
    # no io.max; blkio.throttle is the same block-layer throttle.
    CGROUP=$(mktemp -d /sys/fs/cgroup/blkio/gw-torch-XXXXXX) || { echo "cannot create a blkio cgroup"; return 1; }
    LIMIT_FILE=$CGROUP/blkio.throttle.read_bps_device
    LIMIT_LINE="$dev 1048576"
  else
    echo "no io controller: neither cgroup v2 io (${v2:-no v2 tree}: $(cat "$v2/cgroup.controllers" 2>/dev/null)) nor cgroup v1 blkio"
    return 1
  fi
  echo "$LIMIT_LINE" >"$LIMIT_FILE" || { echo "cannot write '$LIMIT_LINE' to $LIMIT_FILE"; return 1; }
  echo "read limit: $LIMIT_LINE in $LIMIT_FILE"
}
if setup_read_limit >limit.txt 2>&1; then
  cat limit.txt
  if record throttled -- --source files --data "$WORK/data" --evict --transforms light --workers 2 \
       --seconds 8 --cgroup-procs "$CGROUP/cgroup.procs"; then
    expect throttled data.storage_bound "Storage reads held back" "waited on storage (D state)"
    expect throttled data.loader_wait "waiting on storage (D state) in"
  fi
else
  echo "SKIP: data.storage_bound under a cgroup read limit: $(cat limit.txt)"
fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
