/* Helpers of the text tests: running the tools, packing golden cases,
 * reading a golden case's token stream. */
#ifndef TXLM_TEST_TEXT_UTIL_H
#define TXLM_TEST_TEXT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

extern int text_failures;

#define TCHECK(cond)                                                                 \
    do {                                                                             \
        if (!(cond)) {                                                               \
            text_failures++;                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#include "../common/run_tool.h" /* run_tool */

/* txlm-pack golden_dir/name -o out [extra] ; 0 on success. */
int pack_case(const char *pack_exe, const char *golden_dir, const char *name, const char *out, const char *extra);

/* The whole token stream of a golden case (its segments' tokens, then the
 * last target), the segment length L of its first segment and the mean
 * NLL over all targets. Returns the count, 0 on failure; *tokens malloc'd. */
size_t golden_stream(const char *golden_dir, const char *name, int32_t **tokens, uint32_t *seg_len, double *mean_nll);

/* dir/name in one of 4 static buffers used in turn (4 paths live at once). */
char *path_under(const char *dir, const char *name);

/* A fresh temporary directory (removed by the caller with rm_tree). */
char *make_tmp_dir(void);
void rm_tree(const char *dir);

#endif
