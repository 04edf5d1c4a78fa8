/* Fixed pool of activity buffers (see buffer_pool.h). */
#include "inject/buffer_pool.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int gw_pool_init(gw_buffer_pool *p, size_t count, size_t size)
{
    memset(p, 0, sizeof *p);
    if (count == 0 || size < 1024 || size % 8 != 0 || count > SIZE_MAX / size)
        return -1;
    /* CUPTI requires 8-byte aligned buffers; page alignment also keeps untouched pages of
     * the slab unbacked until CUPTI writes records into them. */
    if (posix_memalign((void **)&p->slab, 4096, count * size) != 0) {
        p->slab = NULL;
        return -1;
    }
    p->free_list = calloc(count, sizeof *p->free_list);
    p->ready = calloc(count, sizeof *p->ready);
    if (!p->free_list || !p->ready) {
        gw_pool_destroy(p);
        return -1;
    }
    p->count = count;
    p->size = size;
    for (size_t i = 0; i < count; i++)
        p->free_list[i] = p->slab + i * size;
    p->free_count = count;
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        gw_pool_destroy(p);
        return -1;
    }
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0 || pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&p->ready_cond, &attr) != 0) {
        pthread_mutex_destroy(&p->lock);
        gw_pool_destroy(p);
        return -1;
    }
    pthread_condattr_destroy(&attr);
    return 0;
}

void gw_pool_destroy(gw_buffer_pool *p)
{
    if (p->count) {
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->ready_cond);
    }
    free(p->slab);
    free(p->free_list);
    free(p->ready);
    memset(p, 0, sizeof *p);
}

uint8_t *gw_pool_take(gw_buffer_pool *p)
{
    uint8_t *buf = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->free_count)
        buf = p->free_list[--p->free_count];
    else
        p->refused++;
    pthread_mutex_unlock(&p->lock);
    return buf;
}

int gw_pool_owns(const gw_buffer_pool *p, const uint8_t *buf)
{
    if (!p->slab || buf < p->slab || buf >= p->slab + p->count * p->size)
        return 0;
    return (size_t)(buf - p->slab) % p->size == 0;
}

void gw_pool_complete(gw_buffer_pool *p, uint8_t *buf, size_t valid)
{
    pthread_mutex_lock(&p->lock);
    /* Cannot overflow: at most `count` buffers exist. */
    p->ready[(p->ready_head + p->ready_count) % p->count] = (gw_ready_buffer){buf, valid};
    p->ready_count++;
    pthread_cond_signal(&p->ready_cond);
    pthread_mutex_unlock(&p->lock);
}

int gw_pool_wait_ready(gw_buffer_pool *p, gw_ready_buffer *out, int timeout_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    int got = 0;
    pthread_mutex_lock(&p->lock);
    /* One wait: a timeout, a wake-up for shutdown and a spurious wake-up all just return
     * to the caller's loop, which re-checks its own state. */
    if (p->ready_count == 0)
        (void)pthread_cond_timedwait(&p->ready_cond, &p->lock, &deadline);
    if (p->ready_count) {
        *out = p->ready[p->ready_head];
        p->ready_head = (p->ready_head + 1) % p->count;
        p->ready_count--;
        got = 1;
    }
    pthread_mutex_unlock(&p->lock);
    return got;
}

void gw_pool_give_back(gw_buffer_pool *p, uint8_t *buf)
{
    pthread_mutex_lock(&p->lock);
    p->free_list[p->free_count++] = buf;
    pthread_mutex_unlock(&p->lock);
}

int gw_pool_all_free(gw_buffer_pool *p)
{
    pthread_mutex_lock(&p->lock);
    int all = p->free_count == p->count;
    pthread_mutex_unlock(&p->lock);
    return all;
}

void gw_pool_wake(gw_buffer_pool *p)
{
    pthread_mutex_lock(&p->lock);
    pthread_cond_broadcast(&p->ready_cond);
    pthread_mutex_unlock(&p->lock);
}
