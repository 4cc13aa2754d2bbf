/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cfi.pflash01: a byte-wide CFI flash with the Intel/Sharp command set,
 * as OVMF drives it for its code (read-only) and variable store.  The
 * array is guest RAM the guest reads directly (a read-only memslot under
 * KVM); a write is a command.  Programmed and erased bytes go to the
 * backing block node at once, so variables persist across runs.
 *
 * Commands (CFI / Intel "Basic Command Set"): 0xff read array, 0x90
 * read identifier, 0x98 CFI query, 0x70 read status, 0x50 clear status,
 * 0x10/0x40 program byte, 0xe8 write to buffer, 0x20 + 0xd0 block erase,
 * 0x60 + 0x01/0xd0 lock / unlock (accepted, no locking).
 *
 * The command state machine is pure (PflashCmdState); the device runs it.
 */
#ifndef HW_NVRAM_PFLASH_H
#define HW_NVRAM_PFLASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qemu/typedefs.h"

#define TYPE_PFLASH_CFI01 "cfi.pflash01"

#define PFLASH_SECTOR_SIZE      0x1000
#define PFLASH_ID_MANUFACTURER  0x89    /* Intel */
#define PFLASH_ID_DEVICE        0x18

/* Status register bits. */
#define PFLASH_SR_READY         0x80
#define PFLASH_SR_ERASE_ERR     0x20
#define PFLASH_SR_PROGRAM_ERR   0x10
#define PFLASH_SR_LOCKED        0x02

typedef enum PflashMode {
    PFLASH_MODE_ARRAY,          /* reads see the array (direct) */
    PFLASH_MODE_STATUS,         /* reads see the status register */
    PFLASH_MODE_ID,             /* identifier codes */
    PFLASH_MODE_CFI,            /* the query table */
} PflashMode;

typedef struct PflashCmdState {
    PflashMode mode;
    uint8_t cmd;                /* the command awaiting its next cycle */
    uint8_t status;
    uint32_t buf_count;         /* write-to-buffer: bytes still to come */
    uint64_t buf_start;
    uint8_t buf[256];
    uint32_t buf_len;
} PflashCmdState;

/* What one write cycle asks the device to do to the array. */
typedef enum PflashAction {
    PFLASH_NONE,
    PFLASH_PROGRAM,             /* AND data into [off, off + len) */
    PFLASH_ERASE,               /* fill the sector at off with 0xff */
} PflashAction;

typedef struct PflashOp {
    PflashAction action;
    uint64_t off;
    const uint8_t *data;        /* PROGRAM: len bytes (in PflashCmdState) */
    uint32_t len;
} PflashOp;

void pflash_cmd_reset(PflashCmdState *st);
/* One byte written at off of a size-byte flash. */
PflashOp pflash_cmd_write(PflashCmdState *st, uint64_t size, uint64_t off,
                          uint8_t val);
/* A byte read at off when the mode is not ARRAY (array: from RAM). */
uint8_t pflash_cmd_read(const PflashCmdState *st, uint64_t size,
                        uint64_t off);

/*
 * Creates a flash of size bytes backed by bs (its size must match;
 * read-only nodes make a ROM that refuses programming), named name
 * (e.g. "system.flash0"), child of the machine.  Map its region with
 * pflash_region().
 */
DeviceState *pflash_cfi01_create(MachineState *ms, const char *name,
                                 BlockNode *bs, Error **errp);
MemoryRegion *pflash_region(DeviceState *dev);

#endif
