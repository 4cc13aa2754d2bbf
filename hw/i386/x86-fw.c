/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Firmware on the PC boards (see include/hw/i386/x86-fw.h): the image,
 * where it is mapped, and the fw_cfg items SeaBIOS and OVMF read
 * (docs/specs/fw_cfg.rst in QEMU): RAM size and the e820 map, CPU
 * counts, boot order, the ACPI table-loader with Conduit's own tables,
 * the serial console port, CMOS memory sizes.
 */
#include "qemu/osdep.h"
#include "hw/i386/x86-fw.h"
#include "hw/i386/pc.h"
#include "hw/i386/x86-boot.h"
#include "hw/i386/acpi-pc.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "hw/pci-host/pc-chipset.h"
#include "hw/nvram/fw_cfg.h"
#include "hw/nvram/pflash.h"
#include "hw/acpi/table-loader.h"
#include "hw/rtc/mc146818rtc.h"
#include "hw/firmware/smbios.h"
#include "hw/i386/smbios-pc.h"
#include "hw/char/serial.h"
#include "block/block.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "system/system.h"
#include "system/kvm.h"
#include "qemu/datadir.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "trace.h"

#define X86_ISA_BIOS_MAX 0x20000        /* shown at 0xe0000..0xfffff */
#define X86_BIOS_MAX_SIZE (16 * 1024 * 1024)
#define X86_FLASH_MAX_TOTAL (16 * 1024 * 1024)
/* What KVM's TSS and identity map occupy (accel/kvm): reserved. */
#define X86_KVM_RESERVED_BASE 0xfeffc000ULL
#define X86_KVM_RESERVED_SIZE 0x4000ULL

typedef struct X86Firmware {
    MemoryRegion bios;          /* -bios / default ROM */
    MemoryRegion isa_bios;      /* alias of its (or flash0's) last 128 KiB */
    DeviceState *flash[2];
} X86Firmware;

static X86Firmware x86_fw;

/* ---- the image ---- */

static bool x86_map_bios(MachineState *ms, const char *name, Error **errp)
{
    g_autofree char *path = qemu_find_file(name);
    g_autofree gchar *data = NULL;
    g_autoptr(GError) gerr = NULL;
    gsize len;

    if (!path) {
        error_setg(errp, "could not load PC BIOS '%s'", name);
        error_append_hint(errp, "It is searched in the -L directories and "
                          "/usr/share/qemu (Debian's seabios package "
                          "installs bios-256k.bin there).\n");
        return false;
    }
    if (!g_file_get_contents(path, &data, &len, &gerr)) {
        error_setg(errp, "could not load PC BIOS '%s': %s", path,
                   gerr->message);
        return false;
    }
    if (!len || len % 0x10000 || len > X86_BIOS_MAX_SIZE) {
        error_setg(errp, "PC BIOS '%s' is %" G_GSIZE_FORMAT " bytes; it must "
                   "be a non-zero multiple of 64 KiB, at most 16 MiB", path,
                   len);
        return false;
    }
    if (!memory_region_init_ram(&x86_fw.bios, OBJECT(ms), "pc.bios", len,
                                errp)) {
        return false;
    }
    memcpy(memory_region_get_ram_ptr(&x86_fw.bios), data, len);
    memory_region_set_readonly(&x86_fw.bios, true);
    memory_region_add_subregion(get_system_memory(), 0x100000000ULL - len,
                                &x86_fw.bios);
    memory_region_init_alias(&x86_fw.isa_bios, OBJECT(ms), "isa-bios",
                             &x86_fw.bios,
                             len - MIN(len, X86_ISA_BIOS_MAX),
                             MIN(len, X86_ISA_BIOS_MAX));
    memory_region_set_readonly(&x86_fw.isa_bios, true);
    trace_x86_firmware_bios(path, len);
    return true;
}

static bool x86_map_pflash(MachineState *ms, PCMachineState *pcms,
                           Error **errp)
{
    uint64_t top = 0x100000000ULL, total = 0;

    for (int unit = 0; unit < 2; unit++) {
        const char *node = pcms->pflash_node[unit];
        g_autofree char *name = g_strdup_printf("system.flash%d", unit);
        BlockNode *bs;
        MemoryRegion *mr;
        uint64_t size;

        if (!node) {
            continue;
        }
        if (unit == 1 && !pcms->pflash_node[0]) {
            error_setg(errp, "-machine pflash1 needs pflash0 (the firmware "
                       "code) as well");
            return false;
        }
        bs = block_find(node);
        if (!bs) {
            error_setg(errp, "-machine pflash%d: no block node or drive "
                       "'%s'", unit, node);
            return false;
        }
        x86_fw.flash[unit] = pflash_cfi01_create(ms, name, bs, errp);
        if (!x86_fw.flash[unit]) {
            return false;
        }
        mr = pflash_region(x86_fw.flash[unit]);
        size = memory_region_size(mr);
        total += size;
        if (total > X86_FLASH_MAX_TOTAL) {
            error_setg(errp, "combined size of system firmware exceeds %u "
                       "bytes", X86_FLASH_MAX_TOTAL);
            return false;
        }
        top -= size;
        memory_region_add_subregion(get_system_memory(), top, mr);
        trace_x86_firmware_pflash(unit, node, top, size);
        if (unit == 0) {
            memory_region_init_alias(&x86_fw.isa_bios, OBJECT(ms),
                                     "isa-bios", mr,
                                     size - MIN(size, X86_ISA_BIOS_MAX),
                                     MIN(size, X86_ISA_BIOS_MAX));
            memory_region_set_readonly(&x86_fw.isa_bios, true);
        }
    }
    return true;
}

/* ---- fw_cfg ---- */

static void x86_fw_cfg_add_e820(FWCfgState *fw, uint64_t below_4g,
                                uint64_t above_4g, uint64_t ecam_base,
                                uint64_t ecam_size)
{
    /* struct e820_entry: le64 address, le64 length, le32 type. */
    GByteArray *b = g_byte_array_new();
    const uint64_t e[][3] = {
        { 0, below_4g, X86_E820_RAM },
        { ecam_base, ecam_size, X86_E820_RESERVED },
        { X86_KVM_RESERVED_BASE, X86_KVM_RESERVED_SIZE, X86_E820_RESERVED },
        { PC_HIGHMEM_BASE, above_4g, X86_E820_RAM },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(e); i++) {
        uint8_t ent[20];

        if (!e[i][1]) {
            continue;
        }
        stq_le_p(ent, e[i][0]);
        stq_le_p(ent + 8, e[i][1]);
        stl_le_p(ent + 16, e[i][2]);
        g_byte_array_append(b, ent, sizeof(ent));
    }
    fw_cfg_add_file(fw, "etc/e820", b->data, b->len);
    g_byte_array_free(b, false);
}

/* The memory sizes SeaBIOS's and OVMF's older paths read from CMOS. */
static void x86_cmos_memory(uint64_t below_4g, uint64_t above_4g,
                            unsigned cpus)
{
    DeviceState *rtc = DEVICE(object_resolve_path("/machine/rtc", NULL));
    uint64_t ext_kib, over16m;

    if (!rtc) {
        return;
    }
    mc146818rtc_set_cmos_data(rtc, 0x15, 640 & 0xff);      /* base KiB */
    mc146818rtc_set_cmos_data(rtc, 0x16, 640 >> 8);
    ext_kib = below_4g > 0x100000 ? (below_4g - 0x100000) / 1024 : 0;
    ext_kib = MIN(ext_kib, 0xfc00);
    mc146818rtc_set_cmos_data(rtc, 0x17, ext_kib);
    mc146818rtc_set_cmos_data(rtc, 0x18, ext_kib >> 8);
    mc146818rtc_set_cmos_data(rtc, 0x30, ext_kib);
    mc146818rtc_set_cmos_data(rtc, 0x31, ext_kib >> 8);
    over16m = below_4g > 0x1000000 ? (below_4g - 0x1000000) >> 16 : 0;
    over16m = MIN(over16m, 0xffff);
    mc146818rtc_set_cmos_data(rtc, 0x34, over16m);
    mc146818rtc_set_cmos_data(rtc, 0x35, over16m >> 8);
    mc146818rtc_set_cmos_data(rtc, 0x5b, above_4g >> 16);
    mc146818rtc_set_cmos_data(rtc, 0x5c, above_4g >> 24);
    mc146818rtc_set_cmos_data(rtc, 0x5d, above_4g >> 32);
    mc146818rtc_set_cmos_data(rtc, 0x5f, cpus - 1);
}

/* QEMU's firmware names by PCI class (the subset firmware cares for). */
static const char *x86_fw_pci_name(PCIDevice *dev)
{
    uint16_t cls = pci_get_word(dev->config + PCI_CLASS_DEVICE);

    switch (cls) {
    case 0x0100: return "scsi";
    case 0x0101: return "ide";
    case 0x0106: return "sata";
    case 0x0108: return "nvme";
    case 0x0200: return "ethernet";
    case 0x0300: return "display";
    case 0x0600: return "host";
    case 0x0601: return "isa";
    case 0x0604: return "pci-bridge";
    default: return NULL;
    }
}

static void x86_fw_pci_node(GString *out, PCIDevice *dev)
{
    const char *name = x86_fw_pci_name(dev);
    unsigned slot = PCI_SLOT(dev->devfn), fn = PCI_FUNC(dev->devfn);

    if (name) {
        g_string_append_printf(out, "/%s@%x", name, slot);
    } else {
        g_string_append_printf(out, "/pci%04x,%04x@%x",
                               pci_get_word(dev->config + PCI_VENDOR_ID),
                               pci_get_word(dev->config + PCI_DEVICE_ID),
                               slot);
    }
    if (fn) {
        g_string_append_printf(out, ",%x", fn);
    }
}

char *x86_fw_pci_path(PCIDevice *dev)
{
    GString *out = g_string_new(NULL);
    GPtrArray *chain = g_ptr_array_new();

    for (PCIDevice *d = dev; d; d = d->bus ? d->bus->parent_dev : NULL) {
        g_ptr_array_add(chain, d);
    }
    g_string_append(out, "/pci@i0cf8");
    for (guint i = chain->len; i-- > 0;) {
        x86_fw_pci_node(out, g_ptr_array_index(chain, i));
    }
    g_ptr_array_free(chain, true);
    return g_string_free(out, false);
}

typedef struct BootEntry {
    int32_t index;
    char *path;
} BootEntry;

static int x86_fw_collect_boot(Object *obj, void *opaque)
{
    GArray *list = opaque;
    PCIDevice *dev = (PCIDevice *)object_dynamic_cast(obj, TYPE_PCI_DEVICE);
    g_autoptr(JsonNode) v = NULL;
    BootEntry e;

    if (!dev || !dev->bus || !object_property_find(obj, "bootindex")) {
        return 0;
    }
    v = object_property_get_json(obj, "bootindex", NULL);
    if (!v || json_node_get_value_type(v) != G_TYPE_INT64 ||
        json_node_get_int(v) < 0) {
        return 0;
    }
    e.index = json_node_get_int(v);
    e.path = x86_fw_pci_path(dev);
    g_array_append_val(list, e);
    return 0;
}

static gint x86_fw_boot_cmp(gconstpointer a, gconstpointer b)
{
    return ((const BootEntry *)a)->index - ((const BootEntry *)b)->index;
}

char *x86_fw_bootorder(void)
{
    GArray *list = g_array_new(false, false, sizeof(BootEntry));
    GString *out = g_string_new(NULL);

    object_child_foreach_recursive(object_get_root(), x86_fw_collect_boot,
                                   list);
    g_array_sort(list, x86_fw_boot_cmp);
    for (guint i = 0; i < list->len; i++) {
        BootEntry *e = &g_array_index(list, BootEntry, i);

        g_string_append_printf(out, "%s\n", e->path);
        g_free(e->path);
    }
    g_array_free(list, true);
    if (!out->len) {
        g_string_free(out, true);
        return NULL;
    }
    return g_string_free(out, false);
}

void x86_fw_cfg_set_smbios(FWCfgState *fw, void *anchor, size_t anchor_len,
                           void *tables, size_t tables_len)
{
    /* fw_cfg_modify_file() frees the data when there is no such file. */
    if (fw_cfg_file_key(fw, "etc/smbios/smbios-anchor") != FW_CFG_INVALID) {
        fw_cfg_modify_file(fw, "etc/smbios/smbios-anchor", anchor,
                           anchor_len);
        fw_cfg_modify_file(fw, "etc/smbios/smbios-tables", tables,
                           tables_len);
    } else {
        fw_cfg_add_file(fw, "etc/smbios/smbios-anchor", anchor, anchor_len);
        fw_cfg_add_file(fw, "etc/smbios/smbios-tables", tables, tables_len);
    }
}

bool pc_smbios_fw_cfg(MachineState *ms, FWCfgState *fw, Error **errp)
{
    SmbiosMachine m;
    SmbiosTables t;
    uint8_t ep[MAX(SMBIOS_EP21_SIZE, SMBIOS_EP30_SIZE)];
    size_t ep_len;
    guint len;

    pc_smbios_describe(ms, &m);
    if (!smbios_build_tables(smbios_cmdline_config(), &m, &t, errp)) {
        return false;
    }
    /*
     * The firmware places the table and fills in its address: the
     * anchor's address field stays 0.  2.1 when the table fits its
     * 16-bit length (SeaBIOS reads both), else 3.0.
     */
    if (smbios_build_entry_point_21(&t, 0, ep)) {
        ep_len = SMBIOS_EP21_SIZE;
    } else {
        smbios_build_entry_point_30(&t, 0, ep);
        ep_len = SMBIOS_EP30_SIZE;
    }
    len = t.table->len;
    x86_fw_cfg_set_smbios(fw, g_memdup2(ep, ep_len), ep_len,
                          g_byte_array_free(t.table, false), len);
    t.table = NULL;
    smbios_tables_free(&t);
    return true;
}

static void x86_fw_cfg_acpi_select(void *opaque);

/*
 * The table-loader files, built again each time the firmware selects
 * etc/table-loader (it reads that first, after placing the BARs), so
 * PCI0's windows describe where the firmware put them.  The sizes do not
 * change between builds: the directory the firmware read stays true.
 */
static void x86_fw_cfg_acpi_build(MachineState *ms, bool add)
{
    FWCfgState *fw = PC_MACHINE(ms)->fw_cfg;
    AcpiLoaderFiles f;
    GByteArray *files[3];
    static const char *const names[3] = {
        ACPI_TABLES_FILE, ACPI_RSDP_FILE, ACPI_LOADER_FILE,
    };

    pc_acpi_build_loader(ms, &f);
    files[0] = f.tables;
    files[1] = f.rsdp;
    files[2] = f.loader;
    for (int i = 0; i < 3; i++) {
        guint len = files[i]->len;
        void *data = g_byte_array_free(files[i], false);

        if (!add) {
            fw_cfg_modify_file(fw, names[i], data, len);
        } else if (i == 2) {
            fw_cfg_add_file_callback(fw, names[i], x86_fw_cfg_acpi_select,
                                     NULL, ms, data, len, true);
        } else {
            fw_cfg_add_file(fw, names[i], data, len);
        }
    }
}

static void x86_fw_cfg_acpi_select(void *opaque)
{
    x86_fw_cfg_acpi_build(opaque, false);
}

/* Once every device exists: boot order and the ACPI tables. */
static void x86_fw_cfg_init_done(void *opaque)
{
    MachineState *ms = opaque;
    PCMachineState *pcms = PC_MACHINE(ms);
    FWCfgState *fw = pcms->fw_cfg;
    char *order = x86_fw_bootorder();

    if (order) {
        /* Firmware reads the string up to its NUL. */
        fw_cfg_add_file(fw, "bootorder", order, strlen(order) + 1);
    }
    if (ms->acpi) {
        x86_fw_cfg_acpi_build(ms, true);
    }
}

static void x86_fw_cfg_init(MachineState *ms, PCMachineState *pcms)
{
    FWCfgState *fw = pcms->fw_cfg;
    unsigned max_cpus = MAX(ms->smp.max_cpus, ms->smp.cpus);
    uint8_t *numa = g_malloc0(8 + 8 * max_cpus);
    uint8_t uuid[16] = { 0 };

    fw_cfg_add_i64(fw, FW_CFG_RAM_SIZE, ms->ram_size);
    fw_cfg_add_i16(fw, FW_CFG_NB_CPUS, ms->smp.cpus);
    fw_cfg_add_i16(fw, FW_CFG_MAX_CPUS, max_cpus);
    /* There is no display: the serial port is the console. */
    fw_cfg_add_i16(fw, FW_CFG_NOGRAPHIC, 1);
    fw_cfg_add_i16(fw, FW_CFG_BOOT_MENU, 0);
    if (!qemu_uuid_get(uuid)) {
        memset(uuid, 0, sizeof(uuid));
    }
    fw_cfg_add_bytes(fw, FW_CFG_UUID, g_memdup2(uuid, 16), 16);
    fw_cfg_add_i32(fw, FW_CFG_IRQ0_OVERRIDE, 1);
    fw_cfg_add_bytes(fw, FW_CFG_NUMA, numa, 8 + 8 * max_cpus);
    fw_cfg_add_i32(fw, FW_CFG_E820_TABLE, 0);
    fw_cfg_add_i16(fw, FW_CFG_ACPI_TABLES, 0);
    fw_cfg_add_i16(fw, FW_CFG_SMBIOS_ENTRIES, 0);
    x86_fw_cfg_add_e820(fw, pcms->below_4g_mem_size, pcms->above_4g_mem_size,
                        pcms->ecam_base, pcms->ecam_size);
    if (serial_hd(0)) {
        uint16_t *port = g_new(uint16_t, 1);

        stw_le_p(port, serial_isa_iobase[0]);
        fw_cfg_add_file(fw, "etc/sercon-port", port, sizeof(*port));
    }
    if (boot_reboot_timeout >= 0) {
        uint32_t *wait = g_new(uint32_t, 1);

        /* SeaBIOS waits this many seconds, then reboots; -1: never. */
        stl_le_p(wait, boot_reboot_timeout / 1000);
        fw_cfg_add_file(fw, "etc/boot-fail-wait", wait, sizeof(*wait));
    }
    x86_cmos_memory(pcms->below_4g_mem_size, pcms->above_4g_mem_size,
                    ms->smp.cpus);
    qemu_add_machine_init_done(x86_fw_cfg_init_done, ms);
}

bool x86_firmware_init(MachineState *ms, PCIDevice *host_func, Error **errp)
{
    PCMachineState *pcms = PC_MACHINE(ms);
    const char *bios = ms->firmware;
    bool pflash = pcms->pflash_node[0] || pcms->pflash_node[1];

    if (ms->kernel_filename) {
        if (bios || pflash) {
            warn_report("-kernel with firmware: Conduit boots the kernel "
                        "itself and the firmware is not used");
        }
        return true;
    }
    if (pflash) {
        if (bios) {
            error_setg(errp, "-bios cannot be used together with pflash "
                       "firmware (-drive if=pflash / -machine pflash0)");
            return false;
        }
        if (!x86_map_pflash(ms, pcms, errp)) {
            return false;
        }
    } else if (bios || kvm_enabled()) {
        g_autofree char *found = bios ? NULL
                                      : qemu_find_file(X86_DEFAULT_BIOS);

        if (!bios && !found) {
            error_setg(errp, "no firmware and no -kernel: nothing can boot "
                       "this VM");
            error_append_hint(errp, "Install Debian's seabios package "
                              "(bios-256k.bin) or give -bios FILE, -L DIR, "
                              "-drive if=pflash (OVMF) or -kernel.\n");
            return false;
        }
        if (!x86_map_bios(ms, bios ? bios : X86_DEFAULT_BIOS, errp)) {
            return false;
        }
    } else {
        /* qtest without an explicit firmware: no vCPU would run one. */
        return true;
    }
    pcms->has_firmware = true;
    pc_chipset_enable_pam(host_func, get_system_memory(), ms->ram,
                          &x86_fw.isa_bios);
    pcms->fw_cfg = fw_cfg_init_io(ms, errp);
    if (!pcms->fw_cfg) {
        return false;
    }
    x86_fw_cfg_init(ms, pcms);
    return true;
}
