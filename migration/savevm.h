/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The migration stream's top level (migration/savevm.c); private to
 * migration/.  The stream:
 *
 *   magic "CNDTMIG\n", version:u32
 *   records, each type:u8 then
 *     REC_LIVE   idstr:str8 len:u32 chunk      (RAM, vfio device data)
 *     REC_DEVICE idstr:str8 len:u32 state crc32:u32
 *     REC_EOF    devices:u32                   (how many REC_DEVICEs)
 *
 * A device's state is its VMStateDescription's encoding.  The reader
 * bounds every length (chunks at MIG_MAX_CHUNK), refuses unknown idstrs,
 * duplicate devices and a device it has but the stream lacks, and checks
 * each device's CRC before parsing.
 */
#ifndef MIGRATION_SAVEVM_H
#define MIGRATION_SAVEVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "migration/channel.h"

#define MIG_STREAM_MAGIC "CNDTMIG\n"
#define MIG_STREAM_VERSION 1
#define MIG_MAX_CHUNK (16 * 1024 * 1024)

bool savevm_send_header(MigFile *f, Error **errp);
/* Live handlers' setup (dirty logging starts). */
bool savevm_live_setup(Error **errp);
uint64_t savevm_live_pending(void);
/* What only the stopped guest's switchover can send (downtime estimate). */
uint64_t savevm_live_switchover_pending(void);
/* One round: every live handler sends up to about max bytes. */
bool savevm_live_iterate(MigFile *f, size_t max, Error **errp);
/* VM stopped, BQL held: the rest of the live state, devices, EOF. */
bool savevm_complete(MigFile *f, Error **errp);
void savevm_live_cleanup(void);

/*
 * Loads a whole stream.  With take_bql, the BQL is taken around the
 * device records and the final checks (the caller runs in a thread and
 * does not hold it); otherwise the caller holds it or runs alone.
 */
bool loadvm_stream(MigFile *f, bool take_bql, Error **errp);

/* CRC-32 (IEEE), for device records. */
uint32_t mig_crc32(uint32_t crc, const uint8_t *p, size_t len);

#endif
