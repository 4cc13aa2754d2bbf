/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * In-process client for fuzzing chardev front-ends (QMP, qtest): the
 * target listens on a UNIX socket chardev, each input is one connection,
 * so no state leaks from one input into the next.
 */
#ifndef FUZZ_CHR_CLIENT_H
#define FUZZ_CHR_CLIENT_H

#include <stddef.h>
#include <stdint.h>

/* Sets up the main loop (BQL held from now on); returns the chardev spec
 * "unix:PATH,server=on,wait=off" to start the front-end on. */
const char *fuzz_chr_setup(void);
/* Connects, sends @prefix (may be NULL) then @data, closes, and pumps the
 * main loop until the front-end has consumed everything. */
void fuzz_chr_session(const char *prefix, const uint8_t *data, size_t size);

#endif
