/* Ownership of sampled metrics; see samples.h. */
#include "model/samples.h"

#include <stdlib.h>

void gw_samples_free(struct gw_samples *s)
{
    free(s);
}
