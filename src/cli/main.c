/* gpuwhy entry point: dispatches to the subcommands listed in GW_COMMANDS. */
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli/commands.h"
#include "util/error.h"

static void usage(FILE *out)
{
    fprintf(out,
            "gpuwhy %s - the GPU says 20%%: where did its time go?\n"
            "\n"
            "Usage: gpuwhy COMMAND [OPTIONS] ...\n"
            "\n"
            "Commands:\n", GW_VERSION);
    for (const gw_command *c = GW_COMMANDS; c->name; c++)
        fprintf(out, "  %-9s %s\n", c->name, c->summary);
    fprintf(out,
            "\n"
            "Examples:\n"
            "  gpuwhy analyze worker0.pt.trace.json.gz      diagnose a PyTorch profiler trace\n"
            "  gpuwhy analyze --json report.sqlite          diagnose an Nsight Systems export, as JSON\n"
            "  gpuwhy run -o run.db -- python train.py      record a job and diagnose it\n"
            "\n"
            "`gpuwhy COMMAND --help` explains a command. Exit codes: 0 analysed, 1 internal error,\n"
            "2 unusable input, 64 wrong usage.\n");
}

/* Blocks of a megabyte and more are mapped on their own and unmapped when freed. Large
 * arrays come and go while a big trace is read and analysed (readers' staging, sort
 * scratch, the analysis' interval sets); glibc otherwise raises that threshold after the
 * first large free, up to 32 MB, and keeps later freed blocks in its heap, resident: 10 MB
 * more peak memory on a 400 MB trace. */
static void tune_allocator(void)
{
#ifdef __GLIBC__
    (void)mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
#endif
}

int main(int argc, char **argv)
{
    tune_allocator();
    if (argc < 2) {
        usage(stderr);
        return GW_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return GW_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("gpuwhy %s\n", GW_VERSION);
        return GW_EXIT_OK;
    }
    for (const gw_command *c = GW_COMMANDS; c->name; c++)
        if (strcmp(argv[1], c->name) == 0)
            return c->run(argc - 1, argv + 1);
    fprintf(stderr, "gpuwhy: unknown command '%s' (see gpuwhy --help)\n", argv[1]);
    return GW_EXIT_USAGE;
}
