# SPDX-License-Identifier: GPL-2.0-or-later
"""The tests/guest images under Conduit itself (-accel kvm): PVH boot,
PCI enumeration and BAR assignment, and MSI-X delivery from pci-testdev.
"""

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestboot  # noqa: E402
import kvmtest  # noqa: E402


def conduit_binary():
    return os.environ.get('CONDUIT_BINARY', '')


def conduit_cmd(image, append=None, extra=()):
    argv = [conduit_binary(), '-accel', 'kvm', '-M', 'pc', '-m', '128',
            '-nodefaults', '-display', 'none', '-serial', 'stdio',
            '-no-reboot', '-device', 'isa-debug-exit,iobase=0xf4,iosize=4',
            '-kernel', guestboot.guest_image(image)]
    if append:
        argv += ['-append', append]
    return argv + list(extra)


class ConduitGuestTest(guestboot.GuestTestCase):
    @classmethod
    def setUpClass(cls):
        if not guestboot.kvm_usable():
            raise unittest.SkipTest('/dev/kvm is not available')
        if not os.access(conduit_binary(), os.X_OK):
            raise unittest.SkipTest('CONDUIT_BINARY not set or not built')
        for name in ('hello', 'pci', 'msix'):
            if not os.path.exists(guestboot.guest_image(name)):
                raise unittest.SkipTest('guest images not built')
        accels = subprocess.run([conduit_binary(), '-accel', 'help'],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT).stdout.decode()
        if 'kvm' not in accels.split():
            raise unittest.SkipTest('this Conduit build has no KVM')

    def test_hello(self):
        run = guestboot.boot(conduit_cmd('hello', append='expect=hello-world'))
        self.assertPassed(run, min_tests=6)
        self.assertLine(run, 'PASS: command line expect=hello-world parsed')

    def test_exception_exits_with_fatal_status(self):
        run = guestboot.boot(conduit_cmd('hello', append='crash=1'))
        self.assertEqual(run.returncode, guestboot.EXIT_FATAL, run.describe())
        self.assertIn('FATAL: unexpected exception 14 (#PF)', run.output,
                      run.describe())

    def test_pci_enumerate_and_reassign(self):
        run = guestboot.boot(conduit_cmd('pci',
                                         append='find=1d0c:0001 reassign=1',
                                         extra=['-device', 'pci-testdev']))
        self.assertPassed(run, min_tests=7)
        self.assertLine(run, 'PASS: device 1d0c:0001 present')
        self.assertLine(run, 'PASS: assigned BARs read back unchanged')

    def test_msix_vectors(self):
        run = guestboot.boot(conduit_cmd('msix',
                                         extra=['-device', 'pci-testdev']))
        self.assertPassed(run, min_tests=14)
        self.assertLine(run, 'PASS: each of 8 vectors delivered exactly once')
        self.assertLine(run, 'PASS: masked vector pending in the PBA')

    def test_msix_lazy_pba(self):
        run = guestboot.boot(conduit_cmd(
            'msix', extra=['-device', 'pci-testdev,vectors=4,x-lazy-pba=on']))
        self.assertPassed(run, min_tests=14)
        self.assertLine(run, 'PASS: each of 4 vectors delivered exactly once')
        self.assertLine(run, 'PASS: pending bit cleared after delivery')

    def test_msi_after_msix(self):
        run = guestboot.boot(conduit_cmd(
            'msix', extra=['-device', 'pci-testdev,msi=on']))
        self.assertPassed(run, min_tests=17)
        self.assertLine(run, 'PASS: MSI delivered once MSI-X is off')
        self.assertLine(run, 'PASS: masked MSI held with its pending bit set')

    def test_msix_absent_device_skips(self):
        run = guestboot.boot(conduit_cmd('msix'))
        self.assertPassed(run)
        self.assertEqual(run.summary()[2], 1, run.describe())
        self.assertLine(run, 'SKIP: pci-testdev 1d0c:0001 not present')


if __name__ == '__main__':
    sys.exit(kvmtest.main('pvh'))
