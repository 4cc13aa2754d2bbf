#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Conduit's vfio-user client against libvfio-user's gpio-pci-idio-16
sample (an I/O BAR2 of 256 bytes whose input bits read 1 for pins toggled
a multiple of 3 times), under -accel qtest: IDs from config space, BAR
sizes, and the pin arithmetic through port I/O.  With CONDUIT_PEER_QEMU
set too, QEMU's client must see the same config space bytes, BAR sizes
and I/O results.

Environment: CONDUIT_PEER_LIBVFIO_USER (a libvfio-user build directory;
skips without it), CONDUIT_BINARY (meson), CONDUIT_PEER_QEMU (optional).
"""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interop  # noqa: E402

LVU = interop.peer_libvfio_user()
CONDUIT = interop.need_env('CONDUIT_BINARY')
QEMU = os.environ.get('CONDUIT_PEER_QEMU', '')
GPIO = os.path.join(LVU, 'samples', 'gpio-pci-idio-16')
IO_BASE = 0xc000
RESULTS = []


def start_sample(binary, tmp, args=()):
    sock = os.path.join(tmp, 'lvu.sock')
    err = open(os.path.join(tmp, 'sample.err'), 'w+')
    proc = subprocess.Popen([binary] + list(args) + [sock],
                            stdout=err, stderr=subprocess.STDOUT)
    err.close()
    interop.wait_for_path(sock, proc)
    return proc, sock


def stop_sample(proc):
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(5)    # it may ignore SIGTERM: then it is killed
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def device_arg(vmm, sock):
    if vmm == CONDUIT:
        return ['-device', 'vfio-user-pci,id=gpio0,addr=04.0,socket=' + sock]
    return ['-device', '{"driver":"vfio-user-pci","id":"gpio0","addr":"0x4",'
            '"socket":{"type":"unix","path":"%s"}}' % sock]


def probe_gpio(vmm):
    """What a client sees of the gpio sample: config, BARs, pin reads."""
    if not os.access(GPIO, os.X_OK):
        raise unittest.SkipTest('no %s in the libvfio-user build' % GPIO)
    with interop.tmpdir() as tmp:
        proc, sock = start_sample(GPIO, tmp)
        qt = None
        try:
            args = ['-M', 'pc', '-m', '64']
            if vmm != CONDUIT:
                args += ['-object', 'memory-backend-memfd,id=ram,size=64M,'
                         'share=on', '-machine', 'memory-backend=ram']
            qt = interop.QTest(vmm, tmp, args + device_arg(vmm, sock))
            pci = interop.Pci(qt, 4 << 3)
            cfg = [pci.readl(off) for off in range(0, 0x40, 4)]
            sizes = {}
            for bar in range(6):
                off = 0x10 + 4 * bar
                old = pci.readl(off)
                pci.writel(off, 0xffffffff)
                sizes[bar] = pci.readl(off)
                pci.writel(off, old)
            pci.writel(0x18, IO_BASE)
            pci.writel(0x04, pci.readl(0x04) | 1)
            reads = []
            for _ in range(4):
                reads.append(int(qt.cmd('inb 0x%x' % (IO_BASE + 1)), 16))
                qt.cmd('outb 0x%x 0xff' % IO_BASE)
            reads.append(int(qt.cmd('inb 0x%x' % (IO_BASE + 5)), 16))
        finally:
            out = qt.quit() if qt else ''
            stop_sample(proc)
        return {'ids': cfg[0], 'class': cfg[2] >> 8, 'sizes': sizes,
                'reads': reads, 'cfg': cfg, 'out': out}


class LibvfioUserSamples(unittest.TestCase):

    def test_conduit_gpio(self):
        r = probe_gpio(CONDUIT)
        RESULTS.append('conduit gpio: ids 0x%08x sizes %s reads %s'
                       % (r['ids'], {k: hex(v) for k, v in r['sizes'].items()
                                     if v}, r['reads']))
        self.assertEqual(r['ids'], 0x0dc8494f, r['out'])
        # BAR2: 256 bytes of I/O space; no other BAR.
        self.assertEqual(r['sizes'][2] & 0xffff, 0xff01)
        for bar in (0, 1, 3, 4, 5):
            self.assertEqual(r['sizes'][bar], 0)
        # Pins 0-7 toggled 0, 1, 2, 3 times: 0%3, 1%3, 2%3, 3%3.
        self.assertEqual(r['reads'][:4], [0xff, 0x00, 0x00, 0xff])
        # Pins 8-15 never toggled.
        self.assertEqual(r['reads'][4], 0xff)

    def test_same_as_qemu(self):
        if not QEMU:
            self.skipTest('CONDUIT_PEER_QEMU is not set')
        a = probe_gpio(CONDUIT)
        b = probe_gpio(QEMU)
        RESULTS.append('qemu gpio: ids 0x%08x reads %s'
                       % (b['ids'], b['reads']))
        # Command/status and BAR registers are the VMM's own business.
        for off in range(0x40 // 4):
            if off in (1,) or 4 <= off <= 9:
                continue
            self.assertEqual(a['cfg'][off], b['cfg'][off],
                             'config dword 0x%x' % (off * 4))
        self.assertEqual(a['sizes'], b['sizes'])
        self.assertEqual(a['reads'], b['reads'])


if __name__ == '__main__':
    prog = unittest.main(exit=False, verbosity=2)
    print('\n'.join(RESULTS))
    sys.exit(0 if prog.result.wasSuccessful() else 1)
