/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Compiler and arithmetic helpers shared by the whole tree. */
#ifndef QEMU_COMPILER_H
#define QEMU_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#define QEMU_PACKED __attribute__((packed))
#define QEMU_NORETURN __attribute__((noreturn))
#define QEMU_UNUSED __attribute__((unused))
#define QEMU_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#ifdef __clang__
#define QEMU_PRINTF(fmt_idx, arg_idx) \
    __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define QEMU_PRINTF(fmt_idx, arg_idx) \
    __attribute__((format(gnu_printf, fmt_idx, arg_idx)))
#endif

#ifndef likely
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

#ifndef container_of
#define container_of(ptr, type, member) \
    ((type *)((char *)(ptr) - offsetof(type, member)))
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))
#endif

/* n must be a power of two for the *_POW2 forms. */
#define QEMU_ALIGN_DOWN(n, m) ((n) / (m) * (m))
#define QEMU_ALIGN_UP(n, m) QEMU_ALIGN_DOWN((n) + (m) - 1, (m))
#define QEMU_IS_ALIGNED(n, m) (((n) % (m)) == 0)
#define ROUND_UP(n, d) (((n) + (d) - 1) & -(0 ? (n) : (d)))
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))

#define QEMU_BUILD_BUG_ON(x) _Static_assert(!(x), #x)

static inline int is_power_of_2(uint64_t v)
{
    return v && !(v & (v - 1));
}

/* Smallest power of two >= v (v > 0, v <= 2^63). */
static inline uint64_t pow2ceil(uint64_t v)
{
    if (v <= 1) {
        return 1;
    }
    return 1ULL << (64 - __builtin_clzll(v - 1));
}

static inline uint64_t extract64(uint64_t value, int start, int length)
{
    return (value >> start) & (~0ULL >> (64 - length));
}

static inline uint64_t deposit64(uint64_t value, int start, int length,
                                 uint64_t fieldval)
{
    uint64_t mask = (~0ULL >> (64 - length)) << start;
    return (value & ~mask) | ((fieldval << start) & mask);
}

/* Little/big-endian loads and stores on byte buffers. */
static inline uint16_t lduw_le_p(const void *p)
{
    const uint8_t *b = p;
    return b[0] | (b[1] << 8);
}
static inline uint32_t ldl_le_p(const void *p)
{
    const uint8_t *b = p;
    return b[0] | (b[1] << 8) | (b[2] << 16) | ((uint32_t)b[3] << 24);
}
static inline uint64_t ldq_le_p(const void *p)
{
    return ldl_le_p(p) | ((uint64_t)ldl_le_p((const uint8_t *)p + 4) << 32);
}
static inline void stw_le_p(void *p, uint16_t v)
{
    uint8_t *b = p;
    b[0] = v;
    b[1] = v >> 8;
}
static inline void stl_le_p(void *p, uint32_t v)
{
    uint8_t *b = p;
    b[0] = v;
    b[1] = v >> 8;
    b[2] = v >> 16;
    b[3] = v >> 24;
}
static inline void stq_le_p(void *p, uint64_t v)
{
    stl_le_p(p, v);
    stl_le_p((uint8_t *)p + 4, v >> 32);
}
static inline uint32_t ldl_be_p(const void *p)
{
    const uint8_t *b = p;
    return ((uint32_t)b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
}
static inline void stl_be_p(void *p, uint32_t v)
{
    uint8_t *b = p;
    b[0] = v >> 24;
    b[1] = v >> 16;
    b[2] = v >> 8;
    b[3] = v;
}
static inline uint64_t ldq_be_p(const void *p)
{
    return ((uint64_t)ldl_be_p(p) << 32) | ldl_be_p((const uint8_t *)p + 4);
}
static inline void stq_be_p(void *p, uint64_t v)
{
    stl_be_p(p, v >> 32);
    stl_be_p((uint8_t *)p + 4, v);
}

/* Load/store of 1, 2, 4 or 8 bytes, little-endian, from a byte buffer. */
static inline uint64_t ldn_le_p(const void *p, unsigned size)
{
    switch (size) {
    case 1: return *(const uint8_t *)p;
    case 2: return lduw_le_p(p);
    case 4: return ldl_le_p(p);
    default: return ldq_le_p(p);
    }
}
static inline void stn_le_p(void *p, unsigned size, uint64_t v)
{
    switch (size) {
    case 1: *(uint8_t *)p = v; break;
    case 2: stw_le_p(p, v); break;
    case 4: stl_le_p(p, v); break;
    default: stq_le_p(p, v); break;
    }
}

#endif
