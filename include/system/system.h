/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Entry points of the system emulator shared by both target binaries. */
#ifndef SYSTEM_SYSTEM_H
#define SYSTEM_SYSTEM_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"

/* Parses the command line, builds the machine and runs the main loop. */
int qemu_main(int argc, char **argv);

/* -name NAME (or guest=NAME); NULL if not given. */
extern const char *qemu_name;

/* -S clears autostart; -no-shutdown sets no_shutdown (guest shutdown pauses). */
extern bool autostart;
extern bool no_shutdown;
/* -no-reboot: a guest reset request exits instead of resetting. */
extern bool no_reboot;

/* -boot reboot-timeout=MS: firmware reboots after a failed boot; -1 never. */
extern int boot_reboot_timeout;

/* Backend of the i-th serial port (-serial, or stdio for -nographic). */
#define MAX_SERIAL_PORTS 4
Chardev *serial_hd(int i);

/* -uuid (or -smbios type=1,uuid=): false when none was given. */
bool qemu_uuid_get(uint8_t uuid[16]);

#endif
