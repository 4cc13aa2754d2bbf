#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""QEMU's vfio-user client (-accel qtest) against vfio-user-nvme.

For every BAR layout vfio-user-nvme offers, QEMU (CONDUIT_PEER_QEMU) is
started with -device vfio-user-pci on the server's socket and guest RAM
from memory-backend-memfd,share=on, as a QEMU user would.  Over the qtest
protocol a libqos-style driver assigns the BARs, enables the controller,
runs Identify, creates an I/O queue pair and writes then reads back
patterned 4 KiB blocks.  The server's --stats counts then show whether
QEMU really mapped BAR0: the layouts that let it do so must see no
REGION_WRITE to BAR0 at all, the trap-only ones one per doorbell.

QEMU must also attach without warnings (no "failed to get region info",
no "Could not enable error recovery").

Environment: CONDUIT_PEER_QEMU (skips without it), VFIO_USER_NVME (meson).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interop  # noqa: E402

QEMU = interop.peer_qemu()
SERVER = interop.need_env('VFIO_USER_NVME')
IOS = int(os.environ.get('INTEROP_IOS', '32'))
BAR_BASE = 0xc0000000
RAM = 0x1000000

# name: (server options, BAR0 REGION_WRITEs expected: 'none' or 'per-io')
LAYOUTS = {
    'default': ([], 'none'),
    'msix-bar0': (['--msix-bar', '0'], 'none'),
    'msix-doorbell-page': (['--msix-bar', '0', '--msix-table-offset',
                            '0x1800', '--msix-pba-offset', '0x1c00'],
                           'none'),
    'withheld': (['--msix-bar', '0', '--msix-table-offset', '0x1800',
                  '--msix-pba-offset', '0x1c00', '--no-msix-mappable'],
                 'per-io'),
    'no-mmap': (['--no-mmap'], 'per-io'),
}

RESULTS = []


def pattern(lba):
    return bytes((lba * 7 + i) & 0xff for i in range(4096))


class QemuQtestNvme(unittest.TestCase):

    def run_layout(self, name):
        args, expect = LAYOUTS[name]
        with interop.tmpdir() as tmp:
            srv = interop.NvmeServer(SERVER, tmp, args)
            dev = {'driver': 'vfio-user-pci', 'id': 'nvme0', 'addr': '0x4',
                   'socket': {'type': 'unix', 'path': srv.sock}}
            qt = None
            try:
                if os.path.basename(QEMU).startswith('conduit'):
                    # Self-check of this script with Conduit as the VMM.
                    machine = ['-M', 'pc', '-m', '256']
                else:
                    machine = ['-M', 'q35', '-m', '256', '-object',
                               'memory-backend-memfd,id=ram,size=256M,'
                               'share=on', '-machine', 'memory-backend=ram']
                qt = interop.QTest(QEMU, tmp, machine + [
                    '-device', str(dev).replace("'", '"')])
                pci = interop.Pci(qt, 4 << 3)
                self.assertEqual(pci.readl(0) & 0xffff, 0x1b36)
                bars = pci.map_bars(BAR_BASE)
                self.assertIn(0, bars)
                nvme = interop.Nvme(qt, bars[0], RAM)
                nvme.enable()
                ident = nvme.identify()
                self.assertEqual(int.from_bytes(ident[0:2], 'little'),
                                 0x1b36)
                nvme.create_io_queues()
                before = nvme.doorbells
                for lba in range(0, IOS * 8, 8):
                    nvme.rw(True, lba, pattern(lba))
                for lba in range(0, IOS * 8, 8):
                    self.assertEqual(nvme.rw(False, lba, 4096),
                                     pattern(lba), 'LBA %d' % lba)
                io_doorbells = nvme.doorbells - before
            finally:
                out = qt.quit() if qt else ''
                stats = srv.stop()
            reads, writes = stats.get(0, (0, 0))
            RESULTS.append('%-20s BAR0 REGION_WRITE %5d REGION_READ %5d '
                           'for %d I/Os (%d doorbells)'
                           % (name, writes, reads, 2 * IOS, io_doorbells))
            for bad in ('failed to get region', 'Could not enable error',
                        'error', 'warning'):
                self.assertNotIn(bad, out.lower() if bad.islower() else out,
                                 'QEMU said:\n' + out)
            if expect == 'none':
                self.assertEqual(writes, 0, 'BAR0 is not mapped by QEMU')
            else:
                self.assertGreaterEqual(writes, io_doorbells)


for _name in LAYOUTS:
    setattr(QemuQtestNvme, 'test_' + _name.replace('-', '_'),
            lambda self, n=_name: self.run_layout(n))


if __name__ == '__main__':
    prog = unittest.main(exit=False, verbosity=2)
    print('\n'.join(RESULTS))
    sys.exit(0 if prog.result.wasSuccessful() else 1)
