/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fw_cfg under qtest, the test playing the firmware: the legacy selector
 * and data ports, the file directory, the DMA interface (read, skip,
 * select, errors), the items SeaBIOS and OVMF read (RAM, CPUs, e820,
 * boot order from bootindex, the ACPI table-loader), on pc and q35.
 */
#include "qemu/osdep.h"
#include "libqtest.h"
#include "fw-helpers.h"

#define FW_CTL 0x510
#define FW_DATA 0x511
#define FW_DMA_HI 0x514
#define FW_DMA_LO 0x518
#define DESC_ADDR 0x10000
#define BUF_ADDR 0x20000

static char *bios_path;

static QTestState *fw_start(const char *machine, const char *extra)
{
    return qtest_initf("-M %s -m 256 -smp 2,maxcpus=4 -bios %s -nodefaults "
                       "-serial null %s", machine, bios_path,
                       extra ? extra : "");
}

static void fw_select(QTestState *qts, uint16_t key)
{
    qtest_outw(qts, FW_CTL, key);
}

static void fw_read(QTestState *qts, void *buf, size_t len)
{
    uint8_t *b = buf;

    for (size_t i = 0; i < len; i++) {
        b[i] = qtest_inb(qts, FW_DATA);
    }
}

/* The key and size of file name, via the legacy interface. */
static bool fw_find_file(QTestState *qts, const char *name, uint16_t *key,
                         uint32_t *size)
{
    uint8_t be[4];
    uint32_t count;

    fw_select(qts, 0x19);
    fw_read(qts, be, 4);
    count = ldl_be_p(be);
    g_assert_cmpuint(count, <, 4096);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t ent[64];

        fw_read(qts, ent, sizeof(ent));
        if (!strncmp((char *)ent + 8, name, 56)) {
            *size = ldl_be_p(ent);
            *key = (ent[4] << 8) | ent[5];
            return true;
        }
    }
    return false;
}

static uint8_t *fw_read_file(QTestState *qts, const char *name,
                             uint32_t *size)
{
    uint16_t key;
    uint8_t *data;

    if (!fw_find_file(qts, name, &key, size)) {
        return NULL;
    }
    data = g_malloc(*size + 1);
    fw_select(qts, key);
    fw_read(qts, data, *size);
    data[*size] = 0;
    return data;
}

/* One DMA descriptor run; returns the control word the device left. */
static uint32_t fw_dma(QTestState *qts, uint32_t control, uint32_t len,
                       uint64_t addr)
{
    uint8_t desc[16];

    stl_be_p(desc, control);
    stl_be_p(desc + 4, len);
    stq_be_p(desc + 8, addr);
    qtest_memwrite(qts, DESC_ADDR, desc, sizeof(desc));
    /* The guest writes big-endian values: byte-swapped registers. */
    qtest_outl(qts, FW_DMA_HI, 0);
    qtest_outl(qts, FW_DMA_LO, __builtin_bswap32(DESC_ADDR));
    qtest_memread(qts, DESC_ADDR, desc, 4);
    return ldl_be_p(desc);
}

static void test_legacy_signature(void)
{
    QTestState *qts = fw_start("pc", NULL);
    uint8_t sig[4], id[4];

    fw_select(qts, 0);
    fw_read(qts, sig, 4);
    g_assert_cmpmem(sig, 4, "QEMU", 4);
    fw_select(qts, 1);
    fw_read(qts, id, 4);
    /* Traditional interface and DMA. */
    g_assert_cmphex(ldl_le_p(id), ==, 3);
    /* Past the end: zeroes. */
    fw_select(qts, 0);
    fw_read(qts, sig, 4);
    g_assert_cmpuint(qtest_inb(qts, FW_DATA), ==, 0);
    /* An unknown key reads as an empty item. */
    fw_select(qts, 0x7777);
    g_assert_cmpuint(qtest_inb(qts, FW_DATA), ==, 0);
    /* The DMA register reads "QEMU CFG". */
    g_assert_cmphex(qtest_inl(qts, FW_DMA_HI), ==, 0x554d4551);
    g_assert_cmphex(qtest_inl(qts, FW_DMA_LO), ==, 0x47464320);
    qtest_quit(qts);
}

static void test_items(void)
{
    QTestState *qts = fw_start("pc", NULL);
    uint8_t b[8];
    uint32_t size;
    g_autofree uint8_t *e820 = NULL;

    fw_select(qts, 0x03);               /* RAM_SIZE */
    fw_read(qts, b, 8);
    g_assert_cmphex(ldq_le_p(b), ==, 256ULL << 20);
    fw_select(qts, 0x05);               /* NB_CPUS */
    fw_read(qts, b, 2);
    g_assert_cmpuint(lduw_le_p(b), ==, 2);
    fw_select(qts, 0x0f);               /* MAX_CPUS */
    fw_read(qts, b, 2);
    g_assert_cmpuint(lduw_le_p(b), ==, 4);
    e820 = fw_read_file(qts, "etc/e820", &size);
    g_assert_nonnull(e820);
    g_assert_cmpuint(size % 20, ==, 0);
    g_assert_cmpuint(size, >=, 20);
    /* First entry: all low RAM, type 1. */
    g_assert_cmphex(ldq_le_p(e820), ==, 0);
    g_assert_cmphex(ldq_le_p(e820 + 8), ==, 256ULL << 20);
    g_assert_cmpuint(ldl_le_p(e820 + 16), ==, 1);
    qtest_quit(qts);
}

static void test_dma(void)
{
    QTestState *qts = fw_start("q35", NULL);
    uint8_t buf[8];
    uint32_t ctl;

    /* SELECT + READ of the signature. */
    qtest_memset(qts, BUF_ADDR, 0xaa, 8);
    ctl = fw_dma(qts, (0x00 << 16) | 0x08 | 0x02, 4, BUF_ADDR);
    g_assert_cmphex(ctl, ==, 0);
    qtest_memread(qts, BUF_ADDR, buf, 8);
    g_assert_cmpmem(buf, 4, "QEMU", 4);
    g_assert_cmphex(buf[4], ==, 0xaa);

    /* SKIP then READ continues at the offset; past the end, zeroes. */
    ctl = fw_dma(qts, (0x00 << 16) | 0x08 | 0x04, 2, 0);
    g_assert_cmphex(ctl, ==, 0);
    ctl = fw_dma(qts, 0x02, 4, BUF_ADDR);
    g_assert_cmphex(ctl, ==, 0);
    qtest_memread(qts, BUF_ADDR, buf, 4);
    g_assert_cmpmem(buf, 4, "MU\0\0", 4);

    /* A buffer nothing backs: ERROR, no crash. */
    ctl = fw_dma(qts, (0x00 << 16) | 0x08 | 0x02, 4, 0xfffffffff000ULL);
    g_assert_cmphex(ctl, ==, 1);
    /* Writing a read-only item: ERROR. */
    ctl = fw_dma(qts, (0x01 << 16) | 0x08 | 0x10, 4, BUF_ADDR);
    g_assert_cmphex(ctl, ==, 1);

    /* A descriptor nothing backs is ignored; the device keeps working. */
    qtest_outl(qts, FW_DMA_HI, __builtin_bswap32(0xffff));
    qtest_outl(qts, FW_DMA_LO, __builtin_bswap32(0xfffff000));
    ctl = fw_dma(qts, (0x00 << 16) | 0x08 | 0x02, 4, BUF_ADDR);
    g_assert_cmphex(ctl, ==, 0);

    /* The legacy and DMA views of the directory agree. */
    ctl = fw_dma(qts, (0x19 << 16) | 0x08 | 0x02, 4, BUF_ADDR);
    g_assert_cmphex(ctl, ==, 0);
    qtest_memread(qts, BUF_ADDR, buf, 4);
    {
        uint8_t be[4];

        fw_select(qts, 0x19);
        fw_read(qts, be, 4);
        g_assert_cmpmem(buf, 4, be, 4);
    }
    qtest_quit(qts);
}

static void test_acpi_files(void)
{
    const char *machines[] = { "pc", "q35" };

    for (int m = 0; m < 2; m++) {
        QTestState *qts = fw_start(machines[m], NULL);
        uint32_t lsize, tsize, rsize;
        g_autofree uint8_t *loader = fw_read_file(qts, "etc/table-loader",
                                                  &lsize);
        g_autofree uint8_t *tables = fw_read_file(qts, "etc/acpi/tables",
                                                  &tsize);
        g_autofree uint8_t *rsdp = fw_read_file(qts, "etc/acpi/rsdp",
                                                &rsize);

        g_assert_nonnull(loader);
        g_assert_nonnull(tables);
        g_assert_nonnull(rsdp);
        g_assert_cmpuint(lsize % 128, ==, 0);
        g_assert_cmpuint(rsize, ==, 36);
        g_assert_cmpmem(rsdp, 8, "RSD PTR ", 8);
        g_assert_cmpmem(tables, 4, "FACS", 4);
        /* First command: ALLOCATE etc/acpi/tables in the high zone. */
        g_assert_cmpuint(ldl_le_p(loader), ==, 1);
        g_assert_cmpstr((char *)loader + 4, ==, "etc/acpi/tables");
        g_assert_nonnull(memmem(tables, tsize, "MCFG", 4));
        g_assert_nonnull(memmem(tables, tsize, "APIC", 4));
        qtest_quit(qts);
    }
}

/*
 * A guest half way through reading an item migrates: the destination
 * goes on from the same byte of the same item (here etc/acpi/tables,
 * which its select hook builds).
 */
static void test_migrate(void)
{
    g_autofree char *dir = g_dir_make_tmp("fwcfg-mig-XXXXXX", NULL);
    g_autofree char *sock = g_build_filename(dir, "mig.sock", NULL);
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    g_autofree char *inc = g_strdup_printf("-incoming %s", uri);
    QTestState *src = fw_start("q35", NULL), *dst;
    uint32_t tsize;
    uint16_t key;
    g_autofree uint8_t *tables = fw_read_file(src, "etc/acpi/tables", &tsize);
    uint8_t head[16], rest[16];

    g_assert_true(fw_find_file(src, "etc/acpi/tables", &key, &tsize));
    g_assert_cmpuint(tsize, >, sizeof(head) + sizeof(rest));
    fw_select(src, key);
    fw_read(src, head, sizeof(head));
    g_assert_cmpmem(head, sizeof(head), tables, sizeof(head));
    dst = fw_start("q35", inc);
    qtest_migrate_and_wait(src, dst, uri);
    fw_read(dst, rest, sizeof(rest));
    g_assert_cmpmem(rest, sizeof(rest), tables + sizeof(head), sizeof(rest));
    qtest_quit(dst);
    qtest_quit(src);
    unlink(sock);
    rmdir(dir);
}

static void test_bootorder(void)
{
    g_autofree char *disk = g_strdup_printf("%s/conduit-fwcfg-disk-%d.img",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *disk2 = g_strdup_printf("%s.2", disk);
    g_autofree char *args = NULL;
    g_autofree uint8_t *order = NULL;
    QTestState *qts;
    uint32_t size;

    /* Two images: one image open read-write and read-only takes locks
     * that conflict, as in QEMU. */
    g_assert_true(g_file_set_contents(disk, "", 0, NULL));
    g_assert_cmpint(truncate(disk, 1 << 20), ==, 0);
    g_assert_true(g_file_set_contents(disk2, "", 0, NULL));
    g_assert_cmpint(truncate(disk2, 1 << 20), ==, 0);
    args = g_strdup_printf(
        "-drive file=%s,if=none,id=d0,format=raw "
        "-drive file=%s,if=none,id=d1,format=raw,readonly=on "
        "-device virtio-blk-pci,drive=d0,addr=05.0,bootindex=2 "
        "-device pcie-root-port,id=rp1,chassis=1,slot=1,addr=06.0 "
        "-device virtio-blk-pci,drive=d1,bus=rp1,bootindex=1", disk, disk2);
    qts = fw_start("q35", args);
    order = fw_read_file(qts, "bootorder", &size);
    g_assert_nonnull(order);
    g_assert_cmpstr((char *)order, ==,
                    "/pci@i0cf8/pci-bridge@6/scsi@0\n/pci@i0cf8/scsi@5\n");
    qtest_quit(qts);

    /* No bootindex anywhere: no bootorder file (firmware's default). */
    qts = fw_start("pc", NULL);
    g_assert_null(fw_read_file(qts, "bootorder", &size));
    qtest_quit(qts);
    unlink(disk);
    unlink(disk2);
}

/* The SMBIOS tables for firmware: a 2.1 anchor and the structures. */
static void test_smbios(void)
{
    QTestState *qts = fw_start("q35", "-smbios type=1,manufacturer=Acme");
    uint32_t asize, tsize;
    g_autofree uint8_t *anchor = fw_read_file(qts, "etc/smbios/smbios-anchor",
                                              &asize);
    g_autofree uint8_t *tables = fw_read_file(qts, "etc/smbios/smbios-tables",
                                              &tsize);

    g_assert_nonnull(anchor);
    g_assert_nonnull(tables);
    g_assert_cmpuint(asize, ==, 0x1f);
    g_assert_cmpmem(anchor, 4, "_SM_", 4);
    g_assert_cmpmem(anchor + 0x10, 5, "_DMI_", 5);
    g_assert_cmpuint(lduw_le_p(anchor + 0x16), ==, tsize);
    g_assert_nonnull(memmem(tables, tsize, "Acme", 4));
    qtest_quit(qts);
}

static void test_sercon(void)
{
    QTestState *qts = qtest_initf("-M pc -bios %s -nodefaults "
                                  "-serial file:/dev/null", bios_path);
    uint32_t size;
    g_autofree uint8_t *port = fw_read_file(qts, "etc/sercon-port", &size);

    g_assert_nonnull(port);
    g_assert_cmphex(lduw_le_p(port), ==, 0x3f8);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    bios_path = fw_make_dummy_bios();
    g_test_add_func("/fw_cfg/legacy/signature", test_legacy_signature);
    g_test_add_func("/fw_cfg/items", test_items);
    g_test_add_func("/fw_cfg/dma", test_dma);
    g_test_add_func("/fw_cfg/acpi-table-loader", test_acpi_files);
    g_test_add_func("/fw_cfg/migrate", test_migrate);
    g_test_add_func("/fw_cfg/bootorder", test_bootorder);
    g_test_add_func("/fw_cfg/sercon-port", test_sercon);
    g_test_add_func("/fw_cfg/smbios", test_smbios);
    ret = g_test_run();
    unlink(bios_path);
    g_free(bios_path);
    return ret;
}
