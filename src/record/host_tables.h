/* The host half of the SQLite recording: tables of raw host counters, one row set per
 * sample id (host_cpu, host_mem, host_vmstat, host_pressure, host_disk, host_net,
 * host_numa, job_proc, job_thread, job_cmdline, job_fs, top_proc, top_proc_total), their creation, the
 * per-interval insert and the read-back into a gw_host_sample. Rates are never stored:
 * readers compute them with the helpers of collect/host.h. The samples table itself
 * (sample id, clocks) belongs to record/writer.c; these tables only reference its id.
 * Unknown values (has_* false) are stored as NULL. Disks and interfaces whose counters did
 * not change since they were last written are not written again (gw_host_writer_forget). */
#ifndef GW_RECORD_HOST_TABLES_H
#define GW_RECORD_HOST_TABLES_H

#include <sqlite3.h>
#include <stdint.h>

#include "collect/host.h"
#include "util/error.h"

/* Creates the host tables and their indexes (IF NOT EXISTS). Returns 0 or -1 with err. */
int gw_host_tables_create(sqlite3 *db, gw_error *err);

/* Prepared statements reused across intervals; one per recording connection. */
typedef struct gw_host_writer gw_host_writer;

/* Prepares the insert statements (tables must exist). db is borrowed and must outlive
 * the writer. Returns NULL with err set on failure. */
gw_host_writer *gw_host_writer_new(sqlite3 *db, gw_error *err);

/* Writes one interval's host sample under sample_id. Runs inside the CALLER's
 * transaction (it never begins or commits). Returns 0 or -1 with err set. */
int gw_host_sample_insert(gw_host_writer *w, int64_t sample_id, const gw_host_sample *s,
                          gw_error *err);

/* Writes only s's top_total list under sample_id (the totals of the end of a recording,
 * gw_host_collect_totals, added to its last sample). Runs inside the caller's transaction.
 * Returns 0 or -1 with err set. */
int gw_host_totals_insert(gw_host_writer *w, int64_t sample_id, const gw_host_sample *s, gw_error *err);

void gw_host_writer_free(gw_host_writer *w);

/* Disks and network interfaces are written as "only those whose counters changed" when
 * the list is the same as the one last written (host_sys.has_diskstats / has_net_dev = 2;
 * 1 = the whole list). Call this when a transaction that wrote a sample was rolled back:
 * the next lists are then written whole. NULL is fine. */
void gw_host_writer_forget(gw_host_writer *w);

/* Reads the raw rows of sample_id back into *out (cleared first, capacities reused).
 * disks_changed_only / nets_changed_only say that the unchanged devices were not written:
 * gw_host_sample_carry_forward completes the lists.
 * cmdline of a process is filled whenever the recording has one for (pid, start_ticks),
 * not only in the sample that first saw it. mono_ns/realtime_ns are left 0: they live in
 * the writer's samples table. Returns 0, or -1 with err (GW_EXIT_BAD_INPUT for a
 * recording whose host tables are missing or malformed). */
int gw_host_sample_read(sqlite3 *db, int64_t sample_id, gw_host_sample *out, gw_error *err);

/* Completes a sample read with changed devices only: every disk of last_disks (the
 * complete list of the last sample that read diskstats) absent from cur is appended with
 * its counters as they were, likewise interfaces from last_nets. Either list may be NULL
 * with count 0. Clears the *_changed_only flags. Returns 0, or -1 with err (out of
 * memory). */
int gw_host_sample_carry_forward(gw_host_sample *cur, const gw_disk_counters *last_disks,
                                 size_t last_disk_count, const gw_net_counters *last_nets,
                                 size_t last_net_count, gw_error *err);

#endif
