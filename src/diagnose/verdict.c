/* The verdict line and the utilisation summary behind it (see verdict.h).
 *
 * "GPU 0 busy 66% of steps #17-#21; main cause: waiting for data (data.loader_wait, 22% of
 * step time)". The first half is how busy the GPUs were over the window (the catalogue's
 * util.low / util.healthy, as a state); the second the highest-ranked finding that is a
 * cause: a reason the GPU idled (findings partition the idle time) or exposed communication.
 * A capture in which the GPU did next to nothing says so first ("GPU 0 idle 99.99% of the
 * profiled span: it worked 3.1 µs"), and a window with too little GPU work to judge caps
 * every finding at minor and says why. */
#include "diagnose/verdict.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/gain.h"
#include "diagnose/rules.h"
#include "diagnose/rules_common.h"
#include "diagnose/rules_sampled.h"
#include "model/classify.h"

/* The longest host-op name the verdict line quotes (bytes). */
#define VERDICT_OP_CHARS 60
/* The verdict names the host op covering the most of its cause's idle time when it covers at
 * least this share of it. */
#define GW_VERDICT_OP_MIN_SHARE 0.25

/* Below this busy share the GPU did next to nothing: the line leads with the idle time. */
#define GW_UTIL_IDLE_BUSY 0.05
/* A second cause with at least this fraction of the main cause's share is named beside it. */
#define GW_CLOSE_SECOND 0.85

const char *gw_util_state_name(gw_util_state s)
{
    static const char *const names[] = {"no_gpu", "idle", "low", "moderate", "busy", "healthy"};
    return (unsigned)s <= GW_UTIL_HEALTHY ? names[s] : "no_gpu";
}

static const gw_rank_stats *first_gpu_rank(const gw_analysis *a)
{
    for (size_t i = 0; i < a->rank_count; i++)
        if (a->ranks[i].has_gpu_data)
            return &a->ranks[i];
    return NULL;
}

static const gw_rank_stats *rank_by_number(const gw_analysis *a, int rank)
{
    for (size_t i = 0; i < a->rank_count; i++)
        if (a->ranks[i].rank == rank)
            return &a->ranks[i];
    return NULL;
}

/* 1 when a cause explains a major share (by share, so that a window too short to judge
 * does not turn busy into healthy by capping severities). */
static int cause_above_minor(const gw_analysis *a)
{
    for (size_t i = 0; i < a->findings.count; i++) {
        const gw_finding *f = &a->findings.items[i];
        const gw_rule *rule = gw_rules_find(f->id);
        if (rule && rule->cause && rule->explains_idle && f->share >= GW_SHARE_MAJOR)
            return 1;
    }
    return 0;
}

/* Findings from a window with too little GPU work say little about the job: at most minor. */
static void cap_too_short(gw_analysis *a)
{
    for (size_t i = 0; i < a->findings.count; i++) {
        gw_finding *f = &a->findings.items[i];
        /* a failed launch is a fact of the program, not a measure of its time */
        if (strcmp(f->id, "data.none") == 0 || strcmp(f->id, "gpu.launch_failed") == 0 || f->basis == GW_BASIS_SAMPLES)
            continue;
        int short_window = 0;
        if (f->rank >= 0) {
            const gw_rank_stats *r = rank_by_number(a, f->rank);
            short_window = r && r->window.too_short;
        } else {
            short_window = 1;
            for (size_t k = 0; k < a->rank_count; k++)
                if (a->ranks[k].has_gpu_data && !a->ranks[k].window.too_short)
                    short_window = 0;
        }
        if (!short_window || f->severity <= GW_SEV_MINOR)
            continue;
        f->severity = GW_SEV_MINOR;
        if (!f->note[0])
            snprintf(f->note, sizeof f->note, "severity capped at minor: the window holds less than %.0f ms "
                     "of GPU work, too little to judge a training job by (window.min_busy_ms)",
                     a->thresholds.v[GW_T_WINDOW_MIN_BUSY_MS]);
    }
}

/* 1 when under util.healthy.kernel_share of the GPUs' busy time is in kernels. */
static int mostly_copying(const gw_analysis *a)
{
    return 1.0 - a->util.copy_share < a->thresholds.v[GW_T_UTIL_HEALTHY_KERNEL_SHARE];
}

void gw_verdict_prepare(gw_analysis *a)
{
    gw_utilisation *u = &a->util;
    memset(u, 0, sizeof *u);
    u->rank = -1;
    u->device = -1;
    u->busy_min = 1.0;
    double window_sum = 0, idle_sum = 0, unknown_sum = 0, busy_sum = 0, copy_sum = 0;
    for (size_t i = 0; i < a->device_count; i++) {
        const gw_device_stats *d = &a->devices[i];
        if (d->window_s <= 0)
            continue;
        double b = d->busy_s / d->window_s;
        u->busy_min = b < u->busy_min ? b : u->busy_min;
        u->busy_max = b > u->busy_max ? b : u->busy_max;
        busy_sum += b;
        window_sum += d->window_s;
        idle_sum += d->idle_s;
        unknown_sum += d->idle_by_cause_s[GW_IDLE_UNKNOWN];
        u->gpu_work_s += d->busy_s;
        copy_sum += d->copy_s + d->set_s;
        u->rank = d->rank;
        u->device = d->device;
        u->gpus++;
    }
    const gw_rank_stats *r0 = first_gpu_rank(a);
    if (u->gpus == 0) {
        u->busy_min = 0;
        u->state = GW_UTIL_NO_GPU;
        return;
    }
    u->busy_mean = busy_sum / (double)u->gpus;
    u->copy_share = u->gpu_work_s > 0 ? copy_sum / u->gpu_work_s : 0;
    u->idle_share = window_sum > 0 ? idle_sum / window_sum : 0;
    u->unexplained_share = window_sum > 0 ? unknown_sum / window_sum : 0;
    if (r0) {
        u->window_s = (double)(r0->window.end_ns - r0->window.start_ns) * 1e-9;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r0, &tot);
        const gw_device_stats *main = gw_rules_device(a, r0->rank, tot.main_device);
        if (main)
            u->capture_gaps = main->capture_gaps;
    }
    /* The job's window is too short when every rank's is (each rank sees the same steps; a
     * merged finding is capped only then, see cap_too_short). */
    size_t gpu_ranks = 0, short_ranks = 0;
    for (size_t i = 0; i < a->rank_count; i++) {
        gpu_ranks += a->ranks[i].has_gpu_data != 0;
        short_ranks += a->ranks[i].has_gpu_data && a->ranks[i].window.too_short;
    }
    u->too_short = gpu_ranks > 0 && short_ranks == gpu_ranks;
    cap_too_short(a);
    if (u->busy_mean < GW_UTIL_IDLE_BUSY)
        u->state = GW_UTIL_IDLE;
    else if (u->busy_min < a->thresholds.v[GW_T_UTIL_LOW_BUSY])
        u->state = GW_UTIL_LOW;
    else if (u->busy_min < a->thresholds.v[GW_T_UTIL_HEALTHY_BUSY])
        u->state = GW_UTIL_MODERATE;
    else if (cause_above_minor(a) || mostly_copying(a))
        u->state = GW_UTIL_BUSY;   /* a GPU busy copying is not "the time is in the kernels" */
    else
        u->state = GW_UTIL_HEALTHY;
}

/* Appends a part of the verdict whole, or not at all: the line holds its first parts (how
 * busy, the main cause) in any case, and a later one that does not fit is left out rather
 * than cut mid-word. */
static void append(char *buf, size_t size, const char *fmt, const char *a, const char *b)
{
    size_t used = strlen(buf);
    char part[sizeof ((gw_analysis *)0)->verdict];
    int n = snprintf(part, sizeof part, fmt, a, b);
    if (n > 0 && used + (size_t)n < size)
        memcpy(buf + used, part, (size_t)n + 1);
}

/* "steps #17-#21" / "the profiled span (no step markers)" of the first GPU rank. */
static void window_words(const gw_analysis *a, char *buf, size_t size)
{
    const gw_rank_stats *r0 = first_gpu_rank(a);
    if (r0)
        gw_rules_window_label(r0, buf, size);
    else
        snprintf(buf, size, "the window");
}

/* GPU work as the verdict says it: rounded down to 0.1 ms from 10 to 100 ms, so that 49.7 ms
 * reads the same where the headline says how much the GPU worked and where the cap says it is
 * under 50 ms ("it worked 50 ms ... 49.7 ms of GPU work (under 50 ms)"). */
static void work_words(double seconds, char *buf, size_t size)
{
    if (seconds >= 0.01 && seconds < 0.1)
        snprintf(buf, size, "%.1f ms", floor(seconds * 1e4) / 10.0);
    else
        gw_rules_fmt_duration(seconds, buf, size);
}

static void busy_part(const gw_analysis *a, char *buf, size_t size)
{
    const gw_utilisation *u = &a->util;
    char window[96];
    window_words(a, window, sizeof window);
    char who[48];
    if (u->gpus == 1 && a->rank_count > 1)
        snprintf(who, sizeof who, "GPU %d of rank %d", (int)u->device, u->rank);
    else if (u->gpus == 1)
        snprintf(who, sizeof who, "GPU %d", (int)u->device);
    else
        snprintf(who, sizeof who, "%zu GPUs", u->gpus);
    if (u->state == GW_UTIL_IDLE) {
        /* Nearly nothing ran: lead with the idle time and how little work there was. */
        char work[32], span[32], least[32], most[32];
        work_words(u->gpu_work_s / (double)u->gpus, work, sizeof work);
        gw_rules_fmt_duration(u->window_s, span, sizeof span);
        double idle = u->idle_share * 100.0;
        /* GPUs that worked unevenly are said as a range, not their mean (two DDP ranks' 237 and
         * 74 ms were "each worked 156 ms") */
        work_words(u->busy_min * u->window_s, least, sizeof least);
        work_words(u->busy_max * u->window_s, most, sizeof most);
        if (u->gpus > 1 && strcmp(least, most) != 0)
            snprintf(buf, size, "%s idle %.*f%% of %s (%s): they worked %s to %s each", who, idle >= 99.9 ? 2 : 1,
                     idle, window, span, least, most);
        else
            snprintf(buf, size, "%s idle %.*f%% of %s (%s): %s %s", who, idle >= 99.9 ? 2 : 1, idle, window,
                     span, u->gpus == 1 ? "it worked" : "each worked", work);
        return;
    }
    if (u->gpus == 1 || (int)(u->busy_min * 100.0 + 0.5) == (int)(u->busy_max * 100.0 + 0.5))
        snprintf(buf, size, "%s busy %.0f%% of %s", who, u->busy_mean * 100.0, window);
    else
        snprintf(buf, size, "%s busy %.0f-%.0f%% (mean %.0f%%) of %s", who, u->busy_min * 100.0,
                 u->busy_max * 100.0, u->busy_mean * 100.0, window);
}

/* 1 when some rank's input has host calls or ops, the side that explains idle time. */
static int any_host_side(const gw_analysis *a)
{
    for (size_t i = 0; i < a->rank_count; i++)
        if (gw_rules_has(a, &a->ranks[i]) & (GW_HAS_HOST_API | GW_HAS_CPU_OPS))
            return 1;
    return a->rank_count == 0;
}

static const char *share_of(const gw_analysis *a)
{
    const gw_rank_stats *r0 = first_gpu_rank(a);
    return r0 && r0->window.steady_steps > 0 && !r0->window.whole_window ? "step time" : "the window";
}

void gw_verdict_line(gw_analysis *a)
{
    if (a->rank_count == 0 && a->sampled) {
        gw_rules_sampled_verdict(a);
        return;
    }
    size_t with_gpu = 0;
    for (size_t i = 0; i < a->rank_count; i++)
        with_gpu += a->ranks[i].has_gpu_data != 0;
    if (with_gpu == 0) {
        const gw_finding *none = gw_findings_get(&a->findings, "data.none");
        /* Every message the input gives about it (nsys writes one note per diagnostic): the
         * telling one ("No CUDA events collected") is often not the first. */
        static const char said[] = "the input says: ";
        char reasons[sizeof a->verdict];
        size_t used = (size_t)snprintf(reasons, sizeof reasons, "%s",
                                       none && none->evidence_count ? none->evidence[0] : "nothing to measure");
        for (size_t i = 1; none && i < none->evidence_count && used < sizeof reasons; i++)
            if (strncmp(none->evidence[i], said, sizeof said - 1) == 0)
                used += (size_t)snprintf(reasons + used, sizeof reasons - used, "; %s",
                                         none->evidence[i] + sizeof said - 1);
        /* Too long for the line: cut at a word and say so, never mid-word. */
        size_t room = sizeof a->verdict - 48, len = strlen(reasons);
        if (len > room) {
            len = room - 3;
            while (len > 0 && reasons[len] != ' ')
                len--;
            while (len > 0 && (reasons[len - 1] == ' ' || reasons[len - 1] == ';' || reasons[len - 1] == ':'))
                len--;
            memcpy(reasons + len, "...", 4);
        }
        snprintf(a->verdict, sizeof a->verdict, "No GPU activity in the input: %.*s (data.none)", (int)room, reasons);
        return;
    }
    char *v = a->verdict;
    size_t size = sizeof a->verdict;
    busy_part(a, v, size);

    /* The main cause is what keeps the GPU idle (or, busy, in exposed communication); slower
     * GPU work (FP32 math ...) is named as the biggest saving when it outranks every cause. */
    const gw_finding *cause = NULL, *saving = NULL;
    /* Launches that failed so that the program's GPU work did not happen (most of them, or
     * every one) come before any account of the time; fewer are said at the end. */
    const gw_finding *failed = gw_findings_get(&a->findings, "gpu.launch_failed");
    int launch_failed = failed && failed->severity >= GW_SEV_CRITICAL;
    if (launch_failed)
        cause = failed;
    for (size_t i = 0; i < a->findings.count && !cause; i++) {
        const gw_finding *f = &a->findings.items[i];
        const gw_rule *rule = gw_rules_find(f->id);
        if (!rule || !rule->cause || f->severity < GW_SEV_MINOR)
            continue;
        if (rule->explains_idle)
            cause = f;
        else if (!saving && !gw_gain_is_off_path(f))
            saving = f; /* a saving whose replay shortens no step is none yet */
    }
    char part[200];
    /* A GPU that is busy but mostly copying: that is the news, before an idle cause too small
     * to be major. */
    int copying = a->util.state == GW_UTIL_BUSY && mostly_copying(a);
    if (copying) {
        snprintf(part, sizeof part, "; busy mostly copying, not computing: %.0f%% of the GPU's busy time in "
                 "copies and sets, %.0f%% in kernels", a->util.copy_share * 100.0, (1.0 - a->util.copy_share) * 100.0);
        append(v, size, "%s%s", part, "");
        if (cause && cause->share < GW_SHARE_MAJOR)
            cause = NULL;
    }
    if (copying && !cause) {
        /* said above */
    } else if (a->util.state == GW_UTIL_HEALTHY && saving && saving->severity >= GW_SEV_MAJOR &&
               strcmp(saving->id, "kernel.low_occupancy") == 0) {
        /* Busy, but in kernels that leave SMs empty (a loop of <<<1,1>>> kernels, a last wave of
         * blocks on part of the SMs): the busy figure overstates what the GPU does, so not
         * healthy. */
        snprintf(part, sizeof part, "; no idle time, but its kernels leave %.0f%% of the GPU's compute units idle",
                 saving->share * 100.0);
        append(v, size, "%s%s", part, "");
    } else if (a->util.state == GW_UTIL_HEALTHY) {
        append(v, size, "%s%s", "; healthy: the time is in the kernels themselves (see kernel.hot)", "");
    } else if (cause && strcmp(cause->id, "util.unexplained") == 0 && !any_host_side(a)) {
        snprintf(part, sizeof part, "; %.0f%% of %s idle and the input has GPU activity only, no host side "
                 "to say why (util.unexplained)", cause->share * 100.0, share_of(a));
        append(v, size, "%s%s", part, "");
    } else if (cause && cause == failed) {
        /* its share is of the launches, not of the time */
        snprintf(part, sizeof part, "; main cause: %s (gpu.launch_failed, %.0f%% of the launches)", cause->cause,
                 cause->share * 100.0);
        append(v, size, "%s%s", part, "");
    } else if (cause) {
        snprintf(part, sizeof part, "; main cause: %s (%s, %.0f%% of %s",
                 cause->cause[0] ? cause->cause : gw_rules_find(cause->id)->cause, cause->id,
                 cause->share * 100.0, share_of(a));
        append(v, size, "%s%s", part, "");
        /* For the host's own work and dispatch, the op that covers most of it. */
        const gw_device_stats *d = cause->host_view >= 0 && cause->host_view < GW_HOST_VIEW_COUNT
                                       ? gw_rules_device(a, cause->rank >= 0 ? cause->rank : a->util.rank,
                                                         cause->view_device)
                                       : NULL;
        /* A name that is a record dump (DLProf's NVTX payloads) would not read as a name. */
        const gw_host_ops *view = d ? &d->host_ops[cause->host_view] : NULL;
        const char *top = view && view->op_count > 0 ? view->ops[0].name : NULL;
        /* The op is named for what it covers: "mostly" for half of the time or more, its share
         * from a quarter on, and below that not at all (a vLLM trace's "mostly in
         * unified_attention" covered 0.2% of it). */
        double covered = top && view->idle_s > 0 ? view->ops[0].idle_s / view->idle_s : 0.0;
        if (top && !cause->cause[0] && top[0] != '{' && covered >= GW_VERDICT_OP_MIN_SHARE) {
            /* A long name is cut where a UTF-8 character starts, and the cut said ("..."). */
            size_t keep = strlen(top);
            if (keep > VERDICT_OP_CHARS) {
                keep = VERDICT_OP_CHARS - 3;
                while (keep > 0 && ((unsigned char)top[keep] & 0xC0) == 0x80)
                    keep--;
            }
            if (covered >= 0.5)
                snprintf(part, sizeof part, "; mostly in %.*s%s)", (int)keep, top, keep < strlen(top) ? "..." : "");
            else
                snprintf(part, sizeof part, "; %.0f%% of it in %.*s%s)", covered * 100.0, (int)keep, top,
                         keep < strlen(top) ? "..." : "");
            append(v, size, "%s%s", part, "");
        }
        else
            append(v, size, "%s%s", ")", "");
    } else if (a->util.state == GW_UTIL_BUSY || a->util.state == GW_UTIL_MODERATE) {
        append(v, size, "%s%s", "; no cause of idle time above minor", "");
    } else {
        append(v, size, "%s%s", "; no single cause of the idle time above minor", "");
    }
    /* A near tie is said: the second cause within 15% of the first is as much the answer. */
    const gw_finding *second = NULL;
    for (size_t i = 0; cause && cause != failed && i < a->findings.count && !second; i++) {
        const gw_finding *f = &a->findings.items[i];
        const gw_rule *rule = gw_rules_find(f->id);
        if (f != cause && rule && rule->cause && rule->explains_idle && f->severity >= GW_SEV_MINOR &&
            f->share >= GW_CLOSE_SECOND * cause->share && strcmp(f->id, cause->id) != 0)
            second = f;
    }
    if (second && a->util.state != GW_UTIL_HEALTHY) {
        snprintf(part, sizeof part, "; close second: %s (%s, %.0f%%)",
                 second->cause[0] ? second->cause : gw_rules_find(second->id)->cause, second->id,
                 second->share * 100.0);
        append(v, size, "%s%s", part, "");
    }
    /* A main cause paid once (start-up, set-up allocations) is no fix for the training loop:
     * what a user changes is the largest cause that recurs, said here when the close second
     * is not it already. */
    if (cause && gw_gain_is_one_off(cause) && a->util.state != GW_UTIL_HEALTHY) {
        const gw_finding *recurring = NULL;
        for (size_t i = 0; i < a->findings.count && !recurring; i++) {
            const gw_finding *f = &a->findings.items[i];
            const gw_rule *rule = gw_rules_find(f->id);
            if (rule && rule->cause && rule->explains_idle && f->severity >= GW_SEV_MINOR &&
                !gw_gain_is_one_off(f))
                recurring = f;
        }
        /* With nothing recurring, or only a minor cause that a major finding's saving
         * outweighs, what the kernels waste (a start-up verdict left out its program's <<<1,1>>>
         * kernel, 56% of the window, for 3% of idle time with nothing traced). */
        for (size_t i = 0; !saving && i < a->findings.count; i++) {
            const gw_finding *f = &a->findings.items[i];
            const gw_rule *rule = gw_rules_find(f->id);
            if (rule && rule->cause && !rule->explains_idle && f->severity >= GW_SEV_MAJOR && !gw_gain_is_off_path(f) &&
                (!recurring || (recurring->severity < GW_SEV_MAJOR && f->share > recurring->share)))
                saving = f;
        }
        if (!recurring)
            snprintf(part, sizeof part, "; beyond one-off costs: no cause above minor");
        else if (recurring != second)
            snprintf(part, sizeof part, "; beyond one-off costs: %s (%s, %.0f%%)",
                     recurring->cause[0] ? recurring->cause : gw_rules_find(recurring->id)->cause,
                     recurring->id, recurring->share * 100.0);
        else
            part[0] = '\0';
        append(v, size, "%s%s", part, "");
    }
    if (saving) {
        snprintf(part, sizeof part, "; biggest saving: %s (%s, %.0f%%)",
                 saving->cause[0] ? saving->cause : gw_rules_find(saving->id)->cause, saving->id,
                 saving->share * 100.0);
        append(v, size, "%s%s", part, "");
    }
    if (with_gpu < a->rank_count) {
        snprintf(part, sizeof part, "; %zu rank(s) without GPU data", a->rank_count - with_gpu);
        append(v, size, "%s%s", part, "");
    }
    /* A job whose GPU work faulted stopped there: the profile ends with it, whatever it says of
     * the time before. */
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (r->has_gpu_data && r->fault_calls > 0) {
            const char *what = gw_cuda_fault_text(r->fault_code);
            snprintf(part, sizeof part, "; the GPU's work faulted: %.60s returned CUDA error %lld (%s)", r->fault_call,
                     (long long)r->fault_code, what ? what : "a fault");
            append(v, size, "%s%s", part, "");
            break;
        }
    }
    if (failed && failed != cause) {
        /* its title, which starts a sentence, inside the line */
        snprintf(part, sizeof part, "; %c%.160s (gpu.launch_failed)", tolower((unsigned char)failed->title[0]),
                 failed->title[0] ? failed->title + 1 : "");
        append(v, size, "%s%s", part, "");
    }
    if (a->util.too_short) {
        /* The threshold is per rank's window: quote the most work one rank had. */
        double most = 0;
        size_t gpu_ranks = 0;
        for (size_t i = 0; i < a->rank_count; i++) {
            if (!a->ranks[i].has_gpu_data)
                continue;
            gpu_ranks++;
            most = a->ranks[i].window.busy_s > most ? a->ranks[i].window.busy_s : most;
        }
        char work[32];
        /* Rounded down near the threshold: 49.96 ms must not read "50 ms ... (under 50 ms)". */
        if (most >= 0.01)
            snprintf(work, sizeof work, "%.1f ms", floor(most * 1e4) / 10.0);
        else
            gw_rules_fmt_duration(most, work, sizeof work);
        snprintf(part, sizeof part, "; too short to judge: %s%s of GPU work%s (under %.0f ms), %s capped "
                 "at minor", gpu_ranks > 1 ? "at most " : "", work, gpu_ranks > 1 ? " per rank" : "",
                 a->thresholds.v[GW_T_WINDOW_MIN_BUSY_MS], launch_failed ? "the time's findings" : "severities");
        append(v, size, "%s%s", part, "");
    }
}
