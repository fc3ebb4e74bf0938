/* Two paths, one file (same_file.h). Names are not compared as strings:
 * "out.f32", "./out.f32" and a link to it are all the same file, and two
 * hard links to one inode are one file whatever their names. */
#include "same_file.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The directory part of path ("." when there is none) and its last component. */
static char *split(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Neither exists: one directory entry to be, or two. */
static int same_entry(const char *a, const char *b)
{
    const char *ba, *bb;
    char *da = split(a, &ba), *db = split(b, &bb);
    struct stat sa, sb;
    int same = da && db && !strcmp(ba, bb) && stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev &&
               sa.st_ino == sb.st_ino;
    free(da);
    free(db);
    return same;
}

int txlm_paths_same(const char *a, const char *b)
{
    if (!a || !b || !*a || !*b) return 0;
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return !ea && !eb && same_entry(a, b);
}
