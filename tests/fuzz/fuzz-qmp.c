/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: arbitrary bytes on a QMP monitor after capabilities
 * negotiation.  No machine exists, so device commands meet an empty tree.
 */
#include "qemu/osdep.h"
#include "chr-client.h"
#include "chardev/char.h"
#include "monitor/monitor.h"
#include "qapi/error.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *spec = fuzz_chr_setup();
    Chardev *chr = qemu_chr_new("fuzz-qmp", spec, &error_abort);

    monitor_init_qmp(chr, &error_abort);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_chr_session("{\"execute\": \"qmp_capabilities\"}\n", data, size);
    return 0;
}
