#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Linux on the pc machine with ACPI: SMP, PCIe hot-plug, power button.

One nested boot (as in test_linux_nvme.py: Debian's kernel under Debian's
QEMU, TCG, as L1; Conduit -accel kvm inside it boots the same kernel's
bzImage as L2) serves every case:

  smp        -smp 2 with ACPI on: L2 finds the RSDP, its MADT names two
             local APICs and Linux brings both CPUs up (nproc,
             /proc/cpuinfo), with the APIC IDs Conduit gives vCPU 0 and 1;
  hotplug    device_add of vfio-user-pci (the in-tree NVMe server) into a
             pcie-root-port while L2 runs: Linux's pciehp (granted native
             hot-plug by the DSDT's _OSC) powers the slot on, enumerates the
             controller, nvme binds and L2 writes and reads 1 MiB (md5 checked
             in the server's backing file); device_del presses the attention
             button, a second device_del is refused as pending, L2 releases
             the device and powers the slot off, then DEVICE_DELETED comes;
  powerdown  QMP system_powerdown presses the ACPI fixed power button; L2's
             button driver reports it on its input device, L2's init runs
             poweroff, Linux enters S5 through PM1a_CNT and Conduit exits 0
             after a SHUTDOWN event with the guest as the reason.

Environment (set by meson): CONDUIT_BINARY, VFIO_USER_NVME.  Exits 77 (skipped) without
qemu-system-x86_64, the kernel package or busybox-static, or when the L1
guest gets no /dev/kvm.
"""
import gzip
import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestboot  # noqa: E402
import kvfio_image  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
SERVER = os.environ.get('VFIO_USER_NVME', '')
DISK_MIB = 64
# L2 writes 1 MiB at this offset in 128 KiB requests.
DATA_OFFSET_KIB = 1024
# Guards against a hung guest only; nothing asserts on time.
TIMEOUT = int(os.environ.get('LINUX_PLATFORM_TIMEOUT', '1500'))
L2_CPUS = 2

# L2: report the CPUs and ACPI tables, then wait for the power button and
# power off the way a distribution's acpid would.
L2_INIT = kvfio_image.INIT_PROLOGUE + r'''echo "L2-BOOTED"
for m in @MODULES@; do
    insmod /lib/modules/$m || echo "L2-ERROR insmod $m"
done
echo "L2-NPROC $(nproc)"
echo "L2-CPUINFO $(grep -c ^processor /proc/cpuinfo)"
grep ^apicid /proc/cpuinfo | while read a b id; do echo "L2-APICID $id"; done
echo "L2-ACPI-TABLES $(ls /sys/firmware/acpi/tables | tr '\n' ' ')"
ev=
for i in /sys/class/input/input*; do
    [ "$(cat $i/name 2>/dev/null)" = "Power Button" ] || continue
    for e in $i/event*; do ev=${e##*/}; done
done
echo "L2-POWER-BUTTON-DEVICE $ev"
if dmesg | grep -q "Call Trace"; then
    echo "L2-ERROR kernel warning in dmesg"
    dmesg | grep -A2 -E "cut here|BUG:" | sed 's/^/L2-WARNING /'
fi
dmesg | grep -iE "smp|acpi: (fadt|madt|mcfg|dsdt)|apic" | sed 's/^/L2-DMESG /'
echo "L2-READY"
# L1 hot-plugs the NVMe controller into the root port now.
for i in $(seq 300); do [ -b /dev/nvme0n1 ] && break; sleep 1; done
[ -b /dev/nvme0n1 ] || echo "L2-ERROR no /dev/nvme0n1 after device_add"
c=/sys/class/nvme/nvme0
echo "L2-HP-MODEL $(cat $c/model | sed 's/ *$//')"
echo "L2-HP-PATH $(readlink -f /sys/class/nvme/nvme0/device)"
echo "L2-HP-SECTORS $(cat /sys/block/nvme0n1/size)"
dd if=/dev/urandom of=/tmp/w bs=128k count=8 2>/dev/null
echo "L2-HP-MD5-WRITTEN $(md5sum /tmp/w | cut -d' ' -f1)"
dd if=/tmp/w of=/dev/nvme0n1 bs=128k seek=@SEEK@ oflag=direct conv=fsync \
    2>/dev/null || echo "L2-ERROR write"
dd if=/dev/nvme0n1 of=/tmp/r bs=128k skip=@SEEK@ count=8 iflag=direct \
    2>/dev/null || echo "L2-ERROR read"
echo "L2-HP-MD5-READ $(md5sum /tmp/r | cut -d' ' -f1)"
echo "L2-HP-IO-DONE"
# L1 sends device_del: pciehp sees the button, waits 5 s, removes the
# driver and powers the slot off.
for i in $(seq 300); do [ -e $c ] || break; sleep 1; done
[ -e $c ] && echo "L2-ERROR nvme0 still there after device_del"
echo "L2-HP-REMOVED"
dmesg | grep -iE "pciehp|pcieport|_OSC|nvme|0000:01:|pci_bus 0000:01|00:01.0" \
    | sed 's/^/L2-DMESG /'
echo "L2-POWERDOWN-READY"
# One key event: the power button.
dd if=/dev/input/$ev of=/dev/null bs=24 count=1 2>/dev/null
echo "L2-POWER-BUTTON-PRESSED"
poweroff -f
sleep 600
'''

# L1: one Conduit run.  QMP on stdio through a FIFO (busybox's nc has no
# UNIX sockets); L2's serial goes to a file L1 watches.  noxsave and
# nosoftlockup as in test_linux_nvme.py (TCG's nested SVM quirks).
L1_INIT = kvfio_image.L1_KVM_PROLOGUE + r'''mkfifo /tmp/qmp.in
truncate -s @DISK_MIB@M /tmp/disk.img
/conduit/vfio-user-nvme --socket /tmp/nvme.sock \
    --backend file:/tmp/disk.img 2>/tmp/server.err &
srv=$!
for i in $(seq 100); do [ -S /tmp/nvme.sock ] && break; usleep 100000; done
start=$(cut -d. -f1 /proc/uptime)
/conduit/conduit-system-x86_64 -accel kvm -M pc -m 256 -smp @CPUS@ \
    -nodefaults -display none -serial file:/tmp/l2.log -qmp stdio \
    -device pcie-root-port,id=rp1,chassis=1,slot=1 \
    -kernel /conduit/bzImage -initrd /conduit/l2.cpio \
    -append "console=ttyS0 panic=-1 loglevel=4 noxsave nosoftlockup" \
    </tmp/qmp.in >/tmp/qmp.out 2>/tmp/conduit.err &
vm=$!
exec 3>/tmp/qmp.in
echo '{"execute":"qmp_capabilities"}' >&3
for i in $(seq 1200); do
    grep -q "L2-READY" /tmp/l2.log 2>/dev/null && break
    kill -0 $vm 2>/dev/null || break
    sleep 1
done
echo "NESTED-L2-READY-AFTER $(( $(cut -d. -f1 /proc/uptime) - start ))"
echo '{"execute":"device_add","id":"add","arguments":{"driver":"vfio-user-pci","socket":"/tmp/nvme.sock","bus":"rp1","id":"hp0"}}' >&3
for i in $(seq 600); do
    grep -q "L2-HP-IO-DONE" /tmp/l2.log 2>/dev/null && break
    kill -0 $vm 2>/dev/null || break
    sleep 1
done
echo "NESTED-HP-IO-DONE-AFTER $(( $(cut -d. -f1 /proc/uptime) - start ))"
echo '{"execute":"device_del","id":"del1","arguments":{"id":"hp0"}}' >&3
echo '{"execute":"device_del","id":"del2","arguments":{"id":"hp0"}}' >&3
for i in $(seq 300); do
    grep -q "DEVICE_DELETED" /tmp/qmp.out && \
        grep -q "L2-POWERDOWN-READY" /tmp/l2.log 2>/dev/null && break
    kill -0 $vm 2>/dev/null || break
    sleep 1
done
echo "NESTED-HP-REMOVED-AFTER $(( $(cut -d. -f1 /proc/uptime) - start ))"
echo '{"execute":"system_powerdown"}' >&3
# The guest powers itself off: no quit is sent.
for i in $(seq 300); do
    kill -0 $vm 2>/dev/null || break
    sleep 1
done
if kill -0 $vm 2>/dev/null; then
    echo "NESTED-ERROR guest did not power off"
    echo '{"execute":"quit"}' >&3
fi
exec 3>&-
wait $vm
echo "NESTED-CONDUIT-EXIT $?"
echo "NESTED-TOTAL $(( $(cut -d. -f1 /proc/uptime) - start ))"
kill $srv
wait $srv
echo "NESTED-DISK-MD5 $(dd if=/tmp/disk.img bs=1k skip=@DATA_OFFSET_KIB@ \
    count=1024 2>/dev/null | md5sum | cut -d' ' -f1)"
sed "s/^/NESTED-STDERR /" /tmp/server.err
sed "s/^/NESTED-L2 /" /tmp/l2.log
sed "s/^/NESTED-QMP /" /tmp/qmp.out
sed "s/^/NESTED-STDERR /" /tmp/conduit.err
echo "NESTED-END"
poweroff -f
'''


def build_l2_initrd(mods_dir):
    """Uncompressed (nothing to inflate at CPL0): busybox, modules, /init."""
    mods = kvfio_image.module_load_order(mods_dir,
                                         ['button', 'evdev', 'nvme'])
    c = kvfio_image.Cpio()
    c.add_file('bin/busybox', '/bin/busybox', 0o755)
    for ko in mods:
        c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
    init = L2_INIT.replace('@MODULES@',
                           ' '.join(os.path.basename(k) for k in mods))
    init = init.replace('@SEEK@', str(DATA_OFFSET_KIB // 128))
    c.add_data('init', init.encode(), 0o755)
    return c.finish()


def build_l1_initrd(mods_dir, bzimage, l2_initrd):
    kvm = kvfio_image.module_load_order(mods_dir, kvfio_image.KVM_MODULES)
    c = kvfio_image.Cpio()
    c.add_file('bin/busybox', '/bin/busybox', 0o755)
    for ko in kvm:
        c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
    libs = set()
    for b in (CONDUIT, SERVER):
        c.add_file('conduit/' + os.path.basename(b), b, 0o755)
        libs.update(kvfio_image.shared_libraries(b))
    for lib in sorted(libs):
        c.add_file(lib, os.path.realpath(lib), 0o755)
    c.add_file('conduit/bzImage', bzimage, 0o644)
    c.add_data('conduit/l2.cpio', l2_initrd)
    init = L1_INIT.replace('@KVM_MODULES@',
                           ' '.join(os.path.basename(k) for k in kvm))
    init = init.replace('@CPUS@', str(L2_CPUS))
    init = init.replace('@DISK_MIB@', str(DISK_MIB))
    init = init.replace('@DATA_OFFSET_KIB@', str(DATA_OFFSET_KIB))
    c.add_data('init', init.encode(), 0o755)
    return gzip.compress(c.finish(), 1)


class LinuxPlatformTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.qemu = guestboot.require_qemu_and([(CONDUIT, 'CONDUIT_BINARY'),
                                               (SERVER, 'VFIO_USER_NVME')])
        try:
            cls.l1 = kvfio_image.NestedL1('linux-platform-')
        except kvfio_image.Unavailable as e:
            raise unittest.SkipTest(str(e))
        initrd = build_l1_initrd(cls.l1.mods, cls.l1.bzimage,
                                 build_l2_initrd(cls.l1.mods))
        start = time.monotonic()
        cls.l1_run = cls.l1.boot(cls.qemu, initrd, TIMEOUT,
                                 log_env='LINUX_PLATFORM_LOG')
        cls.elapsed = time.monotonic() - start
        cls.out = out = cls.l1_run.output
        cls.l2 = kvfio_image.prefixed(out, 'NESTED-L2 ')
        cls.qmp = kvfio_image.json_prefixed(out, 'NESTED-QMP ')
        print('nested boot: %.0f s in all (L1 %s)' %
              (cls.elapsed, ', '.join(l for l in out.splitlines()
                                      if l.startswith('NESTED-TOTAL') or
                                      l.startswith('NESTED-L2-READY'))))

    @classmethod
    def tearDownClass(cls):
        cls.l1.cleanup()

    def setUp(self):
        kvfio_image.check_l1(self, self.l1_run)
        self.ctx = '\n'.join(self.l2 + [l for l in self.out.splitlines()
                                        if l.startswith('NESTED-')
                                        and not l.startswith('NESTED-L2')])

    def values(self, key):
        return [line[len('L2-%s ' % key):].strip() for line in self.l2
                if line.startswith('L2-%s ' % key)]

    def value(self, key):
        v = self.values(key)
        return v[0] if v else None

    def test_smp_linux_sees_all_cpus(self):
        self.assertIn('L2-BOOTED', self.l2, self.ctx)
        self.assertIn('L2-READY', self.l2, self.ctx)
        self.assertFalse([x for x in self.l2
                          if x.startswith('L2-ERROR insmod') or
                          x.startswith('L2-ERROR kernel warning')], self.ctx)
        tables = (self.value('ACPI-TABLES') or '').split()
        for t in ('APIC', 'DSDT', 'FACP', 'MCFG'):
            self.assertIn(t, tables, self.ctx)
        self.assertEqual(self.value('NPROC'), str(L2_CPUS), self.ctx)
        self.assertEqual(self.value('CPUINFO'), str(L2_CPUS), self.ctx)
        # vCPU i has APIC ID i (x86_apic_id_from_index).
        self.assertEqual(sorted(int(x) for x in self.values('APICID')),
                         list(range(L2_CPUS)), self.ctx)

    def reply(self, cmd_id):
        for q in self.qmp:
            if q.get('id') == cmd_id:
                return q
        return None

    def test_hotplug_nvme_into_root_port(self):
        self.assertIn('L2-HP-IO-DONE', self.l2, self.ctx)
        self.assertFalse([x for x in self.l2 if x.startswith('L2-ERROR')],
                         self.ctx)
        add = self.reply('add')
        self.assertIsNotNone(add, self.ctx)
        self.assertIn('return', add, add)
        self.assertEqual(self.value('HP-MODEL'), 'Conduit vfio-user NVMe',
                         self.ctx)
        # Enumerated behind the root port (a bridge), not on bus 0.
        path = self.value('HP-PATH') or ''
        self.assertRegex(path, r'/pci0000:00/0000:00:[0-9a-f.]+/'
                         r'0000:0[1-9a-f]:00\.0$', self.ctx)
        self.assertEqual(int(self.value('HP-SECTORS')), DISK_MIB * 2048,
                         self.ctx)
        written = self.value('HP-MD5-WRITTEN')
        self.assertRegex(written or '', r'^[0-9a-f]{32}$', self.ctx)
        self.assertEqual(self.value('HP-MD5-READ'), written, self.ctx)
        m = re.search(r'^NESTED-DISK-MD5 (\w+)', self.out, re.M)
        self.assertIsNotNone(m, self.ctx)
        self.assertEqual(m.group(1), written, self.ctx)

    def test_device_del_waits_for_the_guest(self):
        self.assertIn('L2-HP-REMOVED', self.l2, self.ctx)
        self.assertFalse([x for x in self.l2 if x.startswith('L2-ERROR')],
                         self.ctx)
        del1, del2 = self.reply('del1'), self.reply('del2')
        self.assertIsNotNone(del1, self.ctx)
        self.assertIn('return', del1, del1)
        # The guest takes 5 s to answer the button: still pending.
        self.assertIsNotNone(del2, self.ctx)
        self.assertIn('already in the process of unplug',
                      del2.get('error', {}).get('desc', ''), del2)
        deleted = [q for q in self.qmp if q.get('event') == 'DEVICE_DELETED']
        self.assertEqual([e['data'].get('device') for e in deleted],
                         ['hp0'], self.ctx)
        # The event came after the guest released the device.
        events = [q.get('event') or q.get('id') for q in self.qmp]
        self.assertLess(events.index('del2'),
                        events.index('DEVICE_DELETED'), events)

    def test_powerdown_shuts_linux_down(self):
        self.assertIn('L2-READY', self.l2, self.ctx)
        self.assertNotEqual(self.value('POWER-BUTTON-DEVICE'), '', self.ctx)
        self.assertIn('L2-POWER-BUTTON-PRESSED', self.l2, self.ctx)
        self.assertNotIn('NESTED-ERROR guest did not power off', self.out,
                         self.ctx)
        m = re.search(r'^NESTED-CONDUIT-EXIT (\d+)', self.out, re.M)
        self.assertIsNotNone(m, self.ctx)
        self.assertEqual(int(m.group(1)), 0, self.ctx)
        events = [q for q in self.qmp if 'event' in q]
        self.assertIn('POWERDOWN', [e['event'] for e in events], self.ctx)
        shutdown = [e for e in events if e['event'] == 'SHUTDOWN']
        self.assertTrue(shutdown, self.ctx)
        self.assertTrue(shutdown[0]['data']['guest'], shutdown[0])
        self.assertEqual(shutdown[0]['data']['reason'], 'guest-shutdown',
                         shutdown[0])


if __name__ == '__main__':
    sys.exit(guestboot.main())
