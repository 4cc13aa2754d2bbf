#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""virtio-blk-pci under KVM: the tests/guest virtio-blk guest drives it.

The guest negotiates VERSION_1, sets a queue up, checks sector 0's
signature, writes / flushes / reads back 4 KiB, gets IOERR past the end,
then reads at random, MSI-X driven.  With the defaults (ioeventfd=on,
x-irqfd=on) no kick may reach Conduit's notify handler and no interrupt
its main loop: the kernel does both.  With ioeventfd=off,x-irqfd=off
every kick traps and every interrupt takes the main loop, and the guest
sees the same results.

Environment (set by meson): CONDUIT_BINARY, GUEST_DIR.  Skips without a
usable /dev/kvm.
"""
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', '..', 'scripts', 'bench'))
import guestboot  # noqa: E402
import kvmtest  # noqa: E402
import virtioblkbench as vb  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
BUILD = os.path.dirname(CONDUIT)
IOS = 300


class VirtioBlkKvm(unittest.TestCase):
    def setUp(self):
        if not os.access(CONDUIT, os.X_OK):
            self.skipTest('CONDUIT_BINARY not built')
        if not guestboot.kvm_usable():
            self.skipTest('no usable /dev/kvm')
        if not os.path.exists(guestboot.guest_image('virtio-blk')):
            self.skipTest('virtio-blk guest not built')
        self.tmp = tempfile.TemporaryDirectory(prefix='conduit-vblk-')

    def tearDown(self):
        self.tmp.cleanup()

    def run_guest(self, opts, drive_opts=''):
        status, out, virtio, kvm, notify, _ = vb.run_guest(
            BUILD, self.tmp.name, opts,
            'qd=1 ios=%d mode=irq verify=1 write=1' % IOS, drive_opts)
        self.assertEqual(status, guestboot.EXIT_PASS, out)
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        result = vb.parse_result(out)
        self.assertIsNotNone(result, out)
        self.assertEqual(int(result['ios']), IOS)
        self.assertEqual(int(result['errors']), 0)
        return result, virtio, kvm, notify

    # The guest resets the device before it exits, so the ioeventfds are
    # gone by the time QMP is asked; what they did shows in the counters.
    def test_ioeventfd_irqfd_never_wake_conduit(self):
        result, virtio, kvm, notify = self.run_guest([])
        self.assertEqual(notify, 0, 'kicks trapped despite ioeventfd')
        self.assertGreaterEqual(virtio['kicks'], IOS)
        self.assertLess(kvm['mmio-exits'], IOS, kvm)
        self.assertGreaterEqual(virtio['irqfds'], 1, virtio)
        self.assertEqual(virtio['slow-path-interrupts'], 0, virtio)
        self.assertEqual(kvm['signal-msi'], 0, kvm)
        self.assertGreaterEqual(int(result['irqs']), IOS)

    def test_trapped_notify_and_slow_interrupts(self):
        result, virtio, kvm, notify = self.run_guest(['ioeventfd=off',
                                                      'x-irqfd=off'])
        self.assertEqual(virtio['irqfds'], 0, virtio)
        self.assertGreaterEqual(notify, IOS)
        self.assertGreaterEqual(kvm['mmio-exits'], IOS, kvm)
        # Interrupts raced by the next completion coalesce in the eventfd.
        self.assertGreater(virtio['slow-path-interrupts'], 0, virtio)
        self.assertGreater(kvm['signal-msi'], 0, kvm)

    def test_direct_io(self):
        # O_DIRECT where the temporary directory supports it.
        probe = os.path.join(self.tmp.name, 'probe')
        try:
            fd = os.open(probe, os.O_CREAT | os.O_RDWR | os.O_DIRECT)
            os.close(fd)
        except OSError:
            self.skipTest('no O_DIRECT in ' + self.tmp.name)
        self.run_guest([], ',cache.direct=on')


if __name__ == '__main__':
    sys.exit(kvmtest.main('pvh'))
