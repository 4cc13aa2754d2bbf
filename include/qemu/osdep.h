/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Conduit: the prelude every .c file includes first.
 *
 * It pulls in the C library, glib and the small set of compiler helpers
 * used everywhere, so that other headers can stay self-sufficient without
 * each repeating them.  Headers never include this file.
 */
#ifndef QEMU_OSDEP_H
#define QEMU_OSDEP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <limits.h>
#include <assert.h>
#include <unistd.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/ioctl.h>

#include <glib.h>

#include "qemu/compiler.h"
#include "qemu/typedefs.h"

#endif
