/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Guest RAM as live migration state (migration/ram.c); private. */
#ifndef MIGRATION_RAM_H
#define MIGRATION_RAM_H

#include <stdint.h>

/* What query-migrate reports under "ram" (bytes unless said). */
typedef struct MigrationRamStats {
    uint64_t total;
    uint64_t remaining;
    uint64_t duplicate;         /* zero pages */
    uint64_t normal;            /* pages sent with data */
    uint64_t normal_bytes;
    uint64_t dirty_sync_count;
    uint64_t page_size;
} MigrationRamStats;

void ram_register(void);
const MigrationRamStats *ram_get_stats(void);
/* Folds the accelerator's dirty log into the bitmaps (a new pass). */
void ram_sync_dirty_log(void);
/* Destination: forget an earlier stream's block list. */
void ram_reset_load_state(void);

#endif
