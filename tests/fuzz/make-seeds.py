#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the hand-made seed corpora under tests/fuzz/corpus/.

Each seed is one small valid input per message kind, in the input format
the target's header comment describes.  The files are in git; rerun this
after changing a format:  python3 tests/fuzz/make-seeds.py
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

# include/vfio-user/protocol.h
VERSION, DMA_MAP, DMA_UNMAP, GET_INFO, GET_REGION_INFO = 1, 2, 3, 4, 5
GET_IRQ_INFO, SET_IRQS, REGION_READ, REGION_WRITE = 7, 8, 9, 10
DMA_READ, DMA_WRITE, DEVICE_RESET = 11, 12, 13
F_COMMAND, F_REPLY, F_NO_REPLY, F_ERROR = 0, 1, 1 << 4, 1 << 5
# linux/vfio.h
REGION_FLAG_READ, REGION_FLAG_WRITE, REGION_FLAG_MMAP = 1, 2, 4
REGION_FLAG_CAPS = 8
CAP_SPARSE_MMAP, CAP_TYPE, CAP_MSIX_MAPPABLE = 1, 2, 3
IRQ_DATA_NONE, IRQ_DATA_BOOL, IRQ_DATA_EVENTFD = 1, 2, 4
IRQ_ACTION_MASK, IRQ_ACTION_UNMASK, IRQ_ACTION_TRIGGER = 8, 16, 32
MSIX_IRQ_INDEX, INTX_IRQ_INDEX = 2, 0
CONFIG_REGION = 7


def hdr(mid, cmd, payload_len, flags=F_COMMAND, err=0):
    return struct.pack("<HHIII", mid, cmd, 16 + payload_len, flags, err)


def msg(mid, cmd, payload=b"", flags=F_COMMAND, err=0):
    return hdr(mid, cmd, len(payload), flags, err) + payload


CAPS_JSON = (b'{"capabilities":{"max_msg_fds":8,"max_data_xfer_size":65536,'
             b'"pgsizes":4096,"max_dma_maps":64}}\0')


def version_payload(json=CAPS_JSON):
    return struct.pack("<HH", 0, 1) + json


def region_info(index, flags, size, offset=0, caps=()):
    """struct vfio_region_info (32 bytes) + an 8-aligned cap chain."""
    body = b""
    chain = []
    pos = 32
    for cid, ver, cbody in caps:
        chain.append((pos, cid, ver, cbody))
        pos += (8 + len(cbody) + 7) & ~7
    for i, (cpos, cid, ver, cbody) in enumerate(chain):
        nxt = chain[i + 1][0] if i + 1 < len(chain) else 0
        c = struct.pack("<HHI", cid, ver, nxt) + cbody
        body += c + b"\0" * (((len(c) + 7) & ~7) - len(c))
    if caps:
        flags |= REGION_FLAG_CAPS
    return struct.pack("<IIIIQQ", 32 + len(body), flags, index,
                       32 if caps else 0, size, offset) + body


def sparse(areas):
    return (CAP_SPARSE_MMAP, 1,
            struct.pack("<II", len(areas), 0) +
            b"".join(struct.pack("<QQ", o, s) for o, s in areas))


MSIX_MAPPABLE = (CAP_MSIX_MAPPABLE, 1, b"")


def irq_set(flags, index, start, count, data=b""):
    return struct.pack("<IIIII", 20 + len(data), flags, index, start,
                       count) + data


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def codec():
    t = "fuzz-vfio-user-codec"
    v = version_payload()
    write(t, "hdr", bytes([0, 0]) + hdr(1, VERSION, len(v)))
    write(t, "version", bytes([1, 0]) + v)
    write(t, "version-empty", bytes([1, 0]) + struct.pack("<HH", 0, 1))
    write(t, "version-migration", bytes([1, 0]) + version_payload(
        b'{"capabilities":{"max_msg_fds":4,"migration":{"pgsize":4096}}}\0'))
    write(t, "dma-map-fd", bytes([2, 1]) +
          struct.pack("<IIQQQ", 32, 3, 0x1000, 0x100000, 0x10000))
    write(t, "dma-map-nofd", bytes([2, 0]) +
          struct.pack("<IIQQQ", 32, 1, 0, 0x200000, 0x1000))
    write(t, "dma-unmap", bytes([3, 0]) +
          struct.pack("<IIQQ", 24, 0, 0x100000, 0x10000))
    write(t, "region-read", bytes([4, 0]) + struct.pack("<QII", 0x10, 0, 4))
    write(t, "region-write", bytes([5, 0]) +
          struct.pack("<QII", 0x10, 0, 4) + b"\1\2\3\4")
    write(t, "dma-read", bytes([6, 0]) + struct.pack("<QQ", 0x1000, 8))
    write(t, "dma-write", bytes([7, 0]) +
          struct.pack("<QQ", 0x1000, 4) + b"abcd")
    write(t, "irq-eventfd", bytes([8 | 0x30, 2]) +
          irq_set(IRQ_DATA_EVENTFD | IRQ_ACTION_TRIGGER, MSIX_IRQ_INDEX,
                  0, 2))
    write(t, "irq-bool", bytes([8 | 0x30, 0]) +
          irq_set(IRQ_DATA_BOOL | IRQ_ACTION_TRIGGER, MSIX_IRQ_INDEX, 1, 2,
                  b"\1\0"))
    write(t, "irq-disable-all", bytes([8, 0]) +
          irq_set(IRQ_DATA_NONE | IRQ_ACTION_TRIGGER, MSIX_IRQ_INDEX, 0, 0))
    write(t, "region-info-caps", bytes([9, 0]) +
          region_info(0, REGION_FLAG_READ | REGION_FLAG_WRITE |
                      REGION_FLAG_MMAP, 0x4000,
                      caps=[sparse([(0, 0x2000), (0x3000, 0x1000)]),
                            MSIX_MAPPABLE]))
    write(t, "region-info-type", bytes([9, 0]) +
          region_info(8, REGION_FLAG_READ, 0x1000,
                      caps=[(CAP_TYPE, 1, struct.pack("<II", 3, 1))]))
    write(t, "region-reply", bytes([10, 0]) +
          struct.pack("<IIQ", 0, 4, 0x10) +
          struct.pack("<QII", 0x10, 0, 4) + b"\1\2\3\4")
    write(t, "feature-mig-state", bytes([12, 0]) +
          struct.pack("<IIII", 16, (1 << 17) | 2, 3, 0xffffffff))
    write(t, "feature-migration-get", bytes([12, 0]) +
          struct.pack("<II", 16, (1 << 16) | 1))
    write(t, "dma-logging-start", bytes([13, 0]) +
          struct.pack("<QII", 4096, 2, 0) +
          struct.pack("<QQQQ", 0, 0x100000, 0x100000000, 0x200000))
    write(t, "dma-logging-report", bytes([14, 0]) +
          struct.pack("<QQQ", 0x1000, 0x40000, 4096))
    write(t, "mig-data-read", bytes([15, 0]) + struct.pack("<II", 4104, 4096))
    write(t, "mig-data-write", bytes([15 | 0x10, 0]) +
          struct.pack("<II", 8, 4) + b"NVMM")
    write(t, "dma-reply", bytes([11, 0]) + struct.pack("<QQ", 0x1000, 4) +
          struct.pack("<QQ", 0x1000, 4) + b"wxyz")
    # Regression: count 2^64 - 16 made the expected length wrap to 0.
    write(t, "regress-dma-reply-count-wrap", bytes([11, 0]) +
          struct.pack("<QQ", 0x1000, 2**64 - 16))


def plan():
    t = "fuzz-vfio-bar-plan"

    def params(toff, tsize, poff, psize, bits, pages=0, pad=b"\0" * 10):
        return struct.pack("<IHHIBB", toff, tsize, psize, poff, bits,
                           pages) + pad

    rw_mmap = REGION_FLAG_READ | REGION_FLAG_WRITE | REGION_FLAG_MMAP
    write(t, "mappable-whole-bar",
          params(0x3000, 0x100, 0x3800, 8, 0x0f) +
          region_info(0, rw_mmap, 0x4000, caps=[MSIX_MAPPABLE]))
    write(t, "table-cut-out",
          params(0x1000, 0x100, 0x1800, 8, 0x0f) +
          region_info(0, rw_mmap, 0x4000))
    write(t, "sparse-and-mappable",
          params(0x2000, 0x40, 0x2800, 8, 0x07, pad=b"\0\3" + b"\0" * 8) +
          region_info(0, rw_mmap, 0x10000,
                      caps=[sparse([(0, 0x2000), (0x3000, 0xd000)]),
                            MSIX_MAPPABLE]))
    write(t, "small-bar-64k-pages",
          params(0x0, 0x100, 0x800, 8, 0x0f, pages=4) +
          region_info(2, rw_mmap, 0x1000))
    write(t, "override-no-mmap",
          params(0x0, 0x100, 0x800, 8, 0x1f, pages=0x80 | (2 << 3)) +
          region_info(4, rw_mmap, 0x20000))
    write(t, "msix-mappable-on-missing",
          params(0x0, 0x100, 0x800, 8, 0x23) +
          region_info(0, rw_mmap, 0x4000))


def client():
    t = "fuzz-vfio-user-client"

    def rec(body, kind=0, nfds=0):
        return bytes([kind, nfds]) + struct.pack("<H", len(body)) + body

    def call(op, recs, prm=b"\0" * 8):
        return bytes([op | (len(recs) << 4)]) + b"".join(recs) + prm

    ver = rec(version_payload())
    dev_info = struct.pack("<IIII", 16, 3, 9, 5)
    info0 = region_info(0, REGION_FLAG_READ | REGION_FLAG_WRITE |
                        REGION_FLAG_MMAP, 0x4000,
                        caps=[sparse([(0, 0x2000), (0x3000, 0x1000)]),
                              MSIX_MAPPABLE])
    irq_info = struct.pack("<IIII", 16, 0x7, MSIX_IRQ_INDEX, 4)
    write(t, "device-info", ver + call(0, [rec(dev_info)]))
    write(t, "region-info-fd", ver + call(1, [rec(info0, 0, 1)]))
    # A short first answer naming the argsz it needs, then the full one.
    short = bytearray(info0[:32])
    short[12:16] = b"\0\0\0\0"
    write(t, "region-info-retry",
          ver + call(1, [rec(bytes(short)), rec(info0)]))
    write(t, "region-read", ver +
          call(2, [rec(struct.pack("<QII", 0x10, 0, 4) + b"\1\2\3\4")],
               bytes([0, 0x10, 0, 3, 0, 0, 0, 0])))
    write(t, "region-write", ver +
          call(3, [rec(struct.pack("<QII", 0x10, 0, 4))],
               bytes([0, 0x10, 0, 3, 0, 0, 0, 0])))
    write(t, "irq-info", ver + call(4, [rec(irq_info)], bytes([2] + [0] * 7)))
    write(t, "set-irqs", ver +
          call(5, [rec(b"")], bytes([2, 0, 0, 0, 2, 2, 0, 3])))
    write(t, "reset-error", ver + call(6, [rec(b"", 4 | (5 << 4))]))
    write(t, "dma-map", ver + call(7, [rec(b"")], bytes([0, 1, 0, 0, 1, 0,
                                                         0, 0])))
    write(t, "dma-unmap", ver + call(8, [rec(b"")], bytes([0, 1] + [0] * 6)))
    # The server reads and writes guest memory while a request waits.
    dma_rd = msg(0x100, DMA_READ, struct.pack("<QQ", 0x1000, 16))
    dma_wr = msg(0x101, DMA_WRITE, struct.pack("<QQ", 0x2000, 4) + b"abcd")
    write(t, "dma-requests", ver +
          call(6, [rec(dma_rd, 1), rec(dma_wr, 1), rec(b"")]))
    write(t, "incoming-dma", ver + call(9, [rec(dma_rd, 1)]))
    # Regression: DMA into the device's own trapped BAR (MMIO at 0x10000)
    # re-entered the client and hung; it must be refused.
    dma_mmio = msg(0x102, DMA_READ, struct.pack("<QQ", 0x10000, 4))
    dma_mmio_wr = msg(0x103, DMA_WRITE, struct.pack("<QQ", 0x10000, 4) +
                      b"abcd")
    write(t, "regress-dma-into-own-bar", ver +
          call(1, [rec(dma_mmio, 1), rec(dma_mmio_wr, 1), rec(b"")],
               bytes([0] * 8)))
    write(t, "stale-reply", ver + call(0, [rec(dev_info, 2),
                                           rec(dev_info)]))


def libvfu():
    t = "fuzz-libvfu"

    def rec(body, fdspec=0):
        return bytes([fdspec]) + struct.pack("<H", len(body)) + body

    auto = b"\1"
    v = version_payload()
    write(t, "version", b"\0" + rec(msg(0, VERSION, v)))
    write(t, "device-info", auto +
          rec(msg(1, GET_INFO, struct.pack("<IIII", 16, 0, 0, 0))))
    write(t, "region-info", auto + rec(msg(1, GET_REGION_INFO,
                                          struct.pack("<IIIIQQ", 32, 0, 0,
                                                      0, 0, 0))) +
          rec(msg(2, GET_REGION_INFO, struct.pack("<IIIIQQ", 512, 0, 0, 0,
                                                  0, 0))))
    write(t, "config-rw", auto +
          rec(msg(1, REGION_READ, struct.pack("<QII", 0, CONFIG_REGION,
                                              64))) +
          rec(msg(2, REGION_WRITE, struct.pack("<QII", 4, CONFIG_REGION, 2) +
                  b"\6\0")))
    write(t, "bar2-rw", auto +
          rec(msg(1, REGION_WRITE, struct.pack("<QII", 0x10, 2, 4) +
                  b"\1\2\3\4")) +
          rec(msg(2, REGION_READ, struct.pack("<QII", 0x10, 2, 4))) +
          rec(msg(3, REGION_WRITE, struct.pack("<QII", 0x3000, 0, 4) +
                  b"\1\2\3\4", F_NO_REPLY)))
    write(t, "irqs", auto +
          rec(msg(1, GET_IRQ_INFO, struct.pack("<IIII", 16, 0,
                                               MSIX_IRQ_INDEX, 0))) +
          rec(msg(2, SET_IRQS, irq_set(IRQ_DATA_EVENTFD | IRQ_ACTION_TRIGGER,
                                       MSIX_IRQ_INDEX, 0, 4)), 4) +
          rec(msg(3, SET_IRQS, irq_set(IRQ_DATA_NONE | IRQ_ACTION_MASK,
                                       MSIX_IRQ_INDEX, 1, 1))) +
          rec(msg(4, SET_IRQS, irq_set(IRQ_DATA_EVENTFD | IRQ_ACTION_TRIGGER,
                                       INTX_IRQ_INDEX, 0, 1)), 2))
    write(t, "dma-map-unmap", auto +
          rec(msg(1, DMA_MAP, struct.pack("<IIQQQ", 32, 3, 0, 0x100000,
                                          0x10000)), 8 | 1) +
          rec(msg(2, DMA_MAP, struct.pack("<IIQQQ", 32, 1, 0, 0x200000,
                                          0x1000))) +
          rec(msg(3, DMA_UNMAP, struct.pack("<IIQQ", 24, 0, 0x100000,
                                            0x10000))) +
          rec(msg(4, DMA_UNMAP, struct.pack("<IIQQ", 24, 2, 0, 0))))
    write(t, "reset", auto + rec(msg(1, DEVICE_RESET)))
    # Regression: a DMA range past the end of its memfd (SIGBUS on use).
    write(t, "regress-dma-map-past-fd-end", auto +
          rec(msg(1, DMA_MAP, struct.pack("<IIQQQ", 32, 3, 0, 0x100000,
                                          0x100000)), 8 | 1))
    write(t, "dma-reply", auto + rec(msg(7, DMA_READ, struct.pack(
        "<QQ", 0x1000, 4) + b"abcd", F_REPLY)))


def nvme():
    t = "fuzz-nvme"
    base = 0x100000

    def cmd(opcode, nsid=0, prp1=0, prp2=0, cdw10=0, cdw11=0, cdw12=0):
        return struct.pack("<BBHIQQQQIIIIII", opcode, 0, 0, nsid, 0, 0,
                           prp1, prp2, cdw10, cdw11, cdw12, 0, 0, 0)

    def adm(c):
        return b"\0" + c

    def io(c):
        return b"\1" + c

    def mem(off, data):
        return b"\2" + struct.pack("<IB", off, len(data)) + data

    write(t, "identify", b"\1" +
          adm(cmd(0x06, prp1=base + 0x20000, cdw10=1)) +
          adm(cmd(0x06, nsid=1, prp1=base + 0x21000, cdw10=0)))
    write(t, "write-read", b"\1" +
          io(cmd(0x01, nsid=1, prp1=base + 0x20000, cdw12=0)) +
          io(cmd(0x02, nsid=1, prp1=base + 0x20000, cdw12=7)) +
          b"\4" + struct.pack("<HI", 3, 2))
    write(t, "prp-list", b"\3" +
          mem(0x8000, struct.pack("<QQ", base + 0x22000, base + 0x23000)) +
          io(cmd(0x02, nsid=1, prp1=base + 0x21000, prp2=base + 0x8000,
                 cdw12=23)))
    write(t, "features-log", b"\1" +
          adm(cmd(0x09, cdw10=7, cdw11=0x00030003)) +
          adm(cmd(0x0a, cdw10=7)) +
          adm(cmd(0x02, nsid=0xffffffff, prp1=base + 0x20000,
                  cdw10=(127 << 16) | 2)))
    write(t, "registers", b"\0" +
          b"\3" + struct.pack("<HBQ", 0x24, 0, 0x000f000f) +
          b"\3" + struct.pack("<HBQ", 0x28, 1, base) +
          b"\3" + struct.pack("<HBQ", 0x30, 1, base + 0x1000) +
          b"\3" + struct.pack("<HBQ", 0x14, 0, 0x00460001) +
          b"\5" + struct.pack("<HB", 0x1c, 0) + b"\6" + b"\7")
    write(t, "delete-queues", b"\1" + adm(cmd(0x00, cdw10=1)) +
          adm(cmd(0x04, cdw10=1)) + io(cmd(0x00, nsid=1)))


def qtest():
    t = "fuzz-qtest"
    write(t, "rw", b"writel 0x100 0x12345678\nreadl 0x100\nreadb 0x101\n"
          b"writeq 0x200 0x1122334455667788\nreadq 0x200\n")
    write(t, "bulk", b"write 0x0 0x4 0x01020304\nread 0x0 0x4\n"
          b"b64write 0x10 0x4 AQIDBA==\nb64read 0x10 0x4\n"
          b"memset 0x20 0x10 0xff\n")
    write(t, "pio-clock", b"outb 0x80 0x1\ninw 0x80\noutl 0xcf8 0x80000000\n"
          b"inl 0xcfc\nclock_step 1000\nclock_set 5000\nclock_step\n")
    write(t, "irq-endianness", b"endianness\nirq_intercept_in unnamed\n"
          b"set_irq_in unnamed unnamed 0 1\n")
    # Regression: a device's DMA/MSI aimed at its own registers recursed
    # until the stack overflowed; the re-entrancy guard drops it.
    write(t, "regress-dma-engine-at-itself",
          b"writel 0x10000 0x1000c\nwritel 0x10004 0x0\n"
          b"writel 0x10008 0x1\nwritel 0x1000c 0x1\nreadl 0x10010\n"
          b"writel 0x10000 0x10010\nreadl 0x10010\n")


def qmp():
    t = "fuzz-qmp"
    write(t, "status", b'{"execute": "query-status"}\n')
    write(t, "version-id", b'{"execute": "query-version", "id": 1}\n')
    write(t, "qom", b'{"execute": "qom-list", "arguments": {"path": "/"}}\n'
          b'{"execute": "qom-get", "arguments": {"path": "/", '
          b'"property": "type"}}\n')
    write(t, "device", b'{"execute": "device_add", "arguments": '
          b'{"driver": "pci-testdev", "id": "t"}}\n'
          b'{"execute": "device_del", "arguments": {"id": "t"}}\n')
    # Regression: device_del removed the board's own devices.
    write(t, "regress-device-del-board", b'{"execute": "device_del", '
          b'"arguments": {"id": "/machine/pci-host"}}\n'
          b'{"execute": "device_del", "arguments": {"id": "/machine/rtc"}}\n'
          b'{"execute": "query-status"}\n')
    write(t, "oob-bad", b'{"exec-oob": "query-status"}\n{"execute": 1}\n'
          b'[1, 2]\n{"execute": "stop"}{"execute": "cont"}\n')


def options():
    t = "fuzz-options"
    write(t, "pc-testdev", b"pc,accel=qtest,usb=off\npci-testdev,id=t0\n")
    write(t, "serial", b"type=pc\nisa-serial,id=s0,chardev=none\n")
    write(t, "vfio-user", b"pc\nvfio-user-pci,socket=/nonexistent,"
          b"x-msg-timeout=10,x-msix-mappable=auto\n")
    write(t, "vfio", b"pc,memory-backend=ram\nvfio-pci,host=0000:00:1f.0,"
          b"x-no-mmap=on\n")
    write(t, "debug-exit", b"pc\nisa-debug-exit,iobase=0x501,iosize=2\n")


def virtqueue():
    """fuzz-virtqueue: set-up bytes, then guest RAM (tests/fuzz/*.c)."""
    t = "fuzz-virtqueue"
    # queue size 8 (2^3), desc at 0x000, avail at 0x100, used at 0x200
    setup = bytes([3, 0x00, 0x01, 0x02, 0, 0, 0, 0])
    ram = bytearray(0x300)
    # desc 0: header (NEXT -> 1); desc 1: data, writable (NEXT -> 2);
    # desc 2: status, writable
    ram[0:16] = struct.pack("<QIHH", 0x100000 + 0x280, 16, 1, 1)
    ram[16:32] = struct.pack("<QIHH", 0x100000 + 0x400, 512, 3, 2)
    ram[32:48] = struct.pack("<QIHH", 0x100000 + 0x290, 1, 2, 0)
    ram[0x100:0x106] = struct.pack("<HHH", 0, 1, 0)
    write(t, "one-chain", setup + bytes(ram))
    loop = bytearray(ram)
    loop[32:48] = struct.pack("<QIHH", 0x100000 + 0x290, 1, 3, 1)
    write(t, "loop", setup + bytes(loop))
    ind = bytearray(ram)
    ind[0:16] = struct.pack("<QIHH", 0x100000 + 0x2c0, 32, 4, 0)
    ind[0x2c0:0x2e0] = (struct.pack("<QIHH", 0x100000 + 0x280, 16, 1, 1) +
                        struct.pack("<QIHH", 0x100000 + 0x290, 1, 2, 0))
    write(t, "indirect", bytes([3, 0, 1, 2, 3, 0, 0, 0]) + bytes(ind))


def blk_req():
    """fuzz-virtio-blk-req: flags, piece counts and lengths, bytes."""
    t = "fuzz-virtio-blk-req"
    hdr_in = struct.pack("<IIQ", 0, 0, 2)
    hdr_out = struct.pack("<IIQ", 1, 0, 2)
    hdr_flush = struct.pack("<IIQ", 4, 0, 0)
    # capacity 64 sectors (flags byte 64 << 2 would overflow: use 0xfc)
    write(t, "read", bytes([0xfc, 1, 2, 4, 128, 1]) + hdr_in)
    write(t, "write", bytes([0xfc, 2, 1, 4, 128, 1]) + hdr_out)
    write(t, "flush-ro", bytes([0xfd, 1, 1, 4, 1]) + hdr_flush)
    # DISCARD (two segments) and WRITE_ZEROES (unmap): third byte 1 in
    # piece plus bit 3 (DISCARD negotiated) and bit 6 (WRITE_ZEROES).
    segs = struct.pack("<QII", 0, 8, 0) + struct.pack("<QII", 16, 8, 0)
    write(t, "discard", bytes([0xfc, 2, 1 | 8 | 64, 4, 8, 1]) +
          struct.pack("<IIQ", 11, 0, 0) + segs)
    write(t, "write-zeroes", bytes([0xfc, 2, 1 | 8 | 64, 4, 4, 1]) +
          struct.pack("<IIQ", 13, 0, 0) + struct.pack("<QII", 4, 8, 1))


def qcow2():
    """fuzz-qcow2: a control byte, then small images qemu-img made."""
    import shutil
    import subprocess
    import tempfile
    t = "fuzz-qcow2"
    if not shutil.which("qemu-img"):
        print("qemu-img missing: fuzz-qcow2 seeds not written")
        return
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "src.raw")
        with open(raw, "wb") as f:
            for i in range(64):
                f.write(bytes([i]) * 512 if i % 3 else bytes(512))
        cases = [
            ("c512", ["-o", "cluster_size=512"], 0x03),
            ("c4k-rc1", ["-o", "cluster_size=4096,refcount_bits=1"], 0x05),
            ("c512-rc64", ["-o", "cluster_size=512,refcount_bits=64"], 0x07),
            ("compressed", ["-c", "-o", "cluster_size=512"], 0x09),
            ("v2", ["-o", "cluster_size=512,compat=0.10"], 0x0b),
            ("lazy", ["-o", "cluster_size=512,lazy_refcounts=on"], 0x0d),
        ]
        for name, opts, ctl in cases:
            img = os.path.join(tmp, name)
            subprocess.run(["qemu-img", "convert", "-f", "raw", "-O",
                            "qcow2"] + opts + [raw, img], check=True)
            with open(img, "rb") as f:
                data = f.read()
            write(t, name, bytes([ctl]) + data)
            if name == "lazy":
                # dirty bit set, as a crash with lazy refcounts leaves it
                dirty = bytearray(data)
                dirty[79] |= 1
                write(t, "dirty", bytes([0x0f]) + bytes(dirty))
        ov = os.path.join(tmp, "overlay")
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-o",
                        "cluster_size=512", "-b", "base.qcow2", "-F",
                        "qcow2", "-u", ov, "64K"], check=True)
        with open(ov, "rb") as f:
            write(t, "backing", bytes([0x11]) + f.read())
def mig_str(s):
    b = s.encode()
    return bytes([len(b)]) + b


def mig_field(name, kind, count, esize, payload):
    return (b"F" + mig_str(name) + bytes([kind]) +
            struct.pack("<II", count, esize) + payload)


def mig_vmsd(name, version, fields, subs=b""):
    return (b"S" + mig_str(name) + struct.pack("<I", version) +
            b"".join(fields) + b"E" + subs + b"E")


def mig_crc(data):
    import binascii
    return struct.pack("<I", binascii.crc32(data) & 0xffffffff)


def migration():
    """fuzz-migration-stream: whole streams for its "fuzzdev" and RAM."""
    t = "fuzz-migration-stream"
    U8, U16, U32, U64, BOOL, I32, I64, BUF, STRUCT, CUSTOM = range(1, 11)
    elem = mig_vmsd("fuzzelem", 1, [
        mig_field("a", U16, 1, 2, struct.pack("<H", 7)),
        mig_field("blob", BUF, 8, 1, b"12345678")])
    ring = struct.pack("<I", 2) + struct.pack("<II", 10, 11)
    dev = mig_vmsd("fuzzdev", 2, [
        mig_field("u8", U8, 1, 1, b"\x01"),
        mig_field("u16", U16, 1, 2, struct.pack("<H", 2)),
        mig_field("u32", U32, 1, 4, struct.pack("<I", 3)),
        mig_field("u64", U64, 1, 8, struct.pack("<Q", 4)),
        mig_field("flag", BOOL, 1, 1, b"\x01"),
        mig_field("i32", I32, 1, 4, struct.pack("<i", -5)),
        mig_field("i64", I64, 1, 8, struct.pack("<q", -6)),
        mig_field("buf", BUF, 16, 1, bytes(range(16))),
        mig_field("elems", STRUCT, 2, 0, elem + elem),
        mig_field("index", U32, 1, 4, struct.pack("<I", 1)),
        mig_field("size", U32, 1, 4, struct.pack("<I", 4)),
        mig_field("ring", CUSTOM, 1, 0, struct.pack("<I", len(ring)) + ring),
        mig_field("late", U16, 1, 2, struct.pack("<H", 9))],
        b"U" + mig_vmsd("fuzzdev/extra", 1, [
            mig_field("extra", U32, 1, 4, struct.pack("<I", 42))]))
    blocks = (bytes([1]) + struct.pack("<I", 1) + mig_str("fuzz.ram") +
              struct.pack("<QI", 64 * 1024, 4096))
    pages = (bytes([2]) + struct.pack("<II", 0, 2) +
             struct.pack("<QB", 3, 1) + bytes([0x5a]) * 4096 +
             struct.pack("<QB", 5, 0))

    def live(chunk):
        return b"\x01" + mig_str("ram") + struct.pack("<I", len(chunk)) + chunk

    def device(name, state):
        return (b"\x02" + mig_str(name) + struct.pack("<I", len(state)) +
                state + mig_crc(state))

    head = b"CNDTMIG\n" + struct.pack("<I", 1)
    eof = b"\xff" + struct.pack("<I", 1)
    write(t, "full", head + live(blocks) + live(pages) +
          device("fuzzdev", dev) + eof)
    write(t, "no-ram-pages", head + live(blocks) + device("fuzzdev", dev) +
          eof)
    v1 = mig_vmsd("fuzzdev", 1, [
        mig_field("u8", U8, 1, 1, b"\x01"),
        mig_field("u16", U16, 1, 2, b"\0\0"),
        mig_field("u32", U32, 1, 4, bytes(4)),
        mig_field("u64", U64, 1, 8, bytes(8)),
        mig_field("flag", BOOL, 1, 1, b"\0"),
        mig_field("i32", I32, 1, 4, bytes(4)),
        mig_field("i64", I64, 1, 8, bytes(8)),
        mig_field("buf", BUF, 16, 1, bytes(16)),
        mig_field("elems", STRUCT, 0, 0, b""),
        mig_field("index", U32, 1, 4, bytes(4)),
        mig_field("size", U32, 1, 4, struct.pack("<I", 1)),
        mig_field("ring", CUSTOM, 1, 0, struct.pack("<II", 4, 0))])
    write(t, "version1", head + live(blocks) + device("fuzzdev", v1) + eof)


def virtio_pci():
    """fuzz-virtio-pci: a device byte, then ops (see do_op())."""
    t = "fuzz-virtio-pci"

    def ram(off, data):
        return bytes([3]) + struct.pack("<HB", off, len(data)) + data

    def up(features, qlog=2, vec=0):
        return bytes([7]) + struct.pack("<IIBB", features, 0, qlog, vec)

    def desc(i, addr, length, flags, nxt):
        return ram(i * 16, struct.pack("<QIHH", 0x100000 + addr, length,
                                       flags, nxt))

    avail = ram(0x1000, struct.pack("<HHH", 0, 1, 0))
    notify0, loop = bytes([2, 0]), bytes([11, 0])
    # virtio-blk: FLUSH, a read of sector 0 (header, 512 bytes, status).
    blk_read = (desc(0, 0x8000, 16, 1, 1) + desc(1, 0x9000, 512, 3, 2) +
                desc(2, 0xa000, 1, 2, 0) + avail + notify0 + loop)
    write(t, "blk-bring-up", bytes([0]) + up(1 << 9))
    write(t, "blk-read", bytes([0]) + up(1 << 9) + blk_read)
    write(t, "blk-read-msix", bytes([0]) + up(1 << 9, 3, 0x80) + blk_read)
    write(t, "blk-driver-ok-twice", bytes([0]) + up(1 << 9) +
          bytes([0, 0x14, 1, 0x0b, 0, 0x14, 1, 0x0f]) + blk_read +
          bytes([0, 0x14, 1, 0]))
    # the PCI_CFG window: bar 4, offset 0x14 (status), length 1, data.
    write(t, "blk-pci-cfg", bytes([0]) + up(1 << 9) +
          bytes([8, 0x40 - 0x34 + 4, 0, 4]) + bytes([9, 0x40 - 0x34, 2]))
    # virtio-net: MAC, a frame on TX (queue 1 at 0x4000 in the window).
    tx_desc = ram(0x4000, struct.pack("<QIHH", 0x10c000, 72, 0, 0))
    tx_avail = ram(0x5000, struct.pack("<HHH", 0, 1, 0))
    write(t, "net-tx", bytes([1]) + up(1 << 5) + tx_desc + tx_avail +
          bytes([2, 1]) + loop)
    write(t, "net-rx", bytes([1]) + up(1 << 5) +
          desc(0, 0xc000, 1526, 2, 0) + avail + notify0 +
          bytes([11, 60]) + bytes(range(60)) + loop)


def usb_hcd():
    """fuzz-usb-hcd: UHCI and xHCI brought up on the 64 KiB window."""
    t = "fuzz-usb-hcd"

    def u16(v):
        return struct.pack("<H", v)

    def u32(v):
        return struct.pack("<I", v)

    def word(off, addr, flags):
        # op 6: a pointer into the window (take_addr: in-window form).
        return bytes([6]) + u16(off) + u16((addr - 0x100000) // 2) + \
            bytes([flags])

    def uhci(reg, val):
        return bytes([0, reg]) + u32(val)

    def flbase(addr):
        return bytes([0, 0x08]) + u32(0) + u16((addr - 0x100000) // 2)

    def xhci(off, val):
        return bytes([2]) + u16(off) + bytes([0]) + u32(val)

    def xhci_ptr(off, addr):
        return bytes([2]) + u16(off) + bytes([1]) + \
            u16((addr - 0x100000) // 2)

    tick = bytes([7, 3])
    # Frame list entry 0..3 -> QH at 0x101000, whose element is a TD.
    uhci_up = (flbase(0x100000) + word(0, 0x101000, 2) + word(4, 0x101000, 2)
               + word(0x1000, 0x101000, 3) + word(0x1004, 0x102000, 0) +
               uhci(0x10, 0x200) + uhci(0x10, 0) + uhci(0x10, 4) +
               uhci(0, 0xc1))
    write(t, "uhci-run", uhci_up + tick + tick)
    # A TD: link T, active, SETUP to addr 0 of 8 bytes at 0x103000.
    td = bytes([5]) + u16(0x2000) + bytes([16]) + u32(1) + \
        u32(0x18800000) + u32(0x00e0002d) + u32(0x103000)
    write(t, "uhci-setup-td", uhci_up + td + tick)
    # xHCI: reset, 8 slots, DCBAA, command ring, ERST, run, No-Op.
    xhci_up = (xhci(0x40, 2) + xhci(0x40 + 0x38, 8) +
               xhci_ptr(0x40 + 0x30, 0x104000) + xhci(0x40 + 0x34, 0) +
               xhci_ptr(0x40 + 0x18, 0x105000) + xhci(0x40 + 0x1c, 0) +
               word(0x6000, 0x107000, 0) + bytes([5]) + u16(0x6008) +
               bytes([4]) + u32(16) + xhci(0x1028, 1) +
               xhci_ptr(0x1038, 0x107000) + xhci(0x103c, 0) +
               xhci_ptr(0x1030, 0x106000) + xhci(0x1034, 0) +
               xhci(0x1020, 2) + xhci(0x40, 5))
    noop = bytes([5]) + u16(0x5000) + bytes([16]) + u32(0) + u32(0) + \
        u32(0) + u32((23 << 10) | 1)
    write(t, "xhci-noop", xhci_up + noop + bytes([4, 0, 0]))
    enable = bytes([5]) + u16(0x5000) + bytes([16]) + u32(0) + u32(0) + \
        u32(0) + u32((9 << 10) | 1)
    write(t, "xhci-enable-slot", xhci_up + enable + bytes([4, 0, 0]) +
          xhci(0x440, 0x210))


TARGETS = [codec, plan, client, libvfu, nvme, qtest, qmp, options,
           virtqueue, blk_req, virtio_pci, usb_hcd, migration, qcow2]

if __name__ == "__main__":
    for fn in TARGETS:
        fn()
    sys.exit(0)
