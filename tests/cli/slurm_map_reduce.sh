#!/usr/bin/env bash
# The Slurm recipe of docs/multi-rank.md, for real: Debian's slurm-wlm and MUNGE set up as a
# one-node cluster by this test (private key, sockets, ports, spool and state directories
# under a temporary directory), a batch job whose tasks each map their share of a job's
# rank traces to a summary (srun, one task per share, as on many nodes), then the reduce,
# which must give the same diagnosis as analysing the traces directly. Needs root (the
# daemons run as root and the packages are installed by scripts/deps.sh slurm when
# missing); skipped with a message (exit 77, ctest: Skipped) elsewhere.
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}" "${GW_SOURCE_DIR:?}"
PY=/usr/bin/python3
D="$GW_SHARED_DIR/traces/kineto/HolisticTraceAnalysis/tests/data/trace_filter"

if [ "$(id -u)" -ne 0 ]; then
  echo "skip - the Slurm test runs as root (it starts munged, slurmctld and slurmd)"; exit 77
fi
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  if ! "$GW_SOURCE_DIR/scripts/deps.sh" slurm >/dev/null 2>&1; then
    echo "skip - slurm-wlm and munge are not installed and could not be installed (apt)"; exit 77
  fi
fi

TMP=$(mktemp -d /tmp/gw-slurm.XXXXXX)
chmod 700 "$TMP"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  [ -f "$TMP/slurmd.pid" ] && kill "$(cat "$TMP/slurmd.pid")" 2>/dev/null
  [ -f "$TMP/slurmctld.pid" ] && kill "$(cat "$TMP/slurmctld.pid")" 2>/dev/null
  [ -f "$TMP/munged.pid" ] && kill "$(cat "$TMP/munged.pid")" 2>/dev/null
  sleep 1
  rm -rf "$TMP"
}
trap cleanup EXIT
fail=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL - $*"; fail=1; }

# Free TCP ports for the controller and the node daemon.
read -r CTLD_PORT SLURMD_PORT < <("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')

# MUNGE: a private key and socket.
mkdir -p "$TMP/munge" && chmod 700 "$TMP/munge"
dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$TMP/munge/munge.key"
if ! munged --force --socket="$TMP/munge/munge.sock" --key-file="$TMP/munge/munge.key" \
     --log-file="$TMP/munge/munged.log" --pid-file="$TMP/munged.pid" --seed-file="$TMP/munge/seed" 2>"$TMP/munge.err"; then
  echo "skip - munged does not start here: $(head -c 200 "$TMP/munge.err")"; exit 77
fi

HOST=$(hostname -s)
CPUS=$(nproc)
mkdir -p "$TMP/state" "$TMP/spool" "$TMP/log"
cat > "$TMP/slurm.conf" <<EOF
ClusterName=gwtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$TMP/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/log/slurmctld.log
SlurmdLogFile=$TMP/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=gw Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$TMP/slurm.conf"
slurmctld -i -f "$SLURM_CONF" 2>"$TMP/ctld.err" || { echo "skip - slurmctld does not start here: $(head -c 300 "$TMP/ctld.err")"; exit 77; }
slurmd -f "$SLURM_CONF" 2>"$TMP/slurmd.err" || { echo "skip - slurmd does not start here: $(head -c 300 "$TMP/slurmd.err")"; exit 77; }
up=0
for _ in $(seq 1 60); do
  if sinfo -h -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; then up=1; break; fi
  sleep 1
done
if [ $up -ne 1 ]; then
  echo "skip - the one-node cluster did not come up: $(sinfo 2>&1 | tail -2; tail -3 "$TMP/log/slurmd.log" 2>/dev/null)"; exit 77
fi
ok "one-node Slurm cluster up ($HOST, ports $CTLD_PORT/$SLURMD_PORT)"

# The job's traces as each node would hold them: one directory per task.
mkdir -p "$TMP/traces/0" "$TMP/traces/1" "$TMP/out"
cp "$D/sampled_rank-0.json.gz" "$TMP/traces/0/" && cp "$D/sampled_rank-1.json.gz" "$TMP/traces/1/"

# The recipe (docs/multi-rank.md, "Slurm"): map on every task, reduce once after.
cat > "$TMP/job.sh" <<EOF
#!/bin/bash
#SBATCH --ntasks=2
#SBATCH --output=$TMP/out/job.out
set -e
srun --ntasks=2 bash -c '"$GW_BIN" analyze --no-progress --summary-out "$TMP/out/summary-\$SLURM_PROCID.gz" "$TMP/traces/\$SLURM_PROCID" > /dev/null'
"$GW_BIN" analyze --no-progress --json "$TMP/out"/summary-*.gz > "$TMP/out/job.json"
EOF
chmod +x "$TMP/job.sh"
JOB=$(sbatch --parsable "$TMP/job.sh" 2>"$TMP/sbatch.err") || { bad "sbatch: $(cat "$TMP/sbatch.err")"; exit 1; }
state=""
for _ in $(seq 1 180); do
  state=$(scontrol show job "$JOB" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case "$state" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
  sleep 1
done
[ "$state" = COMPLETED ] && ok "batch job $JOB completed (2 map tasks, one reduce)" ||
  bad "batch job $JOB ended $state: $(cat "$TMP/out/job.out" 2>/dev/null | tail -5)"
[ -s "$TMP/out/summary-0.gz" ] && [ -s "$TMP/out/summary-1.gz" ] && ok "each task wrote its summary" ||
  bad "summaries missing: $(ls "$TMP/out")"

"$GW_BIN" analyze --json "$D/sampled_rank-0.json.gz" "$D/sampled_rank-1.json.gz" > "$TMP/direct.json"
if [ -s "$TMP/out/job.json" ] && "$PY" - "$TMP/direct.json" "$TMP/out/job.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
fa = [(f["id"], f["rank"], round(f["share"], 3)) for f in a["findings"]]
fb = [(f["id"], f["rank"], round(f["share"], 3)) for f in b["findings"]]
assert fa == fb, (fa, fb)
assert a["verdict"] == b["verdict"], (a["verdict"], b["verdict"])
assert json.dumps(a["collectives"], sort_keys=True) == json.dumps(b["collectives"], sort_keys=True)
print("%d findings" % len(fa))
EOF
then ok "the reduce of the Slurm map gives the diagnosis of the traces"
else bad "the reduce differs from the direct analysis"; fi
exit $fail
