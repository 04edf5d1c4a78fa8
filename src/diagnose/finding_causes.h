/* Which idle causes of the attribution a finding is about, so that a timeline can mark
 * where the finding happens (the idle stretches of those causes) instead of one range over
 * the whole window. */
#ifndef GW_DIAGNOSE_FINDING_CAUSES_H
#define GW_DIAGNOSE_FINDING_CAUSES_H

#include "analyze/analysis.h"

#define GW_CAUSE_BIT(c) (1u << (c))

/* Bit GW_CAUSE_BIT(c) set for each gw_idle_cause c the finding's share is made of; 0 for a
 * finding about the window as a whole (slow kernels, memory, communication, samples). */
unsigned gw_finding_idle_causes(const char *id);

#endif
