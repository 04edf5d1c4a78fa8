/* Training steps from NVTX ranges (Nsight Systems SQLite exports). Users and frameworks
 * mark iterations with ranges such as "train_step", "iteration 12", "ProfilerStep#3" or
 * "step"; the ranges of that kind on the thread that feeds the GPU become t->steps. With
 * --step-range NAME the user names the range exactly. Without either, no steps are set and
 * the analysis uses the whole window (and says so). */
#include "ingest/nsys_sqlite_reader.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/classify.h"
#include "model/name_match.h"
#include "util/grow.h"

/* A word boundary before position i of s: start, a non-letter, or a camel-case hump
 * ("ProfilerStep"). *camel is set when only the hump makes it a boundary. */
static int boundary_before(const char *s, size_t i, int *camel)
{
    *camel = 0;
    if (i == 0)
        return 1;
    unsigned char prev = (unsigned char)s[i - 1], cur = (unsigned char)s[i];
    if (!isalpha(prev))
        return 1;
    *camel = islower(prev) && isupper(cur);
    return *camel;
}

/* After the word: the end or a non-letter ("step_3", "iter 5", "ProfilerStep#2"). A
 * following capital is not accepted: "validateIterDomain" is not an iteration. */
static int boundary_after(const char *s, size_t end)
{
    unsigned char next = (unsigned char)s[end];
    return next == '\0' || !isalpha(next);
}

/* 1 when name looks like a training step/iteration range. Sub-steps that merely contain
 * the word (Optimizer.step, lr_scheduler.step, aten::_foreach_step, emit_nvtx JSON op
 * descriptions) are not iterations. */
static int name_is_step(const char *name)
{
    static const char *const NOT_STEPS[] = {"optimizer", "scheduler", "aten::", "zero_grad"};
    if (!name[0] || name[0] == '{' || gw_name_has_any_ci(name, NOT_STEPS, sizeof NOT_STEPS / sizeof NOT_STEPS[0]))
        return 0;
    static const char *const WORDS[] = {"iteration", "iter", "step"};
    for (size_t i = 0; name[i]; i++) {
        int camel;
        if (!boundary_before(name, i, &camel))
            continue;
        /* Mid-identifier humps count only for the step word itself (ProfilerStep#3,
         * TrainStep): "getIterator"-style code names are not iteration ranges. */
        for (size_t w = 0; w < sizeof WORDS / sizeof WORDS[0]; w++) {
            size_t n = strlen(WORDS[w]);
            if (strncasecmp(name + i, WORDS[w], n) == 0 && boundary_after(name, i + n) &&
                (!camel || strcmp(WORDS[w], "step") == 0))
                return 1;
        }
    }
    return 0;
}

/* "ProfilerStep#12" → 12, "iteration 7" → 7, "step_3" → 3: the last number in the name. */
static int last_number(const char *name, int64_t *out)
{
    int64_t n = 0;
    if (gw_parse_profiler_step(name, &n)) {
        *out = n;
        return 1;
    }
    const char *end = name + strlen(name);
    const char *p = end;
    while (p > name && !isdigit((unsigned char)p[-1]))
        p--;
    if (p == name)
        return 0;
    const char *digits_end = p;
    while (p > name && isdigit((unsigned char)p[-1]))
        p--;
    if (digits_end - p > 15)
        return 0;
    n = 0;
    for (const char *q = p; q < digits_end; q++)
        n = n * 10 + (*q - '0');
    *out = n;
    return 1;
}

typedef struct candidate {
    gw_ns start, end;
    uint32_t name_id;
} candidate;

static int cmp_candidate(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end ? 1 : 0;
}

/* Adds the outermost candidates (a step range nested in another is not a second step). */
static int add_steps(gw_trace *t, candidate *c, size_t n, gw_step_source source)
{
    if (n == 0)
        return 0;
    qsort(c, n, sizeof *c, cmp_candidate);
    gw_ns open_end = INT64_MIN;
    int64_t ordinal = 0;
    /* Steps named alike ("train_step" every time) parse their name once, not once a step. */
    uint32_t parsed_name = UINT32_MAX;
    int has_number = 0;
    int64_t number = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].start < open_end)
            continue;
        open_end = c[i].end;
        gw_step *s = gw_trace_add_step(t);
        if (!s)
            return -1;
        s->start = c[i].start;
        s->end = c[i].end;
        if (c[i].name_id != parsed_name) {
            parsed_name = c[i].name_id;
            has_number = last_number(gw_trace_str(t, c[i].name_id), &number);
        }
        s->number = has_number ? number : ordinal;
        ordinal++;
    }
    if (t->step_count) {
        t->step_source = source;
        /* Say where the steps came from: a wrong guess is then visible, and fixable with
         * --step-range. */
        const char *first = gw_trace_str(t, c[0].name_id);
        if (source == GW_STEPS_USER_RANGE)
            gw_trace_note(t, "%zu %s from the NVTX range \"%.120s\" (--step-range)", t->step_count,
                          t->step_count == 1 ? "step" : "steps", first);
        else
            gw_trace_note(t, "%zu %s from NVTX ranges named like \"%.120s\" (--step-range NAME to choose "
                             "another range)", t->step_count, t->step_count == 1 ? "step" : "steps", first);
    }
    return 0;
}

/* Index of the thread that issues most launches/copies: the training loop's thread. */
static uint32_t busiest_thread(gw_trace *t, uint8_t *is_launch_by_name)
{
    size_t *launches = calloc(t->thread_count ? t->thread_count : 1, sizeof *launches);
    if (!launches)
        return UINT32_MAX - 1;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if ((h->kind != GW_HOST_RUNTIME && h->kind != GW_HOST_DRIVER) || h->thread >= t->thread_count)
            continue;
        uint8_t *memo = &is_launch_by_name[h->name_id];
        if (*memo == 0xFF) {
            gw_api_class cls = gw_classify_api(gw_trace_str(t, h->name_id), NULL, NULL);
            *memo = cls == GW_API_LAUNCH || cls == GW_API_MEMCPY || cls == GW_API_MEMSET;
        }
        launches[h->thread] += *memo;
    }
    uint32_t best = UINT32_MAX;
    size_t best_count = 0;
    for (size_t i = 0; i < t->thread_count; i++)
        if (launches[i] > best_count) {
            best_count = launches[i];
            best = (uint32_t)i;
        }
    free(launches);
    return best;
}

/* Ranges a --step-range may name, listed in the error when it names none of them. */
#define LISTED_RANGES 8

/* The NVTX range names of the trace, most frequent first: "name" (count), ... */
static int list_ranges(const gw_trace *t, char *buf, size_t size)
{
    size_t names = t->strings.count;
    size_t *count = calloc(names ? names : 1, sizeof *count);
    if (!count)
        return -1;
    size_t distinct = 0;
    for (size_t i = 0; i < t->host_count; i++)
        if (t->host[i].kind == GW_HOST_ANNOTATION && t->host[i].name_id < names &&
            count[t->host[i].name_id]++ == 0)
            distinct++;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < LISTED_RANGES && k < distinct; k++) {
        size_t best = SIZE_MAX;
        for (size_t n = 0; n < names; n++)
            if (count[n] && (best == SIZE_MAX || count[n] > count[best]))
                best = n;
        int w = snprintf(buf + used, size - used, "%s\"%.60s\" (%zu)", k ? ", " : "", gw_trace_str(t, (uint32_t)best),
                         count[best]);
        count[best] = 0;
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
    if (distinct > LISTED_RANGES && used < size)
        snprintf(buf + used, size - used, " and %zu more", distinct - LISTED_RANGES);
    free(count);
    return 0;
}

int gw_nsys_find_steps(gw_trace *t, const char *step_range, const char *path, gw_error *err)
{
    size_t names = t->strings.count;
    /* Per interned name: 0xFF not yet classified, else 0/1 (names are few, events many). */
    uint8_t *memo = malloc(names ? names : 1);
    size_t *per_thread = calloc(t->thread_count ? t->thread_count : 1, sizeof *per_thread);
    candidate *cands = NULL;
    size_t cand_count = 0, cand_cap = 0;
    int rc = -1;
    if (!memo || !per_thread)
        goto out;

    /* Which annotations qualify, and how many each thread has. */
    memset(memo, 0xFF, names ? names : 1);
    size_t step_len = step_range ? strlen(step_range) : 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (h->kind != GW_HOST_ANNOTATION || h->name_id >= names || h->thread >= t->thread_count)
            continue;
        if (memo[h->name_id] == 0xFF) {
            const char *name = gw_trace_str(t, h->name_id);
            memo[h->name_id] = step_range ? (strlen(name) == step_len && strcmp(name, step_range) == 0)
                                          : name_is_step(name);
        }
        per_thread[h->thread] += memo[h->name_id];
    }

    uint32_t thread = UINT32_MAX;
    if (!step_range) {
        uint8_t *launch_memo = malloc(names ? names : 1);
        if (!launch_memo)
            goto out;
        memset(launch_memo, 0xFF, names ? names : 1);
        thread = busiest_thread(t, launch_memo);
        free(launch_memo);
        if (thread == UINT32_MAX - 1)
            goto out;
    }
    /* --step-range, or no step ranges on the feeding thread: the thread with most of them. */
    if (thread == UINT32_MAX || per_thread[thread] == 0) {
        size_t best = 0;
        thread = UINT32_MAX;
        for (size_t i = 0; i < t->thread_count; i++)
            if (per_thread[i] > best) {
                best = per_thread[i];
                thread = (uint32_t)i;
            }
    }
    if (thread == UINT32_MAX) {
        rc = 0;
        if (step_range) {
            /* Analysing the whole window instead of the steps asked for would answer another
             * question than the one put: say which names there are. */
            char ranges[600];
            if (list_ranges(t, ranges, sizeof ranges) != 0) {
                rc = -1;
                goto out;
            }
            rc = gw_fail(err, GW_EXIT_USAGE, "%s: no NVTX range is named \"%.120s\" (--step-range); %s%s", path,
                         step_range, ranges[0] ? "the trace's ranges, most frequent first: " : "the trace has no NVTX ranges",
                         ranges);
        }
        goto out;
    }
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (h->kind != GW_HOST_ANNOTATION || h->thread != thread || h->name_id >= names || memo[h->name_id] != 1)
            continue;
        if (gw_grow((void **)&cands, &cand_cap, cand_count + 1, sizeof *cands) != 0)
            goto out;
        cands[cand_count].start = h->start;
        cands[cand_count].end = h->end;
        cands[cand_count].name_id = h->name_id;
        cand_count++;
    }
    rc = add_steps(t, cands, cand_count, step_range ? GW_STEPS_USER_RANGE : GW_STEPS_NVTX);
out:
    if (rc != 0) /* no-op when the usage error is already set: the first error wins */
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
    free(memo);
    free(per_thread);
    free(cands);
    return rc;
}
