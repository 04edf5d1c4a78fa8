/* SIGBUS guard for mapped reads (see map_guard.h). The handler is installed while at least
 * one guard runs and the previous one is put back after; a SIGBUS on a thread without a
 * guard goes to the previous handler (default: the process dies, as it would have). */
#include "ingest/map_guard.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_guards;
static struct sigaction g_previous;
static _Thread_local sigjmp_buf *tl_guard;

static void on_sigbus(int sig, siginfo_t *info, void *ctx)
{
    if (tl_guard)
        siglongjmp(*tl_guard, 1);
    /* Not ours: hand the signal on as if this handler were not here. */
    if (g_previous.sa_flags & SA_SIGINFO) {
        if (g_previous.sa_sigaction) {
            g_previous.sa_sigaction(sig, info, ctx);
            return;
        }
    } else if (g_previous.sa_handler != SIG_IGN && g_previous.sa_handler != SIG_DFL) {
        g_previous.sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install(void)
{
    pthread_mutex_lock(&g_lock);
    if (g_guards++ == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, &g_previous) != 0)
            memset(&g_previous, 0, sizeof g_previous);
    }
    pthread_mutex_unlock(&g_lock);
}

static void uninstall(void)
{
    pthread_mutex_lock(&g_lock);
    if (--g_guards == 0)
        (void)sigaction(SIGBUS, &g_previous, NULL);
    pthread_mutex_unlock(&g_lock);
}

/* The jump target lives in this frame; nothing here changes after sigsetjmp. */
int gw_map_guard_run(int (*fn)(void *), void *arg, int on_fault)
{
    sigjmp_buf here;
    install();
    int rc;
    if (sigsetjmp(here, 1) == 0) {
        tl_guard = &here;
        rc = fn(arg);
    } else {
        rc = on_fault;
    }
    tl_guard = NULL;
    uninstall();
    return rc;
}
