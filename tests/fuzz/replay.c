/* main() for the fuzz targets when libFuzzer is not used (gcc builds):
 * runs every file named on the command line, or found in a directory named
 * there, through LLVMFuzzerTestOneInput once. A crash, a sanitizer report
 * or a broken invariant fails the test; inputs are never mutated here. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return 1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *nb = realloc(buf, cap * 2);
        if (!nb) free(buf);
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "%s: cannot read\n", path);
        return 1;
    }
    /* An exactly sized copy: reading one byte past the input is an error ASan sees. */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Files of a directory in name order, so runs are reproducible; names
 * starting with '.' and README files are skipped. */
static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: cannot open directory\n", dir);
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, "README", 6) == 0) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                rc = 1;
                break;
            }
            names = nn;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len))) {
            rc = 1;
            break;
        }
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (!rc && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rc = run_file(names[i]);
            ++*count;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0, rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            /* A target may have no regression inputs yet. */
            continue;
        }
        if (S_ISDIR(st.st_mode)) rc = run_dir(argv[i], &count);
        else {
            rc = run_file(argv[i]);
            count++;
        }
    }
    printf("%d inputs replayed\n", count);
    if (!rc && count == 0) {
        fprintf(stderr, "no inputs found: the corpus paths are wrong\n");
        rc = 1;
    }
    return rc;
}
