/* The gpuwhy.diagnosis/1 JSON document (every field documented in docs/json-schema.md).
 * Shares are fractions of the quantity named in the schema, times are seconds unless a name
 * ends in _ns or _us; unknown values are null, never a made-up 0. */
#include "report/render.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report/json_comm.h"
#include "diagnose/rules.h"
#include "report/json_critical.h"
#include "report/json_sampled.h"
#include "report/json_writer.h"
#include "model/classify.h"

static double ratio(double part, double whole)
{
    return whole > 0 ? part / whole : NAN;
}

/* null for the "unknown" encodings of the analysis (negative, NaN) */
static void kdouble_known(gw_json_writer *w, const char *key, double v)
{
    if (isfinite(v) && v >= 0)
        gw_jw_kdouble(w, key, v);
    else
        gw_jw_knull(w, key);
}

static const char *copy_dir_id(int dir)
{
    static const char *const ids[GW_COPY_DIR_COUNT] = {"unknown", "htod", "dtoh", "dtod", "htoh", "ptop"};
    return dir >= 0 && dir < GW_COPY_DIR_COUNT ? ids[dir] : "unknown";
}

static void write_window(gw_json_writer *w, const gw_window *win)
{
    gw_jw_object_begin(w);
    gw_jw_kint(w, "start_ns", win->start_ns);
    gw_jw_kint(w, "end_ns", win->end_ns);
    gw_jw_kdouble(w, "duration_s", (double)(win->end_ns - win->start_ns) / 1e9);
    gw_jw_kuint(w, "steps", win->steps);
    gw_jw_kuint(w, "steady_steps", win->steady_steps);
    gw_jw_kuint(w, "warmup_steps_skipped", win->warmup_steps_skipped);
    if (win->steady_steps > 0) {
        gw_jw_kint(w, "first_step", win->first_step_number);
        gw_jw_kint(w, "last_step", win->last_step_number);
    } else {
        gw_jw_knull(w, "first_step");
        gw_jw_knull(w, "last_step");
    }
    gw_jw_kbool(w, "whole_window", win->whole_window);
    static const char *const spans[] = {"steps", "profiler", "events", "loader_iterations"};
    gw_jw_kstring(w, "span", (unsigned)win->span <= GW_SPAN_LOADER ? spans[win->span] : "steps");
    gw_jw_kint(w, "trimmed_head_ns", win->trimmed_head_ns);
    gw_jw_kint(w, "trimmed_tail_ns", win->trimmed_tail_ns);
    gw_jw_kbool(w, "too_short", win->too_short);
    gw_jw_kdouble(w, "gpu_work_s", win->busy_s);
    gw_jw_kstring(w, "description", win->description);
    gw_jw_object_end(w);
}

static void write_inputs(gw_json_writer *w, const gw_analysis *a)
{
    gw_jw_key(w, "inputs");
    gw_jw_array_begin(w);
    for (size_t i = 0; a->inputs && i < a->rank_count; i++) {
        const gw_input_info *t = &a->inputs[i];
        gw_jw_object_begin(w);
        gw_jw_kstring(w, "path", t->path);
        gw_jw_kstring(w, "format", t->format);
        gw_jw_kint(w, "rank", t->rank);
        gw_jw_kbool(w, "rank_from_file", t->rank_from_file);
        if (t->world_size > 0)
            gw_jw_kint(w, "world_size", t->world_size);
        else
            gw_jw_knull(w, "world_size");
        gw_jw_kstring(w, "summary", t->summary[0] ? t->summary : NULL);
        gw_jw_key(w, "notes");
        gw_jw_array_begin(w);
        for (size_t k = 0; k < t->note_count; k++)
            gw_jw_string(w, t->notes[k].text);
        gw_jw_array_end(w);
        gw_jw_object_end(w);
    }
    gw_jw_array_end(w);
}

/* The host thread that issued most of the device's work, as the trace names it. */
static void write_feeder(gw_json_writer *w, const gw_analysis *a, size_t device_row)
{
    const gw_thread_label *th = a->feeders ? &a->feeders[device_row] : NULL;
    gw_jw_key(w, "feeder_thread");
    if (!th || !th->known) {
        gw_jw_null(w);
        return;
    }
    gw_jw_object_begin(w);
    gw_jw_kint(w, "pid", th->pid);
    gw_jw_kint(w, "tid", th->tid);
    gw_jw_kstring(w, "name", th->name[0] ? th->name : NULL);
    gw_jw_object_end(w);
}

static void write_host_op_rows(gw_json_writer *w, const char *key, const gw_host_op_row *rows, size_t n)
{
    gw_jw_key(w, key);
    gw_jw_array_begin(w);
    for (size_t i = 0; i < n && i < GW_TOP_HOST_OPS; i++) {
        gw_jw_object_begin(w);
        gw_jw_kstring(w, "name", rows[i].name);
        gw_jw_kstring(w, "kind", rows[i].kind == GW_HOST_PYTHON ? "python" :
                                 rows[i].kind == GW_HOST_ANNOTATION ? "annotation" : "op");
        gw_jw_kuint(w, "calls", rows[i].calls);
        gw_jw_kdouble(w, "idle_s", rows[i].idle_s);
        gw_jw_object_end(w);
    }
    gw_jw_array_end(w);
}

static const char *view_name(int v)
{
    return v == GW_VIEW_DISPATCH ? "dispatch" : "own_work";
}

static void write_host_ops(gw_json_writer *w, const gw_host_ops *v)
{
    gw_jw_object_begin(w);
    gw_jw_kdouble(w, "idle_s", v->idle_s);
    write_host_op_rows(w, "ops", v->ops, v->op_count);
    write_host_op_rows(w, "python_frames", v->frames, v->frame_count);
    gw_jw_object_end(w);
}

static void write_gaps(gw_json_writer *w, const gw_gap_summary *g, const gw_thresholds *th)
{
    if (!g->known) {
        gw_jw_null(w);
        return;
    }
    gw_jw_object_begin(w);
    gw_jw_kdouble(w, "noise_us", th->v[GW_T_GAP_NOISE_US]);
    gw_jw_kdouble(w, "long_ms", th->v[GW_T_NSYS_GAP_MS]);
    gw_jw_kuint(w, "noise_count", g->noise_count);
    gw_jw_kdouble(w, "noise_s", g->noise_s);
    gw_jw_kuint(w, "mid_count", g->mid_count);
    gw_jw_kdouble(w, "mid_s", g->mid_s);
    gw_jw_kdouble(w, "mid_max_s", g->mid_max_s);
    gw_jw_kuint(w, "long_count", g->long_count);
    gw_jw_kdouble(w, "long_s", g->long_s);
    gw_jw_kdouble(w, "long_max_s", g->long_max_s);
    gw_jw_kdouble(w, "long_max_start_s", g->long_max_start_s);
    gw_jw_kdouble(w, "edge_s", g->edge_s);
    gw_jw_kdouble(w, "compile_gap_s", g->compile_gap_s);
    gw_jw_kuint(w, "chunks", g->chunks);
    gw_jw_kuint(w, "low_chunks", g->low_chunks);
    gw_jw_kuint(w, "low_chunks_in_window", g->low_chunks_in_window);
    gw_jw_object_end(w);
}

static void write_devices(gw_json_writer *w, const gw_analysis *a)
{
    gw_jw_key(w, "devices");
    gw_jw_array_begin(w);
    for (size_t i = 0; i < a->device_count; i++) {
        const gw_device_stats *d = &a->devices[i];
        gw_jw_object_begin(w);
        gw_jw_kint(w, "rank", d->rank);
        gw_jw_kint(w, "id", d->device);
        gw_jw_kstring(w, "name", d->name);
        gw_jw_kdouble(w, "window_s", d->window_s);
        gw_jw_kdouble(w, "busy", ratio(d->busy_s, d->window_s));
        gw_jw_kdouble(w, "idle", ratio(d->idle_s, d->window_s));
        gw_jw_kdouble(w, "compute", ratio(d->compute_s, d->window_s));
        gw_jw_kdouble(w, "comm", ratio(d->comm_s, d->window_s));
        gw_jw_kdouble(w, "copy", ratio(d->copy_s, d->window_s));
        gw_jw_kdouble(w, "set", ratio(d->set_s, d->window_s));
        gw_jw_kdouble(w, "comm_exposed", ratio(d->comm_exposed_s, d->window_s));
        gw_jw_kdouble(w, "comm_total", ratio(d->comm_total_s, d->window_s));
        gw_jw_kdouble(w, "busy_s", d->busy_s);
        gw_jw_kdouble(w, "idle_s", d->idle_s);
        gw_jw_kuint(w, "kernel_count", d->kernel_count);
        gw_jw_kuint(w, "copy_count", d->copy_count);
        gw_jw_kuint(w, "set_count", d->set_count);
        kdouble_known(w, "peak_reserved_bytes", d->peak_reserved_bytes);
        kdouble_known(w, "peak_allocated_bytes", d->peak_allocated_bytes);
        if (d->total_mem_bytes > 0)
            gw_jw_kdouble(w, "total_mem_bytes", d->total_mem_bytes);
        else
            gw_jw_knull(w, "total_mem_bytes");
        write_feeder(w, a, i);
        gw_jw_kuint(w, "feeder_thread_count", d->feeder_thread_count);
        gw_jw_kdouble(w, "dispatch_api_s", d->dispatch_api_s);
        gw_jw_key(w, "dispatch_calls");
        gw_jw_array_begin(w);
        for (size_t c = 0; c < d->dispatch_call_count; c++) {
            gw_jw_object_begin(w);
            gw_jw_kstring(w, "name", d->dispatch_calls[c].name);
            gw_jw_kstring(w, "api_class", gw_api_class_name((gw_api_class)d->dispatch_calls[c].api_class));
            gw_jw_kuint(w, "calls", d->dispatch_calls[c].calls);
            gw_jw_kdouble(w, "seconds", d->dispatch_calls[c].seconds);
            gw_jw_object_end(w);
        }
        gw_jw_array_end(w);
        gw_jw_key(w, "unknown_os_calls");
        gw_jw_array_begin(w);
        for (size_t c = 0; c < d->unknown_os_call_count; c++) {
            gw_jw_object_begin(w);
            gw_jw_kstring(w, "name", d->unknown_os_calls[c].name);
            gw_jw_kdouble(w, "seconds", d->unknown_os_calls[c].seconds);
            gw_jw_object_end(w);
        }
        gw_jw_array_end(w);
        gw_jw_kdouble(w, "own_cpu_op_s", d->own_cpu_op_s);
        gw_jw_kdouble(w, "own_other_threads_s", d->own_other_threads_s);
        gw_jw_kdouble(w, "own_offcpu_s", d->own_offcpu_s);
        gw_jw_kdouble(w, "own_mpi_s", d->own_mpi_s);
        gw_jw_kuint(w, "mpi_count", d->mpi_count);
        gw_jw_kstring(w, "mpi_top", d->mpi_top);
        gw_jw_kdouble(w, "own_jit_s", d->own_jit_s);
        gw_jw_kuint(w, "jit_loads", d->jit_loads);
        gw_jw_kstring(w, "jit_load", d->jit_load);
        gw_jw_kdouble(w, "own_stall_s", d->own_stall_s);
        gw_jw_kdouble(w, "dispatch_stall_s", d->dispatch_stall_s);
        gw_jw_kuint(w, "stall_count", d->stall_count);
        gw_jw_kstring(w, "stall_longest", d->stall_longest);
        gw_jw_kdouble(w, "stall_longest_s", d->stall_longest_s);
        gw_jw_kdouble(w, "unknown_queued_s", d->unknown_queued_s);
        gw_jw_kdouble(w, "queued_open_s", d->queued_open_s);
        gw_jw_key(w, "host_ops");
        gw_jw_object_begin(w);
        for (int v = 0; v < GW_HOST_VIEW_COUNT; v++) {
            gw_jw_key(w, view_name(v));
            write_host_ops(w, &d->host_ops[v]);
        }
        gw_jw_object_end(w);
        gw_jw_key(w, "gaps");
        write_gaps(w, &d->gaps, &a->thresholds);
        gw_jw_key(w, "capture_gaps");
        write_gaps(w, &d->capture_gaps, &a->thresholds);
        gw_jw_object_end(w);
    }
    gw_jw_array_end(w);
}

static void write_idle_attribution(gw_json_writer *w, const gw_analysis *a)
{
    gw_jw_key(w, "idle_attribution");
    gw_jw_array_begin(w);
    for (size_t i = 0; i < a->device_count; i++) {
        const gw_device_stats *d = &a->devices[i];
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
            gw_jw_object_begin(w);
            gw_jw_kint(w, "rank", d->rank);
            gw_jw_kint(w, "device", d->device);
            gw_jw_kstring(w, "cause", gw_idle_cause_name((gw_idle_cause)c));
            gw_jw_kstring(w, "title", gw_idle_cause_title((gw_idle_cause)c));
            gw_jw_kdouble(w, "seconds", d->idle_by_cause_s[c]);
            gw_jw_kdouble(w, "share", d->idle_s > 0 ? d->idle_by_cause_s[c] / d->idle_s : 0.0);
            gw_jw_kdouble(w, "window_share", ratio(d->idle_by_cause_s[c], d->window_s));
            gw_jw_kstring(w, "finding", gw_idle_cause_finding((gw_idle_cause)c));
            gw_jw_object_end(w);
        }
    }
    gw_jw_array_end(w);
}

static void write_steps(gw_json_writer *w, const gw_analysis *a)
{
    gw_jw_key(w, "steps");
    gw_jw_array_begin(w);
    for (size_t i = 0; i < a->step_count; i++) {
        const gw_step_stats *s = &a->steps[i];
        gw_jw_object_begin(w);
        gw_jw_kint(w, "rank", s->rank);
        gw_jw_kint(w, "device", s->device);
        gw_jw_kint(w, "number", s->number);
        gw_jw_kbool(w, "steady", s->steady);
        gw_jw_kdouble(w, "duration_s", s->duration_s);
        gw_jw_kdouble(w, "busy", ratio(s->busy_s, s->duration_s));
        gw_jw_kdouble(w, "busy_s", s->busy_s);
        gw_jw_key(w, "idle");
        gw_jw_object_begin(w);
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            gw_jw_kdouble(w, gw_idle_cause_name((gw_idle_cause)c), s->idle_by_cause_s[c]);
        gw_jw_object_end(w);
        gw_jw_kdouble(w, "dataloader_s", s->dataloader_s);
        gw_jw_kuint(w, "sync_calls", s->sync_calls);
        gw_jw_kuint(w, "alloc_calls", s->alloc_calls);
        gw_jw_kuint(w, "kernels", s->kernels);
        int modelled = 0;
        for (size_t r = 0; r < a->rank_count; r++)
            if (a->ranks[r].rank == s->rank)
                modelled = a->ranks[r].critical_path.modelled;
        gw_json_write_step_path(w, s, modelled);
        gw_jw_object_end(w);
    }
    gw_jw_array_end(w);
}

static void write_kernels(gw_json_writer *w, const gw_kernel_stats *k)
{
    gw_jw_object_begin(w);
    gw_jw_kuint(w, "count", k->count);
    gw_jw_kdouble(w, "total_s", k->total_s);
    gw_jw_kdouble(w, "median_us", k->median_us);
    gw_jw_kdouble(w, "share_under_5us", k->share_under_5us);
    gw_jw_kdouble(w, "median_gap_us", k->median_gap_us);
    gw_jw_kdouble(w, "gemm_s", k->gemm_s);
    gw_jw_kdouble(w, "gemm_tensor_core_s", k->gemm_tensor_core_s);
    gw_jw_kdouble(w, "fp32_gemm_share", k->fp32_gemm_share);
    kdouble_known(w, "blocks_per_sm", k->blocks_per_sm_weighted);
    kdouble_known(w, "occupancy_pct", k->occupancy_weighted_pct);
    kdouble_known(w, "sm_fill", k->sm_fill_weighted);
    if (k->sm_fill_weighted >= 0)
        gw_jw_kdouble(w, "sm_tail_lost", k->sm_tail_lost);
    kdouble_known(w, "sm_fill_concurrent", k->sm_fill_concurrent > 0 ? k->sm_fill_concurrent : -1);
    gw_jw_kdouble(w, "sub_warp_s", k->sub_warp_s);
    gw_jw_kuint(w, "sub_warp_threads", k->sub_warp_threads);
    gw_jw_key(w, "comm_by_collective");
    gw_jw_object_begin(w);
    for (int c = 0; c < GW_COLL_COUNT; c++)
        gw_jw_kdouble(w, gw_collective_name((gw_collective)c), k->comm_type_s[c]);
    gw_jw_object_end(w);
    gw_jw_kdouble(w, "memset_s", k->memset_s);
    gw_jw_kdouble(w, "memset_share", k->memset_share);
    gw_jw_kuint(w, "memset_count", k->memset_count);
    gw_jw_kuint(w, "zero_grad_memset_count", k->zero_grad_memset_count);
    gw_jw_kdouble(w, "zero_grad_memset_s", k->zero_grad_memset_s);
    gw_jw_kuint(w, "zero_fill_kernels", k->zero_fill_kernels);
    gw_jw_kdouble(w, "zero_fill_s", k->zero_fill_s);
    gw_jw_key(w, "top");
    gw_jw_array_begin(w);
    size_t n = k->top_count < GW_TOP_KERNELS ? k->top_count : GW_TOP_KERNELS;
    for (size_t i = 0; i < n; i++) {
        const gw_kernel_row *r = &k->top[i];
        gw_jw_object_begin(w);
        gw_jw_kstring(w, "name", r->name);
        gw_jw_kuint(w, "count", r->count);
        gw_jw_kdouble(w, "total_s", r->total_s);
        gw_jw_kdouble(w, "share", r->share);
        gw_jw_kdouble(w, "mean_us", r->mean_us);
        gw_jw_kdouble(w, "median_us", r->median_us);
        gw_jw_kdouble(w, "min_us", r->min_us);
        gw_jw_kdouble(w, "max_us", r->max_us);
        gw_jw_kbool(w, "tensor_core", r->tensor_core);
        gw_jw_kbool(w, "comm", r->comm);
        kdouble_known(w, "sm_fill", r->sm_fill);
        kdouble_known(w, "blocks_per_sm", r->blocks_per_sm);
        gw_jw_object_end(w);
    }
    gw_jw_array_end(w);
    gw_jw_key(w, "histogram");
    gw_jw_object_begin(w);
    size_t bins = k->hist_bins <= 32 ? k->hist_bins : 32;
    gw_jw_key(w, "edges_us");
    gw_jw_array_begin(w);
    for (size_t i = 0; bins && i <= bins; i++)
        gw_jw_double(w, k->hist_edges_us[i]);
    gw_jw_array_end(w);
    gw_jw_key(w, "counts");
    gw_jw_array_begin(w);
    for (size_t i = 0; i < bins; i++)
        gw_jw_uint(w, k->hist_counts[i]);
    gw_jw_array_end(w);
    gw_jw_object_end(w);
    gw_jw_object_end(w);
}

static void write_copies(gw_json_writer *w, const gw_copy_stats *c)
{
    gw_jw_object_begin(w);
    gw_jw_key(w, "directions");
    gw_jw_array_begin(w);
    for (int dir = 0; dir < GW_COPY_DIR_COUNT; dir++) {
        if (c->count[dir] == 0)
            continue;
        gw_jw_object_begin(w);
        gw_jw_kstring(w, "direction", copy_dir_id(dir));
        gw_jw_kuint(w, "count", c->count[dir]);
        gw_jw_kdouble(w, "bytes", c->bytes[dir]);
        gw_jw_kdouble(w, "seconds", c->seconds[dir]);
        gw_jw_kdouble(w, "gbps", c->gbps[dir]);
        gw_jw_kuint(w, "pageable_count", c->pageable_count[dir]);
        gw_jw_kdouble(w, "pageable_bytes", c->pageable_bytes[dir]);
        gw_jw_kuint(w, "unified_count", c->unified_count[dir]);
        gw_jw_kdouble(w, "unified_bytes", c->unified_bytes[dir]);
        gw_jw_kuint(w, "fault_count", c->fault_count[dir]);
        gw_jw_kdouble(w, "fault_bytes", c->fault_bytes[dir]);
        gw_jw_kuint(w, "plain_count", c->plain_count[dir]);
        gw_jw_kdouble(w, "plain_bytes", c->plain_bytes[dir]);
        gw_jw_kdouble(w, "plain_s", c->plain_s[dir]);
        gw_jw_kdouble(w, "exposed_s", c->exposed_s[dir]);
        gw_jw_object_end(w);
    }
    gw_jw_array_end(w);
    gw_jw_kuint(w, "pageable_via_driver", c->pageable_via_driver);
    gw_jw_kdouble(w, "pageable_share_bytes", c->pageable_share_bytes);
    gw_jw_kdouble(w, "pageable_per_step", c->pageable_per_step);
    gw_jw_kdouble(w, "fault_gpu_s", c->fault_gpu_s);
    gw_jw_kdouble(w, "fault_kernel_s", c->fault_kernel_s);
    gw_jw_kdouble(w, "exposed_s", c->exposed_all_s);
    gw_jw_kdouble(w, "hideable_s", c->hideable_s);
    gw_jw_kdouble(w, "union_s", c->union_s);
    gw_jw_kuint(w, "small_count", c->small_count);
    gw_jw_kdouble(w, "small_s", c->small_s);
    gw_jw_kuint(w, "repeat_sizes", c->repeat_sizes);
    gw_jw_kuint(w, "repeat_count", c->repeat_count);
    gw_jw_kdouble(w, "repeat_bytes", c->repeat_bytes);
    gw_jw_kdouble(w, "repeat_s", c->repeat_s);
    gw_jw_kdouble(w, "repeat_mirrored_bytes", c->repeat_mirrored_bytes);
    gw_jw_kstring(w, "source", c->source);
    gw_jw_kdouble(w, "source_s", c->source_s);
    gw_jw_object_end(w);
}

static void write_syncs(gw_json_writer *w, const gw_sync_stats *s)
{
    gw_jw_object_begin(w);
    gw_jw_kuint(w, "count", s->count);
    gw_jw_kuint(w, "via_driver", s->via_driver);
    gw_jw_kdouble(w, "wait_s", s->wait_s);
    gw_jw_kdouble(w, "per_step", s->per_step);
    gw_jw_kdouble(w, "wait_share", s->wait_share_of_step);
    gw_jw_kuint(w, "copy_count", s->copy_count);
    gw_jw_kdouble(w, "copy_wait_s", s->copy_wait_s);
    gw_jw_kdouble(w, "copy_wait_to_device_s", s->copy_wait_to_device_s);
    gw_jw_kdouble(w, "copy_wait_to_host_s", s->copy_wait_to_host_s);
    gw_jw_kdouble(w, "copy_wait_queued_s", s->copy_wait_queued_s);
    gw_jw_kuint(w, "small_read_count", s->small_read_count);
    gw_jw_kdouble(w, "small_read_wait_s", s->small_read_wait_s);
    gw_jw_kuint(w, "outside_window", s->outside_window);
    gw_jw_kuint(w, "sync_copy_calls", s->sync_copy_calls);
    gw_jw_kuint(w, "sync_memset_calls", s->sync_memset_calls);
    gw_jw_kbool(w, "closing_sync", s->closing_sync);
    gw_jw_kdouble(w, "closing_sync_wait_s", s->closing_sync_wait_s);
    gw_jw_key(w, "sources");
    gw_jw_array_begin(w);
    size_t n = s->source_count < GW_TOP_SYNC_SOURCES ? s->source_count : GW_TOP_SYNC_SOURCES;
    for (size_t i = 0; i < n; i++) {
        const gw_sync_source *src = &s->sources[i];
        gw_jw_object_begin(w);
        gw_jw_kstring(w, "op", src->op);
        gw_jw_kstring(w, "api", src->api);
        if (src->stack[0])
            gw_jw_kstring(w, "stack", src->stack);
        else
            gw_jw_knull(w, "stack");
        gw_jw_kuint(w, "count", src->count);
        gw_jw_kdouble(w, "wait_s", src->wait_s);
        gw_jw_object_end(w);
    }
    gw_jw_array_end(w);
    gw_jw_object_end(w);
}

static void write_memory(gw_json_writer *w, const gw_memory_stats *m)
{
    int known = m->allocator_events > 0;
    gw_jw_object_begin(w);
    if (known) {
        kdouble_known(w, "peak_reserved_bytes", m->peak_reserved_bytes);
        kdouble_known(w, "peak_allocated_bytes", m->peak_allocated_bytes);
    } else {
        gw_jw_knull(w, "peak_reserved_bytes");
        gw_jw_knull(w, "peak_allocated_bytes");
    }
    if (m->total_mem_bytes > 0)
        gw_jw_kdouble(w, "total_mem_bytes", m->total_mem_bytes);
    else
        gw_jw_knull(w, "total_mem_bytes");
    if (known)
        kdouble_known(w, "peak_reserved_share", m->peak_reserved_share);
    else
        gw_jw_knull(w, "peak_reserved_share");
    gw_jw_kuint(w, "alloc_calls", m->alloc_calls);
    gw_jw_kuint(w, "free_calls", m->free_calls);
    gw_jw_kdouble(w, "alloc_wait_s", m->alloc_wait_s);
    gw_jw_kdouble(w, "alloc_startup_s", m->alloc_startup_s);
    gw_jw_kdouble(w, "alloc_calls_per_step", m->alloc_calls_per_step);
    gw_jw_kdouble(w, "longest_call_s", m->longest_call_s);
    gw_jw_kdouble(w, "pinned_alloc_s", m->pinned_alloc_s);
    gw_jw_kuint(w, "pinned_alloc_calls", m->pinned_alloc_calls);
    gw_jw_kbool(w, "longest_is_first_call", m->longest_is_first_call);
    gw_jw_kuint(w, "allocator_events", m->allocator_events);
    gw_jw_object_end(w);
}

static void write_rank(gw_json_writer *w, const gw_rank_stats *r)
{
    gw_jw_object_begin(w);
    gw_jw_kint(w, "rank", r->rank);
    gw_jw_kuint(w, "input", r->trace_index);
    gw_jw_kbool(w, "has_gpu_data", r->has_gpu_data);
    gw_jw_key(w, "window");
    write_window(w, &r->window);
    gw_jw_kdouble(w, "step_median_s", r->step_median_s);
    gw_jw_kdouble(w, "step_p90_s", r->step_p90_s);
    if (r->has_gpu_data)
        gw_jw_kdouble(w, "busy", r->busy_share);
    else
        gw_jw_knull(w, "busy");
    gw_jw_kdouble(w, "compute_s", r->compute_s);
    gw_jw_kdouble(w, "comm_s", r->comm_s);
    gw_jw_kdouble(w, "dataloader_s", r->dataloader_s);
    gw_jw_kdouble(w, "dataloader_share", r->dataloader_share);
    gw_jw_kbool(w, "single_process_loader", r->single_process_loader);
    gw_jw_key(w, "kernels");
    write_kernels(w, &r->kernels);
    gw_jw_key(w, "copies");
    write_copies(w, &r->copies);
    gw_jw_key(w, "syncs");
    write_syncs(w, &r->syncs);
    gw_jw_key(w, "memory");
    write_memory(w, &r->memory);
    gw_json_write_rank_path(w, &r->critical_path);
    gw_jw_object_end(w);
}

/* "pipe.no_workers,x.y" -> ["pipe.no_workers", "x.y"] */
static void write_includes(gw_json_writer *w, const char *ids)
{
    gw_jw_key(w, "includes");
    gw_jw_array_begin(w);
    for (const char *p = ids; *p;) {
        size_t n = strcspn(p, ",");
        char id[96];
        snprintf(id, sizeof id, "%.*s", (int)(n < sizeof id ? n : sizeof id - 1), p);
        if (id[0])
            gw_jw_string(w, id);
        p += n;
        while (*p == ',' || *p == ' ')
            p++;
    }
    gw_jw_array_end(w);
}

static void write_finding_host_ops(gw_json_writer *w, const gw_analysis *a, const gw_finding *f)
{
    gw_jw_key(w, "host_ops");
    const gw_device_stats *d = NULL;
    for (size_t i = 0; f->host_view >= 0 && f->host_view < GW_HOST_VIEW_COUNT && i < a->device_count && !d; i++)
        if (a->devices[i].device == f->view_device && (f->rank < 0 || a->devices[i].rank == f->rank))
            d = &a->devices[i];
    if (!d) {
        gw_jw_null(w);
        return;
    }
    gw_jw_object_begin(w);
    gw_jw_kstring(w, "view", view_name(f->host_view));
    gw_jw_kint(w, "rank", d->rank);
    gw_jw_kint(w, "device", d->device);
    gw_jw_kdouble(w, "idle_s", d->host_ops[f->host_view].idle_s);
    write_host_op_rows(w, "ops", d->host_ops[f->host_view].ops, d->host_ops[f->host_view].op_count);
    write_host_op_rows(w, "python_frames", d->host_ops[f->host_view].frames,
                       d->host_ops[f->host_view].frame_count);
    gw_jw_object_end(w);
}

static void write_utilisation(gw_json_writer *w, const gw_analysis *a)
{
    const gw_utilisation *u = &a->util;
    gw_jw_key(w, "utilisation");
    gw_jw_object_begin(w);
    gw_jw_kstring(w, "state", gw_util_state_name(u->state));
    gw_jw_kuint(w, "gpus", u->gpus);
    if (u->gpus > 0) {
        gw_jw_kdouble(w, "busy_min", u->busy_min);
        gw_jw_kdouble(w, "busy_max", u->busy_max);
        gw_jw_kdouble(w, "busy_mean", u->busy_mean);
        gw_jw_kdouble(w, "idle", u->idle_share);
        gw_jw_kdouble(w, "unexplained", u->unexplained_share);
        gw_jw_kdouble(w, "copy_share", u->copy_share);
    } else {
        gw_jw_knull(w, "busy_min");
        gw_jw_knull(w, "busy_max");
        gw_jw_knull(w, "busy_mean");
        gw_jw_knull(w, "idle");
        gw_jw_knull(w, "unexplained");
        gw_jw_knull(w, "copy_share");
    }
    gw_jw_kdouble(w, "window_s", u->window_s);
    gw_jw_kdouble(w, "gpu_work_s", u->gpu_work_s);
    gw_jw_kbool(w, "too_short", u->too_short);
    gw_jw_key(w, "nsys_view");
    write_gaps(w, &u->capture_gaps, &a->thresholds);
    gw_jw_object_end(w);
}

static void write_findings(gw_json_writer *w, const gw_analysis *a)
{
    gw_jw_key(w, "findings");
    gw_jw_array_begin(w);
    for (size_t i = 0; i < a->findings.count; i++) {
        const gw_finding *f = &a->findings.items[i];
        gw_jw_object_begin(w);
        gw_jw_kstring(w, "id", f->id);
        gw_jw_kstring(w, "severity", gw_severity_name(f->severity));
        /* clamp: the schema promises 0..1 whatever a rule computed */
        double share = f->share;
        if (!(share >= 0))
            share = 0;
        if (share > 1)
            share = 1;
        gw_jw_kdouble(w, "share", share);
        gw_jw_kdouble(w, "explained_s", f->explained_s);
        gw_jw_kstring(w, "title", f->title);
        gw_jw_key(w, "evidence");
        gw_jw_array_begin(w);
        for (size_t k = 0; k < f->evidence_count && k < GW_MAX_EVIDENCE; k++)
            gw_jw_string(w, f->evidence[k]);
        gw_jw_array_end(w);
        gw_jw_kstring(w, "fix", f->fix);
        gw_jw_kstring(w, "gain", f->gain);
        gw_jw_kdouble(w, "confidence", f->confidence);
        gw_jw_key(w, "basis");
        gw_jw_array_begin(w);
        if (f->basis & GW_BASIS_TRACE)
            gw_jw_string(w, "trace");
        if (f->basis & GW_BASIS_SAMPLES)
            gw_jw_string(w, "samples");
        if (f->basis & GW_BASIS_ENV)
            gw_jw_string(w, "environment");
        gw_jw_array_end(w);
        if (f->rank >= 0)
            gw_jw_kint(w, "rank", f->rank);
        else
            gw_jw_knull(w, "rank");
        if (f->device >= 0)
            gw_jw_kint(w, "device", f->device);
        else
            gw_jw_knull(w, "device");
        if (f->range_start_ns != 0 || f->range_end_ns != 0) {
            gw_jw_key(w, "range_ns");
            gw_jw_array_begin(w);
            gw_jw_int(w, f->range_start_ns);
            gw_jw_int(w, f->range_end_ns);
            gw_jw_array_end(w);
        } else {
            gw_jw_knull(w, "range_ns");
        }
        if (f->note[0])
            gw_jw_kstring(w, "note", f->note);
        else
            gw_jw_knull(w, "note");
        if (f->cause[0])
            gw_jw_kstring(w, "cause", f->cause);
        else
            gw_jw_knull(w, "cause");
        write_includes(w, f->includes);
        write_finding_host_ops(w, a, f);
        gw_json_write_what_if(w, &f->what_if);
        gw_jw_object_end(w);
    }
    gw_jw_array_end(w);
}

static void write_thresholds(gw_json_writer *w, const gw_analysis *a)
{
    const gw_threshold_info *table = gw_threshold_table();
    gw_jw_key(w, "thresholds");
    gw_jw_object_begin(w);
    for (int i = 0; table && i < GW_T_COUNT; i++)
        if (table[i].name)
            gw_jw_kdouble(w, table[i].name, a->thresholds.v[i]);
    gw_jw_object_end(w);
}

int gw_render_json(FILE *out, const gw_analysis *a)
{
    gw_json_writer w;
    gw_jw_init(&w, out, 1);
    gw_jw_object_begin(&w);
    gw_jw_kstring(&w, "schema", GW_JSON_SCHEMA);
    gw_jw_key(&w, "tool");
    gw_jw_object_begin(&w);
    gw_jw_kstring(&w, "name", "gpuwhy");
    gw_jw_kstring(&w, "version", GW_VERSION);
    gw_jw_object_end(&w);
    gw_jw_kstring(&w, "verdict", a->verdict);
    write_utilisation(&w, a);
    write_inputs(&w, a);
    const gw_rank_stats *first = a->rank_count ? &a->ranks[0] : NULL;
    gw_jw_key(&w, "window");
    if (first)
        write_window(&w, &first->window);
    else
        gw_jw_null(&w);
    gw_jw_kbool(&w, "has_gpu_data", a->device_count > 0);
    gw_jw_kbool(&w, "has_samples", a->sampled != NULL);
    write_devices(&w, a);
    write_idle_attribution(&w, a);
    write_steps(&w, a);
    gw_jw_key(&w, "kernels");
    if (first)
        write_kernels(&w, &first->kernels);
    else
        gw_jw_null(&w);
    gw_jw_key(&w, "copies");
    if (first)
        write_copies(&w, &first->copies);
    else
        gw_jw_null(&w);
    gw_jw_key(&w, "syncs");
    if (first)
        write_syncs(&w, &first->syncs);
    else
        gw_jw_null(&w);
    gw_jw_key(&w, "memory");
    if (first)
        write_memory(&w, &first->memory);
    else
        gw_jw_null(&w);
    gw_jw_key(&w, "ranks");
    gw_jw_array_begin(&w);
    for (size_t i = 0; i < a->rank_count; i++)
        write_rank(&w, &a->ranks[i]);
    gw_jw_array_end(&w);
    write_findings(&w, a);
    gw_jw_kstring(&w, "not_evaluated", a->not_evaluated);
    write_thresholds(&w, a);
    gw_json_write_sampled(&w, a);
    gw_json_write_collectives(&w, a);
    gw_jw_object_end(&w);
    int rc = gw_jw_finish(&w);
    if (fflush(out) != 0 || ferror(out))
        rc = -1;
    return rc;
}
