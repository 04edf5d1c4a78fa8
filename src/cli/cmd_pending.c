/* Commands whose implementation has not landed yet: they say so and exit 1. Each is
 * removed from here when its cmd_<name>.c arrives. */
#include <stdio.h>

#include "cli/commands.h"
#include "util/error.h"

static int pending(const char *name)
{
    fprintf(stderr, "gpuwhy %s: not available in this build yet\n", name);
    return GW_EXIT_INTERNAL;
}

int gw_cmd_serve(int argc, char **argv) { (void)argc; (void)argv; return pending("serve"); }
