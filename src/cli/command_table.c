/* The list of subcommands shown by `gpuwhy --help`, in the order a user meets them. */
#include "cli/commands.h"

#include <stddef.h>

const gw_command GW_COMMANDS[] = {
    {"analyze", gw_cmd_analyze, "diagnose traces and recordings (Kineto JSON, Nsight Systems, gpuwhy)"},
    {"run", gw_cmd_run, "run a job, record host and GPU metrics, then diagnose it"},
    {"attach", gw_cmd_attach, "record a running job (by PID), then diagnose it"},
    {"report", gw_cmd_report, "write a self-contained HTML report"},
    {"export", gw_cmd_export, "export a timeline for Perfetto / chrome://tracing"},
    {"compare", gw_cmd_compare, "compare the same phase before and after a change"},
    {"top", gw_cmd_top, "live view of GPUs and the jobs feeding them"},
    {"serve", gw_cmd_serve, "Prometheus exporter for clusters"},
    {"doctor", gw_cmd_doctor, "check the environment (driver, NVML, CUPTI, permissions)"},
    {NULL, NULL, NULL},
};
