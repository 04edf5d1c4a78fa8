#!/bin/bash
# gpuwhy serve when NVML fails and on big or shared nodes, against the fake NVML:
#  - the driver goes away (driver_error): gpuwhy_nvml_up and gpuwhy_up 0 with the reason, the
#    GPUs stay listed as down, said once on stderr, NVML re-opened when the driver is back;
#  - a GPU falls off the bus: gpuwhy_gpu_lost 1, its error, a gpu.errors finding, and it is
#    found again by a re-open once it is back;
#  - 40 GPUs (none cut) and MIG devices (gpuwhy_mig_*, dcgm names with GPU_I_PROFILE);
#  - jobs from the fixture procfs tree (tests/data/procfs-jobs) under --root: Slurm and pod
#    labels, a GPU shared by two jobs reported as host.gpu_shared.
set -u
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
FAKE=${GW_FAKE_NVML:-}
SRC=${GW_SOURCE_DIR:?GW_SOURCE_DIR must point at the source tree}
. "$SRC/tests/tools/serve_lib.sh"
if [ -z "$FAKE" ]; then
    echo "# no fake NVML built: skipped"
    exit 0
fi
WORK=$(mktemp -d /tmp/gw-serve-nvml-XXXXXX)
trap 'stop_all; rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

# start_serve NAME SCENARIO [ARGS...]: PORT and SERVE set; stderr in NAME.err
start_serve() {
    local name=$1 scenario=$2; shift 2
    PORT=$(free_port)
    GW_NVML_LIB=$FAKE GW_FAKE_NVML_SCENARIO=$WORK/$scenario \
        "$BIN" serve --listen "127.0.0.1:$PORT" --interval 200ms "$@" 2>"$name.err" &
    SERVE=$!
    pids_to_kill+=("$SERVE")
    wait_until_up "$SERVE" "$PORT"
}
stop_serve() { kill -TERM "$SERVE"; wait "$SERVE"; }

# ---- the driver goes away and comes back ---------------------------------------------
# The fake's clock starts at nvmlInit; the outage and the loss below last long enough (7.5 s,
# 9 s) to be seen even when serve comes up slowly on a loaded machine, where a 3 s window
# was over before the first scrape.
cat >outage.txt <<'EOF'
gpus 2
gpu 0 util 80 10
gpu 1 util 70 10
at 1500 driver_error 999
at 9000 driver_error 0
EOF
if start_serve outage outage.txt --window 2s; then
    ok "serve up with the driver present"
    check "driver gone: gpuwhy_nvml_up 0 within 10 s" poll_for "$PORT" 10 m1.txt '^gpuwhy_nvml_up 0$'
    check "driver gone: gpuwhy_up 0" line m1.txt "gpuwhy_up 0"
    check "driver gone: the reason as a label" grep -qE '^gpuwhy_nvml_error_info\{error=".*Unknown Error"\} 1$' m1.txt
    check "driver gone: both GPUs still listed, as down" \
        test "$(grep -cE '^gpuwhy_gpu_up\{gpu="[01]".*\} 0$' m1.txt)" -eq 2
    check "driver gone: GPU 1 has its error" grep -qE '^gpuwhy_gpu_nvml_error_info\{gpu="1",uuid="GPU-fake-0001",name="Fake GPU 1",error="(NVML is down|.*Unknown Error)"\} 1$' m1.txt
    check "driver gone for a while: the error says NVML is down" poll_for "$PORT" 5 m1b.txt \
        '^gpuwhy_gpu_nvml_error_info\{gpu="1",uuid="GPU-fake-0001",name="Fake GPU 1",error="NVML is down"\} 1$'
    check "driver gone: no reading survives (no stale utilisation)" test -z "$(grep '^gpuwhy_gpu_utilization_ratio' m1.txt)"
    check "driver gone: the host is still exported" grep -qE '^gpuwhy_host_cpus [0-9]+$' m1.txt
    check "driver back: gpuwhy_nvml_up 1 again within 20 s" poll_for "$PORT" 20 m2.txt '^gpuwhy_nvml_up 1$'
    check "driver back: utilisation again" line m2.txt 'gpuwhy_gpu_utilization_ratio{gpu="0",uuid="GPU-fake-0000",name="Fake GPU 0"} 0.8'
    check "driver back: a re-open counted" grep -qE '^gpuwhy_nvml_reopens_total [1-9][0-9]*$' m2.txt
    stop_serve
    check "the outage is said once (not every tick)" test "$(grep -c "NVML stopped answering" outage.err)" -eq 1
    check "each failed re-open reason said once" test "$(grep -c "NVML unavailable" outage.err)" -le 1
    check "the recovery is said" has outage.err "NVML re-opened: 2 GPU(s)"
else
    bad "serve did not come up: $(cat outage.err)"
fi

# ---- a GPU falls off the bus and comes back ------------------------------------------
cat >lost.txt <<'EOF'
gpus 2
gpu 0 util 80 10
gpu 0 procs 1:1000
gpu 1 util 60 10
gpu 1 procs 1:1000
at 1000 gpu 1 lost 1
at 10000 gpu 1 lost 0
EOF
if start_serve lost lost.txt --window 2s; then
    check "lost: gpuwhy_gpu_lost 1 within 10 s" poll_for "$PORT" 10 l1.txt '^gpuwhy_gpu_lost\{gpu="1".*\} 1$'
    check "lost: its error is GPU is lost" has l1.txt 'gpuwhy_gpu_nvml_error_info{gpu="1",uuid="GPU-fake-0001",name="Fake GPU 1",error="GPU is lost"} 1'
    check "lost: NVML itself stays up (GPU 0 answers)" line l1.txt "gpuwhy_nvml_up 1"
    check "lost: a critical gpu.errors finding on GPU 1" \
        poll_for "$PORT" 10 l2.txt '^gpuwhy_finding_share\{gpu="1",id="gpu.errors",severity="critical"\}'
    check "back: found again by a re-open (gpuwhy_gpu_up 1)" poll_for "$PORT" 25 l3.txt '^gpuwhy_gpu_up\{gpu="1".*\} 1$'
    check "back: gpuwhy_gpu_lost 0" grep -qE '^gpuwhy_gpu_lost\{gpu="1".*\} 0$' l3.txt
    stop_serve
    check "the loss is said with the GPU's uuid" has lost.err "GPU 1 (GPU-fake-0001) is lost"
    check "the loss is said once although it lasts" test "$(grep -c "is lost (fallen off the bus" lost.err)" -eq 1
else
    bad "serve did not come up: $(cat lost.err)"
fi

# ---- 40 GPUs, MIG ----------------------------------------------------------------------
{
    echo "gpus 40"
    echo "gpu 39 util 33 1"
    echo "gpu 2 name NVIDIA A100-SXM4-80GB"
    echo "gpu 2 mig 1 0 3g.40gb 42949672960 1073741824"
    echo "gpu 2 mig 2 0 1g.10gb 10737418240 2097152"
    echo "gpu 2 procs 1:1073741824:1:0"
} >big.txt
if start_serve big big.txt --dcgm-names --hostname node-7; then
    fetch "$PORT" /metrics b1.txt >/dev/null
    check "40 GPUs: gpuwhy_gpus 40" line b1.txt "gpuwhy_gpus 40"
    check "40 GPUs: the 40th is exported" line b1.txt 'gpuwhy_gpu_utilization_ratio{gpu="39",uuid="GPU-fake-0039",name="Fake GPU 39"} 0.33'
    check "MIG: GPU 2 in MIG mode" has b1.txt 'gpuwhy_gpu_info{gpu="2",uuid="GPU-fake-0002",name="NVIDIA A100-SXM4-80GB",pci_bus_id="0000:12:00.0",driver_version="999.99.99-fake",mig_mode="enabled"} 1'
    check "MIG: two devices with their profiles" \
        test "$(grep -cE '^gpuwhy_mig_info\{gpu="2",gpu_instance="[12]",compute_instance="0",profile="(3g.40gb|1g.10gb)",uuid="MIG-fake-0002-[12]-0"\} 1$' b1.txt)" -eq 2
    check "MIG: memory per device" line b1.txt 'gpuwhy_mig_memory_used_bytes{gpu="2",gpu_instance="2",compute_instance="0",profile="1g.10gb"} 2097152'
    check "MIG: the process is on instance 1" line b1.txt 'gpuwhy_mig_processes{gpu="2",gpu_instance="1",compute_instance="0",profile="3g.40gb"} 1'
    check "MIG: no GPU-Util for a MIG GPU (NOT_SUPPORTED), and no error for it" \
        test -z "$(grep -E '^gpuwhy_gpu_utilization_ratio\{gpu="2"|^gpuwhy_gpu_nvml_error_info\{gpu="2"' b1.txt)"
    check "dcgm names: FB_USED of a MIG device in MiB with GPU_I_PROFILE and GPU_I_ID" \
        line b1.txt 'DCGM_FI_DEV_FB_USED{gpu="2",UUID="GPU-fake-0002",pci_bus_id="00000000:12:00.0",device="nvidia2",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="1g.10gb",GPU_I_ID="2",Hostname="node-7",DCGM_FI_DRIVER_VERSION="999.99.99-fake"} 2'
    check "dcgm names: GPU_UTIL of GPU 39 in percent" \
        line b1.txt 'DCGM_FI_DEV_GPU_UTIL{gpu="39",UUID="GPU-fake-0039",pci_bus_id="00000000:37:00.0",device="nvidia39",modelName="Fake GPU 39",Hostname="node-7",DCGM_FI_DRIVER_VERSION="999.99.99-fake"} 33'
    stop_serve
else
    bad "serve did not come up: $(cat big.err)"
fi

# ---- jobs from the fixture tree ----------------------------------------------------
ROOT=$SRC/tests/data/procfs-jobs/root
cat >jobs.txt <<'EOF'
gpus 2
gpu 0 util 40 10
gpu 0 procs 1003:1073741824,1006:2147483648
gpu 0 putil 1003:20:5,1006:30:5
gpu 1 util 90 10
gpu 1 procs 1001:1000,1009:2000
EOF
if start_serve jobs jobs.txt --root "$ROOT" --window 2s; then
    check "jobs: two jobs on GPU 0" poll_for "$PORT" 10 j1.txt '^gpuwhy_gpu_jobs\{gpu="0".*\} 2$'
    check "jobs: the pod with its namespace, name, uid and container" line j1.txt \
        'gpuwhy_gpu_job_processes{gpu="0",uuid="GPU-fake-0000",gpu_instance="",job_id="pod:8a4f2c1e-1b2c-4d5e-8f90-123456789abc",slurm_job="",namespace="ml-team",pod="trainer-0",pod_uid="8a4f2c1e-1b2c-4d5e-8f90-123456789abc",container_id="aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa0001"} 1'
    check "jobs: the Slurm job from the environment, with its memory" line j1.txt \
        'gpuwhy_gpu_job_memory_used_bytes{gpu="0",uuid="GPU-fake-0000",gpu_instance="",job_id="slurm:777",slurm_job="777",namespace="",pod="",pod_uid="",container_id=""} 2147483648'
    check "jobs: the Slurm job of the v1 cgroup on GPU 1" has j1.txt 'job_id="slurm:4242",slurm_job="4242"'
    check "jobs: a process gone from /proc is an unknown job, not a crash" has j1.txt 'gpu="1",uuid="GPU-fake-0001",gpu_instance="",job_id="unknown"'
    check "jobs: GPU 0 shared by the two jobs is a host.gpu_shared finding" \
        poll_for "$PORT" 10 j2.txt '^gpuwhy_finding_share\{gpu="0",id="host.gpu_shared",severity="[a-z]+"\} 0\.[0-9]+$'
    check "jobs: the co-tenant's SM share (30 %) is the finding's" \
        grep -qE '^gpuwhy_finding_share\{gpu="0",id="host.gpu_shared",severity="[a-z]+"\} 0\.3$' j2.txt
    check "jobs: GPU 1 (one job, busy) is not shared" test -z "$(grep 'gpu="1",id="host.gpu_shared"' j2.txt)"
    check "jobs: host counters read under --root" line j2.txt 'gpuwhy_host_memory_total_bytes 16777216000'
    check "jobs: whole disks only under --root (sda, not sda1)" \
        test -n "$(grep 'gpuwhy_disk_reads_completed_total{device="sda"} 100' j2.txt)" -a -z "$(grep 'device="sda1"' j2.txt)"
    stop_serve
else
    bad "serve did not come up: $(cat jobs.err)"
fi
finish
