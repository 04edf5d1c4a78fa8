/* Quantiles of samples (step durations, kernel lengths, gaps) for the statistics, by
 * selection rather than sorting: O(n) expected, which matters for 10^6 kernels. */
#include "analyze/stats.h"

static void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Reorders v so that v[k] is the value a sort would put there, everything before it is
 * <= v[k] and everything after it >= v[k] (Hoare partition, median-of-three pivot, which
 * copes with the long runs of equal values kernel lengths have). */
static double select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (hi > lo) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo]) swap_d(&v[mid], &v[lo]);
        if (v[hi] < v[lo]) swap_d(&v[hi], &v[lo]);
        if (v[hi] < v[mid]) swap_d(&v[hi], &v[mid]);
        double pivot = v[mid];
        size_t i = lo, j = hi;
        for (;;) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i >= j)
                break;
            swap_d(&v[i], &v[j]);
            i++;
            j--;
        }
        /* Now v[lo..j] <= pivot <= v[j+1..hi]. */
        if (k <= j)
            hi = j;
        else
            lo = j + 1;
    }
    return v[k];
}

double gw_quantile(double *v, size_t n, double p)
{
    if (n == 0)
        return 0.0;
    if (!(p > 0))
        p = 0;
    if (p > 1)
        p = 1;
    double pos = p * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i >= n - 1)
        return select_kth(v, n, n - 1);
    double lower = select_kth(v, n, i);
    double frac = pos - (double)i;
    if (frac <= 0)
        return lower;
    /* The next order statistic is the smallest value after position i. */
    double upper = v[i + 1];
    for (size_t k = i + 2; k < n; k++)
        if (v[k] < upper)
            upper = v[k];
    return lower + (upper - lower) * frac;
}
