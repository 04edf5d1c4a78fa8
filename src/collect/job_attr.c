/* Job attribution of a GPU process from its cgroup path and environment; see job_attr.h.
 * The markers are the ones the schedulers write: Slurm's ".../job_<id>/step_<n>/..." (cgroup
 * v1 and v2 plugins), the kubelet's "kubepods" hierarchy with a "pod<uid>" level (cgroupfs
 * driver: "pod<uid>", systemd driver: "kubepods-<qos>-pod<uid with _>.slice") and the
 * container runtimes' leaf ("<64 hex>", "cri-containerd-<64 hex>.scope", "docker-...",
 * "crio-..."). */
#include "collect/job_attr.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procroot.h"

#define CONTAINER_ID_LEN 64

static bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

/* "/job_4242/" or ".../job_4242" at the end: the digits into out. */
static bool find_slurm_job(const char *path, char *out, size_t size)
{
    for (const char *p = strstr(path, "/job_"); p; p = strstr(p + 1, "/job_")) {
        const char *digits = p + 5, *end = digits;
        while (*end >= '0' && *end <= '9')
            end++;
        if (end > digits && (*end == '/' || *end == '\0') && (size_t)(end - digits) < size) {
            memcpy(out, digits, (size_t)(end - digits));
            out[end - digits] = '\0';
            return true;
        }
    }
    return false;
}

/* The pod UID after "pod" at the start of a path level or after a '-' (systemd slices),
 * inside a kubepods hierarchy; the systemd driver writes the UID's dashes as '_'. */
static bool find_pod_uid(const char *path, char *out, size_t size)
{
    if (!strstr(path, "kubepods"))
        return false;
    for (const char *p = strstr(path, "pod"); p; p = strstr(p + 1, "pod")) {
        if (p == path || (p[-1] != '/' && p[-1] != '-'))
            continue;
        const char *uid = p + 3, *end = uid;
        size_t hex = 0;
        while (is_hex(*end) || *end == '-' || *end == '_') {
            hex += is_hex(*end);
            end++;
        }
        if (hex != 32 || (*end != '/' && *end != '.' && *end != '\0') || (size_t)(end - uid) >= size)
            continue;
        for (size_t i = 0; uid + i < end; i++)
            out[i] = uid[i] == '_' ? '-' : uid[i];
        out[end - uid] = '\0';
        return true;
    }
    return false;
}

/* A container runtime's leaf: the last level is 64 hex digits, alone or after the runtime's
 * prefix ("cri-containerd-", "docker-", "crio-") and before ".scope". */
static bool find_container_id(const char *path, char *out, size_t size)
{
    const char *leaf = strrchr(path, '/');
    leaf = leaf ? leaf + 1 : path;
    size_t len = strcspn(leaf, ".");
    if (len < CONTAINER_ID_LEN || size <= CONTAINER_ID_LEN)
        return false;
    const char *id = leaf + len - CONTAINER_ID_LEN;
    if (id != leaf && id[-1] != '-')
        return false;
    if (strncmp(leaf, "crio-conmon-", 12) == 0)
        return false;   /* CRI-O's monitor of the container, not the container */
    for (size_t i = 0; i < CONTAINER_ID_LEN; i++)
        if (!is_hex(id[i]))
            return false;
    memcpy(out, id, CONTAINER_ID_LEN);
    out[CONTAINER_ID_LEN] = '\0';
    return true;
}

/* Fills the identity from one path; returns true when it named a Slurm job or a pod. */
static bool attribute_path(const char *path, gw_job_attr *out)
{
    bool slurm = find_slurm_job(path, out->slurm_job, sizeof out->slurm_job);
    bool pod = !slurm && find_pod_uid(path, out->pod_uid, sizeof out->pod_uid);
    if (!find_container_id(path, out->container_id, sizeof out->container_id))
        out->container_id[0] = '\0';
    snprintf(out->cgroup, sizeof out->cgroup, "%s", path);
    if (slurm)
        snprintf(out->key, sizeof out->key, "slurm:%s", out->slurm_job);
    else if (pod)
        snprintf(out->key, sizeof out->key, "pod:%s", out->pod_uid);
    else
        snprintf(out->key, sizeof out->key, "cgroup:%s", path);
    return slurm || pod;
}

int gw_job_attr_from_cgroup(const char *text, gw_job_attr *out)
{
    memset(out, 0, sizeof *out);
    /* A job's marker may sit in any hierarchy (Slurm's v1 plugin uses memory, cpuset and
     * devices, not the systemd one a hybrid system shows as "0::"): the first line that
     * names a job wins; otherwise the unified "0::" path, else the first path. */
    char fallback[256] = "";
    bool unified = false;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *colon1 = memchr(line, ':', len);
        const char *colon2 = colon1 ? memchr(colon1 + 1, ':', len - (size_t)(colon1 + 1 - line)) : NULL;
        if (colon2 && colon2 + 1 < line + len && colon2[1] == '/') {
            char path[256];
            size_t plen = (size_t)(line + len - (colon2 + 1));
            if (plen >= sizeof path)
                plen = sizeof path - 1;
            memcpy(path, colon2 + 1, plen);
            path[plen] = '\0';
            gw_job_attr probe;
            memset(&probe, 0, sizeof probe);
            if (attribute_path(path, &probe)) {
                *out = probe;
                return 0;
            }
            bool is_unified = line[0] == '0' && colon1 == line + 1 && colon2 == line + 2;
            if (!fallback[0] || (is_unified && !unified)) {
                snprintf(fallback, sizeof fallback, "%s", path);
                unified = is_unified;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    if (!fallback[0])
        return -1;
    attribute_path(fallback, out);
    return 0;
}

/* The value of NAME=... in a NUL-separated block, copied into out; false when absent. */
static bool env_value(const char *env, size_t len, const char *name, char *out, size_t size)
{
    size_t nlen = strlen(name);
    for (size_t i = 0; i < len;) {
        const char *entry = env + i;
        size_t elen = strnlen(entry, len - i);
        if (elen > nlen && strncmp(entry, name, nlen) == 0 && entry[nlen] == '=') {
            snprintf(out, size, "%.*s", (int)(elen - nlen - 1), entry + nlen + 1);
            return out[0] != '\0';
        }
        i += elen + 1;
    }
    return false;
}

void gw_job_attr_from_environ(const char *env, size_t len, gw_job_attr *out)
{
    char value[128];
    if (!out->slurm_job[0] && !out->pod_uid[0] && env_value(env, len, "SLURM_JOB_ID", value, sizeof value)) {
        bool digits = true;
        for (const char *c = value; *c; c++)
            digits &= isdigit((unsigned char)*c) != 0;
        size_t n = strlen(value);
        if (digits && n < sizeof out->slurm_job) {
            memcpy(out->slurm_job, value, n + 1);
            snprintf(out->key, sizeof out->key, "slurm:%s", out->slurm_job);
        }
    }
    if (!out->pod_uid[0])
        return;
    if (!out->pod[0] && !env_value(env, len, "POD_NAME", out->pod, sizeof out->pod))
        env_value(env, len, "HOSTNAME", out->pod, sizeof out->pod);
    if (!out->namespace_name[0])
        env_value(env, len, "POD_NAMESPACE", out->namespace_name, sizeof out->namespace_name);
}

int gw_job_attr_read(const char *root, pid_t pid, gw_job_attr *out)
{
    memset(out, 0, sizeof *out);
    gw_procroot pr;
    if (gw_procroot_init(&pr, root && *root ? root : "/") != 0)
        return -1;
    gw_readbuf buf = {0};
    char rel[160];
    int rc = -1;
    snprintf(rel, sizeof rel, "proc/%d/cgroup", (int)pid);
    if (gw_procroot_read(&pr, rel, &buf) != 0 || gw_job_attr_from_cgroup(buf.data, out) != 0)
        goto done;
    rc = 0;
    /* Optional: another user's environment needs privileges; a missing one changes nothing. */
    snprintf(rel, sizeof rel, "proc/%d/environ", (int)pid);
    if (gw_procroot_read(&pr, rel, &buf) == 0)
        gw_job_attr_from_environ(buf.data, buf.len, out);
    if (out->pod_uid[0] && !out->namespace_name[0]) {
        snprintf(rel, sizeof rel, "proc/%d/root/var/run/secrets/kubernetes.io/serviceaccount/namespace", (int)pid);
        if (gw_procroot_read(&pr, rel, &buf) == 0) {
            size_t n = strcspn(buf.data, "\n");
            if (n > 0 && n < sizeof out->namespace_name)
                snprintf(out->namespace_name, sizeof out->namespace_name, "%.*s", (int)n, buf.data);
        }
    }
done:
    gw_readbuf_free(&buf);
    gw_procroot_free(&pr);
    return rc;
}
