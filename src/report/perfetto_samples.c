/* Counter tracks of sampled metrics for the Perfetto export: per GPU (GPU-Util, SM activity,
 * memory used, clocks, power) and host-wide (CPU, iowait, job CPU, disk %util, PSI). Unknown
 * values (NaN) are left out of a counter event rather than drawn as 0. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "model/samples.h"
#include "report/perfetto.h"
#include "util/units.h"

typedef struct counter_event {
    FILE *out;
    int *first;
    long long pid;
    int fields;
} counter_event;

static void put_ts_us(FILE *out, int64_t ns)
{
    if (ns < 0) {
        fputc('-', out);
        ns = -ns;
    }
    fprintf(out, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

static void counter_begin(counter_event *c, const char *name, int64_t ts_ns)
{
    fputs(*c->first ? "\n" : ",\n", c->out);
    *c->first = 0;
    fprintf(c->out, "{\"ph\":\"C\",\"name\":\"%s\",\"pid\":%lld,\"tid\":0,\"ts\":", name, c->pid);
    put_ts_us(c->out, ts_ns);
    fputs(",\"args\":{", c->out);
    c->fields = 0;
}

static void counter_field(counter_event *c, const char *key, double v)
{
    if (isnan(v) || isinf(v))
        return;
    fprintf(c->out, "%s\"%s\":%.3f", c->fields ? "," : "", key, v);
    c->fields++;
}

static void counter_end(counter_event *c)
{
    fputs("}}", c->out);
}

void gw_export_perfetto_samples(FILE *out, const gw_job *job, long long pid, int *first)
{
    const gw_samples *s = job->samples;
    if (!s || s->interval_count == 0)
        return;
    /* Samples carry CLOCK_REALTIME; traces carry their own clock + offset to Unix ns. */
    int64_t offset = job->trace_count ? job->traces[0]->clock_offset_ns : 0;
    fputs(*first ? "\n" : ",\n", out);
    *first = 0;
    fprintf(out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%lld,\"tid\":0,"
                 "\"args\":{\"name\":\"sampled metrics (gpuwhy run)\"}}", pid);
    counter_event c = {out, first, pid, 0};
    char name[64];
    for (size_t i = 0; i < s->interval_count; i++) {
        const gw_host_interval *h = &s->host[i];
        int64_t ts = h->end_real_ns - offset;
        counter_begin(&c, "host CPU %", ts);
        counter_field(&c, "busy", h->cpu_busy_pct);
        counter_field(&c, "iowait", h->cpu_iowait_pct);
        counter_field(&c, "steal", h->cpu_steal_pct);
        counter_end(&c);
        counter_begin(&c, "job CPU % of one core", ts);
        counter_field(&c, "job", h->job_cpu_pct);
        counter_end(&c);
        counter_begin(&c, "PSI %", ts);
        counter_field(&c, "cpu_some", h->psi_cpu_some_pct);
        counter_field(&c, "io_some", h->psi_io_some_pct);
        counter_field(&c, "memory_some", h->psi_mem_some_pct);
        counter_end(&c);
        for (size_t g = 0; g < s->gpu_count; g++) {
            const gw_gpu_interval *gi = gw_samples_gpu(s, i, g);
            if (!gi)
                continue;
            snprintf(name, sizeof name, "GPU %zu utilisation %%", g);
            counter_begin(&c, name, ts);
            if (gi->valid & GW_GPUI_UTIL) {
                counter_field(&c, "gpu_util", gi->gpu_util_pct);
                counter_field(&c, "mem_util", gi->mem_util_pct);
            }
            if (gi->valid & GW_GPUI_GPM) {
                counter_field(&c, "sm_active", gi->sm_active_pct);
                counter_field(&c, "tensor_active", gi->tensor_active_pct);
                counter_field(&c, "dram_bw", gi->dram_bw_pct);
            }
            counter_end(&c);
            if (gi->valid & GW_GPUI_MEMORY) {
                snprintf(name, sizeof name, "GPU %zu memory used GiB", g);
                counter_begin(&c, name, ts);
                counter_field(&c, "used", gi->memory_used_bytes / GW_GIB);
                counter_end(&c);
            }
        }
        for (size_t d = 0; d < s->disk_count; d++) {
            const gw_disk_interval *di = gw_samples_disk(s, i, d);
            if (!di || !di->valid)
                continue;
            snprintf(name, sizeof name, "disk %.40s %%util", s->disk_names[d]);
            counter_begin(&c, name, ts);
            counter_field(&c, "util", di->util_pct);
            counter_end(&c);
        }
    }
}
