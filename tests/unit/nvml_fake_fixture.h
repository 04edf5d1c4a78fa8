/* Shared by the tests that drive the fake libnvidia-ml.so (tests/fake_nvml): writing a
 * scenario file and finding the library variants built beside GW_FAKE_NVML. */
#ifndef GW_TESTS_NVML_FAKE_FIXTURE_H
#define GW_TESTS_NVML_FAKE_FIXTURE_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes text to a fresh temporary file, points GW_FAKE_NVML_SCENARIO at it and returns
 * its path in buf (the caller unlinks it). Returns 0 or -1. */
static inline int fake_scenario(const char *text, char *buf, size_t size)
{
    snprintf(buf, size, "/tmp/gw-fake-nvml-XXXXXX");
    int fd = mkstemp(buf);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    ssize_t wrote = write(fd, text, len);
    close(fd);
    if (wrote != (ssize_t)len)
        return -1;
    return setenv("GW_FAKE_NVML_SCENARIO", buf, 1);
}

/* Path of a variant ("full", "no_v3", "old_driver") of the fake library in buf; NULL when
 * the test environment lacks GW_FAKE_NVML. */
static inline const char *fake_library(const char *variant, char *buf, size_t size)
{
    const char *full = getenv("GW_FAKE_NVML");
    if (!full)
        return NULL;
    char dir[1024];
    if (strlen(full) >= sizeof dir)
        return NULL;
    memcpy(dir, full, strlen(full) + 1);
    char *slash = strrchr(dir, '/');            /* .../full/libnvidia-ml.so.1 */
    if (!slash)
        return NULL;
    *slash = '\0';
    slash = strrchr(dir, '/');                  /* .../full */
    if (!slash)
        return NULL;
    *slash = '\0';
    int n = snprintf(buf, size, "%s/%s/libnvidia-ml.so.1", dir, variant);
    return n > 0 && (size_t)n < size ? buf : NULL;
}

#endif
