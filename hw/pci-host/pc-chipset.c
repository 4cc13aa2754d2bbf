/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The i440FX and Q35 (MCH) host functions and the ICH9 LPC bridge (see
 * include/hw/pci-host/pc-chipset.h).  They hold the registers firmware
 * programs and carry out what those registers decode: PAM windows,
 * the ECAM (PCIEXBAR), the ACPI PM block (PMBASE + ACPI_EN).
 */
#include "qemu/osdep.h"
#include "hw/pci-host/pc-chipset.h"
#include "hw/pci-host/pam.h"
#include "hw/pci/pci_host.h"
#include "hw/acpi/acpi-tables.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "hw/qdev-properties.h"
#include "trace.h"

/* SMRAM register bits (both chipsets). */
#define SMRAM_D_OPEN    0x40
#define SMRAM_D_CLS     0x20
#define SMRAM_D_LCK     0x10
#define SMRAM_G_SMRAME  0x08
#define SMRAM_C_BASE_SEG 0x02       /* 0xa0000, hard-wired */

typedef struct PCHostFunc {
    PCIDevice parent_obj;

    PamState pam;
    uint8_t pam0;               /* PAM0's config offset */
    uint8_t smram;              /* SMRAM's config offset */
} PCHostFunc;

#define TYPE_PC_HOST_FUNC "x-pc-host-function"
#define PC_HOST_FUNC(obj) OBJECT_CHECK(PCHostFunc, (obj), TYPE_PC_HOST_FUNC)

static bool range_covers(uint32_t addr, int len, uint32_t start,
                         uint32_t size)
{
    return addr < start + size && start < addr + len;
}

static void pc_host_func_update_pam(PCHostFunc *s)
{
    pam_update(&s->pam, s->parent_obj.config + s->pam0);
}

/*
 * SMRAM: D_LCK locks D_OPEN at 0 and itself at 1 until reset; G_SMRAME
 * is writable until locked; C_BASE_SEG reads 010b.
 */
static void pc_host_func_write_smram(PCHostFunc *s, uint8_t old)
{
    uint8_t *reg = s->parent_obj.config + s->smram;
    uint8_t v = *reg;

    if (old & SMRAM_D_LCK) {
        v = (old & ~SMRAM_D_OPEN) | (v & SMRAM_D_CLS);
    }
    if (v & SMRAM_D_LCK) {
        v &= ~SMRAM_D_OPEN;
    }
    *reg = (v & (SMRAM_D_OPEN | SMRAM_D_CLS | SMRAM_D_LCK |
                 SMRAM_G_SMRAME)) | SMRAM_C_BASE_SEG;
}

static void pc_host_func_write_config(PCIDevice *dev, uint32_t addr,
                                      uint32_t val, int len)
{
    PCHostFunc *s = PC_HOST_FUNC(dev);
    uint8_t old_smram = dev->config[s->smram];

    pci_default_write_config(dev, addr, val, len);
    if (range_covers(addr, len, s->pam0, PAM_NR_REGS)) {
        pc_host_func_update_pam(s);
    }
    if (range_covers(addr, len, s->smram, 1)) {
        pc_host_func_write_smram(s, old_smram);
    }
}

static void pc_host_func_reset(PCIDevice *dev)
{
    PCHostFunc *s = PC_HOST_FUNC(dev);

    memset(dev->config + s->pam0, 0, PAM_NR_REGS);
    dev->config[s->smram] = SMRAM_C_BASE_SEG;
    pc_host_func_update_pam(s);
}

static void pc_host_func_init_regs(PCHostFunc *s, uint8_t pam0,
                                   uint8_t smram)
{
    PCIDevice *dev = &s->parent_obj;

    s->pam0 = pam0;
    s->smram = smram;
    /* PAM0's low nibble is reserved; PAM1..6 hold two segments each. */
    dev->wmask[pam0] = 0x30;
    memset(dev->wmask + pam0 + 1, 0x33, PAM_NR_REGS - 1);
    dev->wmask[smram] = 0xff;
    dev->config[smram] = SMRAM_C_BASE_SEG;
}

void pc_chipset_enable_pam(PCIDevice *host_func, MemoryRegion *system,
                           MemoryRegion *ram, MemoryRegion *isa_bios)
{
    PCHostFunc *s = PC_HOST_FUNC(host_func);

    pam_init(&s->pam, OBJECT(s), system, ram, isa_bios);
    pc_host_func_update_pam(s);
}

/* ---- i440FX ---- */

static bool i440fx_realize(PCIDevice *dev, Error **errp)
{
    pc_host_func_init_regs(PC_HOST_FUNC(dev), I440FX_PAM0, I440FX_SMRAM);
    return true;
}

static void i440fx_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "Host bridge (i440FX)";
    dc->user_creatable = false;
    dc->hotpluggable = false;
    pc->realize = i440fx_realize;
    pc->vendor_id = PCI_VENDOR_ID_INTEL;
    pc->device_id = PCI_DEVICE_ID_INTEL_82441;
    pc->revision = 0x02;
    pc->class_id = PCI_CLASS_BRIDGE_HOST;
    pc->subsystem_vendor_id = PCI_SUBVENDOR_ID_REDHAT_QUMRANET;
    pc->subsystem_id = PCI_SUBDEVICE_ID_QEMU;
}

/* ---- MCH (q35) ---- */

/*
 * PCIEXBAR: bit 0 enables, bits 2:1 choose 256/128/64 buses, the base
 * is aligned to the window's size.
 */
static void mch_update_pciexbar(PCIDevice *dev)
{
    uint64_t bar = pci_get_quad(dev->config + MCH_PCIEXBAR);
    unsigned len = (bar >> 1) & 3;
    uint64_t size = len == 3 ? 0 : MCH_PCIEXBAR_SIZE >> len;
    bool en = (bar & MCH_PCIEXBAR_EN) && size;
    uint64_t base = size ? bar & ~(size - 1) & ((1ULL << 36) - 1) : 0;

    trace_mch_pciexbar(en, base, size);
    pc_pci_host_map_ecam(dev->bus, en, base, size);
}

static void mch_write_config(PCIDevice *dev, uint32_t addr, uint32_t val,
                             int len)
{
    pc_host_func_write_config(dev, addr, val, len);
    if (range_covers(addr, len, MCH_PCIEXBAR, 8)) {
        mch_update_pciexbar(dev);
    }
}

static void mch_reset(PCIDevice *dev)
{
    pc_host_func_reset(dev);
    pci_set_quad(dev->config + MCH_PCIEXBAR, 0);
    dev->config[MCH_ESMRAMC] = 0x38;
    mch_update_pciexbar(dev);
}

static bool mch_realize(PCIDevice *dev, Error **errp)
{
    pc_host_func_init_regs(PC_HOST_FUNC(dev), MCH_PAM0, MCH_SMRAM);
    /* Base bits 35:26, the length field and the enable. */
    pci_set_long(dev->wmask + MCH_PCIEXBAR, 0xfc000007);
    pci_set_long(dev->wmask + MCH_PCIEXBAR + 4, 0x0000000f);
    dev->wmask[MCH_ESMRAMC] = 0x07;     /* T_EN, TSEG size; no SMM */
    dev->config[MCH_ESMRAMC] = 0x38;
    return true;
}

static void mch_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "Host bridge (Q35 MCH)";
    dc->user_creatable = false;
    dc->hotpluggable = false;
    pc->realize = mch_realize;
    pc->config_write = mch_write_config;
    pc->reset = mch_reset;
    pc->vendor_id = PCI_VENDOR_ID_INTEL;
    pc->device_id = PCI_DEVICE_ID_INTEL_Q35_MCH;
    pc->revision = 0x00;
    pc->class_id = PCI_CLASS_BRIDGE_HOST;
    pc->subsystem_vendor_id = PCI_SUBVENDOR_ID_REDHAT_QUMRANET;
    pc->subsystem_id = PCI_SUBDEVICE_ID_QEMU;
}

static void pc_host_func_class_init(ObjectClass *klass, void *data)
{
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->config_write = pc_host_func_write_config;
    pc->reset = pc_host_func_reset;
}

/* ---- ICH9 LPC ---- */

typedef struct ICH9LPCState {
    PCIDevice parent_obj;

    PCChipsetPMHook pm_hook;
    void *pm_opaque;
    uint8_t disable_s3, disable_s4;
    MemoryRegion rcrb;          /* root complex register block */
} ICH9LPCState;

#define ICH9_LPC(obj) OBJECT_CHECK(ICH9LPCState, (obj), TYPE_ICH9_LPC_DEVICE)

/* The PM block decodes at PMBASE once ACPI_EN is set. */
static void ich9_lpc_update_pm(ICH9LPCState *s)
{
    PCIDevice *dev = &s->parent_obj;
    uint16_t base = pci_get_long(dev->config + ICH9_LPC_PMBASE) & 0xff80;
    bool en = dev->config[ICH9_LPC_ACPI_CNTL] & ICH9_LPC_ACPI_CNTL_ACPI_EN;

    if (s->pm_hook) {
        s->pm_hook(s->pm_opaque, en, base);
    }
}

static void ich9_lpc_update_rcba(ICH9LPCState *s)
{
    uint32_t rcba = pci_get_long(s->parent_obj.config + ICH9_LPC_RCBA);

    memory_region_transaction_begin();
    memory_region_set_address(&s->rcrb, rcba & 0xffffc000);
    memory_region_set_enabled(&s->rcrb, rcba & ICH9_LPC_RCBA_EN);
    memory_region_transaction_commit();
}

static void ich9_lpc_write_config(PCIDevice *dev, uint32_t addr,
                                  uint32_t val, int len)
{
    ICH9LPCState *s = ICH9_LPC(dev);

    pci_default_write_config(dev, addr, val, len);
    if (range_covers(addr, len, ICH9_LPC_PMBASE, 4) ||
        range_covers(addr, len, ICH9_LPC_ACPI_CNTL, 1)) {
        ich9_lpc_update_pm(s);
    }
    if (range_covers(addr, len, ICH9_LPC_RCBA, 4)) {
        ich9_lpc_update_rcba(s);
    }
}

static void ich9_lpc_reset(PCIDevice *dev)
{
    ICH9LPCState *s = ICH9_LPC(dev);

    pci_set_long(dev->config + ICH9_LPC_PMBASE, 0x1);
    dev->config[ICH9_LPC_ACPI_CNTL] = 0;
    for (int i = 0; i < 4; i++) {
        dev->config[ICH9_LPC_PIRQA_ROUT + i] = 0x80;
        dev->config[ICH9_LPC_PIRQE_ROUT + i] = 0x80;
    }
    pci_set_long(dev->config + ICH9_LPC_RCBA, 0);
    ich9_lpc_update_pm(s);
    ich9_lpc_update_rcba(s);
}

static uint64_t ich9_rcrb_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void ich9_rcrb_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
}

static const MemoryRegionOps ich9_rcrb_ops = {
    .read = ich9_rcrb_read,
    .write = ich9_rcrb_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

static bool ich9_lpc_realize(PCIDevice *dev, Error **errp)
{
    ICH9LPCState *s = ICH9_LPC(dev);

    if (s->disable_s3 > 1 || s->disable_s4 > 1) {
        error_setg(errp, "ICH9-LPC: disable_s3 and disable_s4 are 0 or 1");
        return false;
    }
    if (!s->disable_s3) {
        error_setg(errp, "ICH9-LPC.disable_s3=0: S3 (suspend to RAM) is not "
                   "supported");
        error_append_hint(errp, "Use -global ICH9-LPC.disable_s3=1 "
                          "(libvirt: <pm><suspend-to-mem enabled='no'/>"
                          "</pm>).\n");
        return false;
    }

    pci_set_word(dev->wmask + ICH9_LPC_PMBASE, 0xff80);
    dev->wmask[ICH9_LPC_ACPI_CNTL] = 0x87;
    for (int i = 0; i < 4; i++) {
        dev->wmask[ICH9_LPC_PIRQA_ROUT + i] = 0x8f;
        dev->wmask[ICH9_LPC_PIRQE_ROUT + i] = 0x8f;
    }
    pci_set_long(dev->wmask + ICH9_LPC_RCBA, 0xffffc001);
    memory_region_init_io(&s->rcrb, OBJECT(s), &ich9_rcrb_ops, s,
                          "lpc-rcrb", ICH9_RCBA_SIZE);
    memory_region_set_enabled(&s->rcrb, false);
    memory_region_add_subregion_overlap(get_system_memory(), 0, &s->rcrb, 1);
    ich9_lpc_reset(dev);
    return true;
}

static void ich9_lpc_exit(PCIDevice *dev)
{
    ICH9LPCState *s = ICH9_LPC(dev);

    memory_region_finalize(&s->rcrb);
}

void ich9_lpc_set_pm(PCIDevice *lpc, PCChipsetPMHook hook, void *opaque)
{
    ICH9LPCState *s = ICH9_LPC(lpc);

    s->pm_hook = hook;
    s->pm_opaque = opaque;
    ich9_lpc_update_pm(s);
}

void ich9_lpc_sleep_states(PCIDevice *lpc, uint8_t *disable_s3,
                           uint8_t *disable_s4)
{
    *disable_s3 = ICH9_LPC(lpc)->disable_s3;
    *disable_s4 = ICH9_LPC(lpc)->disable_s4;
}

static const Property ich9_lpc_props[] = {
    DEFINE_PROP_UINT8("disable_s3", ICH9LPCState, disable_s3, 1),
    DEFINE_PROP_UINT8("disable_s4", ICH9LPCState, disable_s4, 0),
    DEFINE_PROP_END_OF_LIST(),
};

static void ich9_lpc_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "ICH9 LPC bridge";
    device_class_set_props(dc, ich9_lpc_props);
    dc->user_creatable = false;
    dc->hotpluggable = false;
    pc->realize = ich9_lpc_realize;
    pc->exit = ich9_lpc_exit;
    pc->config_write = ich9_lpc_write_config;
    pc->reset = ich9_lpc_reset;
    pc->vendor_id = PCI_VENDOR_ID_INTEL;
    pc->device_id = PCI_DEVICE_ID_INTEL_ICH9_LPC;
    pc->revision = 0x02;
    pc->class_id = 0x0601;      /* ISA bridge */
    pc->subsystem_vendor_id = PCI_SUBVENDOR_ID_REDHAT_QUMRANET;
    pc->subsystem_id = PCI_SUBDEVICE_ID_QEMU;
}

/* ---- PIIX4 power management function (pc with firmware) ---- */

typedef struct PIIX4PMFunc {
    PCIDevice parent_obj;

    PCChipsetPMHook pm_hook;
    void *pm_opaque;
} PIIX4PMFunc;

#define PIIX4_PM_FUNC(obj) \
    OBJECT_CHECK(PIIX4PMFunc, (obj), TYPE_PIIX4_PM_FUNCTION)

/* The PM block decodes at PMBA once PMREGMISC.PMIOSE is set. */
static void piix4_pm_func_update(PIIX4PMFunc *s)
{
    PCIDevice *dev = &s->parent_obj;
    uint16_t base = pci_get_long(dev->config + PIIX4_PMBA) & 0xffc0;
    bool en = dev->config[PIIX4_PMREGMISC] & PIIX4_PMREGMISC_PMIOSE;

    if (s->pm_hook) {
        s->pm_hook(s->pm_opaque, en, base);
    }
}

static void piix4_pm_func_write_config(PCIDevice *dev, uint32_t addr,
                                       uint32_t val, int len)
{
    pci_default_write_config(dev, addr, val, len);
    if (range_covers(addr, len, PIIX4_PMBA, 4) ||
        range_covers(addr, len, PIIX4_PMREGMISC, 1)) {
        piix4_pm_func_update(PIIX4_PM_FUNC(dev));
    }
}

static void piix4_pm_func_reset(PCIDevice *dev)
{
    pci_set_long(dev->config + PIIX4_PMBA, 0x1);
    dev->config[PIIX4_PMREGMISC] = 0;
    dev->config[PCI_INTERRUPT_PIN] = 1;
    /* DEVACTB.APMC_EN preset: firmware takes SMM as set up (there is none). */
    dev->config[PIIX4_DEVACTB + 3] = 0x02;
    piix4_pm_func_update(PIIX4_PM_FUNC(dev));
}

static bool piix4_pm_func_realize(PCIDevice *dev, Error **errp)
{
    pci_set_long(dev->wmask + PIIX4_PMBA, 0xffc0);
    dev->wmask[PIIX4_PMREGMISC] = PIIX4_PMREGMISC_PMIOSE;
    /* SMBus base and host config: kept as registers only. */
    pci_set_long(dev->wmask + 0x90, 0xfff0);
    dev->wmask[0xd2] = 0xff;
    piix4_pm_func_reset(dev);
    return true;
}

void piix4_pm_func_set_pm(PCIDevice *func, PCChipsetPMHook hook,
                          void *opaque)
{
    PIIX4PMFunc *s = PIIX4_PM_FUNC(func);

    s->pm_hook = hook;
    s->pm_opaque = opaque;
    piix4_pm_func_update(s);
}

static void piix4_pm_func_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "PIIX4 power management function (pc, 01.3)";
    dc->user_creatable = false;
    dc->hotpluggable = false;
    pc->realize = piix4_pm_func_realize;
    pc->config_write = piix4_pm_func_write_config;
    pc->reset = piix4_pm_func_reset;
    pc->vendor_id = PCI_VENDOR_ID_INTEL;
    pc->device_id = PCI_DEVICE_ID_INTEL_82371AB_3;
    pc->revision = 0x03;
    pc->class_id = 0x0680;      /* bridge, other */
    pc->subsystem_vendor_id = PCI_SUBVENDOR_ID_REDHAT_QUMRANET;
    pc->subsystem_id = PCI_SUBDEVICE_ID_QEMU;
}

/* ---- what firmware would program ---- */

void pc_chipset_firmware_setup(PCIDevice *host_func, PCIDevice *lpc)
{
    if (object_dynamic_cast(OBJECT(host_func), TYPE_MCH_PCI_DEVICE)) {
        pci_host_config_write(host_func, MCH_PCIEXBAR + 4,
                              MCH_PCIEXBAR_DEFAULT >> 32, 4);
        pci_host_config_write(host_func, MCH_PCIEXBAR,
                              (uint32_t)MCH_PCIEXBAR_DEFAULT |
                              MCH_PCIEXBAR_EN, 4);
    }
    if (lpc) {
        pci_host_config_write(lpc, ICH9_LPC_PMBASE, ACPI_PM_BASE | 1, 4);
        pci_host_config_write(lpc, ICH9_LPC_ACPI_CNTL,
                              ICH9_LPC_ACPI_CNTL_ACPI_EN, 1);
    }
}

static const TypeInfo pc_chipset_types[] = {
    {
        .name = TYPE_PC_HOST_FUNC,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(PCHostFunc),
        .class_init = pc_host_func_class_init,
        .abstract = true,
    },
    {
        .name = TYPE_I440FX_PCI_DEVICE,
        .parent = TYPE_PC_HOST_FUNC,
        .instance_size = sizeof(PCHostFunc),
        .class_init = i440fx_class_init,
    },
    {
        .name = TYPE_MCH_PCI_DEVICE,
        .parent = TYPE_PC_HOST_FUNC,
        .instance_size = sizeof(PCHostFunc),
        .class_init = mch_class_init,
    },
    {
        .name = TYPE_PIIX4_PM_FUNCTION,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(PIIX4PMFunc),
        .class_init = piix4_pm_func_class_init,
    },
    {
        .name = TYPE_ICH9_LPC_DEVICE,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(ICH9LPCState),
        .class_init = ich9_lpc_class_init,
    },
};

DEFINE_TYPES(pc_chipset_types)
