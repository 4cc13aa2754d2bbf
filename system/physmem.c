/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The machine-wide address spaces and port I/O helpers.
 *
 * Created on first use, so device code and accelerators can reach them
 * from anywhere without an initialisation order.
 */
#include "qemu/osdep.h"
#include "exec/memory.h"
#include "exec/address-spaces.h"

static MemoryRegion system_memory;
static MemoryRegion system_io;
static AddressSpace as_memory;
static AddressSpace as_io;
static bool physmem_ready;

static void physmem_init_once(void)
{
    if (likely(physmem_ready)) {
        return;
    }
    physmem_ready = true;
    memory_region_init(&system_memory, NULL, "system", UINT64_MAX);
    memory_region_init(&system_io, NULL, "io", 0x10000);
    address_space_init(&as_memory, &system_memory, "memory");
    address_space_init(&as_io, &system_io, "I/O");
}

MemoryRegion *get_system_memory(void)
{
    physmem_init_once();
    return &system_memory;
}

MemoryRegion *get_system_io(void)
{
    physmem_init_once();
    return &system_io;
}

AddressSpace *address_space_memory_get(void)
{
    physmem_init_once();
    return &as_memory;
}

AddressSpace *address_space_io_get(void)
{
    physmem_init_once();
    return &as_io;
}

void cpu_outb(uint32_t addr, uint8_t val)
{
    address_space_stb(&address_space_io, addr, val, NULL);
}

void cpu_outw(uint32_t addr, uint16_t val)
{
    address_space_stw_le(&address_space_io, addr, val, NULL);
}

void cpu_outl(uint32_t addr, uint32_t val)
{
    address_space_stl_le(&address_space_io, addr, val, NULL);
}

uint8_t cpu_inb(uint32_t addr)
{
    return address_space_ldub(&address_space_io, addr, NULL);
}

uint16_t cpu_inw(uint32_t addr)
{
    return address_space_lduw_le(&address_space_io, addr, NULL);
}

uint32_t cpu_inl(uint32_t addr)
{
    return address_space_ldl_le(&address_space_io, addr, NULL);
}
