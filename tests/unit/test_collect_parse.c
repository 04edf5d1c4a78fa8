/* Unit tests of the procfs text parsers (src/collect/host_parse.h) on exact inline text:
 * field counts of diskstats, comm with spaces and ')', missing optional keys, malformed
 * lines reported by line number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect/host.h"
#include "collect/host_parse.h"

static void proc_stat_cpu_lines_and_counters(void **state)
{
    (void)state;
    gw_host_sample s;
    gw_host_sample_init(&s);
    int bad = 0;
    /* cpu1 listed before the aggregate and an old kernel's 4-field cpu2 line */
    const char *text = "cpu1 1 2 3 4 5 6 7 8 9 10\n"
                       "cpu  11 12 13 14 15 16 17 18 19 20\n"
                       "cpu2 100 200 300 400\n"
                       "ctxt 777\nprocesses 55\nprocs_running 4\nprocs_blocked 3\n";
    assert_int_equal(gw_parse_proc_stat(text, &s, &bad), 0);
    assert_int_equal(s.cpu_count, 3);
    assert_int_equal(s.cpus[0].cpu, -1);
    assert_int_equal(s.cpus[0].user, 11);
    assert_int_equal(s.cpus[0].guest_nice, 20);
    assert_int_equal(s.cpus[1].cpu, 1);
    assert_int_equal(s.cpus[1].steal, 8);
    assert_int_equal(s.cpus[2].cpu, 2);
    assert_int_equal(s.cpus[2].idle, 400);
    assert_int_equal(s.cpus[2].iowait, 0);
    assert_int_equal(s.ctxt_switches, 777);
    assert_int_equal(s.processes_forked, 55);
    assert_int_equal(s.procs_running, 4);
    assert_int_equal(s.procs_blocked, 3);
    gw_host_sample_free(&s);
}

static void proc_stat_errors_name_the_line(void **state)
{
    (void)state;
    gw_host_sample s;
    gw_host_sample_init(&s);
    int bad = 0;
    assert_int_equal(gw_parse_proc_stat("intr 1\ncpu  1 2\n", &s, &bad), -1);
    assert_int_equal(bad, 2);
    gw_host_sample_clear(&s);
    assert_int_equal(gw_parse_proc_stat("intr 1\nctxt 2\n", &s, &bad), -1);   /* no cpu line */
    gw_host_sample_clear(&s);
    assert_int_equal(gw_parse_proc_stat("cpu  -1 2 3 4\n", &s, &bad), -1);   /* no negatives */
    gw_host_sample_free(&s);
}

static void meminfo_without_memavailable(void **state)
{
    (void)state;
    gw_meminfo m;
    int bad = 0;
    assert_int_equal(gw_parse_meminfo("MemTotal: 100 kB\nMemFree: 40 kB\nCached: 7 kB\n"
                                      "SwapCached: 99 kB\n", &m, &bad), 0);
    assert_false(m.has_mem_available);
    assert_int_equal(m.mem_total_kb, 100);
    assert_int_equal(m.cached_kb, 7);   /* SwapCached must not be taken for Cached */
    assert_int_equal(gw_parse_meminfo("MemTotal: 100 kB\nMemAvailable: 60 kB\n", &m, &bad), 0);
    assert_true(m.has_mem_available);
    assert_int_equal(m.mem_available_kb, 60);
    assert_int_equal(gw_parse_meminfo("MemFree: 1 kB\n", &m, &bad), -1);
    assert_int_equal(gw_parse_meminfo("MemTotal: 1 kB\nMemFree: lots\n", &m, &bad), -1);
    assert_int_equal(bad, 2);
}

static void vmstat_keys_exact(void **state)
{
    (void)state;
    gw_vmstat v;
    int bad = 0;
    assert_int_equal(gw_parse_vmstat("pswpin 3\npswpin_extra 99\npgfault 10\npgmajfault 2\n"
                                     "pswpout 4\n", &v, &bad), 0);
    assert_int_equal(v.pswpin, 3);
    assert_int_equal(v.pswpout, 4);
    assert_int_equal(v.pgfault, 10);
    assert_int_equal(v.pgmajfault, 2);
}

static void pressure_some_full_and_missing(void **state)
{
    (void)state;
    gw_pressure_resource r;
    int bad = 0;
    assert_int_equal(gw_parse_pressure("some avg10=0.25 avg60=0.10 avg300=0.00 total=123\n"
                                       "full avg10=0.12 avg60=0.00 avg300=0.00 total=45\n", &r, &bad), 0);
    assert_true(r.present && r.has_some && r.has_full);
    assert_true(r.some_avg10_pct == 0.25);
    assert_int_equal(r.some_total_us, 123);
    assert_int_equal(r.full_total_us, 45);
    assert_int_equal(gw_parse_pressure("some avg10=1.00 avg60=0 avg300=0 total=9\n", &r, &bad), 0);
    assert_false(r.has_full);
    assert_int_equal(gw_parse_pressure("", &r, &bad), -1);
    assert_false(r.present);
    assert_int_equal(gw_parse_pressure("some avg10=x total=1\n", &r, &bad), -1);
}

static void diskstats_field_counts(void **state)
{
    (void)state;
    gw_host_sample s;
    gw_host_sample_init(&s);
    int bad = 0;
    const char *text =
        "   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n"                  /* 14 fields */
        "   8       1 sda1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"     /* 18 */
        "   8      16 sdb 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n" /* 20 */
        "   8      32 sdc 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\n" /* 22: first 20 */
        "   3       1 hda1 100 200 300 400\n"                          /* old partition: skipped */
        "   8      48 sdd 1 2 3 4 5 6 7 8 9 10 11 12\n"                /* 15: used as 14 */
        "garbage\n\n";
    assert_int_equal(gw_parse_diskstats(text, &s, &bad), 0);
    assert_int_equal(s.disk_count, 5);
    assert_string_equal(s.disks[0].name, "sda");
    assert_int_equal(s.disks[0].field_count, 14);
    assert_int_equal(s.disks[0].weighted_ticks_ms, 11);
    assert_int_equal(s.disks[0].dc_ios, 0);
    assert_int_equal(s.disks[1].field_count, 18);
    assert_int_equal(s.disks[1].dc_ticks_ms, 15);
    assert_int_equal(s.disks[1].fl_ios, 0);
    assert_int_equal(s.disks[2].field_count, 20);
    assert_int_equal(s.disks[2].fl_ios, 16);
    assert_int_equal(s.disks[2].fl_ticks_ms, 17);
    assert_int_equal(s.disks[3].field_count, 20);
    assert_int_equal(s.disks[3].fl_ticks_ms, 17);
    assert_int_equal(s.disks[4].field_count, 14);
    assert_int_equal(s.disks[4].dc_ios, 0);   /* 15th number must not leak into discards */
    assert_int_equal(s.disks[2].major, 8);
    assert_int_equal(s.disks[2].minor, 16);
    assert_int_equal(s.disks[2].rd_ios, 1);
    assert_int_equal(s.disks[2].io_ticks_ms, 10);
    gw_host_sample_free(&s);
}

static void net_dev_columns(void **state)
{
    (void)state;
    gw_host_sample s;
    gw_host_sample_init(&s);
    int bad = 0;
    const char *text = "Inter-|   Receive |  Transmit\n face |bytes packets|bytes\n"
                       "  eth0:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
                       "wlan0: 10 20 30 40 50 60 70 80 90 100 110 120 130 140 150 160\n";
    assert_int_equal(gw_parse_net_dev(text, &s, &bad), 0);
    assert_int_equal(s.net_count, 2);
    assert_string_equal(s.nets[0].name, "eth0");
    assert_int_equal(s.nets[0].rx_bytes, 1);
    assert_int_equal(s.nets[0].rx_drop, 4);
    assert_int_equal(s.nets[0].tx_bytes, 9);
    assert_int_equal(s.nets[0].tx_drop, 12);
    assert_int_equal(s.nets[1].tx_packets, 100);
    gw_host_sample_clear(&s);
    assert_int_equal(gw_parse_net_dev("h\nh\n eth0: 1 2 3\n", &s, &bad), -1);
    assert_int_equal(bad, 3);
    gw_host_sample_free(&s);
}

static void pid_stat_comm_with_parens_and_spaces(void **state)
{
    (void)state;
    gw_pid_stat st;
    const char *text = "4242 (a) b (c)) R 17 1 1 0 -1 4194304 9 0 0 0 123 45 -3 -4 20 -5 7 0 "
                       "999 1000 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0\n";
    assert_int_equal(gw_parse_pid_stat(text, &st), 0);
    assert_int_equal(st.pid, 4242);
    assert_string_equal(st.comm, "a) b (c)");
    assert_int_equal(st.state, 'R');
    assert_int_equal(st.ppid, 17);
    assert_int_equal(st.utime_ticks, 123);
    assert_int_equal(st.stime_ticks, 45);
    assert_int_equal(st.num_threads, 7);
    assert_int_equal(st.start_ticks, 999);
    assert_int_equal(st.rss_pages, 321);
    assert_int_equal(st.last_cpu, 3);
    /* Truncated before "processor": still usable, CPU unknown. */
    assert_int_equal(gw_parse_pid_stat("5 (x) S 1 1 1 0 -1 0 0 0 0 0 8 9 0 0 20 0 1 0 77 0 12\n", &st), 0);
    assert_int_equal(st.last_cpu, -1);
    assert_int_equal(st.rss_pages, 12);
    assert_int_equal(gw_parse_pid_stat("5 (x S 1\n", &st), -1);
    assert_int_equal(gw_parse_pid_stat("5 (x) S 1 2 3\n", &st), -1);
    assert_int_equal(gw_parse_pid_stat("", &st), -1);
}

static void status_schedstat_io(void **state)
{
    (void)state;
    gw_task_counters t;
    memset(&t, 0, sizeof t);
    assert_int_equal(gw_parse_status_ctxt("Name:\tx\nvoluntary_ctxt_switches:\t12\n"
                                          "nonvoluntary_ctxt_switches:\t3\n", &t), 0);
    assert_true(t.has_ctxt);
    assert_int_equal(t.voluntary_ctxt, 12);
    assert_int_equal(t.nonvoluntary_ctxt, 3);
    assert_int_equal(gw_parse_status_ctxt("Name:\tx\n", &t), -1);
    assert_false(t.has_ctxt);
    assert_int_equal(gw_parse_schedstat("1000 2000 3\n", &t), 0);
    assert_true(t.has_schedstat);
    assert_int_equal(t.runqueue_wait_ns, 2000);
    uint64_t rchar, wchar, rb, wb;
    assert_int_equal(gw_parse_pid_io("rchar: 1\nwchar: 2\nsyscr: 0\nsyscw: 0\nread_bytes: 3\n"
                                     "write_bytes: 4\ncancelled_write_bytes: 5\n",
                                     &rchar, &wchar, &rb, &wb), 0);
    assert_int_equal(rchar + 10 * wchar + 100 * rb + 1000 * wb, 4321);
}

static void mountinfo_and_fs_classes(void **state)
{
    (void)state;
    gw_mount m;
    assert_int_equal(gw_parse_mountinfo_line("36 35 98:0 /mnt1 /mnt\\040two rw,noatime master:1 "
                                             "shared:2 - ext3 /dev/root rw,errors=continue", &m), 0);
    assert_int_equal(m.major, 98);
    assert_int_equal(m.minor, 0);
    assert_string_equal(m.mount_point, "/mnt two");
    assert_string_equal(m.fs_type, "ext3");
    assert_int_equal(gw_parse_mountinfo_line("36 35 0:50 / /data rw - nfs4 srv:/x rw\n", &m), 0);
    assert_string_equal(m.fs_type, "nfs4");
    assert_int_equal(gw_parse_mountinfo_line("36 35 0:50 / /data rw nfs4 srv:/x rw", &m), -1);
    assert_int_equal(gw_parse_mountinfo_line("36 35 zero / /data rw - nfs4 x rw", &m), -1);
    assert_int_equal(gw_fs_class_of("nfs4"), GW_FS_NETWORK);
    assert_int_equal(gw_fs_class_of("lustre"), GW_FS_NETWORK);
    assert_int_equal(gw_fs_class_of("fuse.sshfs"), GW_FS_NETWORK);
    assert_int_equal(gw_fs_class_of("ceph"), GW_FS_NETWORK);
    assert_int_equal(gw_fs_class_of("gpfs"), GW_FS_NETWORK);
    assert_int_equal(gw_fs_class_of("beegfs"), GW_FS_NETWORK);
    assert_int_equal(gw_fs_class_of("smb3"), GW_FS_NETWORK);
    assert_int_equal(gw_fs_class_of("tmpfs"), GW_FS_TMPFS);
    assert_int_equal(gw_fs_class_of("xfs"), GW_FS_LOCAL_DISK);
    assert_int_equal(gw_fs_class_of("overlay"), GW_FS_OTHER);
    assert_int_equal(gw_fs_class_of("nfsd"), GW_FS_OTHER);
}

static void cpulists(void **state)
{
    (void)state;
    assert_int_equal(gw_cpulist_count("0-3,8,10-11\n"), 7);
    assert_int_equal(gw_cpulist_count("\n"), 0);
    assert_int_equal(gw_cpulist_count("3-1"), -1);
    assert_int_equal(gw_cpulist_count("0-3,x"), -1);
    assert_true(gw_cpulist_contains("0-3,8,10-11", 10));
    assert_false(gw_cpulist_contains("0-3,8,10-11", 9));
    gw_numa_node nodes[2] = {{.node = 0, .cpulist = "0-3", .cpu_count = 4},
                             {.node = 1, .cpulist = "4-7", .cpu_count = 4}};
    assert_int_equal(gw_numa_node_of_cpu(nodes, 2, 5), 1);
    assert_int_equal(gw_numa_node_of_cpu(nodes, 2, 9), -1);
}

static void number_scanning_rejects_overflow(void **state)
{
    (void)state;
    const char *p = " 18446744073709551615 18446744073709551616";
    uint64_t v;
    assert_true(gw_next_u64(&p, &v));
    assert_true(v == UINT64_MAX);
    assert_false(gw_next_u64(&p, &v));
    int64_t i;
    p = " -42x";
    assert_true(gw_next_i64(&p, &i));
    assert_int_equal(i, -42);
    assert_int_equal(*p, 'x');
}

/* Reads a fixture file into a NUL-terminated heap buffer (caller frees). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *text = malloc(65536);
    assert_non_null(text);
    *len = fread(text, 1, 65535, f);
    text[*len] = '\0';
    assert_int_equal(fclose(f), 0);
    return text;
}

/* Every parser on every prefix of real captured files, and on copies with bytes flipped:
 * each must return 0 or -1 and never read out of bounds (ASan/UBSan run this too). */
static void parsers_survive_truncation_and_corruption(void **state)
{
    (void)state;
    static const char *const files[] = {"proc/stat", "proc/meminfo", "proc/vmstat",
                                        "proc/pressure/io", "proc/diskstats", "proc/net/dev",
                                        "proc/13288/stat", "proc/13288/status", "proc/13293/io",
                                        "proc/13293/schedstat", "proc/13288/mountinfo"};
    unsigned seed = 12345;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/data/procfs/snap0/%s", GW_SOURCE_DIR, files[f]);
        size_t len;
        char *text = slurp(path, &len);
        char *copy = malloc(len + 1);
        assert_non_null(copy);
        for (size_t cut = 0; cut <= len; cut++) {
            for (int flip = 0; flip < 2; flip++) {
                memcpy(copy, text, cut);
                copy[cut] = '\0';
                if (flip && cut > 0) {
                    seed = seed * 1103515245u + 12345u;
                    copy[(seed >> 8) % cut] = (char)(seed >> 16);   /* may cut short */
                }
                gw_host_sample s;
                gw_host_sample_init(&s);
                int bad = 0;
                gw_meminfo m;
                gw_vmstat v;
                gw_pressure_resource r;
                gw_pid_stat st;
                gw_task_counters t;
                gw_mount mount;
                uint64_t a, b, c, d;
                memset(&t, 0, sizeof t);
                int rc[] = {gw_parse_proc_stat(copy, &s, &bad), gw_parse_meminfo(copy, &m, &bad),
                            gw_parse_vmstat(copy, &v, &bad), gw_parse_pressure(copy, &r, &bad),
                            gw_parse_diskstats(copy, &s, &bad), gw_parse_net_dev(copy, &s, &bad),
                            gw_parse_pid_stat(copy, &st), gw_parse_status_ctxt(copy, &t),
                            gw_parse_schedstat(copy, &t), gw_parse_pid_io(copy, &a, &b, &c, &d),
                            gw_parse_mountinfo_line(copy, &mount)};
                for (size_t k = 0; k < sizeof rc / sizeof rc[0]; k++)
                    assert_true(rc[k] == 0 || rc[k] == -1);
                gw_host_sample_free(&s);
            }
        }
        free(copy);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(proc_stat_cpu_lines_and_counters),
        cmocka_unit_test(proc_stat_errors_name_the_line),
        cmocka_unit_test(meminfo_without_memavailable),
        cmocka_unit_test(vmstat_keys_exact),
        cmocka_unit_test(pressure_some_full_and_missing),
        cmocka_unit_test(diskstats_field_counts),
        cmocka_unit_test(net_dev_columns),
        cmocka_unit_test(pid_stat_comm_with_parens_and_spaces),
        cmocka_unit_test(status_schedstat_io),
        cmocka_unit_test(mountinfo_and_fs_classes),
        cmocka_unit_test(cpulists),
        cmocka_unit_test(number_scanning_rejects_overflow),
        cmocka_unit_test(parsers_survive_truncation_and_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
