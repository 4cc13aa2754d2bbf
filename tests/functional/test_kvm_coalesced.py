#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Coalesced MMIO for the registers of a trapped page, under KVM.

vfio-user-nvme puts its MSI-X table on the doorbell page (0x1800) and
Conduit keeps it there (x-msix-relocation=off), so the page traps.  With
x-coalesce-trapped-writes=on, KVM completes the guest's doorbell writes
in the kernel and Conduit replays them from the ring.  The tests/guest
`coalesce` guest checks, and so does this script through QMP:

  ordering     a read after queued writes sees every one of them, and
               none of the writes exited (all were replayed from the ring);
  table exact  MSI-X table writes between doorbell writes exit one by one
               (the table region counts exactly the guest's accesses);
  idle         after its last writes the guest halts for good (no exit can
               drain the ring), and the drainer thread empties it.

With x-coalesce-trapped-writes=off the same guest passes with every write
exiting and nothing registered.  With MSIX_MAPPABLE withheld the page is
not mapped at all: its doorbell writes go through the ring too and reach
the server as posted REGION_WRITE messages, sent in a batch per drain.

Where this host's KVM cannot run the guest, kvmtest.py runs the script
inside the run's shared L1 guest (Debian's QEMU under TCG, kvm-amd).
Environment (set by meson): CONDUIT_BINARY (vfio-user-nvme from the same
build directory), GUEST_DIR.
"""
import os
import re
import subprocess
import sys
import tempfile
import time
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
# Fewer than half the ring's 170 slots, so none may exit: before Linux
# 6.11 the kernel's room check (unsigned arithmetic on first - last)
# called the ring full once it held 85 entries from its first half, and
# the L1 guest's 6.1 kernel exits there when the drainer falls behind.
NWRITES = 80
TAIL = 50
APPEND = 'nwrites=%d tail=%d' % (NWRITES, TAIL)
DEVICE_OPTS = ',x-msix-relocation=off,x-coalesce-trapped-writes='
# name: (server options, x-coalesce-trapped-writes)
CASES = {
    'on': (nvmebench.TABLE_ON_DOORBELL_PAGE, 'on'),
    'off': (nvmebench.TABLE_ON_DOORBELL_PAGE, 'off'),
    # The page cannot be mapped: doorbells become posted REGION_WRITEs.
    'withheld': (nvmebench.TABLE_ON_DOORBELL_PAGE + ['--no-msix-mappable'],
                 'on'),
}

class CoalescedTrappedWrites(unittest.TestCase):
    def setUp(self):
        if not os.access(CONDUIT, os.X_OK):
            self.skipTest('CONDUIT_BINARY not built')
        if not os.access(SERVER, os.X_OK):
            self.skipTest('vfio-user-nvme not built')
        self.image = guestboot.guest_image('coalesce')
        if not os.path.exists(self.image):
            self.skipTest('coalesce guest not built')

    def wait_serial(self, path, pattern, vmm):
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            with open(path, errors='replace') as f:
                out = f.read()
            if re.search(pattern, out) or vmm.poll() is not None:
                return out
            time.sleep(0.05)
        return out

    def run_guest(self, case):
        with tempfile.TemporaryDirectory(prefix='conduit-coalesce-') as t:
            res = self.run_direct(t, *CASES[case])
        self.assertIn('COALESCE-IDLE', res['out'],
                      res['out'] + res.get('err', ''))
        self.assertRegex(res['out'],
                         r'SUMMARY: \d+ tests, 0 unexpected failures')
        for key in ('kvm_idle', 'kvm', 'vfio'):
            self.assertIn(key, res, res['out'] + res.get('err', ''))
        return res

    def run_direct(self, tmp, server_args, coalesce):
        server, sock = nvmebench.start_server(BUILD, tmp, server_args)
        qmp_path = os.path.join(tmp, 'qmp.sock')
        serial = os.path.join(tmp, 'serial.log')
        argv = [CONDUIT, '-accel', 'kvm', '-m', '256', '-display', 'none',
                '-nodefaults', '-serial', 'file:' + serial,
                '-qmp', 'unix:%s,server=on,wait=off' % qmp_path,
                '-kernel', self.image,
                '-append', APPEND,
                '-device', 'isa-debug-exit,iobase=0xf4,iosize=4',
                '-device', 'vfio-user-pci,id=nvme0,socket=' + sock +
                DEVICE_OPTS + coalesce]
        vmm = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
        res = {}
        try:
            qmp = nvmebench.Qmp(qmp_path)
            qmp.sock.settimeout(TIMEOUT)
            # The whole line: its last characters still exit, and a slow
            # (nested) guest may be printing them when we look.
            out = self.wait_serial(serial, r'COALESCE-IDLE tail=\d+\n|'
                                   r'SUMMARY: .*[1-9]\d* unexpected', vmm)
            res['out'] = out
            if 'COALESCE-IDLE' in out:
                res['kvm_idle'] = qmp.cmd('x-query-kvm')
                want = NWRITES + 2 * 16 + TAIL if coalesce == 'on' else 0
                deadline = time.time() + TIMEOUT
                while True:
                    kvm = qmp.cmd('x-query-kvm')
                    bar0 = [b for b in qmp.cmd('x-query-vfio')[0]['bars']
                            if b['bar'] == 0][0]
                    # Every write arrived, through the ring or (a full
                    # ring, withheld) as an exit the server was sent.
                    arrived = max(kvm['coalesced-writes'],
                                  bar0['coalesced-writes'] +
                                  bar0['forwarded-writes'])
                    if (arrived >= want and
                            not kvm['coalesced-pending']) or \
                            time.time() > deadline:
                        break
                    time.sleep(0.05)
                res['kvm'] = kvm
                res['vfio'] = qmp.cmd('x-query-vfio')[0]
            qmp.cmd('quit')
            qmp.sock.close()
            res['err'] = vmm.communicate(timeout=30)[1].decode(
                errors='replace')
        finally:
            if vmm.poll() is None:
                vmm.kill()
                vmm.wait()
            server.terminate()
            server.wait()
        return res

    def guest_counts(self, out):
        m = re.search(r'COALESCE table-accesses=(\d+) doorbell-writes=(\d+)',
                      out)
        self.assertIsNotNone(m, out)
        return int(m.group(1)), int(m.group(2))

    def test_coalesced_in_order_table_exact_ring_drained(self):
        res = self.run_guest('on')
        out, kvm, vfio = res['out'], res['kvm'], res['vfio']
        table, doorbells = self.guest_counts(out)
        bar0 = [b for b in vfio['bars'] if b['bar'] == 0][0]
        ctx = '%s\n%s\n%s' % (out, kvm, vfio)
        self.assertTrue(vfio['coalesce-trapped-writes'], ctx)
        self.assertGreater(kvm['coalesced-ring-size'], NWRITES, ctx)
        self.assertGreaterEqual(kvm['coalesced-zones'], 1, ctx)
        # Every doorbell write came from the ring, none exited.
        self.assertEqual(bar0['coalesced-writes'], doorbells + TAIL, ctx)
        self.assertEqual(bar0['mmap-served-writes'], 0, ctx)
        self.assertEqual(kvm['coalesced-writes'], doorbells + TAIL, ctx)
        # The doorbell reads did exit (reads are never coalesced).
        self.assertGreaterEqual(bar0['mmap-served-reads'], 8, ctx)
        # Table accesses exited one by one, none was replayed.
        self.assertEqual(vfio['msix']['table-accesses'], table, ctx)
        # The idle guest's ring was emptied, by the drainer: not one exit
        # since the guest said it was going idle.
        self.assertEqual(kvm['coalesced-pending'], 0, ctx)
        self.assertEqual(kvm['exits'], res['kvm_idle']['exits'], ctx)
        self.assertGreater(kvm['coalesced-drainer-drains'], 0, ctx)

    def test_off_every_write_exits(self):
        res = self.run_guest('off')
        out, kvm, vfio = res['out'], res['kvm'], res['vfio']
        table, doorbells = self.guest_counts(out)
        bar0 = [b for b in vfio['bars'] if b['bar'] == 0][0]
        ctx = '%s\n%s\n%s' % (out, kvm, vfio)
        self.assertFalse(vfio['coalesce-trapped-writes'], ctx)
        self.assertEqual(kvm['coalesced-zones'], 0, ctx)
        self.assertEqual(kvm['coalesced-writes'], 0, ctx)
        self.assertEqual(bar0['coalesced-writes'], 0, ctx)
        self.assertGreaterEqual(bar0['mmap-served-writes'], doorbells, ctx)
        self.assertEqual(vfio['msix']['table-accesses'], table, ctx)


    def test_withheld_page_posts_batched_writes(self):
        res = self.run_guest('withheld')
        out, kvm, vfio = res['out'], res['kvm'], res['vfio']
        table, doorbells = self.guest_counts(out)
        bar0 = [b for b in vfio['bars'] if b['bar'] == 0][0]
        ctx = '%s\n%s\n%s' % (out, kvm, vfio)
        # The page is not mapped: every write left the guest through the
        # ring and reached the server as a posted REGION_WRITE.
        for r in bar0['mapped']:
            self.assertFalse(r['offset'] <= 4096 < r['offset'] + r['size'],
                             ctx)
        # Every write arrived exactly once, in one way or the other; all
        # but at most a couple through the ring.  Linux 6.1's free-space
        # check of the ring wraps and reports it full with exactly 85 of
        # 170 slots in use, and the slower drain here (a message per
        # write) can reach that: such a write exits instead, still in
        # order since every exit drains the ring first.
        self.assertEqual(bar0['coalesced-writes'] + bar0['forwarded-writes'],
                         doorbells + TAIL, ctx)
        self.assertGreaterEqual(bar0['coalesced-writes'],
                                doorbells + TAIL - 2, ctx)
        self.assertGreaterEqual(bar0['forwarded-reads'], 8, ctx)
        self.assertEqual(vfio['msix']['table-accesses'], table, ctx)
        self.assertEqual(kvm['coalesced-pending'], 0, ctx)
        self.assertEqual(kvm['exits'], res['kvm_idle']['exits'], ctx)


if __name__ == '__main__':
    sys.exit(kvmtest.main('pvh'))
