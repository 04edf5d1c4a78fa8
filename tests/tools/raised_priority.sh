# Sourced first thing by the tests that reproduce CPU-bound situations with real processes
# (tests/cli/sampled_*.sh and others). Such a test plants a situation (a burner beside the job, workers
# outnumbering the cores, a periodic burst) and checks that the recording names it; on a
# shared CI machine, other work would dilute the planted processes until the situation is
# no longer the one planted (the job then really is starved by others, and that is what
# gpuwhy reports). So where it is allowed (root), the test re-runs itself in a session of its
# own, whose scheduler group (autogroup) gets the highest priority, with nice -10 inherited by
# everything it starts: other sessions' work cannot crowd it out, and the test's processes
# keep between themselves the shares they would have on an idle machine. The diagnoses
# still have to find what was planted; nothing is relaxed. Elsewhere it runs as it is.
if [ -z "${GW_TEST_RAISED:-}" ] && [ "$(id -u)" = 0 ] && command -v setsid >/dev/null &&
    [ -w /proc/self/autogroup ]; then
    export GW_TEST_RAISED=1
    exec setsid -w bash "$0" "$@"
fi
if [ "${GW_TEST_RAISED:-}" = 1 ]; then
    echo -20 >/proc/self/autogroup 2>/dev/null
    renice -n -10 -p $$ >/dev/null 2>&1
fi
