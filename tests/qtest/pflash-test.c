/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CFI flash (cfi.pflash01) under qtest, the test playing OVMF: the code
 * and variable images mapped below 4 GiB as -drive if=pflash and as
 * -machine pflash0=/pflash1= with -blockdev (libvirt's way), the
 * commands OVMF's flash driver uses (its detection probe, byte program,
 * block erase, read array) plus read ID, CFI query and write-to-buffer,
 * writes persisting in the variable image, and a read-only code image
 * refusing programming.
 */
#include "qemu/osdep.h"
#include "libqtest.h"

#define CODE_SIZE (64 * 1024)
#define VARS_SIZE (16 * 1024)
#define CODE_BASE (0x100000000ULL - CODE_SIZE)
#define VARS_BASE (CODE_BASE - VARS_SIZE)

static char *code_path, *vars_path;

static void make_images(void)
{
    g_autofree uint8_t *code = g_malloc(CODE_SIZE);
    g_autofree uint8_t *vars = g_malloc(VARS_SIZE);

    for (int i = 0; i < CODE_SIZE; i++) {
        code[i] = i & 0xff;
    }
    memset(vars, 0xff, VARS_SIZE);
    vars[0x100] = 0x5a;
    g_assert_true(g_file_set_contents(code_path, (char *)code, CODE_SIZE,
                                      NULL));
    g_assert_true(g_file_set_contents(vars_path, (char *)vars, VARS_SIZE,
                                      NULL));
}

static uint8_t file_byte(const char *path, size_t off)
{
    g_autofree gchar *data = NULL;
    gsize len;

    g_assert_true(g_file_get_contents(path, &data, &len, NULL));
    g_assert_cmpuint(off, <, len);
    return data[off];
}

static QTestState *start_drive(void)
{
    return qtest_initf("-M q35 -nodefaults "
                       "-drive if=pflash,format=raw,unit=0,readonly=on,"
                       "file=%s "
                       "-drive if=pflash,format=raw,unit=1,file=%s",
                       code_path, vars_path);
}

static QTestState *start_blockdev(void)
{
    /* What libvirt writes for <loader type='pflash'> and <nvram>. */
    return qtest_initf(
        "-blockdev '{\"driver\":\"file\",\"filename\":\"%s\","
        "\"node-name\":\"libvirt-pflash0-storage\",\"read-only\":true}' "
        "-blockdev '{\"node-name\":\"libvirt-pflash0-format\","
        "\"read-only\":true,\"driver\":\"raw\","
        "\"file\":\"libvirt-pflash0-storage\"}' "
        "-blockdev '{\"driver\":\"file\",\"filename\":\"%s\","
        "\"node-name\":\"libvirt-pflash1-storage\",\"read-only\":false}' "
        "-blockdev '{\"node-name\":\"libvirt-pflash1-format\","
        "\"read-only\":false,\"driver\":\"raw\","
        "\"file\":\"libvirt-pflash1-storage\"}' "
        "-machine pc-q35-8.2,pflash0=libvirt-pflash0-format,"
        "pflash1=libvirt-pflash1-format -nodefaults",
        code_path, vars_path);
}

static void test_mapping(void)
{
    QTestState *qts;

    make_images();
    for (int way = 0; way < 2; way++) {
        qts = way ? start_blockdev() : start_drive();
        /* The reset vector is the code image's last 16 bytes. */
        g_assert_cmphex(qtest_readb(qts, 0xfffffff0), ==, 0xf0);
        g_assert_cmphex(qtest_readl(qts, CODE_BASE + 0x100), ==, 0x03020100);
        g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x100), ==, 0x5a);
        g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x101), ==, 0xff);
        qtest_quit(qts);
    }
}

static void test_ovmf_sequence(void)
{
    QTestState *qts;

    make_images();
    qts = start_drive();
    /* QemuFlashDetected: clear status reads back the array, read status
     * then reads 0x00 (a flash, not RAM or ROM). */
    qtest_writeb(qts, VARS_BASE + 0x100, 0x50);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x100), ==, 0x5a);
    qtest_writeb(qts, VARS_BASE + 0x100, 0x70);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x100), ==, 0x00);
    qtest_writeb(qts, VARS_BASE + 0x100, 0xff);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x100), ==, 0x5a);

    /* QemuFlashWrite: 0x10 + byte per byte, then read array. */
    for (int i = 0; i < 4; i++) {
        qtest_writeb(qts, VARS_BASE + 0x200 + i, 0x10);
        qtest_writeb(qts, VARS_BASE + 0x200 + i, 0xa0 + i);
    }
    /* In status mode until read array: ready. */
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x200), ==, 0x80);
    qtest_writeb(qts, VARS_BASE + 0x203, 0xff);
    g_assert_cmphex(qtest_readl(qts, VARS_BASE + 0x200), ==, 0xa3a2a1a0);
    /* Programming only clears bits. */
    qtest_writeb(qts, VARS_BASE + 0x200, 0x10);
    qtest_writeb(qts, VARS_BASE + 0x200, 0x0f);
    qtest_writeb(qts, VARS_BASE + 0x200, 0xff);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x200), ==, 0x00);
    /* It is in the image at once. */
    g_assert_cmphex(file_byte(vars_path, 0x201), ==, 0xa1);

    /* QemuFlashEraseBlock: 0x20 + 0xd0 erases the 4 KiB block. */
    qtest_writeb(qts, VARS_BASE + 0x10, 0x20);
    qtest_writeb(qts, VARS_BASE + 0x10, 0xd0);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE), ==, 0x80);
    qtest_writeb(qts, VARS_BASE, 0xff);
    g_assert_cmphex(qtest_readl(qts, VARS_BASE + 0x200), ==, 0xffffffff);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x100), ==, 0xff);
    g_assert_cmphex(file_byte(vars_path, 0x100), ==, 0xff);
    qtest_quit(qts);

    /* The variables survive a restart (through the other interface). */
    qts = start_blockdev();
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x100), ==, 0xff);
    qtest_quit(qts);
}

static void test_query_and_id(void)
{
    QTestState *qts;

    make_images();
    qts = start_drive();
    qtest_writeb(qts, VARS_BASE, 0x98);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x10), ==, 'Q');
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x11), ==, 'R');
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x12), ==, 'Y');
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x13), ==, 0x01);
    /* Device size 2^14, one region of 4 blocks of 4 KiB. */
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x27), ==, 14);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x2d), ==, 3);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x2f), ==, 0x10);
    qtest_writeb(qts, VARS_BASE, 0x90);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE), ==, 0x89);
    qtest_writeb(qts, VARS_BASE, 0xff);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x100), ==, 0x5a);
    /* An unknown command sets the sequence error bits. */
    qtest_writeb(qts, VARS_BASE, 0x77);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE) & 0x30, ==, 0x30);
    qtest_writeb(qts, VARS_BASE, 0x50);
    qtest_writeb(qts, VARS_BASE, 0x70);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE), ==, 0x00);
    qtest_quit(qts);
}

static void test_write_buffer(void)
{
    QTestState *qts;

    make_images();
    qts = start_drive();
    qtest_writeb(qts, VARS_BASE + 0x800, 0xe8);
    g_assert_cmphex(qtest_readb(qts, VARS_BASE + 0x800), ==, 0x80);
    qtest_writeb(qts, VARS_BASE + 0x800, 3);          /* 4 bytes */
    for (int i = 0; i < 4; i++) {
        qtest_writeb(qts, VARS_BASE + 0x800 + i, 0x11 * (i + 1));
    }
    qtest_writeb(qts, VARS_BASE + 0x800, 0xd0);
    qtest_writeb(qts, VARS_BASE + 0x800, 0xff);
    g_assert_cmphex(qtest_readl(qts, VARS_BASE + 0x800), ==, 0x44332211);
    g_assert_cmphex(file_byte(vars_path, 0x803), ==, 0x44);
    qtest_quit(qts);
}

static void test_read_only_code(void)
{
    QTestState *qts;

    make_images();
    qts = start_drive();
    qtest_writeb(qts, CODE_BASE + 0x10, 0x10);
    qtest_writeb(qts, CODE_BASE + 0x10, 0x00);
    /* Program error, locked. */
    g_assert_cmphex(qtest_readb(qts, CODE_BASE) & 0x12, ==, 0x12);
    qtest_writeb(qts, CODE_BASE, 0xff);
    g_assert_cmphex(qtest_readb(qts, CODE_BASE + 0x10), ==, 0x10);
    g_assert_cmphex(file_byte(code_path, 0x10), ==, 0x10);
    qtest_quit(qts);
}

/*
 * Migration with the firmware between the cycles of a variable write:
 * the destination (started, and so having read the image, before the
 * source wrote) shows what the source programmed, and takes the data
 * cycle of the program command the source had begun.
 */
static void test_migrate(void)
{
    g_autofree char *dir = g_dir_make_tmp("pflash-mig-XXXXXX", NULL);
    g_autofree char *sock = g_build_filename(dir, "mig.sock", NULL);
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    QTestState *src, *dst;

    make_images();
    src = start_drive();
    dst = qtest_initf("-M q35 -nodefaults "
                      "-drive if=pflash,format=raw,unit=0,readonly=on,"
                      "file=%s "
                      "-drive if=pflash,format=raw,unit=1,file=%s "
                      "-incoming %s", code_path, vars_path, uri);
    qtest_writeb(src, VARS_BASE + 0x300, 0x10);
    qtest_writeb(src, VARS_BASE + 0x300, 0x33);
    qtest_writeb(src, VARS_BASE + 0x300, 0xff);
    /* Program setup: the data cycle comes after the switchover. */
    qtest_writeb(src, VARS_BASE + 0x400, 0x10);
    qtest_migrate_and_wait(src, dst, uri);

    qtest_writeb(dst, VARS_BASE + 0x400, 0x42);
    g_assert_cmphex(qtest_readb(dst, VARS_BASE + 0x400), ==, 0x80);
    qtest_writeb(dst, VARS_BASE + 0x400, 0xff);
    g_assert_cmphex(qtest_readb(dst, VARS_BASE + 0x400), ==, 0x42);
    g_assert_cmphex(qtest_readb(dst, VARS_BASE + 0x300), ==, 0x33);
    g_assert_cmphex(qtest_readb(dst, VARS_BASE + 0x100), ==, 0x5a);
    g_assert_cmphex(file_byte(vars_path, 0x400), ==, 0x42);
    g_assert_cmphex(file_byte(vars_path, 0x300), ==, 0x33);
    qtest_quit(dst);
    qtest_quit(src);
    unlink(sock);
    rmdir(dir);
}

static void test_bad_config(void)
{
    g_autofree char *odd = g_strdup_printf("%s/conduit-pflash-odd-%d.fd",
                                           g_get_tmp_dir(), getpid());
    char *args = g_strdup_printf(
        "-M q35 -accel qtest -drive if=pflash,format=raw,file=%s", odd);

    g_assert_true(g_file_set_contents(odd, "12345", 5, NULL));
    qtest_assert_start_fails(args, "must be a multiple of 4 KiB");
    unlink(odd);
    g_free(args);
    qtest_assert_start_fails("-M q35 -accel qtest -machine pflash0=nosuchnode",
                             "no block node or drive 'nosuchnode'");
    args = g_strdup_printf("-M q35 -accel qtest -bios %s "
                           "-drive if=pflash,format=raw,file=%s", code_path,
                           code_path);
    qtest_assert_start_fails(args, "-bios cannot be used together with "
                             "pflash");
    g_free(args);
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    code_path = g_strdup_printf("%s/conduit-pflash-code-%d.fd",
                                g_get_tmp_dir(), getpid());
    vars_path = g_strdup_printf("%s/conduit-pflash-vars-%d.fd",
                                g_get_tmp_dir(), getpid());
    g_test_add_func("/pflash/mapping", test_mapping);
    g_test_add_func("/pflash/ovmf-sequence", test_ovmf_sequence);
    g_test_add_func("/pflash/query-and-id", test_query_and_id);
    g_test_add_func("/pflash/write-buffer", test_write_buffer);
    g_test_add_func("/pflash/read-only-code", test_read_only_code);
    g_test_add_func("/pflash/bad-config", test_bad_config);
    g_test_add_func("/pflash/migrate", test_migrate);
    ret = g_test_run();
    unlink(code_path);
    unlink(vars_path);
    return ret;
}
