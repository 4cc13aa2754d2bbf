/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Program entry for conduit-system-* binaries.  Which machines exist is
 * decided by what the binary links, not here.
 */
#include "qemu/osdep.h"
#include "qemu/fd-owner.h"
#include "system/system.h"

int main(int argc, char **argv)
{
    /* Before anything opens an fd: these are the ones passed to us. */
    qemu_fd_note_inherited();
    return qemu_main(argc, argv);
}
