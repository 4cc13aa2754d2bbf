/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A migration channel: a buffered byte stream over one fd (socket, pipe,
 * file) or over memory (tests, fuzzing).  Blocking calls for the
 * migration threads; every wait also watches a cancel eventfd, so
 * mig_file_cancel() from the main loop unblocks them whatever the fd is.
 * The first error sticks: later calls fail at once with it.
 */
#ifndef MIGRATION_CHANNEL_H
#define MIGRATION_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/typedefs.h"

typedef struct MigFile MigFile;

/* Takes ownership of fd (closed by mig_file_free). */
MigFile *mig_file_new_fd(int fd);
/* Reads from a copy-free view of data (the caller keeps it alive). */
MigFile *mig_file_new_mem_reader(const uint8_t *data, size_t len);
/* Writes append to out (the caller's). */
MigFile *mig_file_new_mem_writer(GByteArray *out);
void mig_file_free(MigFile *f);

bool mig_file_write(MigFile *f, const void *buf, size_t len, Error **errp);
bool mig_file_flush(MigFile *f, Error **errp);
/* Exactly len bytes, or false ("unexpected end of stream", an I/O error). */
bool mig_file_read(MigFile *f, void *buf, size_t len, Error **errp);

/* Bytes written (flushed or buffered) or read so far. */
uint64_t mig_file_bytes(const MigFile *f);
/* 0: unlimited.  Writes sleep so the rate stays below bytes_per_sec. */
void mig_file_set_rate_limit(MigFile *f, uint64_t bytes_per_sec);
/* Thread-safe: fails every current and later call with "cancelled". */
void mig_file_cancel(MigFile *f);
/*
 * Return path: while a write waits, data arriving from the peer (its
 * verdict) fails the write at once, with mig_file_peer_spoke() true.
 */
void mig_file_watch_peer(MigFile *f);
bool mig_file_peer_spoke(const MigFile *f);
/* Bounds every wait of later writes (0: forever). */
void mig_file_set_write_timeout(MigFile *f, int timeout_ms);
int mig_file_fd(const MigFile *f);
/* Closes the fd now (the peer sees EOF); counters stay readable. */
void mig_file_close(MigFile *f);
/* shutdown(2) a socket both ways (the peer sees EOF); harmless otherwise. */
void mig_file_shutdown(MigFile *f);

#endif
