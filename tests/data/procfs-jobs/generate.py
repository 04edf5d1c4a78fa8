#!/usr/bin/env python3
"""Writes the hand-made procfs fixture of job attribution (root/) that tests/unit/test_job_attr.c
and tests/cli/serve_jobs.sh replay: GPU processes under each cgroup layout the schedulers
write, plus the host files `gpuwhy serve --root` reads. Processes:
  1001 Slurm, cgroup v1 plugin (job in the memory hierarchy, a session in the unified one)
  1002 Slurm, cgroup v2 plugin (slurmstepd.scope/job_4243)
  1003 Kubernetes, cgroupfs driver, v1: pod uid with dashes, bare 64-hex container; pod name
       from HOSTNAME, namespace from the service-account mount
  1004 Kubernetes, systemd driver, v2: pod uid with '_', cri-containerd scope; POD_NAME and
       POD_NAMESPACE from the downward API
  1005 Kubernetes seen from another cgroup namespace ("/../../kubepods-...")
  1006 a login session whose environment says SLURM_JOB_ID=777 (cgroup names no job)
  1007 another user's login session (no environment readable)
  1008 a Docker container outside Kubernetes
  1010 a process in the root cgroup
  1011 a CRI-O pod's conmon (the monitor's id is not the container's)
(1009 is listed by the tests' fake GPUs but absent here: a process that exited.)
Run from this directory: ./generate.py"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "root")
C1 = "a" * 60 + "0001"
C2 = "b" * 60 + "0002"
C3 = "c" * 60 + "0003"
C4 = "d" * 60 + "0004"


def write(rel, text):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def env(*pairs):
    return "".join(p + "\0" for p in pairs)


def proc(pid, cgroup, environ=None):
    write(f"proc/{pid}/cgroup", cgroup)
    write(f"proc/{pid}/comm", "python\n")
    write(f"proc/{pid}/cmdline", env("python", "train.py"))
    if environ is not None:
        write(f"proc/{pid}/environ", environ)


shutil.rmtree(ROOT, ignore_errors=True)
proc(1001, "12:memory:/slurm/uid_1000/job_4242/step_0/task_0\n"
           "11:devices:/slurm/uid_1000/job_4242/step_0\n"
           "1:name=systemd:/user.slice/user-1000.slice/session-1.scope\n"
           "0::/user.slice/user-1000.slice/session-1.scope\n",
     env("PATH=/usr/bin", "SLURM_JOB_ID=4242"))
proc(1002, "0::/system.slice/slurmstepd.scope/job_4243/step_0/user/task_0\n")
proc(1003, "12:memory:/kubepods/burstable/pod8a4f2c1e-1b2c-4d5e-8f90-123456789abc/" + C1 + "\n"
           "0::/\n",
     env("HOSTNAME=trainer-0", "HOME=/root"))
write("proc/1003/root/var/run/secrets/kubernetes.io/serviceaccount/namespace", "ml-team\n")
proc(1004, "0::/kubepods.slice/kubepods-burstable.slice/"
           "kubepods-burstable-pod0f1e2d3c_4b5a_6978_8a9b_0c1d2e3f4a5b.slice/cri-containerd-" + C2 + ".scope\n",
     env("HOSTNAME=ignored-when-pod-name-given", "POD_NAME=infer-7", "POD_NAMESPACE=serving"))
proc(1005, "0::/../../kubepods-besteffort-pod11112222_3333_4444_5555_666677778888.slice/cri-containerd-"
           + C3 + ".scope\n")
proc(1006, "0::/user.slice/user-1000.slice/session-3.scope\n", env("USER=ana", "SLURM_JOB_ID=777"))
proc(1007, "0::/user.slice/user-1001.slice/session-9.scope\n")
proc(1008, "0::/system.slice/docker-" + C4 + ".scope\n", env("HOSTNAME=" + C4[:12]))
proc(1010, "0::/\n")
proc(1011, "0::/kubepods.slice/kubepods-pod99998888_7777_6666_5555_444433332222.slice/crio-conmon-"
           + C1 + ".scope\n")

# The host files serve reads under --root (counters do not move: one snapshot).
write("proc/stat", "cpu  1000 10 500 8000 200 5 15 100 0 0\ncpu0 500 5 250 4000 100 2 7 50 0 0\n"
                   "cpu1 500 5 250 4000 100 3 8 50 0 0\nctxt 99999\nbtime 1700000000\n"
                   "processes 5000\nprocs_running 2\nprocs_blocked 0\n")
write("proc/meminfo", "MemTotal:       16384000 kB\nMemFree:         8192000 kB\n"
                      "MemAvailable:   12288000 kB\nBuffers:          100000 kB\nCached:          2000000 kB\n"
                      "SwapTotal:       2097148 kB\nSwapFree:        2097148 kB\n")
write("proc/vmstat", "pswpin 10\npswpout 20\npgfault 1000\npgmajfault 5\npgpgin 100\npgpgout 200\n")
write("proc/pressure/cpu", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\n")
write("proc/pressure/io", "some avg10=0.00 avg60=0.00 avg300=0.00 total=2000000\n"
                          "full avg10=0.00 avg60=0.00 avg300=0.00 total=500000\n")
write("proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                              "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
write("proc/diskstats", "   8       0 sda 100 0 2048 50 200 0 4096 80 0 120 130 0 0 0 0 0 0\n"
                        "   8       1 sda1 90 0 2000 45 190 0 4000 75 0 110 120 0 0 0 0 0 0\n")
write("proc/net/dev", "Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo frame compressed"
                      " multicast|bytes packets errs drop fifo colls carrier compressed\n"
                      "    lo: 100 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n")
write("sys/block/sda/dev", "8:0\n")
