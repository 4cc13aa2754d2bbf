#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""libvirt drives Conduit: the capability probe, a domain's life cycle,
vfio-user through <qemu:commandline> and hot-plug, and <hostdev>.

Debian's libvirt 9.0 runs in a private libvirtd (libvirt_env.py) and is
pointed at conduit-system-x86_64 / -ppc64 as <emulator>.  Cases:

- probe: `virsh domcapabilities --virttype qemu` is refused (no TCG); the
  ppc64 binary (qtest only) probes and libvirt records neither kvm nor
  tcg for it; with /dev/kvm, --virttype kvm succeeds and shows <hostdev>
  with subsystem pci (and the vfio back-end where the host has VFIO).
- life cycle (needs /dev/kvm): define, start --paused, `virsh console`
  on the pty sees the guest's output after resume, vcpupin really moves
  the vCPU thread (query-cpus-fast thread ids), domstats, shutdown (works
  or names what is missing), destroy, undefine; and a serial log file
  that libvirt passes with -add-fd (/dev/fdset/N).
- vfio-user (needs /dev/kvm, vfio-user-nvme): the <qemu:commandline>
  form, and device_del/device_add through qemu-monitor-command.
- hostdev (needs LIBVIRT_HOSTDEV_BDF: a PCI function libvirt may take,
  set by test_libvirt_nested.py inside its TCG guest): managed='yes'
  binds it to vfio-pci, the nvme guest does I/O, x-query-vfio shows BAR0
  mapped whole, detach-device/attach-device --live, nodedev-reattach.
- disk + bridge (needs /dev/kvm, Debian's kernel, busybox-static,
  iproute2): a domain with two <disk type='file'> (raw, virtio; one
  cache='none', one <readonly/>), an <interface type='bridge'> on a
  bridge the test makes in libvirtd's network namespace, and the
  <hostdev> where LIBVIRT_HOSTDEV_BDF is set.  libvirt writes JSON
  -blockdev file+raw node pairs, -netdev tap with its own tap fd (and
  vhostfd where /dev/vhost-net exists) and -device virtio-blk-pci /
  virtio-net-pci.  Linux boots as the guest (Debian's bzImage, an
  initramfs with virtio_blk, virtio_net, nvme): it reads the patterns
  the test put in both images, writes one (checked in the image file
  afterwards), is refused writing the read-only one, pings the bridge
  and sends 1 MiB read from its disk over TCP to a listener on the
  bridge (checksum compared), and reads the passed-through NVMe.
  query-block, x-query-virtio (with vhost: no kick reached Conduit),
  domblklist, domiflist, domblkstat and domifstat see the devices.

Environment: CONDUIT_BINARY, CONDUIT_PPC64_BINARY, VFIO_USER_NVME,
GUEST_DIR, LIBVIRT_HOSTDEV_BDF.  Exits 77 when libvirt is not installed.
"""
import base64
import gzip
import hashlib
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import guestboot  # noqa: E402
import kvmtest  # noqa: E402
import kvfio_image  # noqa: E402
import libvirt_env  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
CONDUIT_PPC64 = os.environ.get('CONDUIT_PPC64_BINARY', '')
VFIO_USER_NVME = os.environ.get('VFIO_USER_NVME', '')
HOSTDEV_BDF = os.environ.get('LIBVIRT_HOSTDEV_BDF', '')
# Where the disk images go: a file system with O_DIRECT (tmpfs has none
# before Linux 6.6), so that cache='none' can be tested; test_libvirt_nested
# mounts an ext4 there.
IMAGE_DIR = os.environ.get('LIBVIRT_IMAGE_DIR', '')
# The Linux guest's initramfs, made beforehand by test_libvirt_nested on
# the host (l2_initrd_cached()): in the TCG guest, finding the modules
# over 9p costs a minute.
L2_INITRD = os.environ.get('LIBVIRT_L2_INITRD', '')
# Guards against a hang only; nothing asserts on time.
WAIT = int(os.environ.get('LIBVIRT_TEST_WAIT', '300'))
# A Linux guest under nested KVM in a TCG guest boots in minutes.
LINUX_WAIT = int(os.environ.get('LIBVIRT_LINUX_WAIT', '600'))


def domain_xml(name, kernel, append='', vcpus=1, serial='pty',
               serial_path=None, devices='', qemu_args=(), initrd=None,
               memory=128, sysinfo='', os_extra='', uuid=None):
    if serial == 'file':
        chardev = ("<serial type='file'><source path='%s'/>"
                   "<target port='0'/></serial>" % serial_path)
    elif serial == 'pty-log':
        # Nova's console: a pty, and everything logged to a file.
        chardev = ("<serial type='pty'><log file='%s' append='off'/>"
                   "<target port='0'/></serial>"
                   "<console type='pty'><target type='serial' port='0'/>"
                   "</console>" % serial_path)
    else:
        chardev = ("<serial type='pty'><target port='0'/></serial>"
                   "<console type='pty'><target type='serial' port='0'/>"
                   "</console>")
    cmdline = ''
    if qemu_args:
        cmdline = '<qemu:commandline>%s</qemu:commandline>' % ''.join(
            "<qemu:arg value='%s'/>" % a for a in qemu_args)
    return '''<domain type='kvm'
        xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>%(name)s</name>
  %(uuid)s
  <memory unit='MiB'>%(memory)d</memory>
  %(sysinfo)s
  <vcpu placement='static'>%(vcpus)d</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>%(kernel)s</kernel>
    %(initrd)s
    <cmdline>%(append)s</cmdline>
    %(os_extra)s
  </os>
  <features><acpi/></features>
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>%(emulator)s</emulator>
    <controller type='usb' model='none'/>
    %(chardev)s
    <memballoon model='none'/>
    %(devices)s
  </devices>
  %(cmdline)s
</domain>
''' % dict(name=name, kernel=kernel, append=append, vcpus=vcpus,
           emulator=CONDUIT, chardev=chardev, devices=devices,
           cmdline=cmdline, memory=memory, sysinfo=sysinfo,
           os_extra=os_extra,
           uuid='<uuid>%s</uuid>' % uuid if uuid else '',
           initrd='<initrd>%s</initrd>' % initrd if initrd else '')


def hostdev_xml(bdf):
    dom, bus, rest = bdf.split(':')
    slot, fn = rest.split('.')
    return ("<hostdev mode='subsystem' type='pci' managed='yes'>"
            "<source><address domain='0x%s' bus='0x%s' slot='0x%s' "
            "function='0x%s'/></source><alias name='hostdev0'/></hostdev>"
            % (dom, bus, slot, fn))


def vfio_available():
    groups = '/sys/kernel/iommu_groups'
    return os.path.exists('/dev/vfio/vfio') and os.path.isdir(groups) and \
        bool(os.listdir(groups))


# ---- the Linux guest of test_disk_bridge_hostdev ----

L2_MODULES = ['virtio_pci', 'virtio_blk', 'virtio_net', 'nvme']
# Two NICs, each on a bridge of its own: vhost-net where the host has
# /dev/vhost-net (libvirt's default), and <driver name='qemu'/>: vhost off,
# Conduit's worker moves the frames.
NICS = [
    # name, bridge, subnet, MAC, TCP port, <driver>
    ('vhost', 'lvnbr0', '10.0.3', '52:54:00:4c:56:4e', 5000, ''),
    ('user', 'lvnbr1', '10.0.4', '52:54:00:4c:56:4f', 5001,
     "<driver name='qemu'/>"),
]
DISK_BYTES = 8 << 20
TX_OFFSET = 1 << 20
TX_BYTES = 1 << 20
VDA_IN = b'CONDUIT-VDA-IN-0'
VDB_IN = b'CONDUIT-VDB-RO-0'
VDA_OUT = b'CONDUIT-VDA-OUT-'
VDA_OUT_SECTOR = 8
TOKEN_LEN = 8

DISK_XML = """
<disk type='file' device='disk'>
  <driver name='qemu' type='raw' cache='%(cache)s'/>
  <source file='%(path)s'/>
  <target dev='vda' bus='virtio'/>
  <serial>CNDT-VDA</serial>
</disk>
<disk type='file' device='disk'>
  <driver name='qemu' type='raw' cache='writethrough'/>
  <source file='%(ro_path)s'/>
  <target dev='vdb' bus='virtio'/>
  <readonly/>
</disk>
"""

# What OpenStack Nova writes into every domain (nova/virt/libvirt).
NOVA_UUID = '6e3d1c1a-7a43-4d8e-9d3b-0c3a5c0f4b21'
NOVA_SERIAL = '3b8f2c6d-51e4-4d7a-b0a9-6c2e9f1d7a35'
NOVA_SYSINFO = """
<sysinfo type='smbios'>
  <system>
    <entry name='manufacturer'>OpenStack Foundation</entry>
    <entry name='product'>OpenStack Nova</entry>
    <entry name='version'>27.1.0</entry>
    <entry name='serial'>%s</entry>
    <entry name='uuid'>%s</entry>
    <entry name='family'>Virtual Machine</entry>
  </system>
</sysinfo>
""" % (NOVA_SERIAL, NOVA_UUID)

HOTPLUG_MAC = '52:54:00:4c:56:50'
HOTPLUG_DISK_XML = """
<disk type='file' device='disk'>
  <driver name='qemu' type='raw'/>
  <source file='%(path)s'/>
  <target dev='vdc' bus='virtio'/>
</disk>
"""

IFACE_XML = """
<interface type='bridge'>
  <source bridge='%(bridge)s'/>
  <mac address='%(mac)s'/>
  <model type='virtio'/>
  %(driver)s
</interface>
"""

# Per NIC: find it by its MAC, address it, ping the bridge and send the
# disk's bytes to the listener there.
L2_NIC = r"""dev=
for d in /sys/class/net/*; do
    [ "$(cat $d/address)" = @MAC@ ] && dev=${d##*/}
done
[ -n "$dev" ] || echo "L2-ERROR no NIC with MAC @MAC@"
ip link set $dev up
ip addr add @NET@.2/24 dev $dev
echo "L2-MAC-@NAME@ $(cat /sys/class/net/$dev/address)"
if ping -c 3 -W 10 @NET@.1 >/dev/null 2>&1; then echo "L2-PING-@NAME@ ok"
else echo "L2-PING-@NAME@ failed"; fi
dd if=/dev/vda bs=65536 skip=@TXSKIP@ count=@TXBLOCKS@ 2>/dev/null | \
    timeout 300 nc @NET@.1 @PORT@
echo "L2-NC-@NAME@ $?"
"""

# L2's /init: every result on a line of its own, "L2-NAME value".  What
# it writes to vda carries the run's token, from the kernel command line.
L2_INIT = kvfio_image.INIT_PROLOGUE + r"""echo "L2-BOOTED"
token=$(sed -n 's/.*lvn_token=\([0-9a-f]*\).*/\1/p' /proc/cmdline)
for m in @MODULES@; do
    insmod /lib/modules/$m || echo "L2-ERROR insmod $m"
done
for i in $(seq 60); do
    [ -b /dev/vda ] && [ -b /dev/vdb ] && break
    sleep 1
done
echo "L2-VDA-IN $(dd if=/dev/vda bs=16 count=1 2>/dev/null)"
echo "L2-VDA-SERIAL $(cat /sys/block/vda/serial)"
printf '@OUT@%s' $token > /tmp/out
dd if=/tmp/out of=/dev/vda bs=512 seek=@SECTOR@ conv=sync,fsync \
    2>/dev/null || echo "L2-ERROR write /dev/vda"
blockdev --flushbufs /dev/vda
echo 3 > /proc/sys/vm/drop_caches
dd if=/dev/vda bs=512 skip=@SECTOR@ count=1 2>/dev/null | \
    head -c @OUTLEN@ > /tmp/back
echo "L2-VDA-OUT $(cat /tmp/back)"
echo "L2-VDB-IN $(dd if=/dev/vdb bs=16 count=1 2>/dev/null)"
echo "L2-VDB-RO $(cat /sys/block/vdb/ro)"
echo "L2-VDA-CACHE $(cat /sys/block/vda/queue/write_cache)"
echo "L2-VDB-CACHE $(cat /sys/block/vdb/queue/write_cache)"
if dd if=/tmp/out of=/dev/vdb bs=512 seek=1 conv=sync,fsync 2>/dev/null
then echo "L2-VDB-WRITE accepted"; else echo "L2-VDB-WRITE refused"; fi
d=/sys/class/dmi/id
echo "L2-DMI-SERIAL $(cat $d/product_serial 2>/dev/null)"
echo "L2-DMI-UUID $(cat $d/product_uuid 2>/dev/null)"
echo "L2-DMI-PRODUCT $(cat $d/product_name 2>/dev/null)"
echo "L2-DMI-VENDOR $(cat $d/sys_vendor 2>/dev/null)"
ip link set lo up
@NICS@nvme=none
for i in $(seq 30); do
    [ -d /sys/bus/pci/drivers/nvme ] || break
    [ -b /dev/nvme0n1 ] &&
        nvme=$(dd if=/dev/nvme0n1 bs=16 count=1 2>/dev/null) && break
    sleep 1
done
echo "L2-NVME $nvme"
if dmesg | grep -q "Call Trace"; then echo "L2-ERROR kernel warning"; fi
echo "L2-DONE"
sleep 100000
"""

# Runs in libvirtd's network namespace: accepts one connection on the
# bridge, reads until EOF or argv[3] bytes, prints "RX length md5".
LISTENER = r"""
import hashlib, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
s.settimeout(float(sys.argv[4]))
c, _ = s.accept()
c.settimeout(300)
want, data = int(sys.argv[3]), b''
while len(data) < want:
    b = c.recv(65536)
    if not b:
        break
    data += b
c.close()
print('RX', len(data), hashlib.md5(data).hexdigest(), flush=True)
"""


def l2_initrd_cached(cache_dir, mods_dir):
    """The path of l2_initrd() for @mods_dir in @cache_dir, made if
    missing; its name carries a hash of what goes in."""
    modules = kvfio_image.module_load_order(mods_dir, L2_MODULES)
    key = hashlib.sha1((L2_INIT + L2_NIC + repr(NICS) + repr(modules))
                       .encode()).hexdigest()[:12]
    path = os.path.join(cache_dir, 'libvirt-l2-%s.cpio.gz' % key)
    if not os.path.exists(path):
        with open(path + '.tmp', 'wb') as f:
            f.write(l2_initrd(modules))
        os.replace(path + '.tmp', path)
    return path


def o_direct_works(path):
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_DIRECT))
        return True
    except OSError:
        return False


def l2_initrd(modules):
    """A gzip'd initramfs for the Linux guest: busybox, @modules, /init."""
    c = kvfio_image.Cpio()
    c.add_file('bin/busybox', '/bin/busybox', 0o755)
    for ko in modules:
        c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
    init = L2_INIT.replace('@NICS@', ''.join(
        L2_NIC.replace('@MAC@', mac).replace('@NET@', net).replace(
            '@NAME@', name.upper()).replace('@PORT@', str(port))
        for name, _, net, mac, port, _ in NICS))
    for key, value in (
            ('@MODULES@', ' '.join(os.path.basename(k) for k in modules)),
            ('@OUT@', VDA_OUT.decode()),
            ('@OUTLEN@', str(len(VDA_OUT) + TOKEN_LEN)),
            ('@SECTOR@', str(VDA_OUT_SECTOR)),
            ('@TXSKIP@', str(TX_OFFSET // 65536)),
            ('@TXBLOCKS@', str(TX_BYTES // 65536)),
            ):
        init = init.replace(key, value)
    c.add_data('init', init.encode(), 0o755)
    return gzip.compress(c.finish(), 1)


# The Nova-shaped guest: what Linux sees of the NUMA cells and SMBIOS.
NOVA_INIT = kvfio_image.INIT_PROLOGUE + r"""echo "NOVA-BOOTED"
n=/sys/devices/system/node
echo "NOVA-NODES $(ls -d $n/node[0-9]* | wc -l)"
echo "NOVA-NODE0-CPUS $(cat $n/node0/cpulist)"
echo "NOVA-NODE1-CPUS $(cat $n/node1/cpulist 2>/dev/null)"
echo "NOVA-NODE1-MEM-KB $(sed -n 's/.*MemTotal: *\([0-9]*\).*/\1/p' \
    $n/node1/meminfo 2>/dev/null)"
echo "NOVA-DIST0 $(cat $n/node0/distance)"
echo "NOVA-CPUS $(grep -c ^processor /proc/cpuinfo)"
echo "NOVA-DMI-SERIAL $(cat /sys/class/dmi/id/product_serial)"
echo "NOVA-DMI-UUID $(cat /sys/class/dmi/id/product_uuid)"
for m in @MODULES@; do insmod /lib/modules/$m 2>/dev/null; done
for i in $(seq 30); do [ -b /dev/vda ] && [ -e /sys/class/net/eth0 ] && break; sleep 1; done
# Neutron's <mtu> and the flavor's multiqueue, as the driver took them.
echo "NOVA-MTU $(cat /sys/class/net/eth0/mtu)"
echo "NOVA-NET-QUEUES $(ls /sys/class/net/eth0/queues | tr '\n' ' ')"
# <iotune>: @IOPS_OPS@ direct 4 KiB reads, 4 in flight; the rate the
# guest measures is the limit's.
echo "NOVA-DISK $(dd if=/dev/vda bs=16 count=1 2>/dev/null)"
t0=$(cut -d' ' -f1 /proc/uptime)
for j in 1 2 3 4; do
    dd if=/dev/vda of=/dev/null bs=4096 count=$((@IOPS_OPS@ / 4)) \
        skip=$((j * 512)) iflag=direct 2>/dev/null &
done
wait
t1=$(cut -d' ' -f1 /proc/uptime)
echo "NOVA-IOPS-OPS @IOPS_OPS@"
echo "NOVA-IOPS-SECS $(awk "BEGIN { print $t1 - $t0 }")"
echo "NOVA-DONE"
sleep 100000
"""
NOVA_MEM_MIB = 384
NOVA_MODULES = ['virtio_pci', 'virtio_blk', 'virtio_net']
# The flavor's quota:disk_total_iops_sec; far below what the nested
# guest reaches unthrottled, so the limit decides the rate.
NOVA_IOPS = 20
NOVA_IOPS_OPS = 160
NOVA_MTU = 1450

QEMU_GA = '/usr/sbin/qemu-ga'
# virt-install's guest: each PCI function and the driver that took it.
VI_MODULES = ['virtio_pci', 'virtio_blk', 'virtio_rng', 'virtio_balloon',
              'virtio_console', 'xhci_pci', 'xhci_hcd', 'uhci_hcd']
VI_INIT = kvfio_image.INIT_PROLOGUE + r"""echo "VI-BOOTED"
for m in @MODULES@; do insmod /lib/modules/$m 2>/dev/null; done
sleep 5
for d in /sys/bus/pci/devices/*; do
    drv=none
    [ -e $d/driver ] && drv=$(basename $(readlink $d/driver))
    echo "VI-PCI ${d##*/} $(cat $d/vendor):$(cat $d/device) $drv $(cat $d/class)"
done
echo "VI-DISK $(dd if=/dev/vda bs=16 count=1 2>/dev/null)"
echo "VI-RNG $(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)"
echo "VI-PORTS $(ls /sys/class/virtio-ports 2>/dev/null | tr '\n' ' ')"
for d in /sys/bus/virtio/devices/*; do
    drv=none
    [ -e $d/driver ] && drv=$(basename $(readlink $d/driver))
    echo "VI-VIRTIO ${d##*/} $(cat $d/device) $drv"
done
# The guest-agent channel: qemu-ga on the port virt-install named.
ip link set lo up
mkdir -p /var/run /run /sbin
printf '#!/bin/sh\necho "VI-SHUTDOWN-BY-AGENT $*" > /dev/ttyS0\nsync\npoweroff -f\n' > /sbin/shutdown
chmod +x /sbin/shutdown
for p in /sys/class/virtio-ports/vport*; do
    [ "$(cat $p/name)" = org.qemu.guest_agent.0 ] || continue
    /usr/sbin/qemu-ga -m virtio-serial -p /dev/${p##*/} -t /tmp \
        -f /tmp/qga.pid > /tmp/qga.log 2>&1 &
    echo "VI-AGENT ${p##*/}"
done
before=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
echo "VI-MEMTOTAL $before"
echo "VI-DONE"
# virsh setmem --live: the balloon driver gives the memory back.
for i in $(seq 600); do
    cur=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
    if [ $cur -le $((before - 40960)) ]; then
        echo "VI-BALLOON $before $cur"
        break
    fi
    sleep 1
done
sleep 100000
"""
NOVA_XML = """<domain type='kvm'>
  <name>%(name)s</name>
  <uuid>%(uuid)s</uuid>
  <metadata>
    <nova:instance xmlns:nova="http://openstack.org/xmlns/libvirt/nova/1.1">
      <nova:name>conduit-nova</nova:name>
      <nova:flavor name="nfv.numa2.hugepages"/>
    </nova:instance>
  </metadata>
  <memory unit='KiB'>%(mem_kib)d</memory>
  <currentMemory unit='KiB'>%(mem_kib)d</currentMemory>
  <memoryBacking>
    <hugepages><page size='2048' unit='KiB'/></hugepages>
  </memoryBacking>
  <vcpu placement='static'>2</vcpu>
  %(sysinfo)s
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>%(kernel)s</kernel>
    <initrd>%(initrd)s</initrd>
    <cmdline>console=ttyS0 panic=-1 loglevel=4 noxsave nosoftlockup</cmdline>
    <smbios mode='sysinfo'/>
  </os>
  <features><acpi/><apic/></features>
  <cpu mode='%(cpu_mode)s'>
    <topology sockets='2' dies='1' cores='1' threads='1'/>
    <numa>
      <cell id='0' cpus='0' memory='%(cell_kib)d' unit='KiB'/>
      <cell id='1' cpus='1' memory='%(cell_kib)d' unit='KiB'/>
    </numa>
  </cpu>
  <clock offset='utc'>
    <timer name='rtc' tickpolicy='catchup'/>
    <timer name='hpet' present='no'/>
  </clock>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>%(emulator)s</emulator>
    <controller type='usb' model='none'/>
    <serial type='pty'>
      <log file='%(log)s' append='off'/>
      <target port='0'/>
    </serial>
    <console type='pty'><target type='serial' port='0'/></console>
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw' cache='%(cache)s'/>
      <source file='%(disk)s'/>
      <target dev='vda' bus='virtio'/>
      <iotune><total_iops_sec>%(iops)d</total_iops_sec></iotune>
    </disk>
    <interface type='ethernet'>
      <mac address='52:54:00:4e:0f:a1'/>
      <target dev='tapnova0'/>
      <model type='virtio'/>
      <driver name='vhost' queues='2'/>
      <mtu size='%(mtu)d'/>
    </interface>
    <memballoon model='none'/>
  </devices>
</domain>
"""


class LibvirtTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = libvirt_env.unavailable_reason()
        if why:
            raise unittest.SkipTest(why)
        if not CONDUIT or not os.access(CONDUIT, os.X_OK):
            raise unittest.SkipTest('CONDUIT_BINARY not built')
        cls.tmp = tempfile.TemporaryDirectory(prefix='conduit-libvirt-')
        # Conduit also as qemu-system-x86_64 on libvirtd's PATH: the
        # emulator virt-install finds in the capabilities.
        cls.lv = libvirt_env.Libvirtd(
            os.path.join(cls.tmp.name, 'lv'), timeout=WAIT,
            emulators=[('qemu-system-x86_64', os.path.abspath(CONDUIT))]
            if CONDUIT else [])
        os.makedirs(cls.lv.tmp)
        try:
            cls.lv.start_or_cleanup()
        except BaseException:
            cls.tmp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.lv.stop()
        cls.tmp.cleanup()

    def setUp(self):
        self.domains = []

    def tearDown(self):
        for name in self.domains:
            self.lv.virsh('destroy', name, check=False)
            self.lv.virsh('undefine', name, check=False)

    # ---- helpers ----

    def need_kvm(self, needs='pvh'):
        """Runs the case where the host's KVM can run its guest (the
        kvmtest probe decides); elsewhere test_libvirt_nested runs it
        inside its L1 guest, and this run says so instead."""
        how, why = kvmtest.way(needs)
        if how == 'direct':
            print('%s: test_libvirt.%s direct' % (
                'KVM-WAY-IN-L1' if kvmtest.in_l1() else 'KVM-WAY',
                self._testMethodName))
            return
        if how == 'nested':
            print('kvm-way: test_libvirt.%s runs nested, in '
                  'test_libvirt_nested (%s)' % (self._testMethodName, why))
            self.skipTest('nested: test_libvirt_nested runs this case in '
                          'its L1 guest (%s)' % why)
        kvmtest.require(self, needs)

    def guest(self, name):
        path = guestboot.guest_image(name)
        if not os.path.exists(path):
            self.skipTest('guest image %s not built' % path)
        return path

    def domcaps(self, binary, arch, machine, virttype):
        return self.lv.virsh('domcapabilities', '--emulatorbin', binary,
                             '--arch', arch, '--machine', machine,
                             '--virttype', virttype, check=False)

    def caps_cache(self, binary):
        """libvirt's cached probe result for @binary (an XML tree)."""
        d = self.lv.path('cache', 'qemu', 'capabilities')
        for f in os.listdir(d):
            root = ET.parse(os.path.join(d, f)).getroot()
            if root.findtext('emulator') == binary:
                return root
        self.fail('no capabilities cache entry for %s in %s' % (binary, d))

    def define(self, xml):
        name = ET.fromstring(xml).findtext('name')
        path = self.lv.path('%s.xml' % name)
        with open(path, 'w') as f:
            f.write(xml)
        self.lv.virsh('define', path)
        self.domains.append(name)
        return name

    def hmp_qmp(self, dom, cmd, **args):
        req = {'execute': cmd}
        if args:
            req['arguments'] = args
        r = self.lv.virsh('qemu-monitor-command', dom, json.dumps(req))
        reply = json.loads(r.stdout)
        self.assertIn('return', reply, r.stdout)
        return reply['return']

    def wait_for(self, what, fn, timeout=WAIT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = fn()
            if v:
                return v
            time.sleep(0.5)
        self.fail('timed out waiting for ' + what)

    def read(self, path):
        try:
            with open(path, errors='replace') as f:
                return f.read()
        except OSError:
            return ''

    def wait_summary(self, log):
        """The serial log once the guest's SUMMARY line is whole: the
        guest writes it a few bytes at a time, and a read between two of
        them saw 'SUMMARY: 10 tests, 0 une' (L1 guest, CI 2026-12-03)."""
        def whole():
            out = self.read(log)
            return out if re.search(r'(?m)^SUMMARY: .*\n', out) else None
        return self.wait_for('a whole SUMMARY line in %s' % log, whole)

    def domstate(self, dom):
        return self.lv.virsh('domstate', dom).stdout.strip()

    # ---- probe ----

    def test_probe_tcg_refused(self):
        r = self.domcaps(CONDUIT, 'x86_64', 'pc', 'qemu')
        self.assertNotEqual(r.returncode, 0, r.stdout)
        # libvirt's wording depends on whether the probe ran under KVM
        # (then no machine is recorded for TCG at all).
        self.assertRegex(r.stderr, r"does not support virt type 'qemu'|"
                                   r"machine 'pc' is not supported")
        caps = self.caps_cache(CONDUIT)
        flags = {f.get('name') for f in caps.iter('flag')}
        self.assertNotIn('tcg', flags)
        self.assertIn('vfio-pci', flags)
        self.assertEqual(caps.findtext('arch'), 'x86_64')
        # The probe saw the machines Conduit has, with QEMU's aliases.
        machines = {m.get('name'): m.get('alias')
                    for m in caps.iter('machine')}
        self.assertEqual(machines.get('pc-i440fx-8.2'), 'pc')
        self.assertEqual(machines.get('pc-q35-8.2'), 'q35')
        self.assertNotIn('none', machines)  # libvirt drops 'none'

    def test_probe_ppc64(self):
        if not CONDUIT_PPC64 or not os.access(CONDUIT_PPC64, os.X_OK):
            self.skipTest('CONDUIT_PPC64_BINARY not built')
        for virttype, why in (('qemu', "does not support virt type 'qemu'"),
                              ('kvm', "")):
            r = self.domcaps(CONDUIT_PPC64, 'ppc64', 'pseries', virttype)
            self.assertNotEqual(r.returncode, 0, r.stdout)
            self.assertIn(why, r.stderr)
        caps = self.caps_cache(CONDUIT_PPC64)
        self.assertEqual(caps.findtext('arch'), 'ppc64')
        flags = {f.get('name') for f in caps.iter('flag')}
        # qtest only: libvirt must see neither accelerator.
        self.assertNotIn('kvm', flags)
        self.assertNotIn('tcg', flags)
        self.assertIn('pseries', {m.get('name') for m in caps.iter('machine')})

    def test_probe_kvm_q35_efi(self):
        # domcapabilities of q35 lists Debian's OVMF (its firmware
        # descriptors) and both firmware kinds, as for QEMU.
        self.need_kvm('api')
        if not os.path.exists('/usr/share/OVMF/OVMF_CODE_4M.fd'):
            self.skipTest('ovmf is not installed')
        r = self.domcaps(CONDUIT, 'x86_64', 'q35', 'kvm')
        self.assertEqual(r.returncode, 0, r.stderr)
        root = ET.fromstring(r.stdout)
        self.assertEqual(root.findtext('machine'), 'pc-q35-8.2')
        loader = root.find('os/loader')
        self.assertEqual(loader.get('supported'), 'yes', r.stdout)
        values = [v.text for v in loader.findall('value')]
        self.assertIn('/usr/share/OVMF/OVMF_CODE_4M.fd', values, r.stdout)
        fw = {v.text for v in root.findall("os/enum[@name='firmware']/value")}
        self.assertIn('efi', fw, r.stdout)

    def test_probe_kvm_hostdev(self):
        self.need_kvm('api')
        r = self.domcaps(CONDUIT, 'x86_64', 'pc', 'kvm')
        self.assertEqual(r.returncode, 0, r.stderr)
        root = ET.fromstring(r.stdout)
        self.assertEqual(root.findtext('domain'), 'kvm')
        hostdev = root.find('devices/hostdev')
        self.assertEqual(hostdev.get('supported'), 'yes', r.stdout)
        subsys = [v.text for v in hostdev.findall(
            "enum[@name='subsysType']/value")]
        self.assertIn('pci', subsys, r.stdout)
        backends = [v.text for v in hostdev.findall(
            "enum[@name='pciBackend']/value")]
        if vfio_available():
            self.assertIn('vfio', backends, r.stdout)
        else:
            # libvirt lists the back-end only where the host has VFIO.
            self.assertNotIn('vfio', backends, r.stdout)
        flags = {f.get('name') for f in self.caps_cache(CONDUIT).iter('flag')}
        self.assertIn('kvm', flags)

    # ---- life cycle ----

    def console_open(self, dom):
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(libvirt_env.VIRSH, [libvirt_env.VIRSH, '-c', self.lv.uri,
                                         'console', '--force', dom])
        return pid, fd

    def console_read_until(self, fd, needle):
        buf = b''
        deadline = time.monotonic() + WAIT
        while needle.encode() not in buf and time.monotonic() < deadline:
            r, _, _ = select.select([fd], [], [], 1)
            if r:
                try:
                    buf += os.read(fd, 4096)
                except OSError as e:
                    # Said in the output, so that a failure tells a
                    # closed console from a silent guest.
                    buf += ('\n[virsh console closed: %s]' % e).encode()
                    break
        return buf.decode(errors='replace')

    def test_lifecycle(self):
        self.need_kvm()
        dom = self.define(domain_xml('conduit-life', self.guest('hello'),
                                     vcpus=2))
        self.lv.virsh('start', '--paused', dom)
        self.assertEqual(self.domstate(dom), 'paused')
        pid, fd = self.console_open(dom)
        try:
            # Resume only once the console is attached, so that the
            # guest's first line cannot go out before anyone listens.
            out = self.console_read_until(fd, 'Escape character')
            self.lv.virsh('resume', dom)
            out += self.console_read_until(fd, 'unexpected failures')
        finally:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(fd)
        self.assertIn('Connected to domain', out)
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        self.assertEqual(self.domstate(dom), 'running')

        cpus = self.hmp_qmp(dom, 'query-cpus-fast')
        self.assertEqual([c['cpu-index'] for c in cpus], [0, 1])
        tids = [c['thread-id'] for c in cpus]
        ncpu = os.cpu_count()
        target = ncpu - 1
        self.lv.virsh('vcpupin', dom, '1', str(target))
        self.assertEqual(os.sched_getaffinity(tids[1]), {target})
        r = self.lv.virsh('vcpupin', dom)
        self.assertRegex(r.stdout, r'\b1\s+%d\b' % target)

        stats = self.lv.virsh('domstats', dom).stdout
        self.assertIn('state.state=1', stats)
        self.assertIn('vcpu.current=2', stats)
        self.assertIn('vcpu.1.state=1', stats)

        r = self.lv.virsh('shutdown', dom, check=False)
        if r.returncode:
            # No ACPI power button (yet): the error must say what failed.
            self.assertRegex(r.stderr, r'(?i)powerdown|acpi|not supported|'
                                       r'not found', r.stderr)
        else:
            # system_powerdown pressed the ACPI power button (issue 18).
            # This PVH test guest has no ACPI driver and keeps running; a
            # Linux guest powers off (test_linux_platform checks that).
            self.assertIn(self.domstate(dom), ('running', 'shut off'))
        self.lv.virsh('destroy', dom, check=False)
        self.assertEqual(self.domstate(dom), 'shut off')
        self.lv.virsh('undefine', dom)
        self.domains.remove(dom)
        r = self.lv.virsh('dominfo', dom, check=False)
        self.assertNotEqual(r.returncode, 0)

    def test_save_restore(self):
        # virsh save / restore, managedsave + start and dump of a guest in
        # the middle of its virtio-blk I/O (issue 29): libvirt's own
        # getfd + migrate to an fd, -incoming defer + migrate-incoming,
        # dump-guest-memory.  The guest must finish its I/O afterwards
        # (enough of it that it is still at work after the restores).
        self.need_kvm()
        sys.path.insert(0, os.path.join(HERE, '..', '..', 'scripts', 'bench'))
        import virtioblkbench as vb
        img = self.lv.path('save-disk.raw')
        vb.make_image(img)
        log = self.lv.path('save-serial.log')
        # <iotune> holds the guest to 300 IOPS, so that its I/O outlasts
        # the saves however fast the guest runs (an L1 guest's KVM ran
        # 20000 unthrottled reads before virsh, under TCG, was done).
        disk = ("<disk type='file' device='disk'><driver name='qemu' "
                "type='raw'/><source file='%s'/><target dev='vda' "
                "bus='virtio'/><iotune><total_iops_sec>300</total_iops_sec>"
                "</iotune></disk>" % img)
        dom = self.define(domain_xml(
            'conduit-save', self.guest('virtio-blk'),
            append='qd=4 ios=12000 mode=irq verify=1 write=1',
            serial='file', serial_path=log, devices=disk,
            qemu_args=['-device', 'isa-debug-exit,iobase=0xf4,iosize=4']))
        self.lv.virsh('start', dom)
        self.wait_for('the guest starting its I/O',
                      lambda: vb.START_MARKER in self.read(log))
        state = self.lv.path('conduit-save.state')
        self.lv.virsh('save', dom, state)
        self.assertEqual(self.domstate(dom), 'shut off')
        self.assertGreater(os.path.getsize(state), 0)
        self.lv.virsh('restore', state)
        qlog = self.lv.path('log', 'qemu', dom + '.log')
        self.assertEqual(self.domstate(dom), 'running',
                         'serial:\n%s\nqemu log:\n%s' % (
                             self.read(log)[-3000:], self.read(qlog)[-6000:]))
        self.lv.virsh('managedsave', dom)
        self.assertEqual(self.domstate(dom), 'shut off')
        self.assertIn('yes', self.lv.virsh('dominfo', dom).stdout.split(
            'Managed save:')[1].splitlines()[0])
        self.lv.virsh('start', dom)
        self.assertEqual(self.domstate(dom), 'running')
        core = self.lv.path('conduit-save.core')
        self.lv.virsh('dump', '--memory-only', dom, core)
        with open(core, 'rb') as f:
            self.assertEqual(f.read(4), b'\x7fELF')
        self.wait_for('the guest to finish after three restores',
                      lambda: 'unexpected failures' in self.read(log),
                      timeout=1200)
        out = self.read(log)
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        self.assertRegex(out, r'RESULT .*ios=12000')

    def test_migrate_live(self):
        # `virsh migrate --live` between two libvirtds (issue 29): the
        # destination daemon has its own host UUID and, in its own UTS
        # namespace, its own host name, so libvirt takes it for another
        # host.  The data goes over a unix socket both can reach
        # (--migrateuri unix://).  The domain has a vfio-user NVMe (the
        # <qemu:commandline> form; its server on the destination starts
        # first, on the same backing file) and a virtio-blk disk under
        # <iotune> that the guest writes, reads back and verifies while
        # it moves.  The move starts at 1 MiB/s so that `virsh domjobinfo`
        # sees it at work (twice, its counts growing); then
        # migrate-setspeed lets it finish.
        self.need_kvm()
        import uuid as uuidlib
        sys.path.insert(0, os.path.join(HERE, '..', '..', 'scripts', 'bench'))
        import virtioblkbench as vb
        dst = libvirt_env.Libvirtd(
            self.lv.path('dst'), timeout=WAIT,
            emulators=[('qemu-system-x86_64', os.path.abspath(CONDUIT))],
            hostname='conduit-dst', host_uuid=str(uuidlib.uuid4()))
        os.makedirs(dst.tmp, exist_ok=True)
        dst.start_or_cleanup()
        self.addCleanup(dst.stop)
        img = self.lv.path('mig-disk.raw')
        vb.make_image(img)
        nvme_img = self.lv.path('mig-nvme.raw')
        with open(nvme_img, 'wb') as f:
            f.truncate(16 << 20)
        sock_a = self.start_nvme_server('mig-nvme-a', backend=nvme_img)
        log = self.lv.path('mig-serial.log')
        disk = ("<disk type='file' device='disk'><driver name='qemu' "
                "type='raw'/><source file='%s'/><target dev='vda' "
                "bus='virtio'/><iotune><total_iops_sec>200</total_iops_sec>"
                "</iotune></disk>" % img)
        # 16000 I/Os at 200 IOPS: 80 s, longer than the move takes (40 s
        # were not, in an L1 guest on a loaded host: the guest was done
        # and its domain gone before the destination was asked).
        dom = self.define(domain_xml(
            'conduit-mig', self.guest('virtio-blk'),
            append='qd=4 ios=16000 mode=irq verify=1 write=1 dirty=2',
            serial='file', serial_path=log, devices=disk, memory=256,
            qemu_args=['-device', 'isa-debug-exit,iobase=0xf4,iosize=4',
                       '-device', 'vfio-user-pci,id=vu0,socket=' + sock_a]))
        self.lv.virsh('start', dom)
        # dirty=2: after each completion the guest stores into two pages
        # of a 64 MiB area it filled first, and checks them all at the
        # end: at 1 MiB/s the first pass takes a minute, and a page the
        # dirty log missed breaks the guest's check.
        self.wait_for('the guest starting its I/O',
                      lambda: 'DIRTY-AREA-SET' in self.read(log))
        # The destination's definition: the same domain, its NVMe on the
        # destination's server.
        sock_b = self.start_nvme_server('mig-nvme-b', backend=nvme_img)
        xml = self.lv.virsh('dumpxml', '--migratable', dom).stdout
        self.assertIn(sock_a, xml)
        dst_xml = self.lv.path('conduit-mig-dst.xml')
        with open(dst_xml, 'w') as f:
            f.write(xml.replace(sock_a, sock_b))
        mig_sock = self.lv.path('mig.sock')
        argv = [libvirt_env.VIRSH, '-q', '-c', self.lv.uri, 'migrate',
                '--live', '--unsafe', '--verbose', '--bandwidth', '1',
                '--xml', dst_xml, '--migrateuri', 'unix://' + mig_sock,
                dom, dst.uri]
        mig = subprocess.Popen(argv, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT,
                               universal_newlines=True)
        try:
            seen = []
            units = {'B': 1, 'KiB': 1 << 10, 'MiB': 1 << 20, 'GiB': 1 << 30}

            def processed(info):
                m = re.search(r'Data processed:\s+([\d.]+) (\w+)', info)
                return float(m.group(1)) * units.get(m.group(2), 0)

            def at_work():
                r = self.lv.virsh('domjobinfo', dom, check=False)
                if 'Unbounded' in r.stdout and \
                        'Data processed:' in r.stdout:
                    if not seen or processed(r.stdout) > processed(seen[0]):
                        seen.append(r.stdout)
                return len(seen) >= 2 or mig.poll() is not None
            self.wait_for('domjobinfo during the migration', at_work)
            self.assertGreaterEqual(len(seen), 2, 'migrate ended early: %s'
                                    % (mig.stdout.read()
                                       if mig.poll() is not None else ''))
            print('libvirt migrate domjobinfo: ' +
                  ' | '.join(line.strip() for line in seen[-1].splitlines()
                             if line.strip()))
            for field in ('Job type:', 'Time elapsed:', 'Data processed:',
                          'Memory remaining:', 'Memory total:'):
                self.assertIn(field, seen[-1])
            self.lv.virsh('migrate-setspeed', dom, '8192')
            out, _ = mig.communicate(timeout=WAIT)
        finally:
            if mig.poll() is None:
                mig.kill()
                mig.wait()
        qlog = self.lv.path('log', 'qemu', dom + '.log')
        dlog = dst.path('log', 'qemu', dom + '.log')
        self.assertEqual(mig.returncode, 0, 'virsh migrate: %s\n%s\n%s' % (
            out, self.read(qlog)[-4000:], self.read(dlog)[-4000:]))
        self.assertIn('Migration: [100 %]', out)
        # The source's domain stays defined, shut off; it runs on the
        # destination, whose NVMe is the destination's server.
        self.assertEqual(self.domstate(dom), 'shut off')
        self.assertEqual(dst.virsh('domstate', dom).stdout.strip(),
                         'running')
        r = dst.virsh('qemu-monitor-command', dom,
                      json.dumps({'execute': 'x-query-vfio'}))
        devs = json.loads(r.stdout)['return']
        self.assertEqual([d['id'] for d in devs], ['vu0'], r.stdout)
        done = self.lv.virsh('domjobinfo', '--completed', dom).stdout
        print('libvirt migrate completed: ' +
              ' | '.join(line.strip() for line in done.splitlines()
                         if re.match(r'\s*(Time elapsed|Total downtime|'
                                     r'Data processed|Memory bandwidth)',
                                     line)))
        self.assertIn('Completed', done)
        self.wait_for('the guest to finish on the destination',
                      lambda: 'unexpected failures' in self.read(log),
                      timeout=1200)
        out = self.read(log)
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        self.assertRegex(out, r'RESULT .*ios=16000')
        self.assertRegex(out, r'RESULT .*unsignalled=0\b')
        dst.virsh('destroy', dom, check=False)

    def test_serial_log_fd_passed(self):
        # <serial type='file'>: libvirt opens the file and passes it with
        # -add-fd; Conduit writes through /dev/fdset/N.
        self.need_kvm()
        log = self.lv.path('serial-file.log')
        dom = self.define(domain_xml('conduit-file', self.guest('hello'),
                                     serial='file', serial_path=log))
        self.lv.virsh('start', dom)
        out = self.wait_summary(log)
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        cmdline = self.read(self.lv.path('log', 'qemu', dom + '.log'))
        self.assertIn('/dev/fdset/', cmdline)
        self.assertIn('-add-fd', cmdline)
        self.lv.virsh('destroy', dom)

    # ---- vfio-user ----

    def start_nvme_server(self, name, backend=None):
        if not VFIO_USER_NVME or not os.access(VFIO_USER_NVME, os.X_OK):
            self.skipTest('VFIO_USER_NVME not built')
        sock = self.lv.path(name + '.sock')
        proc = subprocess.Popen([VFIO_USER_NVME, '--socket', sock,
                                 '--backend',
                                 'file:' + backend if backend else 'null'],
                                stdout=subprocess.DEVNULL)
        self.addCleanup(lambda: (proc.kill(), proc.wait()))
        self.wait_for('vfio-user socket', lambda: os.path.exists(sock),
                      timeout=30)
        return sock

    def test_vfio_user_commandline_and_hotplug(self):
        self.need_kvm()
        sock = self.start_nvme_server('nvme-vu')
        log = self.lv.path('vu.log')
        dom = self.define(domain_xml(
            'conduit-vu', self.guest('nvme'),
            append='qd=4 ios=200 mode=irq', serial='file', serial_path=log,
            qemu_args=['-device', 'vfio-user-pci,id=vu0,socket=' + sock]))
        self.lv.virsh('start', dom)
        out = self.wait_summary(log)
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        self.assertRegex(out, r'RESULT iops=\d+ .*errors=0')
        devs = self.hmp_qmp(dom, 'x-query-vfio')
        self.assertEqual([d['id'] for d in devs], ['vu0'])
        # Hot-unplug and plug again through libvirt's monitor pass-through.
        self.hmp_qmp(dom, 'device_del', id='vu0')
        self.wait_for('vu0 gone', lambda: not self.hmp_qmp(dom,
                                                           'x-query-vfio'))
        self.hmp_qmp(dom, 'device_add', driver='vfio-user-pci', id='vu1',
                     socket=sock)
        devs = self.hmp_qmp(dom, 'x-query-vfio')
        self.assertEqual([d['id'] for d in devs], ['vu1'])
        self.lv.virsh('destroy', dom)

    # ---- hostdev ----

    def driver_of(self, bdf):
        link = '/sys/bus/pci/devices/%s/driver' % bdf
        return os.path.basename(os.readlink(link)) if os.path.exists(link) \
            else None

    def test_hostdev_managed(self):
        if not HOSTDEV_BDF:
            self.skipTest('LIBVIRT_HOSTDEV_BDF not set (the nested test '
                          'sets it inside its guest)')
        self.need_kvm()
        bdf = HOSTDEV_BDF
        host_driver = self.driver_of(bdf)
        log = self.lv.path('hostdev.log')
        hostdev = hostdev_xml(bdf)
        dom = self.define(domain_xml(
            'conduit-hostdev', self.guest('nvme'),
            append='qd=4 ios=200 mode=irq verify=1', serial='file',
            serial_path=log, devices=hostdev))
        self.lv.virsh('start', dom)
        self.assertEqual(self.driver_of(bdf), 'vfio-pci')
        cmdline = self.read(self.lv.path('log', 'qemu', dom + '.log'))
        self.assertIn('vfio-pci', cmdline)
        out = self.wait_summary(log)
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        self.assertRegex(out, r'RESULT iops=\d+ .*errors=0')

        def bar0_whole():
            devs = self.hmp_qmp(dom, 'x-query-vfio')
            self.assertEqual(len(devs), 1, devs)
            bar0 = [b for b in devs[0]['bars'] if b['bar'] == 0][0]
            # One mmap over the whole BAR (the kernel's MSIX_MAPPABLE);
            # only the emulated MSI-X table overlay traps.
            self.assertTrue(bar0['msix-mappable'], bar0)
            self.assertEqual(bar0['mapped'],
                             [{'offset': 0, 'size': bar0['size']}], bar0)
            msix = devs[0]['msix']
            for t in bar0['trapped']:
                self.assertEqual(msix['bar'], 0, devs[0])
                self.assertLessEqual(t['offset'], msix['table-offset'])
                self.assertLess(msix['table-offset'], t['offset'] + t['size'])
            return devs[0]
        bar0_whole()
        print('hostdev x-query-vfio BAR0 mapped whole')

        xml = self.lv.path('hostdev-dev.xml')
        with open(xml, 'w') as f:
            f.write(hostdev)
        self.lv.virsh('detach-device', dom, xml, '--live')
        self.wait_for('hostdev gone', lambda: not self.hmp_qmp(
            dom, 'x-query-vfio'), timeout=60)
        self.assertNotIn('<hostdev', self.lv.virsh('dumpxml', dom).stdout)
        self.lv.virsh('attach-device', dom, xml, '--live')
        self.assertIn('<hostdev', self.lv.virsh('dumpxml', dom).stdout)
        bar0_whole()
        self.lv.virsh('destroy', dom)
        # managed='yes': libvirt gave the function back on destroy.
        self.wait_for('host driver back', lambda: self.driver_of(bdf) ==
                      host_driver, timeout=60)
        nodedev = 'pci_' + re.sub(r'[:.]', '_', bdf)
        self.lv.virsh('nodedev-detach', nodedev)
        self.assertEqual(self.driver_of(bdf), 'vfio-pci')
        self.lv.virsh('nodedev-reattach', nodedev)
        self.assertEqual(self.driver_of(bdf), host_driver)

    # ---- <disk> and <interface type='bridge'> beside the <hostdev> ----

    def show_domain_logs(self, dom, serial_log):
        """What a failure needs: the guest's console, Conduit's stderr
        and the QMP commands libvirt sent."""
        for line in self.read(serial_log).splitlines()[-60:]:
            print('libvirt console: ' + line)
        for line in self.read(self.lv.path(
                'log', 'qemu', dom + '.log')).splitlines()[-30:]:
            print('libvirt domain log: ' + line[:2000])
        # The commands libvirt sent this domain (after the probe).
        for m in re.finditer(r'QEMU_MONITOR_SEND_MSG: mon=\S+ msg=(\{.*?\})'
                             r'(?:\\r\\n)?\s+fd=',
                             self.read(self.lv.logfile)[self.log_mark:]):
            print('libvirt qmp: ' + m.group(1)[:300])

    def restart_libvirtd_keeps(self, dom):
        domid = self.lv.virsh('domid', dom).stdout.strip()
        mark = len(self.read(self.lv.logfile))
        self.lv.restart()
        # The reconnect holds the domain's job: this waits for its end.
        r = self.lv.virsh('qemu-monitor-command', dom,
                          '{"execute": "query-status"}', check=False)
        sent = re.findall(r'QEMU_MONITOR_SEND_MSG: mon=\S+ msg=(\{.*?\})'
                          r'(?:\\r\\n)?\s+fd=',
                          self.read(self.lv.logfile)[mark:])
        for m in sent:
            print('libvirt reconnect qmp: ' + m[:200])
        for m in re.findall(r'QEMU_MONITOR_RECV_REPLY: mon=\S+ reply=(\{'
                            r'"error".*?\})\s', self.read(self.lv.logfile)[
                                mark:]):
            print('libvirt reconnect error reply: ' + m[:300])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr +
                         self.lv.log_tail())
        self.assertIn('"running"', r.stdout)
        self.assertEqual(self.domstate(dom), 'running',
                         self.lv.log_tail())
        self.assertEqual(self.lv.virsh('domid', dom).stdout.strip(), domid)
        self.assertTrue(any('query-jobs' in m for m in sent), sent)
        if HOSTDEV_BDF:
            self.assertEqual(len(self.hmp_qmp(dom, 'x-query-vfio')), 1)
            self.assertIn('<hostdev', self.lv.virsh('dumpxml', dom).stdout)
        self.lv.virsh('suspend', dom)
        self.assertEqual(self.domstate(dom), 'paused')
        self.lv.virsh('resume', dom)
        self.assertEqual(self.domstate(dom), 'running')
        print('libvirt restart: domain %s kept running (id %s), %d QMP '
              'commands on reconnect' % (dom, domid, len(sent)))

    def test_disk_bridge_hostdev(self):
        self.need_kvm('linux')
        if not os.access('/bin/busybox', os.X_OK):
            self.skipTest('busybox-static is not installed')
        if not shutil.which('ip'):
            self.skipTest('ip (iproute2) is not installed')
        try:
            ver, bzimage, mods = kvfio_image.find_kernel()
            initrd = L2_INITRD
            if not initrd or not os.path.exists(initrd):
                initrd = self.lv.path('l2.cpio')
                with open(initrd, 'wb') as f:
                    f.write(l2_initrd(kvfio_image.module_load_order(
                        mods, L2_MODULES)))
        except kvfio_image.Unavailable as e:
            self.skipTest(str(e))
        token = os.urandom(TOKEN_LEN // 2).hex()
        image_dir = IMAGE_DIR or self.lv.tmp
        disk = os.path.join(image_dir, 'vda.img')
        tx = os.urandom(TX_BYTES)
        with open(disk, 'wb') as f:
            f.write(VDA_IN)
            f.seek(TX_OFFSET)
            f.write(tx)
            f.truncate(DISK_BYTES)
        ro_disk = os.path.join(image_dir, 'vdb.img')
        with open(ro_disk, 'wb') as f:
            f.write(VDB_IN)
            f.truncate(1 << 20)
        self.addCleanup(os.unlink, disk)
        self.addCleanup(os.unlink, ro_disk)
        # cache='none' (O_DIRECT) where the file system can do it.
        direct = o_direct_works(disk)

        # The bridges live in libvirtd's network namespace only; on each
        # a TCP listener L2 sends its disk's bytes to.
        lv = self.lv
        listeners = {}
        for name, bridge, net, _, port, _ in NICS:
            lv.netns_run('ip', 'link', 'add', bridge, 'type', 'bridge')
            self.addCleanup(lv.netns_run, 'ip', 'link', 'del', bridge,
                            check=False)
            lv.netns_run('ip', 'addr', 'add', net + '.1/24', 'dev', bridge)
            lv.netns_run('ip', 'link', 'set', bridge, 'up')
            p = subprocess.Popen(
                lv.netns_argv([sys.executable, '-c', LISTENER, net + '.1',
                               str(port), str(TX_BYTES), str(LINUX_WAIT)]),
                stdout=subprocess.PIPE, universal_newlines=True)
            self.addCleanup(lambda p=p: (p.kill(), p.wait()))
            listeners[name] = p

        log = self.lv.path('linux.log')
        devices = DISK_XML % dict(path=disk, ro_path=ro_disk,
                                  cache='none' if direct else 'writeback') + \
            ''.join(IFACE_XML % dict(bridge=bridge, mac=mac, driver=driver)
                    for _, bridge, _, mac, _, driver in NICS)
        if HOSTDEV_BDF:
            devices += hostdev_xml(HOSTDEV_BDF)
        dom = self.define(domain_xml(
            'conduit-linux', bzimage, initrd=initrd, memory=384,
            append='console=ttyS0 acpi=off panic=-1 loglevel=4 noxsave '
                   'nosoftlockup lvn_token=' + token, serial='pty-log',
            serial_path=log, devices=devices, uuid=NOVA_UUID,
            sysinfo=NOVA_SYSINFO, os_extra="<smbios mode='sysinfo'/>"))
        self.addCleanup(self.show_domain_logs, dom, log)
        started = time.monotonic()
        self.log_mark = len(self.read(self.lv.logfile))
        self.lv.virsh('start', dom)
        argv = self.read(self.lv.path('log', 'qemu', dom + '.log'))
        for line in argv.replace(' -', '\n-').splitlines():
            if line.startswith(('-blockdev', '-netdev', '-device')):
                print('libvirt argv: ' + line)
        # libvirt writes -blockdev in JSON; -device and -netdev in JSON
        # or key=value (what it chooses from the probe).
        self.assertRegex(argv, r'-blockdev \S*"driver":"file"')
        self.assertRegex(argv, r'-blockdev \S*"driver":"raw"')
        if direct:
            self.assertRegex(argv, r'-blockdev \S*"cache":\{"direct":true')
        self.assertRegex(argv, r'virtio-blk-pci\S*virtio-disk0\S*'
                               r'write-cache\W+on')
        self.assertRegex(argv, r'virtio-blk-pci\S*virtio-disk1\S*'
                               r'write-cache\W+off')
        self.assertRegex(argv, r'-netdev \S*tap\W+fd\W+\d+')
        self.assertIn('virtio-net-pci', argv)
        netdevs = re.findall(r'-netdev (\S+)', argv)
        self.assertEqual(len(netdevs), 2, argv)
        vhost = 'vhostfd' in netdevs[0]
        self.assertEqual(vhost, os.path.exists('/dev/vhost-net'), argv)
        self.assertNotIn('vhostfd', netdevs[1])

        polls = [0]

        def l2_done():
            out = self.read(log)
            if 'L2-DONE' in out:
                return out
            polls[0] += 1
            # A guest that panicked is gone (on_reboot destroy): say so
            # now rather than at the time-out.
            if polls[0] % 20 == 0 and self.domstate(dom) != 'running':
                self.fail('the guest stopped before L2-DONE:\n' + out)
            return None
        out = self.wait_for('L2-DONE in %s' % log, l2_done,
                            timeout=LINUX_WAIT)
        print('libvirt L2 booted and done after %.0f s' % (
            time.monotonic() - started))
        print('\n'.join('libvirt L2: ' + x for x in out.splitlines()
                        if x.startswith('L2-')))
        l2 = {}
        for line in out.splitlines():
            m = re.match(r'(L2-[A-Z0-9-]+) ?(.*)', line)
            if m:
                l2.setdefault(m.group(1), m.group(2).strip())
        self.assertNotIn('L2-ERROR', l2, out)
        # Both disks, as libvirt described them to Conduit.
        self.assertEqual(l2.get('L2-VDA-IN'), VDA_IN.decode(), out)
        self.assertEqual(l2.get('L2-VDA-SERIAL'), 'CNDT-VDA', out)
        self.assertEqual(l2.get('L2-VDA-OUT'), VDA_OUT.decode() + token,
                         out)
        self.assertEqual(l2.get('L2-VDB-IN'), VDB_IN.decode(), out)
        self.assertEqual(l2.get('L2-VDB-RO'), '1', out)
        self.assertEqual(l2.get('L2-VDB-WRITE'), 'refused', out)
        # write-cache=on / off (cache='none' / 'writethrough') as the
        # guest sees it: FLUSH offered or not.
        self.assertEqual(l2.get('L2-VDA-CACHE'), 'write back', out)
        self.assertEqual(l2.get('L2-VDB-CACHE'), 'write through', out)
        # Each NIC on its bridge: ping, then 1 MiB of the disk over TCP.
        for name, _, _, mac, _, _ in NICS:
            self.assertEqual(l2.get('L2-MAC-' + name.upper()), mac, out)
            self.assertEqual(l2.get('L2-PING-' + name.upper()), 'ok', out)
            rx = listeners[name].communicate(timeout=WAIT)[0].split()
            self.assertEqual(rx, ['RX', str(TX_BYTES),
                                  hashlib.md5(tx).hexdigest()],
                             '%s\n%s' % (name, out))
        if HOSTDEV_BDF:
            # The passed-through NVMe, beside them.
            self.assertEqual(l2.get('L2-NVME'), 'CONDUIT-NVMETEST', out)
        # Nova's <sysinfo>: Linux's DMI scan found Conduit's SMBIOS.
        self.assertEqual(l2.get('L2-DMI-SERIAL'), NOVA_SERIAL, out)
        self.assertEqual(l2.get('L2-DMI-UUID'), NOVA_UUID, out)
        self.assertEqual(l2.get('L2-DMI-PRODUCT'), 'OpenStack Nova', out)
        self.assertEqual(l2.get('L2-DMI-VENDOR'), 'OpenStack Foundation',
                         out)
        self.assertRegex(argv, r"-smbios '?type=1,manufacturer=OpenStack")

        # What libvirt reads back.
        # As in QEMU: named by the device's virtio-backend child, which
        # is how libvirt finds its disks there.
        blocks = {b.get('qdev'): b for b in self.hmp_qmp(dom, 'query-block')}
        print('libvirt query-block: %s' % json.dumps(blocks))
        path = '/machine/peripheral/%s/virtio-backend'
        self.assertEqual(sorted(blocks), [path % 'virtio-disk0',
                                          path % 'virtio-disk1'], blocks)
        vda = blocks[path % 'virtio-disk0']['inserted']
        self.assertEqual(vda['drv'], 'raw')
        self.assertEqual(vda['file'], disk)
        self.assertFalse(vda['ro'])
        self.assertEqual(vda['cache']['direct'], direct, vda)
        self.assertTrue(blocks[path % 'virtio-disk1']['inserted']['ro'])
        nodes = self.hmp_qmp(dom, 'query-named-block-nodes', flat=True)
        self.assertEqual(sorted(n['drv'] for n in nodes),
                         ['file', 'file', 'raw', 'raw'], nodes)
        r = self.lv.virsh('domblklist', dom).stdout
        self.assertRegex(r, r'vda\s+%s' % re.escape(disk))
        self.assertRegex(r, r'vdb\s+%s' % re.escape(ro_disk))
        stat = dict(line.split()[1:3] for line in self.lv.virsh(
            'domblkstat', dom, 'vda').stdout.splitlines() if line.strip())
        print('libvirt domblkstat vda: %s' % stat)
        self.assertGreater(int(stat['rd_req']), 0, stat)
        self.assertGreater(int(stat['wr_req']), 0, stat)
        self.assertGreater(int(stat['flush_operations']), 0, stat)
        # domiflist: "vnet0 bridge lvnbr0 virtio 52:54:00:..." per NIC.
        ifaces = {f[4]: f for f in (line.split() for line in self.lv.virsh(
            'domiflist', dom).stdout.splitlines()) if len(f) == 5}
        for _, bridge, _, mac, _, _ in NICS:
            tap, kind, source, model, _ = ifaces[mac]
            self.assertEqual((kind, source, model),
                             ('bridge', bridge, 'virtio'), ifaces)
            stat = dict(line.split()[1:3] for line in self.lv.virsh(
                'domifstat', dom, tap).stdout.splitlines() if line.strip())
            print('libvirt domifstat %s: %s' % (tap, stat))
            # The guest's point of view: it sent the MiB.
            self.assertGreater(int(stat['tx_bytes']), TX_BYTES, stat)
            self.assertGreater(int(stat['rx_packets']), 0, stat)

        virtio = self.hmp_qmp(dom, 'x-query-virtio')
        print('libvirt x-query-virtio: %s' % json.dumps(virtio))
        by_type = {}
        for d in virtio:
            by_type.setdefault(d['type'], []).append(d)
        self.assertEqual(len(by_type.get('virtio-blk-pci', [])), 2, virtio)
        for d in by_type['virtio-blk-pci']:
            self.assertTrue(d['running'], d)
            self.assertGreater(d['kicks'], 0, d)
        nets = {d['qom-path']: d for d in by_type['virtio-net-pci']}
        net0 = nets['/machine/peripheral/net0']
        net1 = nets['/machine/peripheral/net1']
        self.assertTrue(net0['running'], net0)
        self.assertTrue(net1['running'], net1)
        if vhost:
            # vhost-net served both queues: no kick reached the worker.
            self.assertEqual(net0['kicks'], 0, net0)
        else:
            self.assertGreater(net0['kicks'], 0, net0)
        # <driver name='qemu'/>: the worker moved the frames.
        self.assertGreater(net1['kicks'], 0, net1)

        # libvirtd restarted under the running guest (disk, NICs, the
        # <hostdev>): it reconnects and adopts the domain; nothing is
        # killed and virsh controls it afterwards (the hot-plugs below).
        self.restart_libvirtd_keeps(dom)

        # virsh inject-nmi: Linux reports an NMI it did not expect.
        self.lv.virsh('inject-nmi', dom)
        self.wait_for('the guest reporting the NMI',
                      lambda: 'NMI received' in self.read(log), timeout=120)
        print('libvirt inject-nmi: the guest saw it')
        # query-pci and HMP info pci / info qtree see libvirt's devices.
        pci = self.hmp_qmp(dom, 'query-pci')
        ids = {d['qdev_id'] for b in pci for d in b['devices']}
        expect = {'virtio-disk0', 'virtio-disk1', 'net0', 'net1'}
        if HOSTDEV_BDF:
            expect.add('hostdev0')
        self.assertTrue(expect <= ids, pci)
        text = self.lv.virsh('qemu-monitor-command', '--hmp', dom,
                             'info pci').stdout
        self.assertIn('id "virtio-disk0"', text)
        text = self.lv.virsh('qemu-monitor-command', '--hmp', dom,
                             'info qtree').stdout
        self.assertIn('dev: virtio-net-pci, id "net0"', text)

        # A third disk, plugged and unplugged live: libvirt sends
        # blockdev-add twice and device_add, then device_del and
        # blockdev-del twice.
        hp_disk = os.path.join(image_dir, 'vdc.img')
        with open(hp_disk, 'wb') as f:
            f.truncate(1 << 20)
        self.addCleanup(os.unlink, hp_disk)
        hp_xml = self.lv.path('vdc.xml')
        with open(hp_xml, 'w') as f:
            f.write(HOTPLUG_DISK_XML % dict(path=hp_disk))
        self.lv.virsh('attach-device', dom, hp_xml, '--live')
        self.assertRegex(self.lv.virsh('domblklist', dom).stdout,
                         r'vdc\s+%s' % re.escape(hp_disk))
        qdevs = [b.get('qdev', '') for b in self.hmp_qmp(dom, 'query-block')]
        self.assertIn('/machine/peripheral/virtio-disk2/virtio-backend',
                      qdevs)
        self.assertEqual(len(self.hmp_qmp(dom, 'query-named-block-nodes')),
                         6)
        self.lv.virsh('detach-device', dom, hp_xml, '--live')
        self.wait_for('vdc gone', lambda: 'vdc' not in self.lv.virsh(
            'domblklist', dom).stdout, timeout=60)
        self.wait_for('vdc nodes gone', lambda: len(self.hmp_qmp(
            dom, 'query-named-block-nodes')) == 4, timeout=60)
        print('libvirt disk hot-plug: attach-device and detach-device ok')

        # A third NIC, plugged and unplugged live: libvirt passes the tap
        # (and vhost) fds with getfd, then netdev_add fd=NAME, device_add.
        nic_xml = self.lv.path('nic.xml')
        with open(nic_xml, 'w') as f:
            f.write(IFACE_XML % dict(bridge=NICS[1][1], mac=HOTPLUG_MAC,
                                     driver=''))
        self.lv.virsh('attach-device', dom, nic_xml, '--live')
        self.assertIn(HOTPLUG_MAC, self.lv.virsh('domiflist', dom).stdout)
        self.assertIn('/machine/peripheral/net2', [
            d['qom-path'] for d in self.hmp_qmp(dom, 'x-query-virtio')])
        self.lv.virsh('detach-device', dom, nic_xml, '--live')
        self.wait_for('NIC gone', lambda: HOTPLUG_MAC not in self.lv.virsh(
            'domiflist', dom).stdout, timeout=60)
        self.assertNotIn('/machine/peripheral/net2', [
            d['qom-path'] for d in self.hmp_qmp(dom, 'x-query-virtio')])
        print('libvirt NIC hot-plug: attach-device and detach-device ok')
        self.lv.virsh('destroy', dom)

        # The guest's write is in the image file; the read-only one is
        # untouched.
        with open(disk, 'rb') as f:
            f.seek(VDA_OUT_SECTOR * 512)
            self.assertEqual(f.read(len(VDA_OUT) + len(token)),
                             VDA_OUT + token.encode())
        with open(ro_disk, 'rb') as f:
            self.assertEqual(f.read(1024), VDB_IN + bytes(1024 -
                                                          len(VDB_IN)))

    # ---- what remains refused, and how libvirt shows it ----

    def test_refusals_named(self):
        # Each refusal docs/system/libvirt.rst lists is an error at
        # define or start that names the cause; none starts a domain
        # that lacks the feature.
        self.need_kvm('api')
        kernel = self.guest('hello')
        qcow2 = self.lv.path('disk.qcow2')
        # A valid qcow2 header (version 3, 1 MiB), nothing allocated.
        with open(qcow2, 'wb') as f:
            f.write(bytes.fromhex('514649fb00000003') + bytes(12) +
                    bytes.fromhex('00000010') + (1 << 20).to_bytes(8, 'big'))
            f.truncate(1 << 16)
        cases = [
            ('qcow2', "<disk type='file' device='disk'><driver name='qemu' "
             "type='qcow2'/><source file='%s'/><target dev='vda' "
             "bus='virtio'/></disk>" % qcow2, '', '"driver":"qcow2"'),
            ('s3', '', "<pm><suspend-to-mem enabled='yes'/></pm>",
             r'S3 \(suspend to RAM\) is not supported'),
            ('cpu-model', '', "<cpu mode='custom' match='exact'>"
             "<model fallback='forbid'>Skylake-Client</model></cpu>",
             # libvirt's own check, or Conduit's if libvirt lets it by.
             r"Skylake-Client|the CPU is incompatible with host CPU"),
        ]
        for name, devices, extra, needle in cases:
            xml = domain_xml('conduit-refuse-' + name, kernel,
                             devices=devices)
            xml = xml.replace('<on_poweroff>', extra + '<on_poweroff>')
            dom = self.define(xml)
            r = self.lv.virsh('start', dom, check=False)
            print('libvirt refusal %s: %s' % (name, ' | '.join(
                r.stderr.strip().splitlines())[:600]))
            if r.returncode == 0:
                self.lv.virsh('destroy', dom, check=False)
            self.assertNotEqual(r.returncode, 0, name)
            self.assertRegex(r.stderr, needle, name)
            self.assertNotIn(dom, self.lv.virsh('list').stdout)

    # ---- what virt-install writes ----

    def test_virt_install_xml(self):
        # virt-install's own headless XML (--import --graphics none
        # --machine pc) is defined and started unchanged; the Linux guest
        # lists every PCI device of it with the driver that bound.
        self.virt_install_case('pc')

    def test_virt_install_xml_q35(self):
        # The same with --machine q35: PCIe root ports, each device
        # behind one.
        self.virt_install_case('q35')

    def virt_install_case(self, machine):
        self.need_kvm('linux')
        if not shutil.which('virt-install'):
            self.fail('virt-install is missing (scripts/install-deps '
                      'installs virtinst)')
        try:
            ver, bzimage, mods = kvfio_image.find_kernel()
        except kvfio_image.Unavailable as e:
            self.skipTest(str(e))
        initrd = self.lv.path('vi.cpio')
        modules = []
        for m in VI_MODULES:
            try:
                modules += [k for k in kvfio_image.module_load_order(
                    mods, [m]) if k not in modules]
            except Exception as e:      # built in, or not shipped
                print('virt-install L2: module %s not added: %s' % (m, e))
        c = kvfio_image.Cpio()
        c.add_file('bin/busybox', '/bin/busybox', 0o755)
        for ko in modules:
            c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
        c.add_file('usr/sbin/qemu-ga', QEMU_GA, 0o755)
        for lib in sorted(kvfio_image.shared_libraries(QEMU_GA)):
            c.add_file(lib, os.path.realpath(lib), 0o755)
        c.add_data('init', VI_INIT.replace('@MODULES@', ' '.join(
            os.path.basename(k) for k in modules)).encode(), 0o755)
        with open(initrd, 'wb') as f:
            f.write(gzip.compress(c.finish(), 1))
        disk = self.lv.path('vi-%s.img' % machine)
        with open(disk, 'wb') as f:
            f.write(b'CONDUIT-VI-DISK0')
            f.truncate(16 << 20)
        r = subprocess.run(
            ['virt-install', '--connect', self.lv.uri, '--print-xml',
             '--import', '--graphics', 'none', '--machine', machine,
             '--name', 'conduit-vi-' + machine, '--memory', '384',
             '--vcpus', '1',
             '--osinfo', 'linux2022', '--virt-type', 'kvm',
             '--arch', 'x86_64', '--disk', disk + ',format=raw,bus=virtio',
             '--network', 'none',
             '--boot', 'kernel=%s,initrd=%s,kernel_args=console=ttyS0 '
             'panic=-1 loglevel=4' % (bzimage, initrd)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            universal_newlines=True, timeout=WAIT)
        self.assertEqual(r.returncode, 0, r.stderr)
        xml = r.stdout
        root = ET.fromstring(xml)
        # Its own choice of CPU, as it makes it from domcapabilities.
        print('virt-install %s cpu: %s' % (machine, ET.tostring(
            root.find('cpu')).decode().strip() if root.find('cpu')
            is not None else 'none'))
        print('virt-install devices: ' + ' '.join(sorted(
            '%s%s' % (d.tag, ('[%s]' % (d.get('model') or d.get('type')))
                      if (d.get('model') or d.get('type')) else '')
            for d in root.find('devices'))))
        for t in root.iter('timer'):
            print('virt-install timer: %s' % t.attrib)
        dom = self.define(xml)
        self.log_mark = len(self.read(self.lv.logfile))
        log = self.lv.path('log', 'qemu', dom + '.log')
        self.addCleanup(self.show_domain_logs, dom, log)
        r = self.lv.virsh('start', dom, check=False)
        argv = self.read(log)
        for line in argv.replace(' -', '\n-').splitlines():
            if line.startswith(('-device', '-object', '-global', '-machine',
                                '-cpu', '-rtc', '-chardev', '-no-hpet')):
                print('virt-install argv: ' + line)
        self.assertEqual(r.returncode, 0, r.stderr)
        # The console is a pty: read the guest through virsh console.
        out = self.console_until(dom, 'VI-DONE')
        pci = re.findall(r'^VI-PCI (\S+) (\S+) (\S+) 0x(\S+)', out, re.M)
        print('\n'.join('virt-install L2 pci: %s %s %s %s' % p for p in pci))
        for line in out.splitlines():
            if line.startswith(('VI-RNG', 'VI-PORTS', 'VI-DISK')):
                print('virt-install L2: ' + line.strip())
        drivers = {d for _, _, d, _ in pci}
        self.assertIn('virtio-pci', drivers, out)
        self.assertIn('VI-DISK CONDUIT-VI-DISK0', out)
        # Every function of the XML has a driver in the guest (the host
        # and ISA bridges, class 06, need none).
        for slot, ids, drv, cls in pci:
            if not cls.startswith('06'):
                self.assertNotEqual(drv, 'none', '%s %s\n%s' % (slot, ids,
                                                                 out))
        # Each virtio device of the XML with its Linux driver: the disk,
        # the rng (the kernel's current hwrng), the balloon, the channel.
        virtio = re.findall(r'^VI-VIRTIO (\S+) (\S+) (\S+)', out, re.M)
        self.assertTrue({'virtio_blk', 'virtio_rng', 'virtio_balloon',
                         'virtio_console'} <= {d for _, _, d in virtio},
                        out)
        self.assertRegex(out, r'VI-RNG virtio_rng')
        self.assertRegex(out, r'VI-AGENT vport\d+p\d+')
        # The agent answers through libvirt's channel.
        def pinged():
            r = self.lv.virsh('qemu-agent-command', dom,
                              '{"execute":"guest-ping"}', check=False)
            return r.returncode == 0 and r.stdout
        reply = self.wait_for('qemu-ga answering guest-ping', pinged,
                              timeout=120)
        self.assertEqual(json.loads(reply), {'return': {}})
        r = self.lv.virsh('domifaddr', dom, '--source', 'agent')
        print('virt-install domifaddr --source agent: %s' % r.stdout)
        self.assertIn('127.0.0.1', r.stdout)
        # setmem --live: the guest's balloon driver inflates.
        self.lv.virsh('setmem', dom, str(300 * 1024), '--live')
        out = self.console_until(dom, 'VI-BALLOON')
        print('virt-install L2: ' + re.search(r'VI-BALLOON.*', out).group(0))
        # The driver may still be inflating: libvirt's "actual" (from
        # query-balloon) reaches the target when it is done.
        try:
            self.wait_for('dommemstat actual at the target',
                          lambda: re.search(
                              r'^actual %d$' % (300 * 1024), self.lv.virsh(
                                  'dommemstat', dom).stdout, re.M),
                          timeout=180)
        except AssertionError as e:
            # CI, 2026-12-02: the driver stopped between 40 MiB and the
            # target.  Say which side waits: Conduit's view of the
            # queues, and the guest's own through its agent.
            raise AssertionError('%s\n%s' % (e, self.balloon_report(dom)))
        stat = self.lv.virsh('dommemstat', dom).stdout
        print('virt-install dommemstat: ' + ' '.join(stat.split()))
        # shutdown --mode agent: qemu-ga's guest-shutdown powers off.
        self.lv.virsh('shutdown', dom, '--mode', 'agent')
        self.wait_for('the guest shut off by its agent',
                      lambda: self.domstate(dom) == 'shut off', timeout=180)
        print('virt-install %s: agent, balloon, shutdown --mode agent ok'
              % machine)

    def guest_exec(self, dom, script, timeout=30):
        """Runs script with /bin/sh in the guest through qemu-ga."""
        r = self.lv.virsh('qemu-agent-command', dom, json.dumps({
            'execute': 'guest-exec', 'arguments': {
                'path': '/bin/sh', 'arg': ['-c', script],
                'capture-output': True}}), check=False)
        if r.returncode:
            return 'guest-exec: %s' % r.stderr.strip()
        pid = json.loads(r.stdout)['return']['pid']
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = self.lv.virsh('qemu-agent-command', dom, json.dumps({
                'execute': 'guest-exec-status',
                'arguments': {'pid': pid}}), check=False)
            if r.returncode:
                return 'guest-exec-status: %s' % r.stderr.strip()
            st = json.loads(r.stdout)['return']
            if st.get('exited'):
                return base64.b64decode(st.get('out-data', '')).decode(
                    errors='replace')
            time.sleep(0.5)
        return 'guest-exec: %r still running after %d s' % (script, timeout)

    def balloon_report(self, dom):
        out = ['balloon report:']
        out.append('dommemstat: ' + ' '.join(
            self.lv.virsh('dommemstat', dom, check=False).stdout.split()))
        for cmd in ('x-query-balloon', 'x-query-virtio'):
            r = self.lv.virsh('qemu-monitor-command', dom,
                              json.dumps({'execute': cmd}), check=False)
            reply = r.stdout.strip() or r.stderr.strip()
            if cmd == 'x-query-virtio':
                try:
                    reply = json.dumps([d for d in json.loads(reply)[
                        'return'] if 'balloon' in d.get('type', '')])
                except (ValueError, KeyError, TypeError):
                    pass
            out.append('%s: %s' % (cmd, reply))
        out.append('guest: ' + self.guest_exec(
            dom, 'grep -E "MemTotal|MemFree|MemAvailable" /proc/meminfo; '
            'grep -E "CPU|virtio|LOC" /proc/interrupts; dmesg | tail -25'))
        return '\n'.join(out)

    def console_until(self, dom, marker, timeout=LINUX_WAIT):
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(libvirt_env.VIRSH, [libvirt_env.VIRSH, '-c',
                                         self.lv.uri, 'console', '--force',
                                         dom])
        out = b''
        deadline = time.monotonic() + timeout
        try:
            while marker.encode() not in out and \
                    time.monotonic() < deadline:
                ready, _, _ = select.select([fd], [], [], 5)
                if ready:
                    try:
                        out += os.read(fd, 65536)
                    except OSError:
                        break
        finally:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(fd)
        text = out.decode(errors='replace')
        self.assertIn(marker, text, text[-3000:])
        return text

    # ---- a domain as OpenStack Nova writes it ----

    def test_nova_domain(self):
        # Nova's NFV flavor: sysinfo/SMBIOS, a pty console with <log>,
        # 2 NUMA cells on 2 MiB huge pages, rtc catch-up, no HPET, and
        # host-model where libvirt offers it (else host-passthrough, said
        # so); the guest sees the SMBIOS serial and both nodes.
        self.need_kvm('linux')
        try:
            ver, bzimage, mods = kvfio_image.find_kernel()
        except kvfio_image.Unavailable as e:
            self.skipTest(str(e))
        if not libvirt_env.hugetlbfs_available():
            self.fail('the kernel has no hugetlbfs for <hugepages/>')
        pages = NOVA_MEM_MIB // 2 + 8
        old = libvirt_env.reserve_hugepages(pages)
        self.assertIsNotNone(old, 'could not reserve %d huge pages' % pages)
        self.addCleanup(libvirt_env.release_hugepages, old)
        initrd = self.lv.path('nova.cpio')
        c = kvfio_image.Cpio()
        c.add_file('bin/busybox', '/bin/busybox', 0o755)
        modules = kvfio_image.module_load_order(mods, NOVA_MODULES)
        for ko in modules:
            c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
        init = NOVA_INIT
        for key, value in (('@MODULES@', ' '.join(os.path.basename(k)
                                                  for k in modules)),
                           ('@IOPS_OPS@', str(NOVA_IOPS_OPS))):
            init = init.replace(key, value)
        c.add_data('init', init.encode(), 0o755)
        with open(initrd, 'wb') as f:
            f.write(gzip.compress(c.finish(), 1))
        caps = self.domcaps(CONDUIT, 'x86_64', 'pc', 'kvm').stdout
        host_model = re.search(r"<mode name='host-model' supported='yes'",
                               caps) is not None
        print('libvirt nova: host-model %s' % (
            'offered' if host_model else
            'NOT offered by domcapabilities: host-passthrough instead'))
        log = self.lv.path('nova-console.log')
        disk = os.path.join(IMAGE_DIR or self.lv.tmp, 'nova-vda.img')
        with open(disk, 'wb') as f:
            f.write(b'CONDUIT-NOVA-VDA')
            f.truncate(16 << 20)
        self.addCleanup(os.unlink, disk)
        dom = self.define(NOVA_XML % dict(
            disk=disk, iops=NOVA_IOPS, mtu=NOVA_MTU,
            cache='none' if o_direct_works(disk) else 'writeback',
            name='conduit-nova', uuid=NOVA_UUID, sysinfo=NOVA_SYSINFO,
            mem_kib=NOVA_MEM_MIB * 1024, cell_kib=NOVA_MEM_MIB * 512,
            kernel=bzimage, initrd=initrd, emulator=CONDUIT, log=log,
            cpu_mode='host-model' if host_model else 'host-passthrough'))
        self.log_mark = len(self.read(self.lv.logfile))
        self.addCleanup(self.show_domain_logs, dom, log)
        free_before = self.free_hugepages()
        self.lv.virsh('start', dom)
        argv = self.read(self.lv.path('log', 'qemu', dom + '.log'))
        for line in argv.replace(' -', '\n-').splitlines():
            if line.startswith(('-object', '-numa', '-cpu', '-smbios',
                                '-machine', '-rtc', '-chardev')):
                print('libvirt nova argv: ' + line)
        self.assertRegex(argv, r'memory-backend-file\S*/dev/hugepages')
        self.assertRegex(argv, r'-numa node,nodeid=1,cpus=1,memdev=')
        self.assertIn('driftfix=slew', argv)
        # Preallocated from the pool: the guest's memory is huge pages.
        used = free_before - self.free_hugepages()
        self.assertGreaterEqual(used, NOVA_MEM_MIB // 2, argv)
        out = self.wait_for('NOVA-DONE in %s' % log,
                            lambda: 'NOVA-DONE' in self.read(log) and
                            self.read(log), timeout=LINUX_WAIT)
        nova = dict(re.findall(r'^(NOVA-[A-Z0-9-]+) ?(.*?)\r?$', out, re.M))
        print('\n'.join('libvirt nova L2: %s %s' % kv for kv in
                        sorted(nova.items())))
        self.assertEqual(nova.get('NOVA-NODES'), '2', out)
        self.assertEqual(nova.get('NOVA-NODE0-CPUS'), '0', out)
        self.assertEqual(nova.get('NOVA-NODE1-CPUS'), '1', out)
        self.assertGreater(int(nova.get('NOVA-NODE1-MEM-KB') or 0),
                           NOVA_MEM_MIB * 1024 // 4, out)
        self.assertEqual(nova.get('NOVA-DIST0', '').split(), ['10', '20'],
                         out)
        self.assertEqual(nova.get('NOVA-CPUS'), '2', out)
        self.assertEqual(nova.get('NOVA-DMI-SERIAL'), NOVA_SERIAL, out)
        self.assertEqual(nova.get('NOVA-DMI-UUID'), NOVA_UUID, out)
        # <mtu>: host_mtu reached the guest's driver; multiqueue: two
        # queue pairs on a tap opened twice.
        self.assertRegex(argv, r'host_mtu\W+%d' % NOVA_MTU)
        self.assertRegex(argv, r'-netdev \S*fds\W+\d+:\d+')
        self.assertEqual(nova.get('NOVA-MTU'), str(NOVA_MTU), out)
        self.assertEqual(nova.get('NOVA-NET-QUEUES', '').split(),
                         ['rx-0', 'rx-1', 'tx-0', 'tx-1'], out)
        # <iotune>: libvirt set the limit, and the guest's measured rate
        # is within 10% of it.
        tune = self.lv.virsh('blkdeviotune', dom, 'vda').stdout
        print('libvirt nova blkdeviotune: ' + ' '.join(tune.split()))
        self.assertRegex(tune, r'total_iops_sec\s*:\s*%d\b' % NOVA_IOPS)
        self.assertEqual(nova.get('NOVA-DISK'), 'CONDUIT-NOVA-VDA', out)
        # domblkinfo: the sparse image's allocation, not its size.
        info = dict(line.split(':', 1) for line in self.lv.virsh(
            'domblkinfo', dom, 'vda').stdout.splitlines() if ':' in line)
        print('libvirt nova domblkinfo: %s' % info)
        self.assertEqual(int(info['Capacity']), 16 << 20, info)
        self.assertLess(int(info['Allocation']), 1 << 20, info)
        iops = int(nova['NOVA-IOPS-OPS']) / float(nova['NOVA-IOPS-SECS'])
        print('libvirt nova: %s reads in %s s = %.1f IOPS (limit %d)' % (
            nova['NOVA-IOPS-OPS'], nova['NOVA-IOPS-SECS'], iops, NOVA_IOPS))
        self.assertGreaterEqual(iops, NOVA_IOPS * 0.9, out)
        self.assertLessEqual(iops, NOVA_IOPS * 1.1, out)
        self.lv.virsh('destroy', dom)
        self.wait_for('huge pages back', lambda: self.free_hugepages() >=
                      free_before, timeout=60)

    def free_hugepages(self):
        with open('/sys/kernel/mm/hugepages/hugepages-2048kB/'
                  'free_hugepages') as f:
            return int(f.read())


if __name__ == '__main__':
    sys.exit(guestboot.main())
