/* The "sampled" object of the JSON document: what the recording measured over the analysed
 * window (analyze/sampled.h), per GPU and for the host and the job. Unknown values are null
 * (the writer turns NaN into null), never 0. Presentation only. */
#include "report/json_sampled.h"

#include <math.h>

#include "analyze/sampled.h"

/* A value that may be unknown: NaN and negative sentinels become null. */
static void kmaybe(gw_json_writer *w, const char *key, double v)
{
    if (isnan(v))
        gw_jw_knull(w, key);
    else
        gw_jw_kdouble(w, key, v);
}

static void write_gpu(gw_json_writer *w, const gw_sampled_gpu *g)
{
    gw_jw_object_begin(w);
    gw_jw_kuint(w, "gpu", g->index);
    gw_jw_kstring(w, "name", g->name);
    gw_jw_kbool(w, "job_gpu", g->job_gpu);
    gw_jw_kdouble(w, "window_s", g->window_s);
    kmaybe(w, "gpu_util_mean_pct", g->util_mean_pct);
    kmaybe(w, "gpu_util_min_pct", g->util_min_pct);
    kmaybe(w, "gpu_util_max_pct", g->util_max_pct);
    kmaybe(w, "sm_active_mean_pct", g->sm_active_mean_pct);
    kmaybe(w, "sm_occupancy_mean_pct", g->sm_occupancy_mean_pct);
    kmaybe(w, "dram_bw_mean_pct", g->dram_bw_mean_pct);
    kmaybe(w, "memory_used_max_bytes", g->memory_used_max_bytes);
    kmaybe(w, "memory_total_bytes", g->memory_total_bytes > 0 ? g->memory_total_bytes : NAN);
    gw_jw_kdouble(w, "busy_s", g->busy_s);
    gw_jw_kdouble(w, "throttled_s", g->throttled_s);
    gw_jw_kuint(w, "throttle_reasons", g->throttle_reasons);
    kmaybe(w, "temperature_max_c", g->temperature_max_c);
    kmaybe(w, "power_mean_w", g->power_mean_w);
    gw_jw_kuint(w, "xid_count", g->xid_count);
    gw_jw_kuint(w, "error_event_count", g->error_event_count);
    gw_jw_kbool(w, "lost", g->lost);
    if (g->numa_node >= 0)
        gw_jw_kint(w, "numa_node", g->numa_node);
    else
        gw_jw_knull(w, "numa_node");
    gw_jw_key(w, "foreign_pids");
    gw_jw_array_begin(w);
    for (size_t i = 0; i < g->foreign_pid_count && i < 4; i++)
        gw_jw_int(w, g->foreign_pids[i]);
    gw_jw_array_end(w);
    gw_jw_object_end(w);
}

void gw_json_write_sampled(gw_json_writer *w, const gw_analysis *a)
{
    const gw_sample_stats *st = a->sampled;
    gw_jw_key(w, "sampled");
    if (!st) {
        gw_jw_null(w);
        return;
    }
    gw_jw_object_begin(w);
    gw_jw_key(w, "window");
    gw_jw_object_begin(w);
    gw_jw_kint(w, "start_unix_ns", st->start_real_ns);
    gw_jw_kint(w, "end_unix_ns", st->end_real_ns);
    gw_jw_kdouble(w, "duration_s", st->window_s);
    gw_jw_kuint(w, "first_interval", st->first_interval);
    gw_jw_kuint(w, "end_interval", st->end_interval);
    gw_jw_kbool(w, "from_trace", st->from_trace);
    gw_jw_kbool(w, "trace_outside", st->trace_outside);
    gw_jw_kstring(w, "description", st->window_description);
    gw_jw_object_end(w);
    gw_jw_kbool(w, "job_gpus_known", st->job_gpus_known);
    gw_jw_key(w, "gpus");
    gw_jw_array_begin(w);
    for (size_t g = 0; g < st->gpu_count; g++)
        write_gpu(w, &st->gpus[g]);
    gw_jw_array_end(w);
    gw_jw_key(w, "host");
    gw_jw_object_begin(w);
    gw_jw_kint(w, "cpu_count", st->cpu_count);
    kmaybe(w, "cpu_busy_mean_pct", st->cpu_busy_mean_pct);
    kmaybe(w, "cpu_iowait_mean_pct", st->cpu_iowait_mean_pct);
    kmaybe(w, "cpu_steal_mean_pct", st->cpu_steal_mean_pct);
    kmaybe(w, "foreign_cpu_mean_cores", st->foreign_cpu_mean_cores);
    kmaybe(w, "mem_available_min_kb", st->mem_available_min_kb);
    kmaybe(w, "mem_total_kb", st->mem_total_kb);
    gw_jw_kdouble(w, "swap_in_pages", st->swap_in_pages);
    kmaybe(w, "psi_memory_some_mean_pct", st->psi_mem_some_mean_pct);
    gw_jw_key(w, "foreign_top");
    gw_jw_array_begin(w);
    for (size_t i = 0; i < st->foreign_top_count; i++) {
        gw_jw_object_begin(w);
        gw_jw_kstring(w, "comm", st->foreign_top[i].comm);
        gw_jw_kint(w, "pid", st->foreign_top[i].pid);
        gw_jw_kdouble(w, "cpu_s", st->foreign_top[i].cpu_core_s);
        gw_jw_object_end(w);
    }
    gw_jw_array_end(w);
    gw_jw_object_end(w);
    gw_jw_key(w, "job");
    gw_jw_object_begin(w);
    gw_jw_kint(w, "main_pid", st->main_pid);
    gw_jw_kstring(w, "main_comm", st->main_comm);
    kmaybe(w, "main_cpu_mean_pct", st->main_cpu_mean_pct);
    kmaybe(w, "cpu_mean_pct", st->job_cpu_mean_pct);
    kmaybe(w, "runqueue_wait_mean_pct", st->job_runqueue_wait_mean_pct);
    gw_jw_kuint(w, "worker_count", st->worker_count);
    kmaybe(w, "worker_cpu_mean_pct", st->worker_cpu_mean_pct);
    gw_jw_kdouble(w, "d_state_s", st->d_state_s);
    gw_jw_object_end(w);
    gw_jw_key(w, "disk");
    if (st->disk < 0) {
        gw_jw_null(w);
    } else {
        gw_jw_object_begin(w);
        gw_jw_kstring(w, "name", st->samples->disk_names[st->disk]);
        gw_jw_kbool(w, "holds_job_files", st->disk_fs != NULL);
        gw_jw_kdouble(w, "util_mean_pct", st->disk_util_mean_pct);
        gw_jw_kdouble(w, "saturated_s", st->disk_saturated_s);
        kmaybe(w, "await_mean_ms", st->disk_await_mean_ms);
        kmaybe(w, "aqu_sz_mean", st->disk_aqu_mean);
        kmaybe(w, "read_kb_per_s_mean", st->disk_rkb_per_s_mean);
        gw_jw_object_end(w);
    }
    gw_jw_object_end(w);
}
