/* Parsers of the per-process and per-thread procfs files: stat, status (context
 * switches), schedstat (run-queue delay) and io. The hazard is stat's comm field: it may
 * contain spaces and ')' (a process can name itself "a) b"), so it is delimited by the
 * first '(' and the LAST ')', never by scanf. */
#include "collect/host_parse.h"

#include <string.h>

int gw_parse_pid_stat(const char *text, gw_pid_stat *out)
{
    memset(out, 0, sizeof *out);
    const char *p = text;
    int64_t pid;
    if (!gw_next_i64(&p, &pid) || pid <= 0)
        return -1;
    const char *open = strchr(p, '(');
    const char *close = strrchr(p, ')');
    if (open == NULL || close == NULL || close < open)
        return -1;
    out->pid = (pid_t)pid;
    gw_copy_field(out->comm, sizeof out->comm, open + 1, (size_t)(close - open - 1));
    p = close + 1;
    while (*p == ' ')
        p++;
    if (*p == '\0' || *p == '\n')
        return -1;
    out->state = *p++;
    /* Fields 4..39; a few are signed (tpgid, cutime, priority, nice) and a few are
     * addresses above INT64_MAX, so each is read as signed or unsigned by its sign. */
    uint64_t field[40] = {0};
    int n = 4;
    for (; n <= 39; n++) {
        while (*p == ' ')
            p++;
        if (*p == '-') {
            int64_t ignored;
            if (!gw_next_i64(&p, &ignored))
                break;
            field[n] = 0;
        } else if (!gw_next_u64(&p, &field[n])) {
            break;
        }
    }
    if (n <= 24)   /* need at least ppid .. rss */
        return -1;
    out->ppid = (pid_t)field[4];
    out->utime_ticks = field[14];
    out->stime_ticks = field[15];
    out->num_threads = (int)field[20];
    out->start_ticks = field[22];
    out->rss_pages = field[24];
    out->last_cpu = n > 39 ? (int)field[39] : -1;
    return 0;
}

static bool status_value(const char *text, const char *key, uint64_t *value)
{
    size_t key_len = strlen(key);
    for (const char *line = text; line != NULL && *line != '\0';) {
        if (strncmp(line, key, key_len) == 0 && line[key_len] == ':') {
            const char *p = line + key_len + 1;
            return gw_next_u64(&p, value);
        }
        line = strchr(line, '\n');
        if (line != NULL)
            line++;
    }
    return false;
}

int gw_parse_status_ctxt(const char *text, gw_task_counters *out)
{
    if (!status_value(text, "voluntary_ctxt_switches", &out->voluntary_ctxt) ||
        !status_value(text, "nonvoluntary_ctxt_switches", &out->nonvoluntary_ctxt)) {
        out->has_ctxt = false;
        return -1;
    }
    out->has_ctxt = true;
    return 0;
}

int gw_parse_schedstat(const char *text, gw_task_counters *out)
{
    const char *p = text;
    if (!gw_next_u64(&p, &out->run_ns) || !gw_next_u64(&p, &out->runqueue_wait_ns) ||
        !gw_next_u64(&p, &out->timeslices)) {
        out->has_schedstat = false;
        return -1;
    }
    out->has_schedstat = true;
    return 0;
}

int gw_parse_pid_io(const char *text, uint64_t *rchar, uint64_t *wchar, uint64_t *read_bytes,
                    uint64_t *write_bytes)
{
    if (!status_value(text, "rchar", rchar) || !status_value(text, "wchar", wchar) ||
        !status_value(text, "read_bytes", read_bytes) ||
        !status_value(text, "write_bytes", write_bytes))
        return -1;
    return 0;
}
