/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where Conduit looks for firmware and other data files, as QEMU does:
 * the -L directories first (in order), then the built-in list
 * (Conduit's own data directory, Debian's /usr/share/qemu, which holds
 * links to the seabios and ovmf packages' images, then the packages'
 * own directories).
 */
#ifndef QEMU_DATADIR_H
#define QEMU_DATADIR_H

#include <stdio.h>

void qemu_add_data_dir(const char *dir);
/* The path of name (g_free it), NULL if found nowhere.  An absolute or
 * ./relative name is taken as it is. */
char *qemu_find_file(const char *name);
/* -L help: the directories searched, in order. */
void qemu_list_data_dirs(FILE *out);

#endif
