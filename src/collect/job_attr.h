/* Which job a GPU process belongs to, for the exporter's job labels: the Slurm job id or the
 * Kubernetes pod and container from the process's cgroup path (/proc/PID/cgroup, readable by
 * everyone), completed where readable from its environment (SLURM_JOB_ID; POD_NAME and
 * POD_NAMESPACE of the downward API; HOSTNAME, a pod's name) and its service-account mount
 * (the pod's namespace). A process in neither is keyed by its cgroup (a login session, a
 * systemd service, a Docker container), so two users' processes on one GPU still count as
 * two jobs. Only the GPU's own processes are read: never a scan of /proc. */
#ifndef GW_COLLECT_JOB_ATTR_H
#define GW_COLLECT_JOB_ATTR_H

#include <stddef.h>
#include <sys/types.h>

typedef struct gw_job_attr {
    char key[320];               /* identity of the job: "slurm:4242", "pod:<uid>",
                                    "cgroup:<path>"; "" when nothing could be read */
    char slurm_job[32];          /* "" when not a Slurm job */
    char pod_uid[64];            /* "" when not in a Kubernetes pod */
    char pod[128];               /* "" unknown (only from the environment) */
    char namespace_name[64];     /* "" unknown */
    char container_id[72];       /* the container's full hex id; "" none or unknown */
    char cgroup[256];            /* the path the identity came from ("/" when at the root) */
} gw_job_attr;

/* Fills out from the text of a /proc/PID/cgroup file (v2 "0::PATH", v1 "N:ctrl:PATH", or
 * both). Paths relative to another cgroup namespace ("/../../kubepods...") are read as they
 * come: the markers are searched anywhere in them. Returns 0, or -1 when no line holds a
 * path (out->key stays ""). */
int gw_job_attr_from_cgroup(const char *text, gw_job_attr *out);

/* Completes out from a NUL-separated environment block (/proc/PID/environ) of len bytes:
 * SLURM_JOB_ID when the cgroup named no Slurm job, POD_NAME / POD_NAMESPACE, and HOSTNAME
 * as the pod's name for a process of a pod. */
void gw_job_attr_from_environ(const char *env, size_t len, gw_job_attr *out);

/* Reads root/proc/PID/cgroup (required), root/proc/PID/environ and, for a process of a pod,
 * root/proc/PID/root/var/run/secrets/kubernetes.io/serviceaccount/namespace (both optional:
 * another user's are unreadable without privileges). root: "" or "/" for this machine.
 * Returns 0, or -1 when the process is gone or its cgroup unreadable (out->key ""). */
int gw_job_attr_read(const char *root, pid_t pid, gw_job_attr *out);

#endif
