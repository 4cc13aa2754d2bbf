/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory back-ends and NUMA on the pc machine, as libvirt writes them for
 * hugepage and NUMA flavors: -object memory-backend-ram|file|memfd,
 * -machine memory-backend=, -mem-path/-mem-prealloc, -numa node/dist,
 * and the guest's view: RAM where it should be, ACPI SRAT and SLIT.
 */
#include "qemu/osdep.h"
#include "libqtest.h"

#define MiB (1ull << 20)

static uint8_t sum(const uint8_t *p, size_t len)
{
    uint8_t s = 0;

    while (len--) {
        s += *p++;
    }
    return s;
}

/* The ACPI table @sig reached from the RSDP's XSDT, or NULL. */
static uint8_t *find_table(QTestState *qts, const char *sig)
{
    g_autofree uint8_t *area = g_malloc(0x20000);
    uint64_t xsdt = 0;
    uint8_t hdr[36];
    unsigned n;

    qtest_memread(qts, 0xe0000, area, 0x20000);
    for (size_t off = 0; off < 0x20000; off += 16) {
        if (!memcmp(area + off, "RSD PTR ", 8) && !sum(area + off, 20)) {
            xsdt = ldq_le_p(area + off + 24);
            break;
        }
    }
    g_assert_cmphex(xsdt, !=, 0);
    qtest_memread(qts, xsdt, hdr, 36);
    n = (ldl_le_p(hdr + 4) - 36) / 8;
    for (unsigned i = 0; i < n; i++) {
        uint64_t a = qtest_readq(qts, xsdt + 36 + 8 * i);
        uint32_t len;
        uint8_t *t;

        qtest_memread(qts, a, hdr, 36);
        if (memcmp(hdr, sig, 4)) {
            continue;
        }
        len = ldl_le_p(hdr + 4);
        t = g_malloc(len);
        qtest_memread(qts, a, t, len);
        g_assert_cmpuint(sum(t, len), ==, 0);
        return t;
    }
    return NULL;
}

static uint64_t ram_size(QTestState *qts)
{
    JsonNode *r = qtest_qmp_assert_success(
        qts, "{'execute': 'qom-get', 'arguments': "
             "{'path': '/machine', 'property': 'ram-size'}}");
    uint64_t v = json_node_get_int(r);

    json_node_unref(r);
    return v;
}

/* What libvirt writes for <numa> with two cells. */
static void test_two_nodes(void)
{
    QTestState *qts = qtest_init(
        "-machine pc -smp 4,sockets=2,cores=2 "
        "-object '{\"qom-type\":\"memory-backend-ram\",\"id\":\"ram-node0\","
        "\"size\":67108864}' "
        "-numa node,nodeid=0,cpus=0-1,memdev=ram-node0 "
        "-object memory-backend-ram,id=ram-node1,size=96M "
        "-numa node,nodeid=1,cpus=2-3,memdev=ram-node1 "
        "-numa dist,src=0,dst=1,val=21");
    g_autofree uint8_t *srat = find_table(qts, "SRAT");
    g_autofree uint8_t *slit = find_table(qts, "SLIT");
    unsigned cpus[2] = { 0 }, off;
    uint64_t mem[2] = { 0 };

    g_assert_cmpuint(ram_size(qts), ==, 160 * MiB);
    /* Both nodes' RAM is guest RAM: the second starts at 64 MiB. */
    qtest_writel(qts, 64 * MiB - 4, 0x11223344);
    qtest_writel(qts, 64 * MiB, 0x55667788);
    qtest_writel(qts, 160 * MiB - 4, 0x99aabbcc);
    g_assert_cmphex(qtest_readl(qts, 64 * MiB - 4), ==, 0x11223344);
    g_assert_cmphex(qtest_readl(qts, 64 * MiB), ==, 0x55667788);
    g_assert_cmphex(qtest_readl(qts, 160 * MiB - 4), ==, 0x99aabbcc);

    g_assert_nonnull(srat);
    for (off = 48; off < ldl_le_p(srat + 4); off += srat[off + 1]) {
        if (srat[off] == 0) {
            g_assert_cmpuint(srat[off + 2], <, 2);
            cpus[srat[off + 2]]++;
            /* APIC ids 0,1 (socket 0) in node 0; 2,3 in node 1. */
            g_assert_cmpuint(srat[off + 3] / 2, ==, srat[off + 2]);
        } else if (srat[off] == 1) {
            uint32_t node = ldl_le_p(srat + off + 2);

            g_assert_cmpuint(node, <, 2);
            mem[node] += ldq_le_p(srat + off + 16);
            if (node == 1) {
                g_assert_cmphex(ldq_le_p(srat + off + 8), ==, 64 * MiB);
            }
        }
    }
    g_assert_cmpuint(cpus[0], ==, 2);
    g_assert_cmpuint(cpus[1], ==, 2);
    g_assert_cmpuint(mem[0], ==, 64 * MiB);
    g_assert_cmpuint(mem[1], ==, 96 * MiB);

    g_assert_nonnull(slit);
    g_assert_cmpuint(ldq_le_p(slit + 36), ==, 2);
    g_assert_cmpmem(slit + 44, 4, ((uint8_t[]){ 10, 21, 21, 10 }), 4);
    qtest_quit(qts);
}

/* No -numa: no SRAT, no SLIT (as before). */
static void test_no_numa(void)
{
    QTestState *qts = qtest_init("-machine pc");
    g_autofree uint8_t *srat = find_table(qts, "SRAT");

    g_assert_null(srat);
    qtest_quit(qts);
}

/* Hugepage flavors: libvirt's memory-backend-file as the machine's RAM. */
static void test_backend_file_prealloc(void)
{
    g_autofree char *dir = g_dir_make_tmp("hostmem-XXXXXX", NULL);
    QTestState *qts = qtest_initf(
        "-machine pc,memory-backend=pc.ram "
        "-object '{\"qom-type\":\"memory-backend-file\",\"id\":\"pc.ram\","
        "\"mem-path\":\"%s\",\"x-use-canonical-path-for-ramblock-id\":false,"
        "\"prealloc\":true,\"size\":134217728}'", dir);
    GDir *d;

    g_assert_cmpuint(ram_size(qts), ==, 128 * MiB);
    qtest_writeq(qts, 100 * MiB, 0x0123456789abcdefull);
    g_assert_cmphex(qtest_readq(qts, 100 * MiB), ==, 0x0123456789abcdefull);
    /* The backing file is unlinked at once: the directory stays empty. */
    d = g_dir_open(dir, 0, NULL);
    g_assert_null(g_dir_read_name(d));
    g_dir_close(d);
    qtest_quit(qts);

    /* -mem-path DIR -mem-prealloc: the same, implicitly. */
    qts = qtest_initf("-machine pc -m 64 -mem-path %s -mem-prealloc", dir);
    g_assert_cmpuint(ram_size(qts), ==, 64 * MiB);
    qtest_writel(qts, 32 * MiB, 0xfeedf00d);
    g_assert_cmphex(qtest_readl(qts, 32 * MiB), ==, 0xfeedf00d);
    qtest_quit(qts);
    rmdir(dir);

    qts = qtest_init("-machine pc,memory-backend=mem0 -object "
                     "memory-backend-memfd,id=mem0,size=32M,share=on");
    g_assert_cmpuint(ram_size(qts), ==, 32 * MiB);
    qtest_writel(qts, 16 * MiB, 0xabad1dea);
    g_assert_cmphex(qtest_readl(qts, 16 * MiB), ==, 0xabad1dea);
    qtest_quit(qts);
}

static void test_errors(void)
{
    const char *base = "-machine pc -accel qtest -display none ";
    struct {
        const char *args, *needle;
    } cases[] = {
        { "-numa node,nodeid=0,memdev=nope", "Memory backend 'nope' not "
          "found" },
        { "-numa node,nodeid=0,mem=64M", "Use -numa node,memdev" },
        { "-object memory-backend-ram,id=m0,size=64M "
          "-numa node,nodeid=1,memdev=m0", "node 0 is missing" },
        { "-object memory-backend-ram,id=m0,size=64M -m 128 "
          "-numa node,memdev=m0", "should equal RAM size" },
        { "-object memory-backend-ram,id=m0,size=64M "
          "-object memory-backend-ram,id=m1,size=64M "
          "-numa node,nodeid=0,memdev=m0 -numa node,nodeid=1,memdev=m1 "
          "-numa node,nodeid=2 -numa dist,src=0,dst=1,val=20",
          "The distance between node 0 and 2 is missing" },
        { "-object memory-backend-ram,id=m0,size=64M "
          "-numa node,memdev=m0 -numa dist,src=0,dst=0,val=12",
          "Local distance of node 0 should be 10" },
        { "-object memory-backend-ram,id=m0,size=64M "
          "-numa node,memdev=m0,cpus=5", "smaller than maxcpus" },
        { "-object memory-backend-ram,id=m0,size=64M "
          "-numa node,memdev=m0 -numa node,memdev=m0",
          "can't be used multiple times" },
        { "-machine memory-backend=m0 -m 64 "
          "-object memory-backend-ram,id=m0,size=32M",
          "does not match the size of the memory backend" },
        { "-object memory-backend-ram,id=m0,size=64M,host-nodes=0,"
          "policy=bind", "host-nodes and policy" },
        { "-object memory-backend-file,id=m0,size=64M",
          "'mem-path' is required" },
        { "-object memory-backend-ram,id=m0", "'size' is required" },
        { "-mem-path /nonexistent/dir/file -m 64", "-mem-path: can't open "
          "backing store" },
        /* Huge pages the host does not have: refused at start. */
        { "-machine memory-backend=m0 -object memory-backend-memfd,id=m0,"
          "size=64M,hugetlb=on,prealloc=on", "memory-backend-memfd" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *args = g_strconcat(base, cases[i].args, NULL);

        qtest_assert_start_fails(args, cases[i].needle);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/numa/two-nodes-srat-slit", test_two_nodes);
    g_test_add_func("/numa/none", test_no_numa);
    g_test_add_func("/hostmem/file-prealloc", test_backend_file_prealloc);
    g_test_add_func("/hostmem/errors", test_errors);
    return g_test_run();
}
