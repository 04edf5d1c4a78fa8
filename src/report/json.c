/* PLACEHOLDER JSON renderer until it lands. */
#include "report/render.h"

int gw_render_json(FILE *out, const gw_analysis *a)
{
    (void)a;
    return fprintf(out, "{\"schema\":\"%s\"}\n", GW_JSON_SCHEMA) < 0 ? -1 : 0;
}
