#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Live migration and save/restore of a running KVM guest.

The tests/guest virtio-blk guest does MSI-X driven random reads of a
virtio-blk disk (and a write/flush/read-back first); while it runs,
Conduit moves it:

  live      to a second Conduit over a unix socket, three times (A to B,
            B to C, C to D), each destination -incoming unix:;
  save      stop, migrate to a file, quit; a new Conduit with
            -incoming defer -S loads it with migrate-incoming and cont;
  stop      stop and cont, three times, in the same process;
  ring      live, once, from a source that logs dirty pages in KVM's
            dirty ring (-accel kvm,dirty-ring-size=1024) rather than the
            bitmap, its first pass slowed until the ring has filled.

Besides its I/O the guest stores into pages of a 64 MiB area after every
completion and checks them all at the end; a page the source failed to
log shows as a broken virtqueue (I/O errors) on the destination.

Each process holds the disk to IOPS_LIMIT (block_set_io_throttle), so
the workload outlasts the hops on any host.  The guest must finish on
the last process with all its I/O done, no error, no completion left
without its interrupt (the guest counts those it found only after a 5 s
wait) and its summary line: vCPU registers, LAPIC, in-kernel irqchip,
kvmclock and TSC, the virtio rings and MSI-X all moved with it.  Each
hop's downtime and total time (query-migrate) are printed.

Environment (set by meson): CONDUIT_BINARY, GUEST_DIR.
"""
import os
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
import virtioblkbench as vb  # noqa: E402
from nvmebench import Qmp, parse_result, wait_serial  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
BUILD = os.path.dirname(CONDUIT)
IOS = 4000
# Every process holds the disk to this rate, so the guest's reads last
# at least IOS / IOPS_LIMIT seconds however fast the host is: all three
# hops happen while it runs (a fast host once finished the workload
# before the last hop).
IOPS_LIMIT = 400
TIMEOUT = 600
# After each completion the guest stores into this many pages of a 64 MiB
# area, all set beforehand, and checks them all at the end (virtio-blk.c
# dirty=): it keeps the dirty log busy (the ring fills).  The check alone
# cannot see a lost page (its counter lives in RAM too and may arrive as
# stale as the area); the guest's virtqueue can: a source that dropped
# its ring entries (tried by hand) left the guest with 1441 I/O errors.
DIRTY = 2
# The guest prints this once the area is set, as its I/O starts.
READY = 'DIRTY-AREA-SET'
# -accel kvm,dirty-ring-size: four pages of entries per vCPU, more than
# KVM reserves (64, plus 512 where the CPU logs pages itself, PML), fewer
# than the pages the guest dirties while a slowed first pass copies RAM,
# so the ring fills and the vCPU must collect it.
RING = 1024


class Vmm:
    def __init__(self, tmp, name, image, extra, accel='kvm', ios=IOS,
                 dirty=DIRTY):
        self.serial = os.path.join(tmp, name + '.serial')
        self.qmp_path = os.path.join(tmp, name + '.qmp')
        argv = [CONDUIT, '-accel', accel, '-m', '256', '-display', 'none',
                '-nodefaults', '-serial', 'file:' + self.serial,
                '-no-shutdown',
                '-qmp', 'unix:%s,server=on,wait=off' % self.qmp_path,
                '-kernel', os.path.join(BUILD, 'tests', 'guest',
                                        'virtio-blk.elf'),
                '-append', 'qd=4 ios=%d mode=irq verify=1 write=1 '
                'dirty=%d' % (ios, dirty),
                '-device', 'isa-debug-exit,iobase=0xf4,iosize=4',
                '-blockdev', 'driver=file,filename=%s,node-name=disk0' %
                image,
                '-device', 'virtio-blk-pci,id=vblk0,drive=disk0'] + extra
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.qmp = Qmp(self.qmp_path)
        self.qmp.cmd('migrate-set-capabilities', capabilities=[
            {'capability': 'events', 'state': True}])
        self.qmp.cmd('block_set_io_throttle', id='vblk0', bps=0, bps_rd=0,
                     bps_wr=0, iops=IOPS_LIMIT, iops_rd=0, iops_wr=0)

    def status(self):
        return self.qmp.cmd('query-status')['status']

    def wait_migration(self):
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            info = self.qmp.cmd('query-migrate')
            if info.get('status') in ('completed', 'failed', 'cancelled'):
                return info
            time.sleep(0.05)
        raise TimeoutError('migration did not finish')

    def output(self):
        with open(self.serial, errors='replace') as f:
            return f.read()

    def close(self):
        try:
            self.qmp.cmd('quit')
        except Exception:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class KvmMigration(unittest.TestCase):
    def setUp(self):
        if not os.access(CONDUIT, os.X_OK):
            self.skipTest('CONDUIT_BINARY not built')
        if not guestboot.kvm_usable():
            self.skipTest('no usable /dev/kvm')
        if not os.path.exists(guestboot.guest_image('virtio-blk')):
            self.skipTest('virtio-blk guest not built')
        self.tmp = tempfile.TemporaryDirectory(prefix='conduit-mig-')
        self.image = os.path.join(self.tmp.name, 'disk.raw')
        vb.make_image(self.image)
        self.vmms = []

    def tearDown(self):
        for v in self.vmms:
            v.close()
        self.tmp.cleanup()

    def vmm(self, name, extra=(), **kw):
        v = Vmm(self.tmp.name, name, self.image, list(extra), **kw)
        self.vmms.append(v)
        return v

    def finish(self, last, ios=IOS):
        ev = last.qmp.wait_event('SHUTDOWN')
        out = last.output()
        self.assertEqual(ev.get('data', {}).get('x-exit-status'),
                         guestboot.EXIT_PASS, out)
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        self.assertRegex(out, r'PASS: dirty=\d+: [1-9]\d* stores over')
        result = parse_result(out)
        self.assertIsNotNone(result, out)
        self.assertEqual(int(result['ios']), ios)
        self.assertEqual(int(result['errors']), 0)
        # A completion whose MSI-X interrupt was lost shows up as one the
        # guest found only after waiting 5 s for it.
        self.assertEqual(int(result['unsignalled']), 0, out)

    def report(self, what, info):
        print('MIGRATION: %s total %d ms downtime %d ms setup %d ms '
              'transferred %d bytes' % (
                  what, info.get('total-time', 0), info.get('downtime', 0),
                  info.get('setup-time', 0),
                  info.get('ram', {}).get('transferred', 0)), flush=True)

    def test_live_three_hops(self):
        src = self.vmm('a')
        self.assertTrue(wait_serial(src.serial, READY, src.proc),
                        src.output())
        for name in ('b', 'c', 'd'):
            sock = os.path.join(self.tmp.name, name + '.mig')
            dst = self.vmm(name, ['-incoming', 'unix:' + sock])
            self.assertEqual(dst.status(), 'inmigrate')
            src.qmp.cmd('migrate', uri='unix:' + sock)
            info = src.wait_migration()
            self.assertEqual(info['status'], 'completed', info)
            self.report('live to ' + name, info)
            self.assertEqual(dst.wait_migration()['status'], 'completed')
            self.assertEqual(src.status(), 'postmigrate')
            self.assertEqual(dst.status(), 'running')
            self.assertNotIn('SUMMARY', src.output())
            src.close()
            src = dst
        self.finish(src)

    def test_live_dirty_ring(self):
        # Twice as many I/Os: the first pass alone takes ~8 s.
        ios = 2 * IOS
        ring = 'kvm,dirty-ring-size=%d' % RING
        src = self.vmm('ring-a', accel=ring, ios=ios)
        self.assertTrue(wait_serial(src.serial, READY, src.proc),
                        src.output())
        kvm = src.qmp.cmd('x-query-kvm')
        self.assertEqual(kvm['dirty-ring-size'], RING, kvm)
        # Nothing is logged before migration starts.
        self.assertEqual(kvm['dirty-ring-pages'], 0, kvm)
        # 1 MiB/s: the first pass (the 64 MiB area and the rest) would
        # last a minute, with no sync in between, while the guest dirties
        # 800 pages a second: soon more than a ring holds.  Once a vCPU
        # has had to collect a full ring, QEMU's default 128 MiB/s lets
        # the migration converge.
        src.qmp.cmd('migrate-set-parameters', **{'max-bandwidth': 1 << 20})
        sock = os.path.join(self.tmp.name, 'ring-b.mig')
        # The destination logs nothing; it runs on the bitmap default.
        dst = self.vmm('ring-b', ['-incoming', 'unix:' + sock], ios=ios)
        src.qmp.cmd('migrate', uri='unix:' + sock)
        deadline = time.time() + TIMEOUT
        while True:
            kvm = src.qmp.cmd('x-query-kvm')
            status = src.qmp.cmd('query-migrate').get('status')
            if kvm['dirty-ring-full-exits'] or \
                    status not in ('setup', 'active') or \
                    time.time() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(status, 'active', kvm)
        self.assertGreater(kvm['dirty-ring-full-exits'], 0, kvm)
        src.qmp.cmd('migrate-set-parameters',
                    **{'max-bandwidth': 128 << 20})
        info = src.wait_migration()
        self.assertEqual(info['status'], 'completed', info)
        self.report('live, dirty ring of %d' % RING, info)
        kvm = src.qmp.cmd('x-query-kvm')
        print('DIRTY-RING: %s' % {k: v for k, v in kvm.items()
                                  if k.startswith('dirty-ring')}, flush=True)
        self.assertGreater(kvm['dirty-ring-pages'], RING, kvm)
        self.assertGreater(kvm['dirty-ring-full-exits'], 0, kvm)
        self.assertGreater(kvm['dirty-ring-resets'], 1, kvm)
        self.assertEqual(dst.wait_migration()['status'], 'completed')
        self.assertEqual(dst.status(), 'running')
        self.assertNotIn('SUMMARY', src.output())
        self.assertEqual(dst.qmp.cmd('x-query-kvm')['dirty-ring-size'], 0)
        src.close()
        self.finish(dst, ios)

    def test_dirty_ring_size_refused(self):
        # Command-line errors: exit status 1, the option named.  KVM's own
        # limits are checked once it is open, here inside a usable KVM.
        for accel, needle in (
                ('kvm,dirty-ring-size=1000', 'must be a power of two'),
                ('kvm,dirty-ring-size=16', 'at least 256 entries'),
                ('kvm,dirty-ring-size=1048576', 'KVM allows at most'),
                ('kvm,dirty-ring-size=lots', 'dirty-ring-size'),
                ('kvm,dirty-ring=4096', 'dirty-ring')):
            r = subprocess.run([CONDUIT, '-accel', accel, '-display', 'none',
                                '-nodefaults'], stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1, (accel, r.stderr))
            self.assertIn(needle, r.stderr, accel)

    def test_stop_cont(self):
        # The simplest switchover: a VM stop drains the queue, and what it
        # completes must still interrupt the guest once it runs again.
        v = self.vmm('p')
        self.assertTrue(wait_serial(v.serial, READY, v.proc), v.output())
        for _ in range(3):
            time.sleep(0.3)
            v.qmp.cmd('stop')
            self.assertEqual(v.status(), 'paused')
            time.sleep(0.3)
            v.qmp.cmd('cont')
        self.finish(v)

    def test_save_restore(self):
        src = self.vmm('s')
        self.assertTrue(wait_serial(src.serial, READY, src.proc),
                        src.output())
        state = os.path.join(self.tmp.name, 'saved.state')
        src.qmp.cmd('stop')
        src.qmp.cmd('migrate', uri='file:' + state)
        info = src.wait_migration()
        self.assertEqual(info['status'], 'completed', info)
        self.report('save', info)
        src.close()
        dst = self.vmm('r', ['-incoming', 'defer', '-S'])
        self.assertEqual(dst.status(), 'inmigrate')
        dst.qmp.cmd('migrate-incoming', uri='file:' + state)
        self.assertEqual(dst.wait_migration()['status'], 'completed')
        self.assertEqual(dst.status(), 'paused')
        dst.qmp.cmd('cont')
        self.finish(dst)


if __name__ == '__main__':
    sys.exit(kvmtest.main('dirtyring'))
