/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user faults: either side dies or stops in the middle of I/O.
 *  - the NVMe server is SIGKILLed with I/O submitted and not completed:
 *    Conduit keeps answering QMP, the device reports broken, its reads
 *    return all-ones;
 *  - Conduit is SIGKILLed with I/O in flight: the server resets and
 *    serves the next client normally;
 *  - the server is SIGSTOPped: an access that needs it (config space;
 *    BAR0 is mapped whole) gives up after x-msg-timeout instead of
 *    hanging, and once the server runs again the late reply is dropped
 *    and the device works.
 */
#include "qemu/osdep.h"
#include <signal.h>
#include <sys/wait.h>
#include <linux/pci_regs.h>
#include "config-host.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/nvme.h"
#include "libqos/vfio-query.h"

#define NVME_DEVFN  QPCI_DEVFN(4, 0)
#define RAM_START   0x200000ULL
#define RAM_END     0x3000000ULL
#define IO_DEPTH    16
#define IO_BATCH    12          /* fewer than IO_DEPTH - 1: no wrap */
#define IO_BLOCKS   16          /* 8 KiB: two pages, PRP1 + PRP2 */
#define WAIT_US     (20 * G_USEC_PER_SEC)

typedef struct Vm {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QNvme nvme;
    char *pidfile;
} Vm;

static void server_start(QNvmeServer *s)
{
    qnvme_server_start_within(s, NULL, WAIT_US);
}

/* Signals the server; for a fatal signal also reaps it. */
static void server_signal(QNvmeServer *s, int sig)
{
    int status;

    g_assert_cmpint(s->pid, >, 0);
    g_assert_cmpint(kill(s->pid, sig), ==, 0);
    if (sig == SIGKILL) {
        g_assert_cmpint(waitpid(s->pid, &status, 0), ==, s->pid);
        g_assert_true(WIFSIGNALED(status));
        g_spawn_close_pid(s->pid);
        s->pid = 0;
    }
}

static bool server_alive(QNvmeServer *s)
{
    int status;

    return s->pid > 0 && waitpid(s->pid, &status, WNOHANG) == 0;
}

static void server_stop(QNvmeServer *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGCONT);
    }
    qnvme_server_stop(s);
}

static void vm_start(Vm *vm, QNvmeServer *s, const char *dev_opts)
{
    memset(vm, 0, sizeof(*vm));
    vm->pidfile = g_build_filename(s->dir, "conduit.pid", NULL);
    unlink(vm->pidfile);
    vm->qts = qtest_initf("-M pc -m 64M -pidfile %s -device vfio-user-pci,"
                          "id=nvme0,addr=04.0,socket=%s%s", vm->pidfile,
                          s->sock, dev_opts ? dev_opts : "");
    vm->bus = qpci_new_pc(vm->qts);
    vm->dev = qpci_device_find(vm->bus, NVME_DEVFN);
    g_assert_nonnull(vm->dev);
    qnvme_init(&vm->nvme, vm->dev, RAM_START, RAM_END);
}

static void vm_stop(Vm *vm)
{
    qpci_device_free(vm->dev);
    qpci_free_pc(vm->bus);
    qtest_quit(vm->qts);
    unlink(vm->pidfile);
    g_free(vm->pidfile);
}

static void vm_bring_up(Vm *vm)
{
    g_assert_true(qnvme_enable(&vm->nvme));
    g_assert_true(qnvme_create_io_queues(&vm->nvme, IO_DEPTH, 0));
}

/* Submits IO_BATCH writes and does not wait for any of them. */
static void vm_submit_batch(Vm *vm)
{
    for (int i = 0; i < IO_BATCH; i++) {
        uint64_t buf = qnvme_alloc(&vm->nvme, IO_BLOCKS * 512);
        QNvmeCmd cmd = {
            .opcode = QNVME_CMD_WRITE,
            .nsid = 1,
            .prp1 = buf,
            .cdw10 = i * IO_BLOCKS,
            .cdw12 = IO_BLOCKS - 1,
        };

        qtest_memset(vm->qts, buf, 0x5a + i, IO_BLOCKS * 512);
        /* Contiguous guest RAM: PRP2 is the next page. */
        cmd.prp2 = buf + 4096;
        qnvme_submit_io(&vm->nvme, &cmd);
    }
}

/* A write then a read back through the I/O queue, checked. */
static void vm_io_roundtrip(Vm *vm)
{
    uint64_t buf = qnvme_alloc(&vm->nvme, 4096);
    uint8_t pattern[4096], back[4096];
    QNvmeCqe cqe;

    for (size_t k = 0; k < sizeof(pattern); k++) {
        pattern[k] = (uint8_t)(k * 3 + 1);
    }
    qtest_memwrite(vm->qts, buf, pattern, sizeof(pattern));
    g_assert_true(qnvme_rw(&vm->nvme, true, 1000, 8, buf, &cqe));
    g_assert_cmphex(cqe.status, ==, 0);
    qtest_memset(vm->qts, buf, 0, sizeof(back));
    g_assert_true(qnvme_rw(&vm->nvme, false, 1000, 8, buf, &cqe));
    g_assert_cmphex(cqe.status, ==, 0);
    qtest_memread(vm->qts, buf, back, sizeof(back));
    g_assert_cmpmem(back, sizeof(back), pattern, sizeof(pattern));
}

static bool vm_device_broken(Vm *vm)
{
    JsonObject *dev = qvfio_query_device(vm->qts);
    bool broken = json_object_get_boolean_member(dev, "broken");

    json_object_unref(dev);
    return broken;
}

static void vm_qmp_alive(Vm *vm)
{
    JsonNode *ret = qtest_qmp_assert_success(vm->qts,
                                             "{'execute': 'query-status'}");

    json_node_unref(ret);
    g_assert_true(qtest_probe_child(vm->qts));
}

static void test_server_killed_mid_io(void)
{
    QNvmeServer s;
    Vm vm;
    gint64 deadline;

    server_start(&s);
    vm_start(&vm, &s, NULL);
    vm_bring_up(&vm);
    vm_submit_batch(&vm);
    server_signal(&s, SIGKILL);

    vm_qmp_alive(&vm);
    /*
     * The first access that needs the server finds it gone (config space:
     * BAR0, registers included, is mapped and never asks the server)...
     */
    g_assert_cmphex(qpci_config_readl(vm.dev, PCI_CLASS_REVISION), ==,
                    0xffffffff);
    /* ...and from then on the device says so. */
    deadline = g_get_monotonic_time() + WAIT_US;
    while (!vm_device_broken(&vm)) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(1000);
    }
    g_assert_cmphex(qnvme_reg_read(&vm.nvme, QNVME_REG_CAP), ==, 0xffffffff);
    g_assert_cmphex(qpci_io_readl(vm.dev, vm.nvme.bar0, QNVME_DOORBELL_BASE),
                    ==, 0xffffffff);
    g_assert_cmphex(qpci_config_readl(vm.dev, PCI_VENDOR_ID), ==,
                    0xffffffff);
    /* Guest writes to the dead device are dropped, not fatal. */
    qnvme_reg_write(&vm.nvme, QNVME_REG_CC, 0);
    qpci_io_writel(vm.dev, vm.nvme.bar0, QNVME_DOORBELL_BASE + 8, 1);
    vm_qmp_alive(&vm);
    vm_stop(&vm);
    server_stop(&s);
}

static void test_vmm_killed_mid_io(void)
{
    g_autofree char *pid_text = NULL;
    QNvmeServer s;
    Vm vm;
    int status;

    server_start(&s);
    vm_start(&vm, &s, NULL);
    vm_bring_up(&vm);
    vm_submit_batch(&vm);
    g_assert_true(g_file_get_contents(vm.pidfile, &pid_text, NULL, NULL));
    g_assert_cmpint(kill(atoi(pid_text), SIGKILL), ==, 0);
    status = qtest_wait_exit(vm.qts);
    g_assert_true(WIFSIGNALED(status));
    g_assert_cmpint(WTERMSIG(status), ==, SIGKILL);
    vm_stop(&vm);

    /* The server survived, reset the controller and takes a new client. */
    g_assert_true(server_alive(&s));
    vm_start(&vm, &s, NULL);
    g_assert_cmphex(qnvme_reg_read(&vm.nvme, QNVME_REG_CSTS) & 1, ==, 0);
    vm_bring_up(&vm);
    vm_io_roundtrip(&vm);
    g_assert_false(vm_device_broken(&vm));
    vm_stop(&vm);
    server_stop(&s);
}

static void test_server_stopped_times_out(void)
{
    QNvmeServer s;
    Vm vm;
    uint32_t csts;

    server_start(&s);
    vm_start(&vm, &s, ",x-msg-timeout=300");
    vm_bring_up(&vm);
    vm_io_roundtrip(&vm);

    server_signal(&s, SIGSTOP);
    /*
     * No reply: the access gives up after the timeout and reads ones.
     * Config space needs the server; the mapped BAR0 does not.
     */
    g_assert_cmphex(qpci_config_readl(vm.dev, PCI_CLASS_REVISION), ==,
                    0xffffffff);
    vm_qmp_alive(&vm);
    g_assert_cmphex(qpci_config_readw(vm.dev, PCI_VENDOR_ID), ==, 0xffff);

    server_signal(&s, SIGCONT);
    /* The late replies are discarded; the next access gets its own. */
    g_assert_cmphex(qpci_config_readl(vm.dev, PCI_CLASS_REVISION) >> 8, ==,
                    0x010802);
    csts = qnvme_reg_read(&vm.nvme, QNVME_REG_CSTS);
    g_assert_cmphex(csts, ==, 1);
    g_assert_false(vm_device_broken(&vm));
    vm_io_roundtrip(&vm);
    vm_stop(&vm);
    server_stop(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-user-fault/server-killed-mid-io",
                    test_server_killed_mid_io);
    g_test_add_func("/vfio-user-fault/vmm-killed-mid-io",
                    test_vmm_killed_mid_io);
    g_test_add_func("/vfio-user-fault/server-stopped-times-out",
                    test_server_stopped_times_out);
    return g_test_run();
}
