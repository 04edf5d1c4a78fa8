/* Test helper standing in for the CUDA driver and a training loop: dlopens the library
 * named by CUDA_INJECTION64_PATH (or argv[1] when that is unset), calls InitializeInjection
 * twice as a driver may, then runs BURSTS bursts of LAUNCHES launches through the fake
 * libcupti's fake_cupti_launch (when loaded), pausing PAUSE_MS between bursts, optionally
 * forking a short-lived child after the first burst (a DataLoader worker), and exits 3.
 * Usage: inject_loader LIB_OR_EMPTY BURSTS LAUNCHES PAUSE_MS [fork] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: inject_loader LIB_OR_EMPTY BURSTS LAUNCHES PAUSE_MS [fork]\n");
        return 64;
    }
    const char *lib = getenv("CUDA_INJECTION64_PATH");
    if (!lib || !*lib)
        lib = argv[1];
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "inject_loader: %s\n", dlerror());
        return 2;
    }
    int (*init)(void);
    *(void **)&init = dlsym(h, "InitializeInjection");
    if (!init) {
        fprintf(stderr, "inject_loader: no InitializeInjection in %s\n", lib);
        return 2;
    }
    int first = init(), second = init();
    printf("init %d %d\n", first, second);
    fflush(stdout);
    void (*launch)(int) = NULL;
    void *cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (cupti)
        *(void **)&launch = dlsym(cupti, "fake_cupti_launch");
    int bursts = atoi(argv[2]), launches = atoi(argv[3]);
    long pause_ms = atol(argv[4]);
    for (int b = 0; b < bursts; b++) {
        if (launch)
            launch(launches);
        if (b == 0 && argc > 5 && strcmp(argv[5], "fork") == 0) {
            pid_t pid = fork();
            if (pid == 0)
                exit(0);  /* runs the exit handlers, as a worker's normal exit does */
            int status;
            if (pid < 0 || waitpid(pid, &status, 0) != pid) {
                fprintf(stderr, "inject_loader: fork failed\n");
                return 2;
            }
            printf("forked\n");
            fflush(stdout);
        }
        struct timespec ts = {.tv_sec = pause_ms / 1000, .tv_nsec = (pause_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    printf("job done\n");
    return 3;
}
