# Shared by bench_sampler.sh and bench_sampler_ab.sh (sourced, not run): the job both time
# gpuwhy against and the fake-NVML scenario of its GPUs, so the two benchmarks measure the
# same thing.

# make_thread_job DIR: builds DIR/thread_job, run as `thread_job THREADS SECONDS`: THREADS
# threads that sleep (as a DataLoader-heavy trainer's tree looks between bursts), living
# SECONDS seconds.
make_thread_job() {
    cat >"$1/thread_job.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
static void *idle(void *arg) { (void)arg; for (;;) pause(); return NULL; }
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), secs = atoi(argv[2]);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    for (int i = 1; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, &a, idle, NULL) != 0)
            return 1;
    }
    sleep((unsigned)secs);
    return 0;
}
C
    cc -O2 -pthread -o "$1/thread_job" "$1/thread_job.c"
}

# write_gpu_scenario GPUS FILE: a busy-looking fake NVML scenario for GPUS GPUs (every
# value the sampler polls, GPM included, and two compute processes per GPU).
write_gpu_scenario() {
    {
        echo "gpus $1"
        for g in $(seq 0 $(($1 - 1))); do
            echo "gpu $g name Fake H100 80GB HBM3"
            echo "gpu $g gpm 1"
            echo "gpu $g util 35 12"
            echo "gpu $g memory_used 4294967296"
            echo "gpu $g clocks 1410 2619"
            echo "gpu $g temp 60"
            echo "gpu $g power 300000"
            echo "gpu $g pcie_tput 1000 2000"
            echo "gpu $g pcie_link 5 16"
            echo "gpu $g procs 1000:1073741824,1001:1073741824"
            echo "gpu $g putil 1000:30:10,1001:20:5"
            echo "gpu $g gpm 45 30 10 20"
        done
    } >"$2"
}
