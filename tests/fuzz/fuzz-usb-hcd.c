/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the USB host controllers as a hostile guest drives
 * them.  A pc machine under the qtest accelerator carries piix3-usb-uhci
 * (00:01.2, a usb-tablet on port 1) and qemu-xhci (04.0, a usb-kbd on
 * port 1); the input writes and reads their registers, fills a 64 KiB
 * window of guest RAM where the frame list, queue heads, TDs, TRB rings,
 * contexts and event ring segment table live, rings xHCI doorbells,
 * moves the virtual clock (UHCI walks a frame per millisecond) and
 * toggles the controllers' PCI decoding.
 *
 * Input: operations, each an opcode byte and its operands (see do_op()).
 * Every input ends with both controllers reset, which must leave them
 * halted; the monitor-facing state (x-query-usb) must stay readable.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "qapi/error.h"
#include "qemu/main-loop.h"
#include "qemu/option.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "system/accel.h"
#include "system/address-spaces.h"
#include "system/memory.h"
#include "system/qtest.h"
#include "hw/usb/uhci-regs.h"
#include "hw/usb/xhci-regs.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define UHCI_DEVFN ((1 << 3) | 2)
#define XHCI_DEVFN (4 << 3)
#define UHCI_IO 0xc000
#define XHCI_BAR 0xd0000000ull
#define GUEST_WIN 0x100000ull
#define GUEST_WIN_SIZE 0x10000
#define MAX_OPS 256

static const uint8_t zeroes[GUEST_WIN_SIZE];
static int64_t now_ns;

static void cfg_write(int devfn, uint8_t off, uint32_t val, unsigned size)
{
    cpu_outl(0xcf8, 0x80000000u | (devfn << 8) | (off & 0xfc));
    if (size == 2) {
        cpu_outw(0xcfc + (off & 2), val);
    } else {
        cpu_outl(0xcfc, val);
    }
}

static void mmio_write(uint64_t addr, uint32_t val)
{
    uint8_t buf[4];

    stl_le_p(buf, val);
    address_space_write(&address_space_memory, addr, buf, 4);
}

static uint32_t mmio_read(uint64_t addr)
{
    uint8_t buf[4] = { 0 };

    address_space_read(&address_space_memory, addr, buf, 4);
    return ldl_le_p(buf);
}

static void map_bars(void)
{
    cfg_write(UHCI_DEVFN, PCI_COMMAND, 0, 2);
    cfg_write(UHCI_DEVFN, PCI_BASE_ADDRESS_4, UHCI_IO | 1, 4);
    cfg_write(UHCI_DEVFN, PCI_COMMAND, PCI_COMMAND_IO | PCI_COMMAND_MASTER,
              2);
    cfg_write(XHCI_DEVFN, PCI_COMMAND, 0, 2);
    cfg_write(XHCI_DEVFN, PCI_BASE_ADDRESS_0, (uint32_t)XHCI_BAR | 4, 4);
    cfg_write(XHCI_DEVFN, PCI_BASE_ADDRESS_1, 0, 4);
    cfg_write(XHCI_DEVFN, PCI_COMMAND,
              PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
}

static void add_device(const char *spec)
{
    QemuOpts *opts = qemu_opts_parse(spec, NULL, &error_abort);

    g_assert(qdev_device_add(opts, &error_abort));
    qemu_opts_free(opts);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    MachineClass *pc_class;
    MachineState *ms;

    qemu_init_main_loop();
    bql_lock();
    pc_class = machine_find_class("pc");
    g_assert(pc_class);
    ms = MACHINE(object_new_with_class(OBJECT_CLASS(pc_class)));
    object_property_add_child(object_get_root(), "machine", OBJECT(ms));
    object_unref(ms);
    current_machine = ms;
    qtest_set_enabled(true);
    g_assert(accel_init_machine(accel_find("qtest"), ms, NULL, &error_abort));
    g_assert(pc_class->init(ms, &error_abort));
    /* Cold-plugged, as on the command line (UHCI is not hot-pluggable). */
    add_device("driver=piix3-usb-uhci,id=usb,addr=01.2");
    add_device("driver=usb-tablet,id=tab,bus=usb.0,port=1");
    add_device("driver=qemu-xhci,id=xhci,addr=04.0,msix=off");
    add_device("driver=usb-kbd,id=kbd,bus=xhci.0,port=1");
    qdev_hotplug = true;
    qemu_run_machine_init_done();
    return 0;
}

typedef struct Input {
    const uint8_t *p;
    size_t left;
} Input;

static uint32_t take(Input *in, unsigned n)
{
    uint32_t v = 0;

    for (unsigned i = 0; i < n && in->left; i++, in->left--) {
        v |= (uint32_t)*in->p++ << (8 * i);
    }
    return v;
}

/* A guest address: mostly inside the window, sometimes anywhere. */
static uint32_t take_addr(Input *in)
{
    uint32_t v = take(in, 2);

    return (v & 0x8000) ? take(in, 4) : GUEST_WIN + (v & 0x7ff0) * 2;
}

static void do_op(Input *in)
{
    uint8_t op = take(in, 1);
    uint32_t off, val, len;
    uint8_t buf[64];

    switch (op % 10) {
    case 0:     /* UHCI register write (16-bit, or 32 for FLBASEADD) */
        off = take(in, 1) % 0x20;
        val = take(in, 4);
        if (off == UHCI_FLBASEADD) {
            cpu_outl(UHCI_IO + off, take_addr(in));
        } else {
            cpu_outw(UHCI_IO + (off & ~1u), val);
        }
        break;
    case 1:     /* UHCI register read */
        cpu_inw(UHCI_IO + (take(in, 1) % 0x20 & ~1u));
        break;
    case 2:     /* xHCI register write: caps/operational/ports, runtime */
        off = take(in, 2) % 0x3000 & ~3u;
        val = (take(in, 1) & 1) ? take_addr(in) : take(in, 4);
        mmio_write(XHCI_BAR + off, val);
        break;
    case 3:     /* xHCI register read */
        mmio_read(XHCI_BAR + (take(in, 2) % 0x4000 & ~3u));
        break;
    case 4:     /* xHCI doorbell: slot, target */
        off = take(in, 1) % 70;
        mmio_write(XHCI_BAR + XHCI_DOORBELL_OFF + 4 * off, take(in, 1));
        break;
    case 5:     /* guest RAM bytes */
        off = take(in, 2) % GUEST_WIN_SIZE;
        len = take(in, 1) % sizeof(buf);
        len = MIN(len, GUEST_WIN_SIZE - off);
        len = MIN(len, in->left);
        memcpy(buf, in->p, len);
        in->p += len;
        in->left -= len;
        address_space_write(&address_space_memory, GUEST_WIN + off, buf,
                            len);
        break;
    case 6:     /* a schedule/ring word pointing into the window */
        off = take(in, 2) % (GUEST_WIN_SIZE - 4) & ~3u;
        stl_le_p(buf, take_addr(in) | (take(in, 1) & 0xf));
        address_space_write(&address_space_memory, GUEST_WIN + off, buf, 4);
        break;
    case 7:     /* time goes by: UHCI frames */
        now_ns += (take(in, 1) % 16 + 1) * 1000000ll;
        qtest_clock_warp(now_ns);
        break;
    case 8:     /* PCI command register: decoding and bus mastering */
        cfg_write((take(in, 1) & 1) ? UHCI_DEVFN : XHCI_DEVFN, PCI_COMMAND,
                  take(in, 2) & (PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
                                 PCI_COMMAND_MASTER), 2);
        break;
    case 9:     /* the main loop (bottom halves) */
        main_loop_wait(false);
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Input in = { data, size };

    map_bars();
    for (unsigned n = 0; n < MAX_OPS && in.left; n++) {
        do_op(&in);
    }
    /* Both controllers reset and halted, whatever the guest did. */
    cpu_outw(UHCI_IO + UHCI_USBCMD, UHCI_CMD_HCRESET);
    g_assert(cpu_inw(UHCI_IO + UHCI_USBSTS) & UHCI_STS_HCH);
    mmio_write(XHCI_BAR + XHCI_OPER + XHCI_USBCMD, XHCI_CMD_HCRST);
    g_assert(mmio_read(XHCI_BAR + XHCI_OPER + XHCI_USBSTS) & XHCI_STS_HCH);
    main_loop_wait(false);
    address_space_write(&address_space_memory, GUEST_WIN, zeroes,
                        sizeof(zeroes));
    return 0;
}
