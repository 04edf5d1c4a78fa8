/* Tests of the environment diagnoses: comm.nccl_env from environment strings and NIC
 * counts, comm.topology from PCIe link states, NIC counting over a fixture sysfs tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "diagnose/env_checks.h"

static int has_evidence(const gw_finding *f, const char *needle)
{
    for (size_t i = 0; i < f->evidence_count; i++)
        if (strstr(f->evidence[i], needle))
            return 1;
    return 0;
}

static void test_nccl_clean_env_no_finding(void **state)
{
    (void)state;
    char *env[] = {"PATH=/usr/bin", "NCCL_DEBUG=INFO", "NCCL_P2P_DISABLE=0", "NCCL_SOCKET_IFNAME=eth0", NULL};
    gw_finding_list l = {0};
    assert_int_equal(gw_env_nccl_check(env, 3, &l), 0);
    assert_int_equal(l.count, 0);
    gw_findings_free(&l);
}

static void test_nccl_risky_variables_listed(void **state)
{
    (void)state;
    char *env[] = {"NCCL_P2P_DISABLE=1", "NCCL_IB_DISABLE=1", "NCCL_P2P_LEVEL=NVL", "HOME=/root", NULL};
    gw_finding_list l = {0};
    assert_int_equal(gw_env_nccl_check(env, 2, &l), 4);
    assert_int_equal(l.count, 1);
    const gw_finding *f = &l.items[0];
    assert_string_equal(f->id, "comm.nccl_env");
    assert_int_equal(f->basis, GW_BASIS_ENV);
    assert_int_equal(f->evidence_count, 4);
    assert_true(has_evidence(f, "NCCL_P2P_DISABLE=1"));
    assert_true(has_evidence(f, "NCCL_IB_DISABLE=1"));
    assert_true(has_evidence(f, "NCCL_P2P_LEVEL=NVL"));
    assert_true(has_evidence(f, "2 network interfaces are up and NCCL_SOCKET_IFNAME is not set"));
    assert_non_null(strstr(f->fix, "all_reduce_perf"));
    gw_findings_free(&l);
}

static void test_nccl_single_nic_needs_no_ifname(void **state)
{
    (void)state;
    char *env[] = {NULL};
    gw_finding_list l = {0};
    assert_int_equal(gw_env_nccl_check(env, 1, &l), 0);
    assert_int_equal(l.count, 0);
    gw_findings_free(&l);
}

static void test_link_width_is_major_generation_minor(void **state)
{
    (void)state;
    gw_link_state links[3] = {
        {0, "H200", 5, 16, 5, 16},   /* healthy */
        {1, "H200", 4, 16, 5, 16},   /* generation down only */
        {2, "H200", 5, 8, 5, 16},    /* lanes missing */
    };
    gw_finding_list l = {0};
    assert_int_equal(gw_env_link_check(links, 2, &l), 1);
    assert_int_equal(l.count, 1);
    assert_int_equal(l.items[0].severity, GW_SEV_MINOR);
    assert_true(has_evidence(&l.items[0], "GPU 1 H200: PCIe gen 4 x16, capable of gen 5 x16"));
    gw_findings_free(&l);
    assert_int_equal(gw_env_link_check(links, 3, &l), 2);
    assert_int_equal(l.items[0].severity, GW_SEV_MAJOR);
    assert_true(has_evidence(&l.items[0], "GPU 2 H200: PCIe gen 5 x8, capable of gen 5 x16 (lanes missing"));
    gw_findings_free(&l);
    assert_int_equal(gw_env_link_check(links, 1, &l), 0);
    assert_int_equal(l.count, 0);
    gw_findings_free(&l);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_count_nics_fixture(void **state)
{
    (void)state;
    char root[] = "/tmp/gw_nics_XXXXXX";
    assert_non_null(mkdtemp(root));
    char path[512];
    const char *names[] = {"lo", "eth0", "eth1", "ib0"};
    const char *states[] = {"unknown\n", "up\n", "up\n", "down\n"};
    snprintf(path, sizeof path, "%s/sys", root);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/sys/class", root);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/sys/class/net", root);
    mkdir(path, 0755);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/sys/class/net/%s", root, names[i]);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/sys/class/net/%s/operstate", root, names[i]);
        write_file(path, states[i]);
    }
    assert_int_equal(gw_env_count_nics(root), 2);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(gw_env_count_nics("/nonexistent-root"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nccl_clean_env_no_finding),
        cmocka_unit_test(test_nccl_risky_variables_listed),
        cmocka_unit_test(test_nccl_single_nic_needs_no_ifname),
        cmocka_unit_test(test_link_width_is_major_generation_minor),
        cmocka_unit_test(test_count_nics_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
