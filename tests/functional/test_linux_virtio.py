#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Linux's virtio_blk and virtio_net drive Conduit's virtio devices.

As test_linux_nvme.py, it nests: Debian's kernel boots under Debian's
QEMU (TCG, -cpu max offers SVM) as L1, which loads kvm-amd, tun, bridge
and vhost_net, puts 10.0.2.1/24 on a bridge br0 and runs Conduit -accel
kvm twice, booting the same kernel as L2 with

  -blockdev driver=file,... -device virtio-blk-pci   (an ext4 image made
      here with mkfs.ext4 -d: L2's initramfs loads virtio_blk and ext4,
      mounts /dev/vda and switch_roots into it)
  -netdev tap,ifname=tap0,script=no,downscript=no,vhost=off|on
      -device virtio-net-pci  (L1 adds tap0 to br0)

On its ext4 root L2 writes 1 MiB of random data, syncs, drops its caches
and reads it back; gives eth0 10.0.2.2, pings L1 and sends 4 MiB of
random data over TCP (busybox nc) to L1, printing checksums.  L1 checks
the received bytes, and after Conduit exits mounts the image (loop) and
checksums the file from outside.  QMP x-query-virtio shows whether the
network queues were served by vhost-net (no kick reaches Conduit's
worker) or by the worker (vhost=off).

It also hot-plugs a second, read-only virtio-blk disk into a
pcie-root-port while L2 runs (blockdev-add + device_add; L2 reads it and
compares checksums with L1), unplugs it (device_del: Linux's pciehp
releases it, DEVICE_DELETED), removes its node (blockdev-del), and runs
fstrim on the root with discard=unmap (query-blockstats counts the
DISCARD requests).  About a minute on a quiet host; set
GUESTBOOT_LIVE_LOG=path to follow the L1 console while it runs.

Environment: CONDUIT_BINARY.  Exits 77 (skipped) without
qemu-system-x86_64, the kernel package, busybox-static or mkfs.ext4, or
when L1 gets no /dev/kvm.
"""
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestboot  # noqa: E402
import kvfio_image  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
# Guards against a hung guest only; nothing asserts on time.
TIMEOUT = int(os.environ.get('LINUX_VIRTIO_TIMEOUT', '1700'))
ROOT_MIB = 48
TCP_BYTES = 4 * 1024 * 1024
CASES = ['vhost-off', 'vhost-on']

# ext4 needs crc32c through the crypto API, which modules.dep does not name.
L2_MODULES = ['virtio_pci', 'virtio_blk', 'virtio_net', 'crc32c_generic',
              'ext4']
L1_MODULES = kvfio_image.KVM_MODULES + ['tun', 'bridge', 'vhost_net',
                                        'loop', 'crc32c_generic', 'ext4']

# L2 initramfs: find the root disk and switch to it.
L2_INITRAMFS_INIT = kvfio_image.INIT_PROLOGUE + r'''echo "L2-BOOTED"
for m in @MODULES@; do
    insmod /lib/modules/$m || echo "L2-ERROR insmod $m"
done
for i in $(seq 60); do [ -b /dev/vda ] && break; sleep 1; done
[ -b /dev/vda ] || echo "L2-ERROR no /dev/vda"
mkdir -p /newroot
mount -t ext4 /dev/vda /newroot || echo "L2-ERROR mount /dev/vda"
umount /proc /sys /tmp
mount --move /dev /newroot/dev
exec switch_root /newroot /sbin/init
'''

# L2's init on the ext4 root.
L2_ROOT_INIT = r'''#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
echo "L2-ROOT $(grep ' / ' /proc/mounts)"
echo "L2-SERIAL $(cat /sys/block/vda/serial 2>/dev/null)"
dd if=/dev/urandom of=/data.bin bs=64k count=16 2>/dev/null || \
    echo "L2-ERROR write /data.bin"
sync
echo "L2-MD5-WRITTEN $(md5sum /data.bin | cut -d' ' -f1)"
echo 3 > /proc/sys/vm/drop_caches
echo "L2-MD5-READ $(md5sum /data.bin | cut -d' ' -f1)"
# DISCARD: free a deleted file's blocks (the node has discard=unmap).
dd if=/dev/urandom of=/junk bs=64k count=64 2>/dev/null
sync
rm /junk
sync
fstrim / && echo "L2-FSTRIM ok" || echo "L2-FSTRIM failed"
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.2/24 dev eth0
echo "L2-MAC $(cat /sys/class/net/eth0/address)"
if ping -c 3 -W 5 10.0.2.1 >/dev/null 2>&1; then echo "L2-PING ok"
else echo "L2-PING failed"; fi
dd if=/dev/urandom of=/tmp/tx bs=64k count=@TCP_BLOCKS@ 2>/dev/null
echo "L2-MD5-TX $(md5sum /tmp/tx | cut -d' ' -f1)"
# L1 closes the connection once it has every byte; the timeout only
# guards against a lost connection.
timeout 300 nc 10.0.2.1 5000 < /tmp/tx
echo "L2-NC-EXIT $?"
# Hot-plug: L1 adds a read-only disk into the root port, then removes it.
echo "L2-WANT-HOTPLUG"
for i in $(seq 120); do [ -b /dev/vdb ] && break; sleep 1; done
if [ -b /dev/vdb ]; then
    echo "L2-HOT-SERIAL $(cat /sys/block/vdb/serial)"
    echo "L2-HOT-MD5 $(md5sum /dev/vdb | cut -d' ' -f1)"
else
    echo "L2-ERROR no /dev/vdb after device_add"
fi
echo "L2-WANT-UNPLUG"
for i in $(seq 120); do [ -e /sys/block/vdb ] || break; sleep 1; done
if [ -e /sys/block/vdb ]; then echo "L2-ERROR vdb still there after device_del"
else echo "L2-HOT-GONE"; fi
grep virtio /proc/interrupts | while read irq n rest; do
    echo "L2-IRQ ${rest##* } $n"
done
if dmesg | grep -q "Call Trace"; then
    echo "L2-ERROR kernel warning in dmesg"
fi
sync
echo "L2-DONE"
sleep 600
'''

L1_INIT = kvfio_image.L1_MODULES_PROLOGUE + r'''[ -c /dev/vhost-net ] || echo "NESTED-NO-VHOST"
ip link set lo up
ip link add br0 type bridge || brctl addbr br0
ip addr add 10.0.2.1/24 dev br0
ip link set br0 up
cp /conduit/root.img /tmp/root.img
dd if=/dev/urandom of=/tmp/hot.img bs=64k count=16 2>/dev/null
echo "NESTED-HOT-MD5 $(md5sum /tmp/hot.img | cut -d' ' -f1)"
run_case() {
    name=$1 vhost=$2
    rm -f /tmp/qmp.in /tmp/l2.log /tmp/rx /tmp/ncin
    # busybox nc gives up when its stdin ends: give it a fifo we hold open
    # (a pipeline from sleep would make "wait" wait for the sleep too).
    mkfifo /tmp/ncin
    nc -l -p 5000 < /tmp/ncin > /tmp/rx &
    ncpid=$!
    exec 4>/tmp/ncin
    mkfifo /tmp/qmp.in
    /conduit/conduit-system-x86_64 -accel kvm -M pc -m 512 -nodefaults -no-reboot \
        -display none -serial file:/tmp/l2.log -qmp stdio \
        -kernel /conduit/bzImage -initrd /conduit/l2.cpio \
        -append "console=ttyS0 panic=-1 loglevel=4 noxsave nosoftlockup no_timer_check" \
        -blockdev driver=file,filename=/tmp/root.img,node-name=root0,discard=unmap \
        -device virtio-blk-pci,drive=root0,id=vblk0,serial=CNDT-ROOT \
        -netdev tap,id=net0,ifname=tap0,script=no,downscript=no,vhost=$vhost \
        -device virtio-net-pci,netdev=net0,id=nic0,mac=52:54:00:c0:ff:ee \
        -device pcie-root-port,id=rp1,chassis=1,slot=1 \
        </tmp/qmp.in >/tmp/qmp.out 2>/tmp/conduit.err &
    vm=$!
    echo "NESTED-CASE $name started"
    # Progress on the console while it runs (the parsed copy comes later).
    touch /tmp/l2.log
    tail -f /tmp/l2.log | sed "s/^/LIVE-L2 $name /" &
    exec 3>/tmp/qmp.in
    echo '{"execute":"qmp_capabilities"}' >&3
    for i in $(seq 100); do [ -d /sys/class/net/tap0 ] && break; usleep 100000; done
    brctl addif br0 tap0 || echo "NESTED-ERROR addif tap0"
    ip link set tap0 up
    hot=0
    for i in $(seq 1500); do
        grep -q "L2-DONE" /tmp/l2.log 2>/dev/null && break
        kill -0 $vm 2>/dev/null || break
        if [ $hot = 0 ] && grep -q "L2-WANT-HOTPLUG" /tmp/l2.log; then
            echo '{"execute":"blockdev-add","id":"hot-add","arguments":{"driver":"file","filename":"/tmp/hot.img","node-name":"hot0","read-only":true}}' >&3
            echo '{"execute":"device_add","id":"hot-dev","arguments":{"driver":"virtio-blk-pci","drive":"hot0","bus":"rp1","id":"hotblk","serial":"CNDT-HOT"}}' >&3
            hot=1
        fi
        if [ $hot = 1 ] && grep -q "L2-WANT-UNPLUG" /tmp/l2.log; then
            echo '{"execute":"device_del","id":"hot-del","arguments":{"id":"hotblk"}}' >&3
            hot=2
        fi

        # Every byte arrived: close, so that L2's nc sees the end.
        [ "$(wc -c < /tmp/rx)" -ge @TCP_BYTES@ ] && kill $ncpid 2>/dev/null
        sleep 1
    done
    if [ $hot = 2 ]; then
        echo '{"execute":"blockdev-del","id":"hot-bdel","arguments":{"node-name":"hot0"}}' >&3
    fi
    echo '{"execute":"query-blockstats","id":"stats"}' >&3
    echo '{"execute":"x-query-virtio"}' >&3
    echo '{"execute":"query-block"}' >&3
    echo '{"execute":"quit"}' >&3
    exec 3>&-
    wait $vm
    echo "NESTED-CONDUIT-EXIT $name $?"
    kill $ncpid 2>/dev/null
    exec 4>&-
    wait $ncpid
    echo "NESTED-RX $name $(wc -c < /tmp/rx) $(md5sum /tmp/rx | cut -d' ' -f1)"
    sed "s/^/NESTED-L2 $name /" /tmp/l2.log
    sed "s/^/NESTED-QMP $name /" /tmp/qmp.out
    sed "s/^/NESTED-STDERR $name /" /tmp/conduit.err
    mkdir -p /mnt
    # Read-write: L2 was stopped without unmounting, the journal replays.
    if mount -o loop /tmp/root.img /mnt; then
        echo "NESTED-OUTSIDE-MD5 $name $(md5sum /mnt/data.bin | cut -d' ' -f1)"
        umount /mnt
    else
        echo "NESTED-ERROR loop mount"
    fi
}
@CASES@
echo "NESTED-END"
poweroff -f
'''


def build_root_image(path, tmpdir):
    root = os.path.join(tmpdir, 'rootfs')
    for d in ('bin', 'sbin', 'dev', 'proc', 'sys', 'tmp', 'mnt'):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    shutil.copy('/bin/busybox', os.path.join(root, 'bin', 'busybox'))
    init = os.path.join(root, 'sbin', 'init')
    with open(init, 'w') as f:
        f.write(L2_ROOT_INIT.replace('@TCP_BLOCKS@',
                                     str(TCP_BYTES // 65536)))
    os.chmod(init, 0o755)
    subprocess.run(['mkfs.ext4', '-q', '-F', '-L', 'conduit-root', '-d', root,
                    path, '%dM' % ROOT_MIB], check=True,
                   stdout=subprocess.DEVNULL)


def build_l2_initrd(mods_dir):
    mods = kvfio_image.module_load_order(mods_dir, L2_MODULES)
    c = kvfio_image.Cpio()
    c.add_file('bin/busybox', '/bin/busybox', 0o755)
    for ko in mods:
        c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
    c.add_data('init', L2_INITRAMFS_INIT.replace(
        '@MODULES@', ' '.join(os.path.basename(k) for k in mods)).encode(),
        0o755)
    return c.finish()


def build_l1_initrd(mods_dir, bzimage, l2_initrd, root_img):
    mods = kvfio_image.module_load_order(mods_dir, L1_MODULES)
    c = kvfio_image.Cpio()
    c.add_file('bin/busybox', '/bin/busybox', 0o755)
    for ko in mods:
        c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
    c.add_file('conduit/conduit-system-x86_64', CONDUIT, 0o755)
    for lib in sorted(kvfio_image.shared_libraries(CONDUIT)):
        c.add_file(lib, os.path.realpath(lib), 0o755)
    c.add_file('conduit/bzImage', bzimage, 0o644)
    c.add_data('conduit/l2.cpio', l2_initrd)
    c.add_file('conduit/root.img', root_img, 0o644)
    calls = '\n'.join('run_case %s %s' % (n, n.split('-')[1]) for n in CASES)
    init = L1_INIT.replace('@MODULES@',
                           ' '.join(os.path.basename(k) for k in mods))
    init = init.replace('@CASES@', calls)
    init = init.replace('@TCP_BYTES@', str(TCP_BYTES))
    c.add_data('init', init.encode(), 0o755)
    return gzip_fast(c.finish())


def gzip_fast(data):
    import gzip
    return gzip.compress(data, 1)


class Case:
    def __init__(self, out, name):
        self.l2 = kvfio_image.prefixed(out, 'NESTED-L2 %s ' % name)
        self.qmp = kvfio_image.json_prefixed(out, 'NESTED-QMP %s ' % name)
        m = re.search(r'^NESTED-CONDUIT-EXIT %s (\d+)' % name, out, re.M)
        self.conduit_exit = int(m.group(1)) if m else None
        m = re.search(r'^NESTED-RX %s (\d+) (\w+)' % name, out, re.M)
        self.rx = (int(m.group(1)), m.group(2)) if m else (None, None)
        m = re.search(r'^NESTED-OUTSIDE-MD5 %s (\w+)' % name, out, re.M)
        self.outside_md5 = m.group(1) if m else None
        m = re.search(r'^NESTED-HOT-MD5 (\w+)', out, re.M)
        self.hot_md5 = m.group(1) if m else None

    def reply(self, cmd_id):
        for msg in self.qmp:
            if msg.get('id') == cmd_id:
                return msg
        return None

    def event(self, name):
        return [m for m in self.qmp if m.get('event') == name]

    def value(self, key):
        for line in self.l2:
            if line.startswith('L2-%s ' % key):
                return line[len('L2-%s ' % key):].strip()
        return None

    def virtio(self, typename):
        for msg in self.qmp:
            ret = msg.get('return')
            if isinstance(ret, list):
                for dev in ret:
                    if dev.get('type') == typename:
                        return dev
        return None


class LinuxVirtioTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.qemu = guestboot.require_qemu_and([(CONDUIT, 'CONDUIT_BINARY')])
        if not shutil.which('mkfs.ext4'):
            raise unittest.SkipTest('mkfs.ext4 (e2fsprogs) is not installed')
        try:
            cls.l1 = kvfio_image.NestedL1('linux-virtio-')
        except kvfio_image.Unavailable as e:
            raise unittest.SkipTest(str(e))
        l1 = cls.l1
        root_img = l1.path('root.img')
        build_root_image(root_img, l1.path(''))
        initrd = build_l1_initrd(l1.mods, l1.bzimage,
                                 build_l2_initrd(l1.mods), root_img)
        cls.l1_run = l1.boot(cls.qemu, initrd, TIMEOUT, memory='2G',
                             log_env='LINUX_VIRTIO_LOG')
        cls.out = cls.l1_run.output

    @classmethod
    def tearDownClass(cls):
        cls.l1.cleanup()

    def setUp(self):
        kvfio_image.check_l1(self, self.l1_run)

    def check_case(self, name):
        r = Case(self.out, name)
        ctx = '%s\n%s' % (name, '\n'.join(r.l2))
        self.assertIn('L2-BOOTED', r.l2, ctx)
        self.assertIn('L2-DONE', r.l2, ctx)
        self.assertFalse([x for x in r.l2 if x.startswith('L2-ERROR')], ctx)
        self.assertEqual(r.conduit_exit, 0, ctx)
        # ext4 root on virtio-blk, data checked inside and from outside.
        self.assertRegex(r.value('ROOT') or '', r'^/dev/vda / ext4 ', ctx)
        self.assertEqual(r.value('SERIAL'), 'CNDT-ROOT', ctx)
        written = r.value('MD5-WRITTEN')
        self.assertRegex(written or '', r'^[0-9a-f]{32}$', ctx)
        self.assertEqual(r.value('MD5-READ'), written, ctx)
        self.assertEqual(r.outside_md5, written, ctx)
        # fstrim reached the image as DISCARD requests.
        self.assertEqual(r.value('FSTRIM'), 'ok', ctx)
        stats = [n['stats'] for n in
                 (r.reply('stats') or {}).get('return', [])
                 if n.get('node-name') == 'root0']
        self.assertEqual(len(stats), 1, r.qmp)
        self.assertGreater(stats[0]['unmap_operations'], 0, stats)
        # virtio_net on the bridge: ping, then 4 MiB over TCP intact.
        self.assertEqual(r.value('MAC'), '52:54:00:c0:ff:ee', ctx)
        self.assertEqual(r.value('PING'), 'ok', ctx)
        self.assertEqual(r.rx[0], TCP_BYTES, ctx)
        self.assertEqual(r.rx[1], r.value('MD5-TX'), ctx)
        # A virtio-blk disk hot-plugged into a pcie-root-port, read by
        # Linux, then unplugged (pciehp) and its node removed.
        self.assertEqual(r.value('HOT-SERIAL'), 'CNDT-HOT', ctx)
        self.assertRegex(r.hot_md5 or '', r'^[0-9a-f]{32}$', ctx)
        self.assertEqual(r.value('HOT-MD5'), r.hot_md5, ctx)
        self.assertIn('L2-HOT-GONE', r.l2, ctx)
        for cmd_id in ('hot-add', 'hot-dev', 'hot-del', 'hot-bdel'):
            self.assertIn('return', r.reply(cmd_id) or {},
                          '%s: %s' % (cmd_id, r.qmp))
        self.assertIn('hotblk', [e['data'].get('device')
                                 for e in r.event('DEVICE_DELETED')], r.qmp)
        return r

    def test_vhost_off(self):
        r = self.check_case('vhost-off')
        net = r.virtio('virtio-net-pci')
        self.assertIsNotNone(net, r.qmp)
        # The worker moved the frames: TX kicks reached it.
        self.assertGreater(net['kicks'], 0, net)

    def test_vhost_on(self):
        if 'NESTED-NO-VHOST' in self.out:
            self.skipTest('no /dev/vhost-net in L1')
        r = self.check_case('vhost-on')
        net = r.virtio('virtio-net-pci')
        self.assertIsNotNone(net, r.qmp)
        # vhost-net served both queues: no kick reached Conduit's worker.
        self.assertEqual(net['kicks'], 0, net)
        blk = r.virtio('virtio-blk-pci')
        self.assertGreater(blk['kicks'], 0, blk)


if __name__ == '__main__':
    sys.exit(guestboot.main())
