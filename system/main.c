/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Program entry for conduit-system-* binaries.  Which machines exist is
 * decided by what the binary links, not here.
 */
#include "qemu/osdep.h"
#include "system/system.h"

int main(int argc, char **argv)
{
    return qemu_main(argc, argv);
}
