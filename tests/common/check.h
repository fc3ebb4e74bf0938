/* What the tests of several areas share: a check that counts failures and
 * goes on, so one run reports every broken case. */
#ifndef TXLM_TEST_COMMON_CHECK_H
#define TXLM_TEST_COMMON_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
            failures++;                                          \
        }                                                        \
    } while (0)

#endif
