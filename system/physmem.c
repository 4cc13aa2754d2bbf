/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The machine-wide address spaces and port I/O helpers.
 *
 * Created on first use, so device code and accelerators can reach them
 * from anywhere without an initialisation order.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/memory.h"
#include "system/address-spaces.h"

static MemoryRegion system_memory;
static MemoryRegion system_io;
static AddressSpace as_memory;
static AddressSpace as_io;
static bool physmem_ready;
static int ram_discard_disablers;

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

void ram_block_discard_disable(bool disable)
{
    if (disable) {
        __atomic_add_fetch(&ram_discard_disablers, 1, __ATOMIC_SEQ_CST);
    } else {
        __atomic_sub_fetch(&ram_discard_disablers, 1, __ATOMIC_SEQ_CST);
    }
}

bool ram_block_discard_is_disabled(void)
{
    return __atomic_load_n(&ram_discard_disablers, __ATOMIC_SEQ_CST) > 0;
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

/*
 * Why [addr, addr + len) is not plain guest RAM that may be accessed this
 * way, or NULL if it is.  *bad_addr gets the first offending address.
 */
static const char *dma_ram_check(AddressSpace *as, hwaddr addr, hwaddr len,
                                 bool is_write, hwaddr *bad_addr)
{
    *bad_addr = addr;
    if (len - 1 > UINT64_MAX - addr) {
        return "the range wraps around the address space";
    }
    while (len) {
        MemoryRegionSection sec;
        uint64_t avail;

        *bad_addr = addr;
        if (!address_space_find_section(as, addr, &sec)) {
            return "nothing is there";
        }
        if (!memory_region_is_ram(sec.mr) ||
            memory_region_is_ram_device(sec.mr)) {
            return memory_region_is_ram_device(sec.mr) ? "device memory"
                                                       : "MMIO";
        }
        if (is_write && (sec.readonly || memory_region_is_readonly(sec.mr))) {
            return "read-only memory";
        }
        avail = sec.offset_within_address_space + sec.size - addr;
        if (avail >= len) {
            break;
        }
        addr += avail;
        len -= avail;
    }
    return NULL;
}

bool address_space_dma_rw_ram(AddressSpace *as, hwaddr addr, void *buf,
                              hwaddr len, bool is_write, const char *requester,
                              Error **errp)
{
    uint8_t *p = buf;
    hwaddr bad;
    const char *why;

    if (!len) {
        return true;
    }
    /* All or nothing: check the whole range before touching any of it. */
    why = dma_ram_check(as, addr, len, is_write, &bad);
    if (why) {
        qemu_log_guest_error("%s: DMA %s of 0x%" PRIx64 " bytes at 0x%"
                             PRIx64 " refused: 0x%" PRIx64 " is not guest "
                             "RAM (%s)", requester,
                             is_write ? "write" : "read", len, addr, bad, why);
        error_setg(errp, "%s: DMA %s of 0x%" PRIx64 " bytes at 0x%" PRIx64
                   " refused: 0x%" PRIx64 " is not guest RAM (%s)", requester,
                   is_write ? "write" : "read", len, addr, bad, why);
        return false;
    }
    while (len) {
        MemoryRegionSection sec;
        uint8_t *host;
        uint64_t n;

        address_space_find_section(as, addr, &sec);
        host = (uint8_t *)memory_region_get_ram_ptr(sec.mr) +
               sec.offset_within_region +
               (addr - sec.offset_within_address_space);
        n = MIN(len, sec.offset_within_address_space + sec.size - addr);
        if (is_write) {
            memcpy(host, p, n);
            memory_region_set_dirty(sec.mr, host - (uint8_t *)
                                    memory_region_get_ram_ptr(sec.mr), n);
        } else {
            memcpy(p, host, n);
        }
        addr += n;
        p += n;
        len -= n;
    }
    return true;
}
