/* Commands whose implementation has not landed yet: they say so and exit 1 (none today;
 * the helper stays for the next one, hence "unused"). Each is
 * removed from here when its cmd_<name>.c arrives. */
#include <stdio.h>

#include "cli/commands.h"
#include "util/error.h"

__attribute__((unused)) static int pending(const char *name)
{
    fprintf(stderr, "gpuwhy %s: not available in this build yet\n", name);
    return GW_EXIT_INTERNAL;
}

