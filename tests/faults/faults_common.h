/* Shared fixtures of the fault tests: a real model packed from a golden
 * case, and contexts with validation as the suite asks for it. */
#ifndef FAULTS_COMMON_H
#define FAULTS_COMMON_H

#include <stdint.h>

#include <txlm.h>

#include "fmt_common.h"

/* Packs $TXLM_GOLDEN/<name> (safetensors, config.json, vocab.txt) into
 * out_path with the given dtype (TXLM_DT_F32, TXLM_DT_F16, ...). */
int flt_pack(const char *name, uint32_t dtype, const char *out_path);
/* Removes the temporary directory, prints the verdict, returns main's status. */
int flt_finish(const char *what, char *dir);
/* Options with validation on when $TXLM_VALIDATION says so. */
txlm_context_options flt_options(uint64_t memory_budget);
/* CHECKs st == want and that the last error names `needle`. */
#define CHECK_STATUS(st, want, needle)                                                                        \
    do {                                                                                                      \
        CHECK((st) == (want) && strstr(txlm_last_error(), (needle)) != NULL, "status %d (want %d), message '%s'", \
              (int)(st), (int)(want), txlm_last_error());                                                     \
        printf("refused as expected: %s\n", txlm_last_error());                                              \
    } while (0)

#endif
