/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers the firmware-interface qtests share: configuration
 * mechanism #1 on bus 0, and a dummy firmware image (so the tests do not
 * depend on SeaBIOS being installed).
 */
#ifndef TESTS_QTEST_FW_HELPERS_H
#define TESTS_QTEST_FW_HELPERS_H

#include "libqtest.h"

static inline uint32_t fw_cfg1_addr(int devfn, int off)
{
    return 0x80000000u | (devfn << 8) | (off & 0xfc);
}

static inline uint32_t pci0_readl(QTestState *qts, int devfn, int off)
{
    qtest_outl(qts, 0xcf8, fw_cfg1_addr(devfn, off));
    return qtest_inl(qts, 0xcfc);
}

static inline uint8_t pci0_readb(QTestState *qts, int devfn, int off)
{
    qtest_outl(qts, 0xcf8, fw_cfg1_addr(devfn, off));
    return qtest_inb(qts, 0xcfc + (off & 3));
}

static inline void pci0_writel(QTestState *qts, int devfn, int off,
                               uint32_t v)
{
    qtest_outl(qts, 0xcf8, fw_cfg1_addr(devfn, off));
    qtest_outl(qts, 0xcfc, v);
}

static inline void pci0_writeb(QTestState *qts, int devfn, int off,
                               uint8_t v)
{
    qtest_outl(qts, 0xcf8, fw_cfg1_addr(devfn, off));
    qtest_outb(qts, 0xcfc + (off & 3), v);
}

/*
 * A 256 KiB "BIOS": byte i is (i * 7 + 3) & 0xff, so any address shows
 * where it came from.  Returns the path (g_free; unlink when done).
 */
static inline char *fw_make_dummy_bios(void)
{
    char *path = g_strdup_printf("%s/conduit-dummy-bios-%d.bin",
                                 g_get_tmp_dir(), getpid());
    g_autofree uint8_t *img = g_malloc(256 * 1024);

    for (int i = 0; i < 256 * 1024; i++) {
        img[i] = (i * 7 + 3) & 0xff;
    }
    g_assert_true(g_file_set_contents(path, (char *)img, 256 * 1024, NULL));
    return path;
}

static inline uint8_t fw_dummy_byte(uint64_t offset_in_image)
{
    return (offset_in_image * 7 + 3) & 0xff;
}

#endif
