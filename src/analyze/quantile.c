/* Quantiles of samples (step durations, kernel lengths, gaps) for the statistics. */
#include "analyze/stats.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double gw_quantile(double *v, size_t n, double p)
{
    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    if (p <= 0)
        return v[0];
    if (p >= 1)
        return v[n - 1];
    double pos = p * (double)(n - 1);
    size_t i = (size_t)pos;
    double frac = pos - (double)i;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (v[i + 1] - v[i]) * frac;
}
