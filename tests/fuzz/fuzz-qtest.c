/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: arbitrary bytes on the qtest protocol socket, against
 * 64 KiB of RAM at address 0 and an empty port space.
 */
#include "qemu/osdep.h"
#include "chr-client.h"
#include "sysemu/qtest.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "exec/memory.h"
#include "exec/address-spaces.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *spec = fuzz_chr_setup();
    MemoryRegion *ram = g_new0(MemoryRegion, 1);

    memory_region_init_ram(ram, NULL, "fuzz-ram", 0x10000, &error_abort);
    memory_region_add_subregion(get_system_memory(), 0, ram);
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
