/* `gpuwhy doctor`: checks the environment gpuwhy and a training job depend on — procfs
 * features the collectors read, the NVIDIA driver through NVML (GPUs, links, GPM), the CUPTI
 * injection library for `run --trace`, libmicrohttpd for `serve`, and risky settings (NCCL variables, degraded PCIe
 * links: the E diagnoses comm.nccl_env and comm.topology). It reports; it changes nothing. */
#include <dlfcn.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diagnose/env_checks.h"
#include "cli/commands.h"
#ifdef GW_HAVE_MHD
#include "cli/mhd_dl.h"
#endif
#include "collect/nvml.h"
#include "record/trace_session.h"
#include "report/text_table.h"
#include "util/error.h"
#include "util/units.h"

extern char **environ;

typedef struct doctor {
    const char *root;       /* procfs/sysfs root ("/" live, a fixture tree in tests) */
    int warnings, failures;
} doctor;

static void line(doctor *d, const char *status, const char *check, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void line(doctor *d, const char *status, const char *check, const char *fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (strcmp(status, "warn") == 0)
        d->warnings++;
    else if (strcmp(status, "FAIL") == 0)
        d->failures++;
    printf("  %-4s  %-22s %s\n", status, check, detail);
}

/* Evidence and fixes under a check, wrapped within 100 columns at the text column. */
static void wrapped(const char *prefix, const char *text)
{
    char first[48];
    snprintf(first, sizeof first, "%30s%s", "", prefix);
    (void)gw_text_wrap(stdout, first, "                                ", text, 100);
}

static int readable(const doctor *d, const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", strcmp(d->root, "/") == 0 ? "" : d->root, rel);
    return access(path, R_OK) == 0;
}

static void check_host(doctor *d)
{
    struct utsname u;
    if (uname(&u) == 0)
        line(d, "ok", "kernel", "%s %s %s", u.sysname, u.release, u.machine);
    line(d, readable(d, "proc/stat") ? "ok" : "FAIL", "procfs", "%s/proc/stat %s",
         strcmp(d->root, "/") ? d->root : "", readable(d, "proc/stat") ? "readable" : "not readable: no host metrics");
    line(d, readable(d, "proc/pressure/cpu") ? "ok" : "warn", "pressure (PSI)", "%s",
         readable(d, "proc/pressure/cpu") ? "/proc/pressure available"
                                          : "no /proc/pressure: host.memory_pressure uses swap and MemAvailable only");
    line(d, readable(d, "proc/self/schedstat") ? "ok" : "warn", "schedstat", "%s",
         readable(d, "proc/self/schedstat") ? "run-queue delay measurable (pipe.oversubscribed)"
                                            : "no /proc/PID/schedstat: run-queue delay unknown");
    line(d, readable(d, "proc/self/io") ? "ok" : "warn", "process io", "%s",
         readable(d, "proc/self/io") ? "/proc/PID/io readable" : "no /proc/PID/io: per-process disk bytes unknown");
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = -1;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = -1;
        fclose(f);
    }
    if (geteuid() == 0)
        line(d, "ok", "attach", "running as root: every process's /proc entries are readable");
    else
        line(d, "warn", "attach", "not root: `attach` sees another user's job only partly (/proc/PID/io, fd)");
    (void)scope;
    struct statvfs vfs;
    if (statvfs(".", &vfs) == 0) {
        double free_bytes = (double)vfs.f_bavail * (double)vfs.f_frsize;
        char free_text[32];
        line(d, free_bytes >= GW_GIB ? "ok" : "warn", "disk for recordings", "%s free in the current directory%s",
             gw_size_text(free_text, sizeof free_text, free_bytes),
             free_bytes >= GW_GIB ? "" : " (a recording at 10 Hz takes a few MiB per hour per GPU)");
    }
}

static size_t check_gpus(doctor *d, gw_link_state *links, size_t cap)
{
    char note[256] = "";
    gw_nvml *nv = gw_nvml_open(NULL, note, sizeof note);
    if (!nv) {
        line(d, "warn", "NVML", "%s", note[0] ? note : "libnvidia-ml.so.1 not loadable: host-only recordings");
        return 0;
    }
    unsigned n = gw_nvml_gpu_count(nv);
    line(d, n ? "ok" : "warn", "NVML", "driver %s, %u GPU%s%s%s", gw_nvml_driver_version(nv), n, n == 1 ? "" : "s",
         note[0] ? "; " : "", note);
    size_t count = 0;
    for (unsigned g = 0; g < n; g++) {
        const gw_gpu_static *st = gw_nvml_gpu_static(nv, g);
        gw_gpu_sample s;
        memset(&s, 0, sizeof s);
        gw_nvml_sample(nv, g, &s);
        char memory[32];
        line(d, s.lost ? "FAIL" : s.error_code ? "warn" : "ok", "GPU", "%u %s, %s, bus %s%s%s", g, st->name,
             gw_size_text(memory, sizeof memory, (double)st->memory_total_bytes), st->pci_bus_id,
             s.error[0] ? ": " : "", s.error);
        line(d, st->gpm_supported ? "ok" : "warn", "SM activity (GPM)", "GPU %u: %s", g,
             st->gpm_supported ? "supported: GPU-Util can be checked against SM activity"
                               : "not supported (pre-Hopper or old driver)");
        if (count < cap && (s.valid & GW_GPU_HAS_PCIE_LINK)) {
            gw_link_state *l = &links[count++];
            memset(l, 0, sizeof *l);
            l->gpu = g;
            snprintf(l->name, sizeof l->name, "%s", st->name);
            l->gen = s.pcie_gen;
            l->width = s.pcie_width;
            l->max_gen = st->pcie_max_gen;
            l->max_width = st->pcie_max_width;
        }
    }
    gw_gpu_event ev[16];
    size_t events = gw_nvml_poll_events(nv, ev, 16);
    for (size_t i = 0; i < events; i++)
        line(d, "FAIL", "GPU error", "GPU %u: event 0x%llx, Xid %llu (gpu.errors: drain the node, check dmesg)",
             ev[i].gpu, (unsigned long long)ev[i].event_type, (unsigned long long)ev[i].xid);
    gw_nvml_close(nv);
    return count;
}

static void check_tracing(doctor *d)
{
    char lib[4096], missing[512];
    if (gw_trace_find_inject_lib(lib, sizeof lib, missing, sizeof missing) != 0) {
        line(d, "warn", "CUDA tracing", "`run --trace` unavailable (the library is built only with CUDA headers)");
        wrapped("- ", missing);
    } else {
        /* Load it in a child: the library (and the libcupti it pulls in) should not stay
         * mapped in the doctor, and a crash while loading must not take the doctor down. */
        int pipefd[2];
        char why[256] = "";
        int loads = 0;
        if (pipe(pipefd) == 0) {
            pid_t pid = fork();
            if (pid == 0) {
                close(pipefd[0]);
                void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
                const char *msg = h ? "" : dlerror();
                ssize_t wrote = write(pipefd[1], msg, strlen(msg));
                (void)wrote;
                _exit(h && dlsym(h, "InitializeInjection") ? 0 : 1);
            }
            close(pipefd[1]);
            if (pid > 0) {
                ssize_t n = read(pipefd[0], why, sizeof why - 1);
                why[n > 0 ? n : 0] = '\0';
                int status = 0;
                loads = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
            }
            close(pipefd[0]);
        }
        /* The whole path: unpacked from a tarball it is long, and a cut one cannot be checked. */
        if (loads)
            line(d, "ok", "CUDA tracing", "%s loads", lib);
        else
            line(d, "warn", "CUDA tracing", "%s does not load: %.200s", lib, why[0] ? why : "no InitializeInjection");
    }
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    if (inj && *inj)
        line(d, "warn", "injection", "CUDA_INJECTION64_PATH is already set (%s): another tool may hold CUPTI", inj);
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    line(d, "ok", "visible GPUs", "CUDA_VISIBLE_DEVICES=%s", vis ? vis : "(unset: all GPUs)");
}

/* `gpuwhy serve` loads libmicrohttpd when it starts: a missing library shows here first. */
static void check_exporter(doctor *d)
{
#ifdef GW_HAVE_MHD
    char why[512];
    if (gw_mhd_load(why, sizeof why))
        line(d, "ok", "Prometheus exporter", "libmicrohttpd loads (gpuwhy serve)");
    else
        line(d, "warn", "Prometheus exporter", "`gpuwhy serve` unavailable: %s", why);
#else
    line(d, "warn", "Prometheus exporter", "`gpuwhy serve` unavailable: built with -DGW_SERVE=OFF");
#endif
}

static void doctor_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy doctor [--root DIR]\n"
            "\n"
            "Checks what gpuwhy and a training job depend on: procfs features, the NVIDIA driver\n"
            "(GPUs, PCIe links, GPM support) through NVML, the CUPTI library for `run --trace`,\n"
            "and risky settings (NCCL variables, degraded links). Changes nothing.\n"
            "\n"
            "Options:\n"
            "  --root DIR   read procfs/sysfs under DIR instead of / (for tests)\n"
            "\n"
            "Example:\n"
            "  gpuwhy doctor\n");
}

int gw_cmd_doctor(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"root", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    doctor d = {"/", 0, 0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r': d.root = optarg; break;
        case 'h': doctor_usage(stdout); return GW_EXIT_OK;
        default: doctor_usage(stderr); return GW_EXIT_USAGE;
        }
    }
    printf("gpuwhy %s doctor\n\nHost\n", GW_VERSION);
    check_host(&d);
    printf("\nGPUs\n");
    gw_link_state links[64];
    size_t link_count = check_gpus(&d, links, 64);
    printf("\nTracing\n");
    check_tracing(&d);
    printf("\nExporter\n");
    check_exporter(&d);
    gw_finding_list findings = {0};
    if (gw_env_nccl_check(environ, gw_env_count_nics(d.root), &findings) < 0 ||
        gw_env_link_check(links, link_count, &findings) < 0) {
        gw_findings_free(&findings);
        fprintf(stderr, "gpuwhy: out of memory\n");
        return GW_EXIT_INTERNAL;
    }
    printf("\nSettings\n");
    if (findings.count == 0)
        line(&d, "ok", "NCCL and links", "no risky NCCL variable, no degraded GPU link");
    for (size_t i = 0; i < findings.count; i++) {
        const gw_finding *f = &findings.items[i];
        line(&d, "warn", f->id, "%s", f->title);
        for (size_t k = 0; k < f->evidence_count; k++)
            wrapped("- ", f->evidence[k]);
        wrapped("fix: ", f->fix);
    }
    printf("\n%d warning%s, %d failure%s\n", d.warnings, d.warnings == 1 ? "" : "s", d.failures,
           d.failures == 1 ? "" : "s");
    gw_findings_free(&findings);
    return GW_EXIT_OK;
}
