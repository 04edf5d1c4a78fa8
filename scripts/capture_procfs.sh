#!/usr/bin/env bash
# Snapshots the procfs/sysfs files the host collectors read, from THIS machine, into a
# fixture tree (OUT/snapN/{proc,sys}) that unit tests replay through the collector's
# configurable root. Several snapshots a few seconds apart, while a small "job" runs (a
# bash root with a CPU burner child and a subshell whose child, a grandchild of the root,
# keeps running a direct-IO disk reader), so that CPU time,
# disk counters and per-process counters move between snapshots. Only the files the
# collector reads are copied, and only for the job's processes and one idle process outside
# the job, to keep the fixture small (and free of unrelated processes' details).
#
# usage: scripts/capture_procfs.sh OUT_DIR [SNAPSHOTS=3] [GAP_SECONDS=1]
set -euo pipefail

out=${1:?usage: capture_procfs.sh OUT_DIR [SNAPSHOTS] [GAP_SECONDS]}
snapshots=${2:-3}
gap=${3:-1}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/var/tmp}/gw-capture.XXXXXX")
job_pid=
other_pid=
cleanup() {
    [ -n "$other_pid" ] && kill -TERM "$other_pid" 2>/dev/null || true
    if [ -n "$job_pid" ]; then
        # The job runs in its own process group (setsid below), so this ends the
        # grandchild reader and its dd too, not only the job's root.
        kill -TERM -- "-$job_pid" 2>/dev/null || true
        wait "$job_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# A data file on a real disk for the reader; O_DIRECT so every pass reaches the device.
dd if=/dev/urandom of="$work/data.bin" bs=1M count=32 status=none
sync

setsid bash -c '
    (while :; do :; done) &
    (sh -c "while :; do dd if=\"\$0\" of=/dev/null bs=4k iflag=direct status=none; done" "$1"; true) &
    exec 3<"$1"
    wait
' gw-job "$work/data.bin" </dev/null >/dev/null 2>&1 &
job_pid=$!
sleep 600 </dev/null >/dev/null 2>&1 &
other_pid=$!
sleep 0.5

# The job tree: job_pid and its descendants, from ppid links.
job_tree() {
    local frontier=("$job_pid") all=("$job_pid")
    while [ ${#frontier[@]} -gt 0 ]; do
        local next=()
        for parent in "${frontier[@]}"; do
            for child in $(ps -o pid= --ppid "$parent" 2>/dev/null); do
                next+=("$child")
                all+=("$child")
            done
        done
        frontier=("${next[@]+"${next[@]}"}")
    done
    echo "${all[@]}"
}

copy() {   # copy SRC DST: procfs files report size 0, so cat instead of cp
    mkdir -p "$(dirname "$2")"
    cat "$1" >"$2" 2>/dev/null || rm -f "$2"
}

copy_process() {   # copy_process PID SNAPDIR
    local pid=$1 dst=$2/proc/$1
    [ -d "/proc/$pid" ] || return 0
    for f in stat status io schedstat cmdline; do
        copy "/proc/$pid/$f" "$dst/$f"
    done
    # The collector reads the job root's mountinfo only. Deeply nested mounts (container
    # and sandbox plumbing) are left out: they hold no data files and only bloat the tree.
    if [ "$pid" = "$job_pid" ]; then
        awk '{ n = split($5, parts, "/"); if ($5 == "/" || n <= 3) print }' \
            "/proc/$pid/mountinfo" >"$dst/mountinfo"
    fi
    for task in /proc/"$pid"/task/*; do
        local tid=${task##*/}
        for f in stat status schedstat; do
            copy "$task/$f" "$dst/task/$tid/$f"
        done
    done
    mkdir -p "$dst/fd"
    for fd in /proc/"$pid"/fd/*; do
        local target
        target=$(readlink "$fd" 2>/dev/null) || continue
        ln -sfn "$target" "$dst/fd/${fd##*/}"
    done
}

for ((i = 0; i < snapshots; i++)); do
    snap=$out/snap$i
    rm -rf "$snap"
    for f in stat meminfo vmstat diskstats net/dev pressure/cpu pressure/io pressure/memory; do
        [ -e "/proc/$f" ] && copy "/proc/$f" "$snap/proc/$f"
    done
    for node in /sys/devices/system/node/node[0-9]*; do
        [ -e "$node/cpulist" ] && copy "$node/cpulist" "$snap/sys/devices/system/node/${node##*/}/cpulist"
    done
    for pid in "$other_pid" $(job_tree); do
        copy_process "$pid" "$snap"
    done
    # The block device holding the data file, for the open-file → disk mapping.
    dev=$(stat -c '%d' "$work/data.bin")
    majmin="$((dev >> 8 & 0xfff)):$(( (dev & 0xff) | (dev >> 12 & 0xfff00) ))"
    if [ -L "/sys/dev/block/$majmin" ]; then
        mkdir -p "$snap/sys/dev/block"
        ln -sfn "$(readlink "/sys/dev/block/$majmin")" "$snap/sys/dev/block/$majmin"
    fi
    echo "$job_pid" >"$snap/JOB_PID"
    echo "$other_pid" >"$snap/OTHER_PID"
    date -u +%Y-%m-%dT%H:%M:%S.%NZ >"$snap/CAPTURED_AT"
    [ $((i + 1)) -lt "$snapshots" ] && sleep "$gap"
done
echo "captured $snapshots snapshots of job $job_pid into $out"
