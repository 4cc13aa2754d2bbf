/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The machine-wide address spaces (system/physmem.c).
 *
 * All of them are created on first use, so no initialisation order is
 * needed: device code may call get_system_memory() from anywhere.
 */
#ifndef SYSTEM_ADDRESS_SPACES_H
#define SYSTEM_ADDRESS_SPACES_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"

/* Container covering the whole 64-bit physical space (size UINT64_MAX). */
MemoryRegion *get_system_memory(void);
/* 64 KiB container for x86 port I/O. */
MemoryRegion *get_system_io(void);

AddressSpace *address_space_memory_get(void);
AddressSpace *address_space_io_get(void);
/* Usable as the globals QEMU code expects: &address_space_memory. */
#define address_space_memory (*address_space_memory_get())
#define address_space_io (*address_space_io_get())

/*
 * DMA by a party outside the VM's trust boundary (a vfio-user server, a
 * device model acting for a peer): [addr, addr + len) must be guest RAM
 * (writable RAM for a write), as a real IOMMU would allow; MMIO, device
 * memory, ROM and holes are refused as a whole, before any byte moves,
 * with a guest-error log line and errp naming @requester.  Never calls
 * back into a device, so it is safe from any context.
 */
bool address_space_dma_rw_ram(AddressSpace *as, hwaddr addr, void *buf,
                              hwaddr len, bool is_write, const char *requester,
                              Error **errp);

/* Port I/O on address_space_io (little-endian). */
void cpu_outb(uint32_t addr, uint8_t val);
void cpu_outw(uint32_t addr, uint16_t val);
void cpu_outl(uint32_t addr, uint32_t val);
uint8_t cpu_inb(uint32_t addr);
uint16_t cpu_inw(uint32_t addr);
uint32_t cpu_inl(uint32_t addr);

#endif
