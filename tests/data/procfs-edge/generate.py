#!/usr/bin/env python3
"""Writes the hand-made procfs/sysfs edge-case fixture (t0/ and t1/, one second apart) that
tests/unit/test_collect_*.c replay. Every number is chosen so the expected results can be
worked out by hand; the tests state them. Edge cases: a process name with spaces and ')',
a process that vanishes between its files (stat without status), D-state process and
threads, a grandchild that exits, a job child and an outside process born within the
interval, 14/18/20-field
diskstats lines plus an old 7-field partition line and garbage, a 32-bit tick wrap, a disk
re-registered between samples, a 64-bit counter going backwards, a CPU iowait counter
going backwards, PSI without a memory file and without cpu "full", mountinfo with nfs4,
fuse.sshfs, tmpfs and an escaped space. Run from this directory: ./generate.py"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def link(root, rel, target):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def stat_line(pid, comm, state, ppid, utime, stime, threads, start, rss, cpu):
    fields = [str(pid), "(" + comm + ")", state, str(ppid), str(pid), str(pid), "0", "-1",
              "4194304", "100", "0", "2", "0", str(utime), str(stime), "0", "0", "20", "0",
              str(threads), "0", str(start), "1000000", str(rss), "18446744073709551615"]
    fields += ["0"] * 13          # fields 26..38
    fields += [str(cpu)]          # field 39: processor
    fields += ["0"] * 13          # fields 40..52
    return " ".join(fields) + "\n"


def status(vol, nonvol):
    return ("Name:\tx\nState:\tS (sleeping)\nThreads:\t1\n"
            f"voluntary_ctxt_switches:\t{vol}\nnonvoluntary_ctxt_switches:\t{nonvol}\n")


def io(rchar, wchar, rb, wb):
    return (f"rchar: {rchar}\nwchar: {wchar}\nsyscr: 1\nsyscw: 1\nread_bytes: {rb}\n"
            f"write_bytes: {wb}\ncancelled_write_bytes: 0\n")


def process(root, pid, comm, state, ppid, utime, stime, start, rss, cpu, threads,
            vol=10, nonvol=1, io_text=None, cmdline="", with_status=True):
    """threads: list of (tid, comm, state, utime, stime, cpu, vol, nonvol, schedstat)"""
    d = f"proc/{pid}"
    write(root, d + "/stat", stat_line(pid, comm, state, ppid, utime, stime,
                                       max(len(threads), 1), start, rss, cpu))
    if not with_status:
        return
    write(root, d + "/status", status(vol, nonvol))
    if io_text is not None:
        write(root, d + "/io", io_text)
    write(root, d + "/cmdline", cmdline)
    for tid, tcomm, tstate, tu, ts, tcpu, tv, tn, sched in threads:
        write(root, f"{d}/task/{tid}/stat",
              stat_line(tid, tcomm, tstate, ppid, tu, ts, len(threads), start, rss, tcpu))
        write(root, f"{d}/task/{tid}/status", status(tv, tn))
        write(root, f"{d}/task/{tid}/schedstat", sched + "\n")


NET_HEADER = ("Inter-|   Receive                                                |  Transmit\n"
              " face |bytes    packets errs drop fifo frame compressed multicast|"
              "bytes    packets errs drop fifo colls carrier compressed\n")

MOUNTINFO = (
    "22 1 8:0 / / rw,relatime shared:1 - ext4 /dev/sda rw\n"
    "23 22 0:25 / /dev/shm rw,nosuid,nodev shared:2 - tmpfs tmpfs rw\n"
    "24 22 0:50 / /mnt/nfs rw,relatime shared:3 - nfs4 server:/export rw,vers=4.2\n"
    "25 22 0:51 / /mnt/fuse rw,nosuid,nodev,relatime shared:4 - fuse.sshfs user@host:/data rw\n"
    "26 22 8:1 / /mnt/my\\040data rw,relatime - ext4 /dev/sda1 rw\n"
    "27 22 0:22 / /proc rw - proc proc rw\n")


def common_sys(root):
    write(root, "sys/devices/system/node/node0/cpulist", "0\n")
    write(root, "sys/devices/system/node/node1/cpulist", "1\n")
    write(root, "sys/devices/system/node/possible", "0-1\n")
    write(root, "sys/bus/pci/devices/0000:3b:00.0/numa_node", "1\n")
    write(root, "sys/bus/pci/devices/0000:5e:00.0/numa_node", "-1\n")
    disk = "../../devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda"
    link(root, "sys/dev/block/8:0", disk)
    link(root, "sys/dev/block/8:1", disk + "/sda1")


def job_fds(root):
    for fd, target in [("0", "pipe:[123]"), ("1", "socket:[456]"),
                       ("3", "/mnt/nfs/train/shard0.tar"), ("4", "/mnt/nfs/train/shard1.tar"),
                       ("5", "/mnt/fuse/x.bin"), ("6", "/dev/shm/torch_123"),
                       ("7", "/home/u/ckpt.pt"), ("8", "/mnt/my data/a.csv"),
                       ("9", "/mnt/nfsx/file")]:
        link(root, f"proc/100/fd/{fd}", target)
    link(root, "proc/200/fd/3", "/mnt/nfs/train/shard2.tar")


def t0(root):
    write(root, "proc/stat",
          "cpu  1000 10 500 8000 200 5 15 100 50 0\n"
          "cpu0 500 5 250 4000 100 2 7 50 25 0\n"
          "cpu1 500 5 250 4000 100 3 8 50 25 0\n"
          "intr 12345 0 0\nctxt 99999\nbtime 1700000000\nprocesses 4242\n"
          "procs_running 3\nprocs_blocked 2\nsoftirq 1 2 3\n")
    write(root, "proc/meminfo",
          "MemTotal:       16384000 kB\nMemFree:         1024000 kB\n"
          "MemAvailable:    8192000 kB\nBuffers:          102400 kB\n"
          "Cached:          4096000 kB\nSwapCached:            0 kB\n"
          "SwapTotal:       2097152 kB\nSwapFree:        1048576 kB\n"
          "Dirty:              1234 kB\nWriteback:            56 kB\n"
          "Shmem:             65536 kB\nHugePages_Total:       0\n")
    write(root, "proc/vmstat",
          "nr_free_pages 12345\npgpgin 1000\npgpgout 2000\npswpin 10\npswpout 20\n"
          "pgfault 100000\npgmajfault 50\n")
    write(root, "proc/pressure/cpu", "some avg10=1.50 avg60=1.00 avg300=0.50 total=1000000\n")
    write(root, "proc/pressure/io",
          "some avg10=12.25 avg60=3.00 avg300=1.00 total=2000000\n"
          "full avg10=4.75 avg60=1.00 avg300=0.25 total=1000000\n")
    write(root, "proc/diskstats",
          "   8       0 sda 1000 100 80000 5000 500 50 40000 2500 2 6000 7500 10 0 800 20 30 60\n"
          "   8       1 sda1 900 90 72000 4500 400 40 32000 2000 0 5000 6500 10 0 800 20\n"
          " 252      16 vdb 4294967000 0 100000 4294967000 0 0 0 0 0 4294966796 4294966796\n"
          "   3       1 hda1 100 200 300 400\n"
          "this is not a disk line\n"
          "   8      16 sdb 1 2 3\n"
          " 259       0 nvme0n1 5000 0 400000 2000 3000 0 240000 1500 0 3000 3500 0 0 0 0 0 0\n"
          "   8      32 sdc 100 0 10000000000 100 0 0 0 0 0 100 100\n")
    write(root, "proc/net/dev", NET_HEADER +
          "    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n"
          "  eth0: 1000000 1000 1 2 0 0 0 5 500000 400 3 4 0 0 0 0\n")
    process(root, 1, "init", "S", 0, 10, 10, 1, 100, 0, [(1, "init", "S", 10, 10, 0, 5, 0, "1 2 3")])
    process(root, 100, "py thon) (x", "S", 1, 500, 100, 1000, 25600, 1,
            [(100, "py thon) (x", "S", 300, 60, 1, 800, 40, "3000000 1000000 100"),
             (101, "pt_data_worker", "D", 200, 40, 0, 200, 10, "2000000 4000000 50")],
            vol=1000, nonvol=50, io_text=io(1000000, 2000, 409600, 4096),
            cmdline="python\0train.py\0--epochs\0003\0")
    write(root, "proc/100/mountinfo", MOUNTINFO)
    process(root, 200, "worker", "D", 100, 50, 5, 1100, 1000, 0,
            [(200, "worker", "D", 50, 5, 0, 30, 3, "500 600 7")], vol=30, nonvol=3,
            cmdline="python\0-c\0worker\0")
    process(root, 300, "grand child", "R", 200, 7, 1, 1200, 500, 1,
            [(300, "grand child", "R", 7, 1, 1, 2, 1, "70 80 9")], io_text=io(0, 0, 0, 0),
            cmdline="")
    process(root, 400, "other", "R", 1, 1000, 0, 50, 100, 0,
            [(400, "other", "R", 1000, 0, 0, 1, 1, "1 1 1")], io_text=io(0, 0, 0, 0))
    process(root, 401, "idle", "S", 1, 3, 3, 60, 100, 1,
            [(401, "idle", "S", 3, 3, 1, 1, 1, "1 1 1")], io_text=io(0, 0, 0, 0))
    process(root, 500, "vanish", "S", 100, 1, 1, 1300, 10, 0, [], with_status=False)
    job_fds(root)
    common_sys(root)


def t1(root):
    write(root, "proc/stat",
          "cpu  1160 10 570 8050 195 5 15 115 60 0\n"
          "cpu0 560 5 270 4010 105 2 7 55 35 0\n"
          "cpu1 600 5 300 4040 90 3 8 60 25 0\n"
          "ctxt 100999\nprocesses 4250\nprocs_running 1\nprocs_blocked 0\n")
    write(root, "proc/meminfo",
          "MemTotal:       16384000 kB\nMemFree:          512000 kB\n"
          "MemAvailable:    7168000 kB\nBuffers:          102400 kB\n"
          "Cached:          4608000 kB\nSwapTotal:       2097152 kB\n"
          "SwapFree:        1048576 kB\nDirty:              2000 kB\n"
          "Writeback:            0 kB\nShmem:             65536 kB\n")
    write(root, "proc/vmstat",
          "pgpgin 5000\npgpgout 2100\npswpin 110\npswpout 20\npgfault 100500\npgmajfault 150\n")
    write(root, "proc/pressure/cpu", "some avg10=20.00 avg60=5.00 avg300=1.00 total=1250000\n")
    write(root, "proc/pressure/io",
          "some avg10=40.00 avg60=10.00 avg300=2.00 total=2500000\n"
          "full avg10=10.00 avg60=2.00 avg300=0.50 total=1100000\n")
    write(root, "proc/diskstats",
          "   8       0 sda 1100 110 88000 5400 550 55 44000 2600 1 6500 8000 12 1 816 30 40 62\n"
          "   8       1 sda1 950 95 76000 4700 420 42 33600 2050 0 5200 6800 10 0 800 20\n"
          " 252      16 vdb 200 0 103968 200 0 0 0 0 0 204 1000\n"
          "   3       1 hda1 110 210 310 410\n"
          " 259       0 nvme0n1 10 0 80 1 5 0 40 1 0 2 2 0 0 0 0 0 0\n"
          "   8      32 sdc 200 0 9000000000 200 0 0 0 0 0 200 200\n")
    write(root, "proc/net/dev", NET_HEADER +
          "    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n"
          "  eth0: 126000000 101000 1 2 0 0 0 5 1500000 1400 3 4 0 0 0 0\n")
    process(root, 1, "init", "S", 0, 10, 10, 1, 100, 0, [(1, "init", "S", 10, 10, 0, 5, 0, "1 2 3")])
    process(root, 100, "py thon) (x", "S", 1, 560, 120, 1000, 25600, 0,
            [(100, "py thon) (x", "S", 330, 70, 0, 900, 45, "3300000 1100000 110"),
             (101, "pt_data_worker", "R", 230, 50, 1, 260, 12, "2400000 4500000 60")],
            vol=1160, nonvol=57, io_text=io(3000000, 4000, 1409600, 8192),
            cmdline="python\0train.py\0--epochs\0003\0")
    write(root, "proc/100/mountinfo", MOUNTINFO)
    process(root, 200, "worker", "S", 100, 80, 6, 1100, 1000, 1,
            [(200, "worker", "S", 80, 6, 1, 40, 4, "800 900 8")], vol=40, nonvol=4,
            cmdline="python\0-c\0worker\0")
    process(root, 400, "other", "R", 1, 1090, 0, 50, 100, 0,
            [(400, "other", "R", 1090, 0, 0, 1, 1, "1 1 1")], io_text=io(0, 0, 5000000, 0))
    process(root, 401, "idle", "S", 1, 3, 3, 60, 100, 1,
            [(401, "idle", "S", 3, 3, 1, 1, 1, "1 1 1")], io_text=io(0, 0, 0, 0))
    process(root, 800, "new worker", "S", 100, 2, 1, 1450, 300, 0,
            [(800, "new worker", "S", 2, 1, 0, 3, 0, "10 20 1")], io_text=io(0, 0, 0, 0),
            cmdline="python\0-c\0new\0")
    process(root, 700, "newbie", "R", 1, 4, 1, 1400, 100, 1,
            [(700, "newbie", "R", 4, 1, 1, 1, 1, "1 1 1")], io_text=io(0, 0, 8192, 0))
    job_fds(root)
    common_sys(root)


if __name__ == "__main__":
    for name, fill in (("t0", t0), ("t1", t1)):
        root = os.path.join(HERE, name)
        shutil.rmtree(root, ignore_errors=True)
        fill(root)
