/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fw_cfg: the firmware configuration device SeaBIOS and OVMF read (the
 * interface is documented in QEMU's docs/specs/fw_cfg.rst).  On x86 it
 * sits at I/O ports 0x510 (16-bit selector), 0x511 (data byte) and
 * 0x514..0x51b (the 64-bit big-endian DMA address; writing its low half
 * at 0x518 starts a transfer).  Items are numbered keys and named files;
 * a file may have a callback that runs when the firmware selects it (so
 * tables are built from the state the firmware left) and may be
 * writable through DMA.
 *
 * The item store and the DMA request logic are plain functions over a
 * FWCfgState (unit-tested); the device only wires them to the ports.
 */
#ifndef HW_NVRAM_FW_CFG_H
#define HW_NVRAM_FW_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qemu/typedefs.h"

#define TYPE_FW_CFG_IO "fw_cfg_io"

#define FW_CFG_IO_BASE          0x510
#define FW_CFG_DMA_IO_BASE      0x514

/* Keys (fw_cfg.rst "Selector register"). */
#define FW_CFG_SIGNATURE        0x00
#define FW_CFG_ID               0x01
#define FW_CFG_UUID             0x02
#define FW_CFG_RAM_SIZE         0x03
#define FW_CFG_NOGRAPHIC        0x04
#define FW_CFG_NB_CPUS          0x05
#define FW_CFG_MACHINE_ID       0x06
#define FW_CFG_BOOT_DEVICE      0x0c
#define FW_CFG_NUMA             0x0d
#define FW_CFG_BOOT_MENU        0x0e
#define FW_CFG_MAX_CPUS         0x0f
#define FW_CFG_FILE_DIR         0x19
#define FW_CFG_FILE_FIRST       0x20
#define FW_CFG_FILE_SLOTS       0x1000
#define FW_CFG_WRITE_CHANNEL    0x4000
#define FW_CFG_ARCH_LOCAL       0x8000
#define FW_CFG_ENTRY_MASK       (~(FW_CFG_WRITE_CHANNEL | FW_CFG_ARCH_LOCAL))
#define FW_CFG_INVALID          0xffff
/* x86's own keys. */
#define FW_CFG_ACPI_TABLES      (FW_CFG_ARCH_LOCAL + 0)
#define FW_CFG_SMBIOS_ENTRIES   (FW_CFG_ARCH_LOCAL + 1)
#define FW_CFG_IRQ0_OVERRIDE    (FW_CFG_ARCH_LOCAL + 2)
#define FW_CFG_E820_TABLE       (FW_CFG_ARCH_LOCAL + 3)

/* FW_CFG_ID feature bits. */
#define FW_CFG_VERSION          0x01
#define FW_CFG_VERSION_DMA      0x02

/* FWCfgDmaAccess.control bits. */
#define FW_CFG_DMA_CTL_ERROR    0x01
#define FW_CFG_DMA_CTL_READ     0x02
#define FW_CFG_DMA_CTL_SKIP     0x04
#define FW_CFG_DMA_CTL_SELECT   0x08
#define FW_CFG_DMA_CTL_WRITE    0x10

/* Reading the DMA address register returns "QEMU CFG" (big-endian). */
#define FW_CFG_DMA_SIGNATURE    0x51454d5520434647ULL

#define FW_CFG_MAX_FILE_PATH    56

/* One entry of the FW_CFG_FILE_DIR item (all fields big-endian). */
typedef struct FWCfgFile {
    uint32_t size;
    uint16_t select;
    uint16_t reserved;
    char name[FW_CFG_MAX_FILE_PATH];
} QEMU_PACKED FWCfgFile;

/* The DMA descriptor in guest memory (big-endian). */
typedef struct FWCfgDmaAccess {
    uint32_t control;
    uint32_t length;
    uint64_t address;
} QEMU_PACKED FWCfgDmaAccess;

typedef struct FWCfgState FWCfgState;

/* Runs when the firmware selects the item (before it reads). */
typedef void (*FWCfgSelectCb)(void *opaque);
/* Runs after a DMA write changed [off, off + len) of a writable file. */
typedef void (*FWCfgWriteCb)(void *opaque, size_t off, size_t len);

/*
 * The item store.  fw_cfg_new() gives one with the signature, the ID
 * (with DMA when dma is true) and an empty file directory.
 */
FWCfgState *fw_cfg_new(bool dma);
void fw_cfg_free(FWCfgState *s);

/* Items take ownership of data (g_malloc'd; may be NULL when len is 0). */
void fw_cfg_add_bytes(FWCfgState *s, uint16_t key, void *data, size_t len);
void fw_cfg_add_i16(FWCfgState *s, uint16_t key, uint16_t value);
void fw_cfg_add_i32(FWCfgState *s, uint16_t key, uint32_t value);
void fw_cfg_add_i64(FWCfgState *s, uint16_t key, uint64_t value);
void fw_cfg_add_string(FWCfgState *s, uint16_t key, const char *value);
/*
 * Named files, listed in FW_CFG_FILE_DIR sorted by name (as QEMU does).
 * Returns the key, or FW_CFG_INVALID (and frees data) for a name that is
 * too long, already used, or when the directory is full.
 */
uint16_t fw_cfg_add_file(FWCfgState *s, const char *name, void *data,
                         size_t len);
uint16_t fw_cfg_add_file_callback(FWCfgState *s, const char *name,
                                  FWCfgSelectCb select_cb,
                                  FWCfgWriteCb write_cb, void *opaque,
                                  void *data, size_t len, bool read_only);
/* Replaces a file's contents (and size); false if there is no such file. */
bool fw_cfg_modify_file(FWCfgState *s, const char *name, void *data,
                        size_t len);
/* A file's current contents, NULL if there is none. */
const void *fw_cfg_file_data(FWCfgState *s, const char *name, size_t *len);
uint16_t fw_cfg_file_key(FWCfgState *s, const char *name);

/* ---- the guest interface, as functions of the store ---- */

void fw_cfg_select(FWCfgState *s, uint16_t key);
/* The next data byte of the selected item (0 past its end). */
uint8_t fw_cfg_read_byte(FWCfgState *s);
/*
 * Carries out the DMA descriptor at guest-physical desc in as: reads it,
 * moves the data, writes the control word back (0 or ERROR).  A
 * descriptor or buffer the address space cannot back is an error, never
 * a crash.
 */
void fw_cfg_dma_run(FWCfgState *s, AddressSpace *as, uint64_t desc);

/* ---- the x86 device ---- */

/*
 * Creates /machine/fw_cfg on the system I/O space (DMA into system
 * memory) and returns its store.
 */
FWCfgState *fw_cfg_init_io(MachineState *ms, Error **errp);
/* The machine's store, NULL when it has none. */
FWCfgState *fw_cfg_find(void);

#endif
