/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Migration entry points for the system emulator's start-up (vl.c) and
 * the NIC announcement that follows a switchover.
 */
#ifndef MIGRATION_MISC_H
#define MIGRATION_MISC_H

#include <stdbool.h>
#include "qemu/typedefs.h"

/* Registers RAM and the clock as migration state; once, at start-up. */
void migration_init(void);
/*
 * -incoming URI: the VM waits in "inmigrate"; unless URI is "defer",
 * listening (or reading) starts now.  false with errp on a bad URI.
 */
bool migration_incoming_init(const char *uri, Error **errp);

/* Sends the announce-self rounds (RARP on every NIC's backend). */
void migration_incoming_announce(void);
void migration_get_announce_params(unsigned *initial, unsigned *max,
                                   unsigned *rounds, unsigned *step);

#endif
