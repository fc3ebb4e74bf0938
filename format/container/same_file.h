/* Whether two paths name one file (same_file.c): what keeps an output
 * from replacing a file the same command reads. */
#ifndef TXLM_SAME_FILE_H
#define TXLM_SAME_FILE_H

/* 1 when a and b are one file: the same device and inode (through symbolic
 * and hard links), or, where neither exists yet, the same name in the same
 * directory (reached by any spelling: "x", "./x", "d/../x"); else 0. */
int txlm_paths_same(const char *a, const char *b);

#endif
