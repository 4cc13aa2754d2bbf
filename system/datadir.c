/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The data file search path (see include/qemu/datadir.h). */
#include "qemu/osdep.h"
#include "qemu/datadir.h"

static const char *const builtin_dirs[] = {
    "/usr/share/conduit",
    "/usr/share/qemu",
    "/usr/share/seabios",
    "/usr/share/ovmf",
    "/usr/share/OVMF",
};

static GPtrArray *user_dirs;

void qemu_add_data_dir(const char *dir)
{
    if (!user_dirs) {
        user_dirs = g_ptr_array_new_with_free_func(g_free);
    }
    g_ptr_array_add(user_dirs, g_strdup(dir));
}

static char *data_dir_try(const char *dir, const char *name)
{
    char *path = g_build_filename(dir, name, NULL);

    if (access(path, R_OK) == 0) {
        return path;
    }
    g_free(path);
    return NULL;
}

char *qemu_find_file(const char *name)
{
    char *path;

    if (g_path_is_absolute(name) || g_str_has_prefix(name, "./") ||
        g_str_has_prefix(name, "../")) {
        return access(name, R_OK) == 0 ? g_strdup(name) : NULL;
    }
    for (guint i = 0; user_dirs && i < user_dirs->len; i++) {
        path = data_dir_try(g_ptr_array_index(user_dirs, i), name);
        if (path) {
            return path;
        }
    }
    for (size_t i = 0; i < G_N_ELEMENTS(builtin_dirs); i++) {
        path = data_dir_try(builtin_dirs[i], name);
        if (path) {
            return path;
        }
    }
    return NULL;
}

void qemu_list_data_dirs(FILE *out)
{
    for (guint i = 0; user_dirs && i < user_dirs->len; i++) {
        fprintf(out, "%s\n", (char *)g_ptr_array_index(user_dirs, i));
    }
    for (size_t i = 0; i < G_N_ELEMENTS(builtin_dirs); i++) {
        fprintf(out, "%s\n", builtin_dirs[i]);
    }
}
