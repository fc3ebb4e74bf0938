/* Where the demo model is: the places are the build's (meson.build
 * defines them). */
#include <gio/gio.h>

#include "write-default-model.h"

static char *existing(char *path)
{
    if (path && g_file_test(path, G_FILE_TEST_IS_REGULAR)) return path;
    g_free(path);
    return NULL;
}

/* The folder this program runs from, resolved (NULL: unknown). */
static char *program_dir(void)
{
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    char *dir = exe ? g_path_get_dirname(exe) : NULL;
    g_free(exe);
    return dir;
}

char *write_default_model(void)
{
    char *dir = program_dir(), *found = NULL;
    char *build = g_canonicalize_filename(TXLM_WRITE_BUILD_DIR, NULL);
    if (dir && !g_strcmp0(dir, build)) found = existing(g_strdup(TXLM_WRITE_SOURCE_MODEL));
    if (!found && dir) found = existing(g_build_filename(dir, TXLM_WRITE_BIN_TO_DATA, "demo.txlm", NULL));
    if (!found) found = existing(g_build_filename(TXLM_WRITE_DATA_DIR, "demo.txlm", NULL));
    if (found) {
        char *canonical = g_canonicalize_filename(found, NULL);
        g_free(found);
        found = canonical;
    }
    g_free(build);
    g_free(dir);
    return found;
}
