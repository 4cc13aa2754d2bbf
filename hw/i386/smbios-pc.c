/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SMBIOS on the pc machine's direct -kernel path: with no firmware to
 * place the tables, Conduit copies the 3.0 and 2.1 entry points and the
 * structure table into the legacy BIOS area at every reset, where Linux's
 * DMI scan (16-byte steps through 0xF0000-0xFFFFF, "_SM3_" first) finds
 * them.  A firmware boot gets the same tables over fw_cfg instead.
 */
#include "qemu/osdep.h"
#include "hw/i386/smbios-pc.h"
#include "hw/i386/pc.h"
#include "hw/i386/x86-boot.h"
#include "hw/firmware/smbios.h"
#include "hw/qdev-core.h"
#include "hw/boards.h"
#include "system/address-spaces.h"
#include "system/memory.h"
#include "system/system.h"
#include "qapi/error.h"
#include "trace.h"

/* Entry points first (each 16-byte aligned), then the table. */
#define PC_SMBIOS_EP30      X86_SMBIOS_ADDR
#define PC_SMBIOS_EP21      (X86_SMBIOS_ADDR + 0x20)
#define PC_SMBIOS_TABLE     (X86_SMBIOS_ADDR + 0x40)

typedef struct PcSmbios {
    GByteArray *blob;           /* from X86_SMBIOS_ADDR */
} PcSmbios;

static PcSmbios pc_smbios;

static void pc_smbios_reset(void *opaque)
{
    PcSmbios *s = opaque;

    address_space_write(&address_space_memory, X86_SMBIOS_ADDR,
                        s->blob->data, s->blob->len);
}

void pc_smbios_describe(MachineState *ms, SmbiosMachine *m)
{
    PCMachineState *pcms = PC_MACHINE(ms);
    MachineClass *mc = MACHINE_GET_CLASS(ms);

    memset(m, 0, sizeof(*m));
    m->product = mc->desc;
    m->version = mc->name ? mc->name : "pc";
    m->sockets = ms->smp.sockets;
    m->cores_per_socket = ms->smp.cores * MAX(ms->smp.dies, 1u);
    m->threads_per_core = ms->smp.threads;
    m->cpus = ms->smp.cpus;
    m->ram_size = ms->ram_size;
    m->ranges[0].addr = 0;
    m->ranges[0].size = pcms->below_4g_mem_size;
    m->ranges[1].addr = PC_HIGHMEM_BASE;
    m->ranges[1].size = pcms->above_4g_mem_size;
    m->nr_ranges = 2;
    m->uuid_set = qemu_uuid_get(m->uuid);
}

bool pc_smbios_init(MachineState *ms, Error **errp)
{
    SmbiosMachine m;
    SmbiosTables t;
    uint8_t ep30[SMBIOS_EP30_SIZE], ep21[SMBIOS_EP21_SIZE];
    GByteArray *blob;
    bool has_ep21;

    pc_smbios_describe(ms, &m);
    if (!smbios_build_tables(smbios_cmdline_config(), &m, &t, errp)) {
        return false;
    }
    if (PC_SMBIOS_TABLE - X86_SMBIOS_ADDR + t.table->len >
        X86_SMBIOS_AREA_SIZE) {
        error_setg(errp, "SMBIOS tables of %u bytes do not fit the %u KiB "
                   "legacy area", t.table->len, X86_SMBIOS_AREA_SIZE >> 10);
        error_append_hint(errp, "Use smaller -smbios file= tables or "
                          "fewer type=11 strings.\n");
        smbios_tables_free(&t);
        return false;
    }
    smbios_build_entry_point_30(&t, PC_SMBIOS_TABLE, ep30);
    has_ep21 = smbios_build_entry_point_21(&t, PC_SMBIOS_TABLE, ep21);
    blob = g_byte_array_sized_new(PC_SMBIOS_TABLE - X86_SMBIOS_ADDR +
                                  t.table->len);
    g_byte_array_set_size(blob, PC_SMBIOS_TABLE - X86_SMBIOS_ADDR);
    memset(blob->data, 0, blob->len);
    memcpy(blob->data, ep30, sizeof(ep30));
    if (has_ep21) {
        memcpy(blob->data + (PC_SMBIOS_EP21 - X86_SMBIOS_ADDR), ep21,
               sizeof(ep21));
    }
    g_byte_array_append(blob, t.table->data, t.table->len);
    trace_pc_smbios(t.nr_structs, t.table->len);
    smbios_tables_free(&t);
    if (pc_smbios.blob) {
        g_byte_array_free(pc_smbios.blob, TRUE);
    } else {
        qemu_register_reset(pc_smbios_reset, &pc_smbios);
    }
    pc_smbios.blob = blob;
    return true;
}
