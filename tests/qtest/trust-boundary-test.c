/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Trust boundaries (docs/devel/trust-boundaries.rst), each case a defect
 * an adversarial suite found:
 *  - a device's MSI-X or MSI aimed at its own registers (pci-testdev's
 *    FIRE register, or its own MSI-X table) recursed until the stack
 *    overflowed: the memory API's re-entrancy guard drops it;
 *  - a vfio-user server's DMA_READ/DMA_WRITE into MMIO (the ECAM bytes of
 *    its own half-realized device, the MSI window) crashed or deadlocked
 *    Conduit: server DMA reaches guest RAM only and gets an error reply;
 *  - device_del removed board devices (the PCI host, the MSI window, the
 *    RTC): refused with QEMU's error texts;
 *  - the alignment padding between the ACPI tables (and the gaps around
 *    the SMBIOS entry points) held uninitialised host heap bytes, an
 *    ASLR leak to every guest: with the heap filled with a pattern
 *    (MALLOC_PERTURB_), every byte the tables do not use is zero.
 * After each, the VM must still answer QMP and qtest.
 */
#include "qemu/osdep.h"
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/msix.h"
#include "libqos/pci-testdev.h"
#include "vfio-user/protocol.h"

#define REG_SCRATCH 0x04
#define REG_FIRE 0x08
#define REG_FIRED 0x14
#define RAM_TARGET 0x100000ULL
#define ECAM_BASE 0xe0000000ULL
#define MSI_WINDOW 0xfee00000ULL

static void assert_vm_alive(QTestState *qts)
{
    g_autoptr(JsonNode) ret = qtest_qmp_assert_success(
        qts, "{'execute': 'query-status'}");

    g_assert_true(JSON_NODE_HOLDS_OBJECT(ret));
    qtest_writel(qts, RAM_TARGET + 0x100, 0xc0ffee);
    g_assert_cmphex(qtest_readl(qts, RAM_TARGET + 0x100), ==, 0xc0ffee);
}

/* ---- Device interrupts aimed at the device itself --------------------- */

static void test_msix_at_own_fire(void)
{
    QPCITestdev c;

    qpci_testdev_start(&c, NULL);
    qpci_msix_enable(c.dev);
    qpci_msix_set_vector(c.dev, 0, c.bar0.addr + REG_FIRE, 0);
    qpci_msix_mask_vector(c.dev, 0, false);
    qpci_io_writel(c.dev, c.bar0, REG_FIRE, 0);
    /* The guest's write fired once; the device's own message was dropped. */
    g_assert_cmpuint(qpci_io_readl(c.dev, c.bar0, REG_FIRED), ==, 1);
    assert_vm_alive(c.qts);

    /* Aimed at its own MSI-X table: dropped too, the table is intact. */
    qpci_msix_set_vector(c.dev, 1, qpci_msix_entry_addr(c.dev, 1) +
                         PCI_MSIX_ENTRY_DATA, 0x77);
    qpci_msix_mask_vector(c.dev, 1, false);
    qpci_io_writel(c.dev, c.bar0, REG_FIRE, 1);
    g_assert_cmpuint(qpci_io_readl(c.dev, c.bar0, REG_FIRED), ==, 2);
    g_assert_cmphex(qtest_readl(c.qts, qpci_msix_entry_addr(c.dev, 1) +
                                PCI_MSIX_ENTRY_DATA), ==, 0x77);

    /* Vectors aimed at RAM still work. */
    qpci_msix_set_vector(c.dev, 2, RAM_TARGET, 0x1234);
    qpci_msix_mask_vector(c.dev, 2, false);
    qpci_io_writel(c.dev, c.bar0, REG_FIRE, 2);
    g_assert_cmphex(qtest_readl(c.qts, RAM_TARGET), ==, 0x1234);
    assert_vm_alive(c.qts);
    qpci_testdev_stop(&c);
}

static void test_msi_at_own_fire(void)
{
    QPCITestdev c;
    uint8_t cap;
    uint16_t ctrl;

    qpci_testdev_start(&c, ",msi=on");
    cap = qpci_find_capability(c.dev, PCI_CAP_ID_MSI, 0);
    g_assert_cmpuint(cap, !=, 0);
    ctrl = qpci_config_readw(c.dev, cap + PCI_MSI_FLAGS);
    qpci_config_writel(c.dev, cap + PCI_MSI_ADDRESS_LO,
                       (uint32_t)(c.bar0.addr + REG_FIRE));
    if (ctrl & PCI_MSI_FLAGS_64BIT) {
        qpci_config_writel(c.dev, cap + PCI_MSI_ADDRESS_HI,
                           (c.bar0.addr + REG_FIRE) >> 32);
        qpci_config_writew(c.dev, cap + PCI_MSI_DATA_64, 0);
    } else {
        qpci_config_writew(c.dev, cap + PCI_MSI_DATA_32, 0);
    }
    if (ctrl & PCI_MSI_FLAGS_MASKBIT) {
        qpci_config_writel(c.dev, cap + ((ctrl & PCI_MSI_FLAGS_64BIT) ?
                                         PCI_MSI_MASK_64 : PCI_MSI_MASK_32),
                           0);
    }
    qpci_config_writew(c.dev, cap + PCI_MSI_FLAGS,
                       ctrl | PCI_MSI_FLAGS_ENABLE);
    qpci_io_writel(c.dev, c.bar0, REG_FIRE, 0);
    g_assert_cmpuint(qpci_io_readl(c.dev, c.bar0, REG_FIRED), ==, 1);
    assert_vm_alive(c.qts);
    qpci_testdev_stop(&c);
}

/* ---- device_del of board devices -------------------------------------- */

static void assert_del_refused(QTestState *qts, const char *id,
                               const char *text)
{
    JsonObject *r = qtest_qmp(qts, "{'execute': 'device_del',"
                              " 'arguments': {'id': '%s'}}", id);
    const char *desc = qtest_qmp_error_desc(r);

    g_assert_nonnull(desc);
    if (!strstr(desc, text)) {
        g_error("device_del %s: '%s' does not say '%s'", id, desc, text);
    }
    json_object_unref(r);
}

static void test_device_del_board_devices(void)
{
    QPCITestdev c;

    qpci_testdev_start(&c, NULL);
    assert_del_refused(c.qts, "/machine/pci-host",
                       "does not support hotplugging");
    assert_del_refused(c.qts, "/machine/msi", "does not support hotplugging");
    assert_del_refused(c.qts, "/machine/rtc", "does not support hotplugging");
    /* The PCI root is still there and still decodes config cycles. */
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_VENDOR_ID), !=, 0xffff);
    g_assert_cmpuint(qpci_io_readl(c.dev, c.bar0, 0), ==, 0x54444e43);
    assert_vm_alive(c.qts);
    qpci_testdev_stop(&c);
}

/* ---- A hostile vfio-user server --------------------------------------- */

typedef struct Hostile {
    char *dir;
    char *path;
    int listen_fd;
    GThread *thread;
    /* Results, read after the thread is joined. */
    bool ecam_read_refused;
    bool msi_write_refused;
    bool ram_read_ok;
    uint32_t ram_read_value;
    bool ram_write_ok;
    bool reached_region_info;
} Hostile;

static bool send_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

        if (n <= 0) {
            return false;
        }
        p += n;
        len -= n;
    }
    return true;
}

static bool recv_all(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;

    while (len) {
        ssize_t n = recv(fd, p, len, 0);

        if (n <= 0) {
            return false;
        }
        p += n;
        len -= n;
    }
    return true;
}

static bool msg_send(int fd, uint16_t id, uint16_t cmd, uint32_t flags,
                     uint32_t err, const void *payload, size_t len)
{
    VFIOUserHdr hdr;

    vfio_user_hdr_init(&hdr, id, cmd, sizeof(hdr) + len, flags);
    hdr.error_reply = err;
    return send_all(fd, &hdr, sizeof(hdr)) &&
           (!len || send_all(fd, payload, len));
}

static uint8_t *msg_recv(int fd, VFIOUserHdr *hdr, size_t *len)
{
    uint8_t *payload;

    if (!recv_all(fd, hdr, sizeof(*hdr)) || hdr->size < sizeof(*hdr) ||
        hdr->size > 1024 * 1024) {
        return NULL;
    }
    *len = hdr->size - sizeof(*hdr);
    payload = g_malloc0(*len + 1);
    if (*len && !recv_all(fd, payload, *len)) {
        g_free(payload);
        return NULL;
    }
    return payload;
}

/* Sends a DMA request; true if the reply is not an error. */
static bool hostile_dma(int fd, uint16_t id, bool is_write, uint64_t addr,
                        void *data, uint32_t count)
{
    size_t plen = sizeof(VFIOUserDMARW) + (is_write ? count : 0);
    g_autofree VFIOUserDMARW *req = g_malloc0(plen);
    g_autofree uint8_t *reply = NULL;
    VFIOUserHdr hdr;
    size_t len;

    req->address = addr;
    req->count = count;
    if (is_write) {
        memcpy(req->data, data, count);
    }
    g_assert_true(msg_send(fd, id, is_write ? VFIO_USER_DMA_WRITE
                                            : VFIO_USER_DMA_READ,
                           VFIO_USER_F_TYPE_COMMAND, 0, req, plen));
    reply = msg_recv(fd, &hdr, &len);
    g_assert_nonnull(reply);
    g_assert_cmpuint(hdr.id, ==, id);
    g_assert_cmpuint(hdr.flags & VFIO_USER_F_TYPE_MASK, ==,
                     VFIO_USER_F_TYPE_REPLY);
    if (hdr.flags & VFIO_USER_F_ERROR) {
        return false;
    }
    if (!is_write) {
        g_assert_cmpuint(len, ==, sizeof(VFIOUserDMARW) + count);
        memcpy(data, reply + sizeof(VFIOUserDMARW), count);
    }
    return true;
}

/*
 * Negotiates, answers GET_INFO, and at the first GET_REGION_INFO (the
 * device is on the bus but not built yet) aims DMA at MMIO and at RAM,
 * then fails the request so that realize gives up.
 */
static gpointer hostile_thread(gpointer opaque)
{
    Hostile *h = opaque;
    int fd = accept(h->listen_fd, NULL, NULL);

    g_assert_cmpint(fd, >=, 0);
    for (;;) {
        g_autofree uint8_t *payload = NULL;
        VFIOUserHdr hdr;
        size_t len;

        payload = msg_recv(fd, &hdr, &len);
        if (!payload) {
            break;
        }
        if (hdr.command == VFIO_USER_VERSION) {
            VFIOUserCaps caps;
            g_autofree void *v = NULL;
            size_t vlen;

            vfio_user_caps_init_default(&caps);
            v = vfio_user_version_build(VFIO_USER_MAJOR, VFIO_USER_MINOR,
                                        &caps, &vlen);
            g_assert_true(msg_send(fd, hdr.id, hdr.command,
                                   VFIO_USER_F_TYPE_REPLY, 0, v, vlen));
        } else if (hdr.command == VFIO_USER_DEVICE_GET_INFO) {
            VFIOUserDeviceInfo info = {
                .argsz = sizeof(info),
                .flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET,
                .num_regions = VFIO_PCI_NUM_REGIONS,
                .num_irqs = VFIO_PCI_NUM_IRQS,
            };

            g_assert_true(msg_send(fd, hdr.id, hdr.command,
                                   VFIO_USER_F_TYPE_REPLY, 0, &info,
                                   sizeof(info)));
        } else if (hdr.command == VFIO_USER_DEVICE_GET_REGION_INFO) {
            uint32_t val = 0;
            uint32_t pattern = 0x5a5aa5a5;

            h->reached_region_info = true;
            /* Its own config space through ECAM (00:04.0). */
            h->ecam_read_refused = !hostile_dma(fd, 0x100, false,
                                                ECAM_BASE + (4 << 15), &val,
                                                4);
            h->msi_write_refused = !hostile_dma(fd, 0x101, true, MSI_WINDOW,
                                                &val, 4);
            h->ram_read_ok = hostile_dma(fd, 0x102, false, RAM_TARGET,
                                         &h->ram_read_value, 4);
            h->ram_write_ok = hostile_dma(fd, 0x103, true, RAM_TARGET + 4,
                                          &pattern, 4);
            msg_send(fd, hdr.id, hdr.command,
                     VFIO_USER_F_TYPE_REPLY | VFIO_USER_F_ERROR, EINVAL,
                     NULL, 0);
            break;
        } else {
            msg_send(fd, hdr.id, hdr.command,
                     VFIO_USER_F_TYPE_REPLY | VFIO_USER_F_ERROR, ENOSYS,
                     NULL, 0);
        }
    }
    close(fd);
    return NULL;
}

static void hostile_start(Hostile *h)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };

    memset(h, 0, sizeof(*h));
    h->dir = g_dir_make_tmp("trust-XXXXXX", NULL);
    g_assert_nonnull(h->dir);
    h->path = g_build_filename(h->dir, "hostile.sock", NULL);
    g_strlcpy(addr.sun_path, h->path, sizeof(addr.sun_path));
    h->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    g_assert_cmpint(h->listen_fd, >=, 0);
    g_assert_cmpint(bind(h->listen_fd, (struct sockaddr *)&addr,
                         sizeof(addr)), ==, 0);
    g_assert_cmpint(listen(h->listen_fd, 1), ==, 0);
    h->thread = g_thread_new("hostile-server", hostile_thread, h);
}

static void hostile_stop(Hostile *h)
{
    g_thread_join(h->thread);
    close(h->listen_fd);
    unlink(h->path);
    rmdir(h->dir);
    g_free(h->path);
    g_free(h->dir);
}

static void test_server_dma_into_mmio(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    JsonObject *r;
    Hostile h;

    qtest_writel(qts, RAM_TARGET, 0x600df00d);
    qtest_writel(qts, RAM_TARGET + 4, 0);
    hostile_start(&h);
    r = qtest_qmp(qts, "{'execute': 'device_add', 'arguments':"
                  " {'driver': 'vfio-user-pci', 'id': 'hostile',"
                  " 'addr': '04.0', 'socket': '%s'}}", h.path);
    /* The server failed GET_REGION_INFO: realize fails cleanly. */
    g_assert_nonnull(qtest_qmp_error_desc(r));
    json_object_unref(r);
    hostile_stop(&h);

    g_assert_true(h.reached_region_info);
    g_assert_true(h.ecam_read_refused);
    g_assert_true(h.msi_write_refused);
    g_assert_true(h.ram_read_ok);
    g_assert_cmphex(h.ram_read_value, ==, 0x600df00d);
    g_assert_true(h.ram_write_ok);
    g_assert_cmphex(qtest_readl(qts, RAM_TARGET + 4), ==, 0x5a5aa5a5);
    assert_vm_alive(qts);
    qtest_quit(qts);
}

/* ---- guest-visible buffers are zeroed ---------------------------------- */

#define ACPI_AREA 0xe0000
#define ACPI_AREA_SIZE 0x10000
#define SMBIOS_AREA 0xf0000

static void mark(uint8_t *used, uint64_t addr, uint32_t len)
{
    g_assert_cmpuint(addr, >=, ACPI_AREA);
    g_assert_cmpuint(addr + len, <=, ACPI_AREA + ACPI_AREA_SIZE);
    memset(used + (addr - ACPI_AREA), 1, len);
}

static uint32_t table_len(const uint8_t *area, uint64_t addr)
{
    return ldl_le_p(area + (addr - ACPI_AREA) + 4);
}

static void check_acpi_padding(QTestState *qts)
{
    g_autofree uint8_t *area = g_malloc(ACPI_AREA_SIZE);
    g_autofree uint8_t *used = g_malloc0(ACPI_AREA_SIZE);
    const uint8_t *rsdp;
    uint64_t xsdt, rsdt;
    unsigned nonzero = 0;

    qtest_memread(qts, ACPI_AREA, area, ACPI_AREA_SIZE);
    rsdp = area;
    g_assert_cmpmem(rsdp, 8, "RSD PTR ", 8);
    mark(used, ACPI_AREA, 36);
    rsdt = ldl_le_p(rsdp + 16);
    xsdt = ldq_le_p(rsdp + 24);
    mark(used, rsdt, table_len(area, rsdt));
    mark(used, xsdt, table_len(area, xsdt));
    for (uint32_t off = 36; off < table_len(area, xsdt); off += 8) {
        uint64_t t = ldq_le_p(area + (xsdt - ACPI_AREA) + off);

        mark(used, t, table_len(area, t));
        if (!memcmp(area + (t - ACPI_AREA), "FACP", 4)) {
            uint64_t facs = ldl_le_p(area + (t - ACPI_AREA) + 36);
            uint64_t dsdt = ldl_le_p(area + (t - ACPI_AREA) + 40);

            mark(used, facs, table_len(area, facs));
            mark(used, dsdt, table_len(area, dsdt));
        }
    }
    for (size_t i = 0; i < ACPI_AREA_SIZE; i++) {
        if (!used[i] && area[i]) {
            if (!nonzero++) {
                g_test_message("first non-zero padding byte at 0x%zx: "
                               "0x%02x", ACPI_AREA + i, area[i]);
            }
        }
    }
    g_assert_cmpuint(nonzero, ==, 0);
}

static void test_guest_buffers_zeroed(void)
{
    QTestState *qts;

    /* Every malloc'd byte is 0x5a until written: a leak cannot hide. */
    g_setenv("MALLOC_PERTURB_", "165", TRUE);
    qts = qtest_init("-M pc -m 64M -smp 3 -smbios type=1,serial=S1 "
                     "-smbios type=0,vendor=V");
    g_unsetenv("MALLOC_PERTURB_");
    check_acpi_padding(qts);
    /* Rewritten at reset from fresh allocations: still zero. */
    qtest_qmp_assert_success(qts, "{'execute':'system_reset'}");
    check_acpi_padding(qts);
    {
        uint8_t smb[0x40];

        /* If SMBIOS is there, the gaps around its entry points are 0. */
        qtest_memread(qts, SMBIOS_AREA, smb, sizeof(smb));
        if (!memcmp(smb, "_SM3_", 5)) {
            for (size_t i = smb[6]; i < 0x20; i++) {
                g_assert_cmphex(smb[i], ==, 0);
            }
            if (!memcmp(smb + 0x20, "_SM_", 4)) {
                for (size_t i = 0x20 + smb[0x25]; i < 0x40; i++) {
                    g_assert_cmphex(smb[i], ==, 0);
                }
            }
        }
    }
    assert_vm_alive(qts);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/trust/reentrancy/msix-at-own-registers",
                   test_msix_at_own_fire);
    g_test_add_func("/trust/reentrancy/msi-at-own-registers",
                   test_msi_at_own_fire);
    g_test_add_func("/trust/device-del/board-devices",
                   test_device_del_board_devices);
    g_test_add_func("/trust/vfio-user/server-dma-into-mmio",
                   test_server_dma_into_mmio);
    g_test_add_func("/trust/guest-buffers-zeroed",
                    test_guest_buffers_zeroed);
    return g_test_run();
}
