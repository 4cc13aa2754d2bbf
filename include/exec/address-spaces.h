/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The machine-wide address spaces (system/physmem.c).
 *
 * All of them are created on first use, so no initialisation order is
 * needed: device code may call get_system_memory() from anywhere.
 */
#ifndef EXEC_ADDRESS_SPACES_H
#define EXEC_ADDRESS_SPACES_H

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

/* Port I/O on address_space_io (little-endian). */
void cpu_outb(uint32_t addr, uint8_t val);
void cpu_outw(uint32_t addr, uint16_t val);
void cpu_outl(uint32_t addr, uint32_t val);
uint8_t cpu_inb(uint32_t addr);
uint16_t cpu_inw(uint32_t addr);
uint32_t cpu_inl(uint32_t addr);

#endif
