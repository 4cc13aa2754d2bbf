/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Exactly one load or store of 1, 2, 4 or 8 bytes through a volatile
 * pointer (any other size is treated as 8).
 *
 * Device memory mapped into our address space (a RAM-device region, a
 * mapped BAR) must see the width the guest used: a register may act on a
 * 4-byte write and ignore two 2-byte ones, and the compiler must neither
 * split, merge nor drop the access.  p must be aligned to size.
 *
 * The _he forms move host-order values (the bytes in memory are the bytes
 * of the value as the host stores it); the _le forms treat memory as
 * little-endian, as PCI is.
 */
#ifndef QEMU_LDST_VOLATILE_H
#define QEMU_LDST_VOLATILE_H

#include <stdint.h>
#include <glib.h>

static inline uint64_t volatile_ldn_he(const void *p, unsigned size)
{
    switch (size) {
    case 1:
        return *(const volatile uint8_t *)p;
    case 2:
        return *(const volatile uint16_t *)p;
    case 4:
        return *(const volatile uint32_t *)p;
    default:
        return *(const volatile uint64_t *)p;
    }
}

static inline void volatile_stn_he(void *p, unsigned size, uint64_t v)
{
    switch (size) {
    case 1:
        *(volatile uint8_t *)p = v;
        break;
    case 2:
        *(volatile uint16_t *)p = v;
        break;
    case 4:
        *(volatile uint32_t *)p = v;
        break;
    default:
        *(volatile uint64_t *)p = v;
        break;
    }
}

/* Reverses the low size bytes of v on a big-endian host, else returns v. */
static inline uint64_t volatile_le_swap(uint64_t v, unsigned size)
{
#if G_BYTE_ORDER == G_BIG_ENDIAN
    unsigned bytes = (size == 1 || size == 2 || size == 4) ? size : 8;

    return __builtin_bswap64(v) >> (64 - 8 * bytes);
#else
    (void)size;
    return v;
#endif
}

static inline uint64_t volatile_ldn_le(const void *p, unsigned size)
{
    return volatile_le_swap(volatile_ldn_he(p, size), size);
}

static inline void volatile_stn_le(void *p, unsigned size, uint64_t v)
{
    volatile_stn_he(p, size, volatile_le_swap(v, size));
}

#endif
