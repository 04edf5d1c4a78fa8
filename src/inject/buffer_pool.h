/* The job's activity buffers: a fixed pool handed to CUPTI on request and queued for the
 * sender thread on completion. Fixed, so tracing never grows the job's memory: when gpuwhy
 * reads slower than the job produces, requests are refused, CUPTI drops records and counts
 * them (cuptiActivityGetNumDroppedRecords), and gpuwhy reports the count. */
#ifndef GW_INJECT_BUFFER_POOL_H
#define GW_INJECT_BUFFER_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gw_ready_buffer {
    uint8_t *buf;
    size_t valid;
} gw_ready_buffer;

typedef struct gw_buffer_pool {
    pthread_mutex_t lock;
    pthread_cond_t ready_cond;
    uint8_t *slab;                 /* owned: count * size bytes, 8-aligned */
    size_t count, size;
    uint8_t **free_list;           /* owned */
    size_t free_count;
    gw_ready_buffer *ready;        /* owned: ring of completed buffers */
    size_t ready_head, ready_count;
    uint64_t refused;              /* requests answered with no buffer */
} gw_buffer_pool;

/* 0, or -1 when out of memory. */
int gw_pool_init(gw_buffer_pool *p, size_t count, size_t size);
void gw_pool_destroy(gw_buffer_pool *p);
/* A free buffer or NULL (counted as refused). Thread-safe. */
uint8_t *gw_pool_take(gw_buffer_pool *p);
/* 1 when buf is one of the pool's buffers. */
int gw_pool_owns(const gw_buffer_pool *p, const uint8_t *buf);
/* Queues a completed buffer for the sender and wakes it. */
void gw_pool_complete(gw_buffer_pool *p, uint8_t *buf, size_t valid);
/* Waits up to timeout_ms for a completed buffer: 1 with *out filled, 0 on timeout. */
int gw_pool_wait_ready(gw_buffer_pool *p, gw_ready_buffer *out, int timeout_ms);
/* Returns a sent buffer to the free list. */
void gw_pool_give_back(gw_buffer_pool *p, uint8_t *buf);
/* 1 when every buffer is back in the free list (nothing held by CUPTI or queued). */
int gw_pool_all_free(gw_buffer_pool *p);
/* Wakes a waiter (shutdown). */
void gw_pool_wake(gw_buffer_pool *p);

#endif
