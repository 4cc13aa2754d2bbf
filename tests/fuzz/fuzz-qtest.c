/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: arbitrary bytes on the qtest protocol socket, against
 * 64 KiB of RAM at address 0, an empty port space, and a DMA engine at
 * 0x10000 that the guest aims anywhere (as it aims a device's DMA, MSI or
 * MSI-X message): registers 0x0/0x4 target address, 0x8 data; a write to
 * 0xc stores the data at the target, a read of 0x10 loads from it.  Aimed
 * at itself it must meet the memory API's re-entrancy guard, not recurse
 * (docs/devel/trust-boundaries.rst).
 */
#include "qemu/osdep.h"
#include "chr-client.h"
#include "system/qtest.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "system/memory.h"
#include "system/address-spaces.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define DMA_ENGINE_BASE 0x10000

typedef struct DmaEngine {
    MemoryRegion mr;
    uint64_t target;
    uint32_t data;
} DmaEngine;

static uint64_t dma_engine_read(void *opaque, hwaddr addr, unsigned size)
{
    DmaEngine *e = opaque;

    switch (addr) {
    case 0x0:
        return (uint32_t)e->target;
    case 0x4:
        return e->target >> 32;
    case 0x8:
        return e->data;
    case 0x10:
        return address_space_ldl_le(&address_space_memory, e->target, NULL);
    default:
        return 0;
    }
}

static void dma_engine_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    DmaEngine *e = opaque;

    switch (addr) {
    case 0x0:
        e->target = deposit64(e->target, 0, 32, val);
        break;
    case 0x4:
        e->target = deposit64(e->target, 32, 32, val);
        break;
    case 0x8:
        e->data = val;
        break;
    case 0xc:
        address_space_stl_le(&address_space_memory, e->target, e->data,
                             NULL);
        break;
    }
}

static const MemoryRegionOps dma_engine_ops = {
    .read = dma_engine_read,
    .write = dma_engine_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *spec = fuzz_chr_setup();
    MemoryRegion *ram = g_new0(MemoryRegion, 1);
    DmaEngine *engine = g_new0(DmaEngine, 1);

    memory_region_init_ram(ram, NULL, "fuzz-ram", 0x10000, &error_abort);
    memory_region_add_subregion(get_system_memory(), 0, ram);
    memory_region_init_io(&engine->mr, NULL, &dma_engine_ops, engine,
                          "fuzz-dma-engine", 0x100);
    memory_region_add_subregion(get_system_memory(), DMA_ENGINE_BASE,
                                &engine->mr);
    qemu_clock_virtual_set_manual(true);
    qtest_set_enabled(true);
    qtest_server_init(spec, NULL, &error_abort);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_chr_session(NULL, data, size);
    return 0;
}
