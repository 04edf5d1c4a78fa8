/* libFuzzer target: the hand-over stream receiver (src/record/trace_receiver.c): the input
 * is a byte stream from a traced job, delivered in pieces whose sizes come from the stream
 * itself (a socket splits frames anywhere), then the connection ends. Decoded records go
 * into an in-memory CUDA trace store, which is then read back into the timeline model and
 * analysed, as `gpuwhy run --trace` does. Seeds: streams written by gen_handover_seeds. */
#include <sqlite3.h>
#include <string.h>

#include "fuzz_common.h"
#include "record/cuda_trace_store.h"
#include "record/trace_receiver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sqlite3 *db = NULL;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
        sqlite3_close(db);
        return 0;
    }
    gw_error err;
    gw_error_clear(&err);
    gw_trace_receiver r;
    gw_cuda_store_sink sink = {.err = &err};
    if (gw_trace_receiver_init(&r, gw_cuda_store_emit, &sink) != 0) {
        sqlite3_close(db);
        return 0;
    }
    sink.store = gw_cuda_store_open(db, &r.decoder, &err);
    gw_trace_conn c;
    gw_trace_conn_init(&c);
    size_t pos = 0;
    unsigned piece_seed = size ? data[size - 1] : 0;
    int ok = sink.store != NULL;
    while (ok && pos < size) {
        size_t piece = 1 + (piece_seed = piece_seed * 1103515245u + 12345u) % 4096u;
        if (piece > size - pos)
            piece = size - pos;
        ok = gw_trace_receiver_feed(&r, &c, data + pos, piece, &err) == 0;
        pos += piece;
    }
    gw_trace_receiver_conn_end(&r, &c);
    gw_trace_conn_free(&c);
    if (ok) {
        for (size_t i = 0; ok && i < r.proc_count; i++)
            ok = gw_cuda_store_process(sink.store, &r.procs[i], &err) == 0;
        for (size_t i = 0; ok && i < r.note_count; i++)
            ok = gw_cuda_store_note(sink.store, r.notes[i].pid, r.notes[i].text, &err) == 0;
        ok = gw_cuda_store_close(sink.store, &err) == 0 && ok;
        sink.store = NULL;
    }
    gw_cuda_store_abort(sink.store);
    gw_trace_receiver_free(&r);
    gw_trace *t = NULL;
    if (ok && gw_cuda_trace_load(db, "fuzz.db", &t, &err) == 0 && t) {
        gw_job *job = gw_job_new();
        if (!job)
            gw_trace_free(t);
        else if (gw_job_add(job, t) == 0)   /* frees t on failure */
            gw_fuzz_analyze(job);
        else
            gw_job_free(job);
    }
    sqlite3_close(db);
    return 0;
}
