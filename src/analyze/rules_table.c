/* PLACEHOLDER diagnosis table until the rules land: no rules, verdict from busy only. */
#include "analyze/rules.h"

#include <stdio.h>

const gw_rule *gw_rules_table(size_t *count)
{
    *count = 0;
    return NULL;
}

int gw_rules_evaluate(gw_analysis *a)
{
    snprintf(a->verdict, sizeof a->verdict, "analysis rules not built yet");
    return 0;
}
