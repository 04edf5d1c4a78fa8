/* PLACEHOLDER terminal renderer until it lands. */
#include "report/render.h"

#include <stdlib.h>
#include <unistd.h>

void gw_render_options_default(gw_render_options *o, int fd)
{
    o->color = fd >= 0 && isatty(fd) && !getenv("NO_COLOR");
    o->width = 100;
    o->verbose = 0;
}

int gw_render_terminal(FILE *out, const gw_analysis *a, const gw_render_options *o)
{
    (void)o;
    return fprintf(out, "%s\n", a->verdict) < 0 ? -1 : 0;
}
