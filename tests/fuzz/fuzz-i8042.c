/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the i8042 keyboard controller as a hostile guest
 * drives it.  Each input is a list of two-byte operations on a pc
 * machine's controller, reset to its power-on state first: op & 7
 * selects a write to 0x60 or 0x64, a read of either, or a key event
 * (the second byte picks the key, op bit 3 press or release) from the
 * input layer, as send-key would deliver it.
 */
#include "qemu/osdep.h"
#include "hw/qdev-core.h"
#include "hw/input/input.h"
#include "qom/object.h"
#include "system/address-spaces.h"
#include "pc-machine.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 4096

static DeviceState *i8042;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_pc_machine_init();
    i8042 = DEVICE(object_resolve_path("/machine/i8042", NULL));
    g_assert(i8042);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    device_cold_reset(i8042);
    for (size_t i = 0; i + 1 < size && i / 2 < MAX_OPS; i += 2) {
        uint8_t op = data[i], val = data[i + 1];

        switch (op & 7) {
        case 0:
        case 1:
            cpu_outb(0x60, val);
            break;
        case 2:
        case 3:
            cpu_outb(0x64, val);
            break;
        case 4:
            cpu_inb(0x60);
            break;
        case 5:
            cpu_inb(0x64);
            break;
        default:
            input_key_event(val % input_key_count(), op & 8);
            break;
        }
    }
    return 0;
}
