/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PCI devices: config space, BARs, capabilities, INTx, bus mastering.
 *
 * A PCIDevice owns a config space image (256 B, or 4 KiB for PCIe) and
 * four per-byte masks that give it its PCI semantics:
 *   wmask    bits the guest may write;
 *   w1cmask  bits the guest clears by writing 1 (status bits);
 *   cmask    bits that describe the device (checked by vfio, never written);
 *   used     bytes taken by the header or a capability.
 * Register constants come from <linux/pci_regs.h>.
 */
#ifndef HW_PCI_PCI_H
#define HW_PCI_PCI_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include <linux/pci_regs.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"
#include "system/memory.h"
#include "hw/qdev-core.h"

#define TYPE_PCI_DEVICE "pci-device"
#define TYPE_PCI_BUS "PCI"

#define PCI_DEVICE(obj) OBJECT_CHECK(PCIDevice, (obj), TYPE_PCI_DEVICE)
#define PCI_DEVICE_CLASS(oc) \
    OBJECT_CLASS_CHECK(PCIDeviceClass, (oc), TYPE_PCI_DEVICE)
#define PCI_DEVICE_GET_CLASS(obj) \
    OBJECT_GET_CLASS(PCIDeviceClass, (obj), TYPE_PCI_DEVICE)
#define PCI_BUS(obj) OBJECT_CHECK(PCIBus, (obj), TYPE_PCI_BUS)

#ifndef PCI_DEVFN
#define PCI_DEVFN(slot, fn) ((((slot) & 0x1f) << 3) | ((fn) & 0x07))
#endif
#ifndef PCI_SLOT
#define PCI_SLOT(devfn) (((devfn) >> 3) & 0x1f)
#endif
#ifndef PCI_FUNC
#define PCI_FUNC(devfn) ((devfn) & 0x07)
#endif
#define PCI_DEVFN_MAX 256

#define PCI_CONFIG_HEADER_SIZE 0x40
#define PCI_CONFIG_SPACE_SIZE 0x100
#define PCIE_CONFIG_SPACE_SIZE 0x1000

/* BARs 0..5 plus the expansion ROM. */
#define PCI_ROM_SLOT 6
#define PCI_NUM_REGIONS 7

/* Conduit's own vendor id space for emulated test devices. */
#define PCI_VENDOR_ID_CONDUIT 0x1d0c
#define PCI_DEVICE_ID_CONDUIT_TESTDEV 0x0001
#define PCI_VENDOR_ID_INTEL 0x8086
#define PCI_DEVICE_ID_CONDUIT_HOST 0x0100

/* Class codes (base << 8 | sub) used by our own devices. */
#define PCI_CLASS_BRIDGE_HOST 0x0600
#define PCI_CLASS_OTHERS 0xff

typedef uint64_t pcibus_t;
#define PCI_BAR_UNMAPPED (~(pcibus_t)0)

/* cap_present bits */
#define QEMU_PCI_CAP_MSI      (1u << 0)
#define QEMU_PCI_CAP_MSIX     (1u << 1)
#define QEMU_PCI_CAP_EXPRESS  (1u << 2)
#define QEMU_PCI_CAP_MULTIFUNCTION (1u << 3)

typedef struct PCIIORegion {
    pcibus_t addr;          /* where it is mapped, or PCI_BAR_UNMAPPED */
    pcibus_t size;          /* 0: BAR not implemented */
    uint8_t type;           /* PCI_BASE_ADDRESS_SPACE_IO or MEM_* flags */
    MemoryRegion *memory;   /* the BAR container the device registered */
    MemoryRegion *address_space; /* bus space it maps into */
} PCIIORegion;

typedef struct MSIMessage {
    uint64_t address;
    uint32_t data;
} MSIMessage;

/*
 * MSI-X vector notifiers (see hw/pci/msix.h).  use: the vector became
 * deliverable (enabled, function and vector unmasked) or its message
 * changed while deliverable; return <0 to refuse.  release: it stopped
 * being deliverable.  poll: the guest reads the PBA for [start, end).
 */
typedef int (*MSIVectorUseNotifier)(PCIDevice *dev, unsigned int vector,
                                    MSIMessage msg);
typedef void (*MSIVectorReleaseNotifier)(PCIDevice *dev, unsigned int vector);
typedef void (*MSIVectorPollNotifier)(PCIDevice *dev,
                                      unsigned int vector_start,
                                      unsigned int vector_end);
/* Lazy PBA: the emulated PBA region was enabled or disabled. */
typedef void (*MSIXPbaNotifier)(PCIDevice *dev, bool enabled);

struct PCIDevice {
    DeviceState qdev;

    uint8_t *config;
    uint8_t *cmask;
    uint8_t *wmask;
    uint8_t *w1cmask;
    uint8_t *used;
    /* Bits vfio-pci emulates rather than passes through; owned by it. */
    uint8_t *emulated_config_bits;
    uint32_t config_size;

    /* Properties */
    int32_t devfn;          /* "addr"; -1 means the first free slot */
    bool multifunction;
    char *romfile;
    uint32_t rombar;

    char name[64];
    PCIBus *bus;
    uint32_t cap_present;
    PCIIORegion io_regions[PCI_NUM_REGIONS];

    /* Bus mastering: an alias of the bus DMA space, enabled by BME. */
    AddressSpace bus_master_as;
    MemoryRegion bus_master_container_region;
    MemoryRegion bus_master_enable_region;
    bool bus_master_as_initialized;

    /* INTx: the device's level, and whether COMMAND gates it off. */
    int irq_state;
    bool intx_disabled;

    /* MSI */
    uint8_t msi_cap;

    /* Bridges: the bus behind it (config cycles are routed by number). */
    PCIBus *secondary_bus;

    /* MSI-X (hw/pci/msix.c) */
    uint8_t msix_cap;
    uint32_t msix_entries_nr;
    uint8_t *msix_table;
    uint8_t *msix_pba;
    MemoryRegion msix_table_mmio;
    MemoryRegion msix_pba_mmio;
    MemoryRegion *msix_table_bar;
    MemoryRegion *msix_pba_bar;
    bool msix_function_masked;  /* disabled or MASKALL: nothing delivers */
    bool msix_pba_lazy;
    bool *msix_vector_armed;    /* use notifier called, release not yet */
    MSIVectorUseNotifier msix_vector_use_notifier;
    MSIVectorReleaseNotifier msix_vector_release_notifier;
    MSIVectorPollNotifier msix_vector_poll_notifier;
    MSIXPbaNotifier msix_pba_notifier;
};

typedef struct PCIDeviceClass {
    DeviceClass parent_class;

    bool (*realize)(PCIDevice *dev, Error **errp);
    void (*exit)(PCIDevice *dev);
    uint32_t (*config_read)(PCIDevice *dev, uint32_t addr, int len);
    void (*config_write)(PCIDevice *dev, uint32_t addr, uint32_t val,
                         int len);
    void (*reset)(PCIDevice *dev);

    uint16_t vendor_id;
    uint16_t device_id;
    uint8_t revision;
    uint16_t class_id;
    uint16_t subsystem_vendor_id;
    uint16_t subsystem_id;
    bool is_express;
    bool is_bridge;
} PCIDeviceClass;

/* Bus */
/*
 * A root bus whose BARs map into mem/io.  Devices' DMA goes to dma_root
 * (usually mem as well).  parent may be NULL.
 */
PCIBus *pci_root_bus_new(DeviceState *parent, const char *name,
                         MemoryRegion *mem, MemoryRegion *io,
                         MemoryRegion *dma_root);
/*
 * The device at bus_num/devfn below root bus bus (number 0): bridges pass
 * a number on to their secondary bus when it is within their
 * [secondary, subordinate] range, as the bus-number registers say.
 */
PCIDevice *pci_find_device(PCIBus *bus, int bus_num, uint8_t devfn);
/*
 * Creates bridge's secondary bus "name", decoding into the same spaces as
 * the bridge's own bus (windows are not enforced).
 */
PCIBus *pci_bridge_bus_new(PCIDevice *bridge, const char *name);
void pci_for_each_device(PCIBus *bus,
                         void (*fn)(PCIBus *bus, PCIDevice *dev, void *opaque),
                         void *opaque);

/* INTx routing for a root bus: set_irq(opaque, irq_num, level). */
typedef void (*pci_set_irq_fn)(void *opaque, int irq_num, int level);
typedef int (*pci_map_irq_fn)(PCIDevice *dev, int pin);
void pci_bus_irqs(PCIBus *bus, pci_set_irq_fn set_irq, pci_map_irq_fn map_irq,
                  void *opaque, int nirq);
/* Called for every device realized after the machine was reset once. */
void pci_bus_set_hotplug_hook(PCIBus *bus,
                              void (*fn)(PCIBus *bus, PCIDevice *dev,
                                         void *opaque),
                              void *opaque);

/* Config space */
uint32_t pci_default_read_config(PCIDevice *dev, uint32_t addr, int len);
void pci_default_write_config(PCIDevice *dev, uint32_t addr, uint32_t val,
                              int len);
/* Host-bridge entry points: bounds-checked, dispatch to the class hooks. */
uint32_t pci_host_config_read_common(PCIDevice *dev, uint32_t addr,
                                     uint32_t limit, int len);
void pci_host_config_write_common(PCIDevice *dev, uint32_t addr,
                                  uint32_t limit, uint32_t val, int len);
/* A write by the platform (firmware's role) anywhere in config space. */
void pci_host_config_write(PCIDevice *dev, uint32_t addr, uint32_t val,
                           int len);

/*
 * BAR assignment for hosts that boot without firmware.  place() picks the
 * address of one BAR (false: no room); pci_assign_device_bars() asks it for
 * every implemented BAR, largest first so alignment holes stay small,
 * writes the BARs through the device's config hook as firmware would, then
 * enables bus mastering and the decoders of the spaces it used.  A BAR
 * without room is left unassigned with a warning.
 */
typedef bool (*PCIBarPlaceFn)(PCIDevice *dev, int bar, uint64_t *addr,
                              void *opaque);
void pci_assign_device_bars(PCIDevice *dev, PCIBarPlaceFn place,
                            void *opaque);

/* Capabilities; offset 0 asks for the first free dword-aligned space. */
int pci_add_capability(PCIDevice *dev, uint8_t cap_id, uint8_t offset,
                       uint8_t size, Error **errp);
void pci_del_capability(PCIDevice *dev, uint8_t cap_id, uint8_t size);
uint8_t pci_find_capability(PCIDevice *dev, uint8_t cap_id);

/*
 * PCIe extended capabilities (express functions only).  The list starts
 * at 0x100; adding elsewhere first puts a null header there.  Returns the
 * offset, or -errno with errp set.
 */
int pcie_add_capability(PCIDevice *dev, uint16_t cap_id, uint8_t cap_ver,
                        uint16_t offset, uint16_t size, Error **errp);
uint16_t pcie_find_capability(PCIDevice *dev, uint16_t cap_id);

/* BARs */
void pci_register_bar(PCIDevice *dev, int region_num, uint8_t type,
                      MemoryRegion *memory);
pcibus_t pci_get_bar_addr(PCIDevice *dev, int region_num);
/* Address the BAR register currently decodes, PCI_BAR_UNMAPPED if none. */
pcibus_t pci_bar_address(PCIDevice *dev, int reg, uint8_t type,
                         pcibus_t size);
void pci_update_mappings(PCIDevice *dev);

AddressSpace *pci_get_address_space(PCIDevice *dev);
void pci_set_irq(PCIDevice *dev, int level);
void pci_device_reset(PCIDevice *dev);
/* Offset that a BAR register has for region_num. */
static inline int pci_bar_reg(int region_num)
{
    return region_num == PCI_ROM_SLOT ? PCI_ROM_ADDRESS
                                      : PCI_BASE_ADDRESS_0 + region_num * 4;
}

static inline bool pci_is_express(const PCIDevice *dev)
{
    return dev->cap_present & QEMU_PCI_CAP_EXPRESS;
}

/* Little-endian config accessors. */
static inline uint8_t pci_get_byte(const uint8_t *config)
{
    return *config;
}
static inline void pci_set_byte(uint8_t *config, uint8_t val)
{
    *config = val;
}
static inline uint16_t pci_get_word(const uint8_t *config)
{
    return lduw_le_p(config);
}
static inline void pci_set_word(uint8_t *config, uint16_t val)
{
    stw_le_p(config, val);
}
static inline uint32_t pci_get_long(const uint8_t *config)
{
    return ldl_le_p(config);
}
static inline void pci_set_long(uint8_t *config, uint32_t val)
{
    stl_le_p(config, val);
}
static inline uint64_t pci_get_quad(const uint8_t *config)
{
    return ldq_le_p(config);
}
static inline void pci_set_quad(uint8_t *config, uint64_t val)
{
    stq_le_p(config, val);
}
static inline void pci_word_test_and_set_mask(uint8_t *config, uint16_t mask)
{
    pci_set_word(config, pci_get_word(config) | mask);
}
static inline void pci_word_test_and_clear_mask(uint8_t *config,
                                                uint16_t mask)
{
    pci_set_word(config, pci_get_word(config) & ~mask);
}

static inline uint16_t pci_get_bdf(PCIDevice *dev)
{
    return dev->devfn & 0xff;
}

/*
 * A PCI function's migration state (config space, INTx level, MSI-X
 * table and PBA): every PCI device's default DeviceClass.vmsd, and the
 * first nested struct of a device that has more (hw/pci/pci-migration.c).
 */
struct VMStateDescription;
extern const struct VMStateDescription vmstate_pci_device;

#endif
