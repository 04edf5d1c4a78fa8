/* Job attribution (collect/job_attr.c) on the cgroup layouts the schedulers write, as text
 * and through the fixture tree tests/data/procfs-jobs/root: Slurm (v1 and v2 plugins, and
 * from the environment), Kubernetes (cgroupfs and systemd drivers, another cgroup
 * namespace), Docker, login sessions, the root cgroup, CRI-O's conmon, a vanished process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "collect/job_attr.h"

#define FIXTURE GW_SOURCE_DIR "/tests/data/procfs-jobs/root"
#define C1 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa0001"

static gw_job_attr read_pid(int pid)
{
    gw_job_attr a;
    assert_int_equal(gw_job_attr_read(FIXTURE, pid, &a), 0);
    return a;
}

static void test_slurm_v1_job_outside_the_unified_hierarchy(void **state)
{
    (void)state;
    gw_job_attr a = read_pid(1001);
    assert_string_equal(a.key, "slurm:4242");
    assert_string_equal(a.slurm_job, "4242");
    assert_string_equal(a.cgroup, "/slurm/uid_1000/job_4242/step_0/task_0");
    assert_string_equal(a.pod_uid, "");
    assert_string_equal(a.container_id, "");
}

static void test_slurm_v2(void **state)
{
    (void)state;
    gw_job_attr a = read_pid(1002);
    assert_string_equal(a.key, "slurm:4243");
    assert_string_equal(a.slurm_job, "4243");
}

static void test_kubernetes_cgroupfs_driver(void **state)
{
    (void)state;
    gw_job_attr a = read_pid(1003);
    assert_string_equal(a.key, "pod:8a4f2c1e-1b2c-4d5e-8f90-123456789abc");
    assert_string_equal(a.pod_uid, "8a4f2c1e-1b2c-4d5e-8f90-123456789abc");
    assert_string_equal(a.container_id, C1);
    assert_string_equal(a.pod, "trainer-0");              /* HOSTNAME */
    assert_string_equal(a.namespace_name, "ml-team");     /* service-account mount */
    assert_string_equal(a.slurm_job, "");
}

static void test_kubernetes_systemd_driver(void **state)
{
    (void)state;
    gw_job_attr a = read_pid(1004);
    assert_string_equal(a.pod_uid, "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b");   /* '_' back to '-' */
    assert_string_equal(a.container_id, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb0002");
    assert_string_equal(a.pod, "infer-7");                /* POD_NAME wins over HOSTNAME */
    assert_string_equal(a.namespace_name, "serving");
}

static void test_kubernetes_from_another_cgroup_namespace(void **state)
{
    (void)state;
    gw_job_attr a = read_pid(1005);
    assert_string_equal(a.pod_uid, "11112222-3333-4444-5555-666677778888");
    assert_string_equal(a.key, "pod:11112222-3333-4444-5555-666677778888");
    assert_string_equal(a.pod, "");                       /* no environment: unknown, not guessed */
}

static void test_slurm_from_environment_and_sessions(void **state)
{
    (void)state;
    gw_job_attr a = read_pid(1006);
    assert_string_equal(a.key, "slurm:777");
    assert_string_equal(a.cgroup, "/user.slice/user-1000.slice/session-3.scope");
    a = read_pid(1007);
    assert_string_equal(a.key, "cgroup:/user.slice/user-1001.slice/session-9.scope");
    assert_string_equal(a.slurm_job, "");
    assert_string_equal(a.pod_uid, "");
}

static void test_docker_root_and_conmon(void **state)
{
    (void)state;
    gw_job_attr a = read_pid(1008);
    assert_string_equal(a.container_id, "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd0004");
    assert_string_equal(a.pod_uid, "");
    assert_string_equal(a.pod, "");   /* HOSTNAME is a pod's name only inside a pod */
    assert_non_null(strstr(a.key, "cgroup:/system.slice/docker-"));
    a = read_pid(1010);
    assert_string_equal(a.key, "cgroup:/");
    a = read_pid(1011);
    assert_string_equal(a.pod_uid, "99998888-7777-6666-5555-444433332222");
    assert_string_equal(a.container_id, "");
}

static void test_vanished_process(void **state)
{
    (void)state;
    gw_job_attr a;
    assert_int_equal(gw_job_attr_read(FIXTURE, 1009, &a), -1);
    assert_string_equal(a.key, "");
}

/* Text that is not what it seems: no false job or pod. */
static void test_near_misses(void **state)
{
    (void)state;
    gw_job_attr a;
    assert_int_equal(gw_job_attr_from_cgroup("0::/system.slice/job_runner.service\n", &a), 0);
    assert_string_equal(a.slurm_job, "");   /* "job_" not followed by digits only */
    assert_int_equal(gw_job_attr_from_cgroup("0::/user.slice/pod1234.scope\n", &a), 0);
    assert_string_equal(a.pod_uid, "");     /* "pod" outside a kubepods hierarchy */
    assert_int_equal(gw_job_attr_from_cgroup("0::/kubepods/pod12/abc\n", &a), 0);
    assert_string_equal(a.pod_uid, "");     /* too short for a UID */
    assert_int_equal(gw_job_attr_from_cgroup("garbage without colons\n", &a), -1);
    assert_string_equal(a.key, "");
    assert_int_equal(gw_job_attr_from_cgroup("", &a), -1);
    /* SLURM_JOB_ID must be a number, and never overrides a pod */
    gw_job_attr b;
    assert_int_equal(gw_job_attr_from_cgroup("0::/user.slice/session-1.scope\n", &b), 0);
    static const char env[] = "SLURM_JOB_ID=12;rm\0";
    gw_job_attr_from_environ(env, sizeof env - 1, &b);
    assert_string_equal(b.slurm_job, "");
    assert_string_equal(b.key, "cgroup:/user.slice/session-1.scope");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_v1_job_outside_the_unified_hierarchy),
        cmocka_unit_test(test_slurm_v2),
        cmocka_unit_test(test_kubernetes_cgroupfs_driver),
        cmocka_unit_test(test_kubernetes_systemd_driver),
        cmocka_unit_test(test_kubernetes_from_another_cgroup_namespace),
        cmocka_unit_test(test_slurm_from_environment_and_sessions),
        cmocka_unit_test(test_docker_root_and_conmon),
        cmocka_unit_test(test_vanished_process),
        cmocka_unit_test(test_near_misses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
