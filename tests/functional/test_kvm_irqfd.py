#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""MSI-X vectors of a vfio-user device under KVM: the irqfd fast path.

The tests/guest `nvme` guest runs in mode=irq against
`vfio-user-nvme --backend null`.  While a vector is unmasked its eventfd
is bound to a KVM irqfd, so a completion interrupt reaches the guest
without waking Conduit: x-query-vfio's "slow-path-interrupts" (events
Conduit's own eventfd handler took) must stay 0 while every I/O still
gets its interrupt.  A masked vector is detached: its event takes the
slow path, sets the pending bit, and is delivered on unmask (mask=1, the
guest checks the PBA and the interrupt count itself).

The mask=1 sequence runs for each default layout of the PBA matrix
(tests/qtest/vfio-user-pba-test.c): table on the doorbell page (relocated),
table in its own BAR, PBA on the doorbell page, 64 KiB host pages.

Environment (set by meson): CONDUIT_BINARY (vfio-user-nvme is taken from
the same build directory), GUEST_DIR.  Runs directly or nested
(kvmtest.py).
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', '..', 'scripts', 'bench'))
import guestboot  # noqa: E402
import kvmtest  # noqa: E402
import nvmebench  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
BUILD = os.path.dirname(CONDUIT)
SERVER = os.path.join(BUILD, 'vfio-user-nvme')
# Guards against a hung guest only; nothing asserts on time.
TIMEOUT = 300


def only_extra_interrupts(text):
    """Whether every FAIL line the guest printed is an interrupt count of
    its mask=1 sequence that came out one too high, and nothing else."""
    fails = re.findall(r'^FAIL: (.*)$', text, re.M)
    if not fails:
        return False
    for line in fails:
        m = re.search(r'(pending interrupt delivered once|next completion '
                      r'interrupts, no pending bit) \((\d+)\)$', line)
        if not m or int(m.group(2)) != 2:
            return False
    return True


class IrqfdFastPath(unittest.TestCase):
    def setUp(self):
        if not os.access(CONDUIT, os.X_OK):
            self.skipTest('CONDUIT_BINARY not built')
        if not os.access(SERVER, os.X_OK):
            self.skipTest('vfio-user-nvme not built')
        if not guestboot.kvm_usable():
            self.skipTest('no usable /dev/kvm')
        self.image = guestboot.guest_image('nvme')
        if not os.path.exists(self.image):
            self.skipTest('nvme guest not built')
        self.tmp = tempfile.TemporaryDirectory(prefix='conduit-irqfd-')

    def tearDown(self):
        self.tmp.cleanup()

    def run_nvme(self, append, server_args=nvmebench.TABLE_ON_DOORBELL_PAGE,
                 device_opts=''):
        """Boots the guest; returns (serial output, msix object of x-query-vfio)."""
        tmp = self.tmp.name
        server, sock = nvmebench.start_server(BUILD, tmp, server_args)
        qmp_path = os.path.join(tmp, 'qmp.sock')
        serial = os.path.join(tmp, 'serial.log')
        argv = [CONDUIT, '-accel', 'kvm', '-m', '256', '-display', 'none',
                '-nodefaults', '-serial', 'file:' + serial, '-no-shutdown',
                '-qmp', 'unix:%s,server=on,wait=off' % qmp_path,
                '-kernel', self.image, '-append', append,
                '-device', 'isa-debug-exit,iobase=0xf4,iosize=4',
                '-device', 'vfio-user-pci,id=nvme0,socket=' + sock +
                device_opts]
        vmm = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
        try:
            qmp = nvmebench.Qmp(qmp_path)
            qmp.sock.settimeout(TIMEOUT)
            ev = qmp.wait_event('SHUTDOWN')
            status = ev.get('data', {}).get('x-exit-status')
            vfio = qmp.cmd('x-query-vfio')
            qmp.cmd('quit')
            qmp.sock.close()
            err = vmm.communicate(timeout=30)[1].decode(errors='replace')
        finally:
            if vmm.poll() is None:
                vmm.kill()
                vmm.wait()
            server.terminate()
            server.wait()
        with open(serial, errors='replace') as f:
            out = f.read()
        self.assertEqual(status, guestboot.EXIT_PASS,
                         'guest failed:\n' + out + err)
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        self.assertEqual(len(vfio), 1)
        self.assertIn('msix', vfio[0])
        return out, vfio[0]['msix']

    def test_unmasked_completions_never_wake_conduit(self):
        ios = 300
        out, msix = self.run_nvme('qd=1 ios=%d mode=irq' % ios)
        result = nvmebench.parse_result(out)
        self.assertIsNotNone(result, out)
        self.assertEqual(int(result['ios']), ios)
        # At queue depth 1 every completion is its own interrupt.  Inside
        # the shared L1 guest, TCG's emulated SVM now and then injects one
        # twice: the server's 300 triggers of vector 1 became 303 guest
        # interrupts in one of four runs, with Conduit not in the path
        # (irqfd), so there every completion gets one at least.
        if kvmtest.in_l1():
            self.assertGreaterEqual(int(result['irqs']), ios, out)
        else:
            self.assertEqual(int(result['irqs']), ios, out)
        self.assertEqual(msix['slow-path-interrupts'], 0, msix)
        # The admin vector and the I/O queue's vector.
        self.assertGreaterEqual(msix['fast-path-vectors'], 2, msix)

    def test_unmasked_completions_at_depth_32_with_relocation(self):
        out, msix = self.run_nvme('qd=32 ios=2000 mode=irq',
                                  device_opts=',x-msix-relocation=auto')
        result = nvmebench.parse_result(out)
        self.assertIsNotNone(result, out)
        self.assertGreater(int(result['irqs']), 0, out)
        self.assertTrue(msix['relocated'], msix)
        self.assertEqual(msix['slow-path-interrupts'], 0, msix)
        self.assertGreaterEqual(msix['fast-path-vectors'], 2, msix)

    def run_masked(self, server_args, device_opts=''):
        """The guest's mask=1 run.  Inside the shared L1 guest, TCG's
        emulated SVM now and then injects an interrupt twice (see
        test_unmasked_completions_never_wake_conduit); that shows here as
        a count of 2 where exactly 1 is due (CI, 2026-12-02: "next
        completion interrupts, no pending bit (2)").  There, and only for
        that failure, the guest runs once more; any other failure, or the
        same one twice, fails."""
        try:
            return self.run_nvme('qd=1 ios=50 mode=irq mask=1',
                                 server_args, device_opts)
        except AssertionError as e:
            if not kvmtest.in_l1() or not only_extra_interrupts(str(e)):
                raise
            print('TCG-DUPLICATE-IRQ: one interrupt counted twice; the '
                  'guest runs once more:\n%s' % e)
        return self.run_nvme('qd=1 ios=50 mode=irq mask=1',
                             server_args, device_opts)

    def masked_check(self, server_args, device_opts='', relocated=None):
        """The PBA matrix's sequence (tests/qtest/vfio-user-pba-test.c)
        under KVM: masked -> pending bit, no interrupt; unmasked -> one
        interrupt, bit clear; the next completion -> an interrupt, no
        bit."""
        out, msix = self.run_masked(server_args, device_opts)
        self.assertIn('pending bit set, 0 interrupts delivered', out)
        self.assertIn('pending interrupt delivered once (1)', out)
        self.assertIn('next completion interrupts, no pending bit (1)', out)
        # Exactly the masked read's event, none of the 51 unmasked ones.
        self.assertEqual(msix['slow-path-interrupts'], 1, msix)
        # Unmasking put the vector back on the fast path.
        self.assertGreaterEqual(msix['fast-path-vectors'], 2, msix)
        if relocated is not None:
            self.assertEqual(msix['relocated'], relocated, msix)
        return out, msix

    # The matrix's layouts with the default options.
    def test_masked_vector_takes_the_slow_path(self):
        # Table on the doorbell page: relocated by default.
        self.masked_check(nvmebench.TABLE_ON_DOORBELL_PAGE, relocated=True)

    def test_masked_vector_table_in_own_bar(self):
        self.masked_check(nvmebench.TABLE_IN_BAR4, relocated=False)

    def test_masked_vector_pba_on_doorbell_page(self):
        self.masked_check(nvmebench.PBA_ON_DOORBELL_PAGE, relocated=False)

    def test_masked_vector_64k_host_pages(self):
        self.masked_check(['--msix-bar', '0', '--msix-table-offset',
                           '0x3000', '--msix-pba-offset', '0x3800'],
                          ',x-host-page-size=65536', relocated=True)

    def test_masked_vector_pending_through_lazy_pba_on_doorbell_page(self):
        # The PBA shares the mapped doorbell page: the pending bit is only
        # visible if KVM's memslot over that page went away when the lazy
        # PBA overlay was enabled (the device's own PBA says nothing).
        out, msix = self.run_nvme('qd=1 ios=50 mode=irq mask=1',
                                  server_args=nvmebench.PBA_ON_DOORBELL_PAGE)
        self.assertIn('pending bit set, 0 interrupts delivered', out)
        self.assertGreaterEqual(msix['pba-accesses'], 1, msix)
        self.assertFalse(msix['pba-emulated'], msix)
        self.assertEqual(msix['slow-path-interrupts'], 1, msix)


if __name__ == '__main__':
    sys.exit(kvmtest.main('pvh'))
