/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Forward declarations of the types that cross module boundaries. */
#ifndef QEMU_TYPEDEFS_H
#define QEMU_TYPEDEFS_H

#include <stdint.h>

typedef uint64_t hwaddr;
#define HWADDR_PRIx PRIx64

typedef struct Error Error;
typedef struct Object Object;
typedef struct ObjectClass ObjectClass;
typedef struct DeviceState DeviceState;
typedef struct DeviceClass DeviceClass;
typedef struct BusState BusState;
typedef struct MachineState MachineState;
typedef struct MachineClass MachineClass;
typedef struct MemoryRegion MemoryRegion;
typedef struct MemoryRegionSection MemoryRegionSection;
typedef struct MemoryListener MemoryListener;
typedef struct AddressSpace AddressSpace;
typedef struct FlatView FlatView;
typedef struct PCIBus PCIBus;
typedef struct FWCfgState FWCfgState;
typedef struct BlockNode BlockNode;
typedef struct PCIDevice PCIDevice;
typedef struct QemuOpts QemuOpts;
typedef struct EventNotifier EventNotifier;
typedef struct Chardev Chardev;
typedef struct QEMUTimer QEMUTimer;

#endif
