# SPDX-License-Identifier: GPL-2.0-or-later
"""A small Debian bookworm disk image that boots through GRUB, built from
Debian's packages once and cached (firmware tests boot it with SeaBIOS
and OVMF).

Layout (GPT, 1 GiB sparse):
  1  BIOS boot partition (1 MiB)   GRUB's i386-pc core.img
  2  EFI system partition (32 MiB) \\EFI\\BOOT\\BOOTX64.EFI (GRUB x86_64-efi)
  3  root, ext4, label conduit-root: debootstrap --variant=minbase with
     linux-image-amd64, a small initramfs (virtio, NVMe, ext4) and
     /boot/grub/grub.cfg

Both GRUBs find the root by its label and read the same grub.cfg.  Its
one entry boots the kernel with init=/usr/local/sbin/conduit-test-init,
which does what a firmware test needs and powers off: it logs which
firmware booted it (/sys/firmware/efi), appends a line to
/var/log/conduit-boots on the root disk, writes a marker to the first
sector of an NVMe namespace if there is one, prints CONDUIT-... lines
on the serial console and powers off through ACPI (sysrq o).

No loop devices or mounts: the partitions are built as files
(mkfs.ext4 -d, mkfs.vfat + mcopy) and written into the disk image; the
BIOS boot code is patched in as grub-bios-setup would (boot.img's kernel
sector, diskboot.img's block list).

Everything runs as root on the test machine (debootstrap needs it);
Unavailable is raised when a tool or the network is missing.
"""

import os
import shutil
import struct
import subprocess
import tempfile

# Bump when the layout or the init changes: the cache is keyed by it.
IMAGE_VERSION = 4
SUITE = 'bookworm'
MIRROR = os.environ.get('DEBIAN_MIRROR', 'http://deb.debian.org/debian')
SECTOR = 512
# The root partition: what the files take, plus this much room.
ROOT_SLACK_MIB = 96
BIOS_PART = (2048, 2048)            # (first LBA, sectors): 1 MiB
ESP_PART = (4096, 65536)            # 32 MiB
ROOT_START = 69632
ROOT_LABEL = 'conduit-root'
TOOLS = ['debootstrap', 'sgdisk', 'mkfs.ext4', 'mkfs.vfat', 'mcopy',
         'grub-mkimage']

TEST_INIT = r'''#!/bin/sh
# conduit-test-init: a firmware test's whole userspace.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -o remount,rw /
con=/dev/ttyS0
fw=bios
[ -d /sys/firmware/efi ] && fw=efi
up=$(cut -d' ' -f1 /proc/uptime)
boot_id=$(cat /proc/sys/kernel/random/boot_id)
echo "CONDUIT-BOOTED firmware=$fw uptime=$up" >$con
[ -r /sys/class/dmi/id/sys_vendor ] && \
    echo "CONDUIT-DMI $(cat /sys/class/dmi/id/sys_vendor)" >$con
echo "CONDUIT-ACPI $(ls /sys/firmware/acpi/tables | tr '\n' ' ')" >$con
echo "CONDUIT-CPUS $(grep -c ^processor /proc/cpuinfo)" >$con
echo "$fw $boot_id" >>/var/log/conduit-boots
sync
for i in $(seq 50); do [ -b /dev/nvme0n1 ] && break; sleep 0.1; done
if [ -b /dev/nvme0n1 ]; then
    printf 'CONDUIT-NVME %s %s\n' "$fw" "$boot_id" | \
        dd of=/dev/nvme0n1 bs=512 conv=sync,fsync 2>/dev/null &&
        echo "CONDUIT-NVME-WRITTEN $fw" >$con
fi
mount -o remount,ro /
sync
echo "CONDUIT-POWEROFF" >$con
echo o >/proc/sysrq-trigger
sleep 30
'''

GRUB_CFG = r'''set timeout=0
set timeout_style=hidden
set default=0
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
menuentry 'Debian (Conduit firmware test)' {
    search --no-floppy --label --set=root conduit-root
    echo 'CONDUIT-GRUB loading linux'
    linux /boot/vmlinuz root=LABEL=conduit-root ro console=ttyS0 quiet loglevel=4 init=/usr/local/sbin/conduit-test-init panic=-1
    initrd /boot/initrd.img
}
'''

# Embedded in both core images: find the root, then its grub.cfg.
GRUB_EARLY = '''search --no-floppy --label --set=root conduit-root
set prefix=($root)/boot/grub
configfile $prefix/grub.cfg
'''

GRUB_MODULES = ['part_gpt', 'ext2', 'search', 'search_label', 'configfile',
                'normal', 'linux', 'echo', 'serial', 'terminal', 'test']

INITRAMFS_MODULES = ['virtio_pci', 'virtio_blk', 'nvme', 'ext4', 'crc32c_generic']


class Unavailable(Exception):
    """A tool or the Debian mirror is missing: the test cannot build it."""


def run(argv, **kw):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       **kw)
    if r.returncode:
        raise RuntimeError('%s failed (%d):\n%s' % (
            ' '.join(argv), r.returncode,
            r.stdout.decode(errors='replace')[-4000:]))
    return r.stdout.decode(errors='replace')


def cache_dir():
    d = os.environ.get('CONDUIT_IMAGE_CACHE')
    if not d:
        d = os.path.join(os.environ.get('MESON_BUILD_ROOT', os.getcwd()),
                         'tests', 'functional', 'image-cache')
    os.makedirs(d, exist_ok=True)
    return d


def _debootstrap(root):
    include = ','.join(['linux-image-amd64', 'initramfs-tools', 'kmod',
                        'e2fsprogs', 'udev'])
    try:
        run(['debootstrap', '--variant=minbase', '--include=' + include,
             SUITE, root, MIRROR])
    except RuntimeError as e:
        raise Unavailable('debootstrap %s from %s failed: %s' %
                          (SUITE, MIRROR, str(e)[-600:]))


def _unmount_below(root):
    """Nothing may stay mounted in the chroot when it is deleted."""
    root = os.path.realpath(root)
    with open('/proc/mounts') as f:
        mounts = [line.split()[1] for line in f]
    for m in sorted(mounts, key=len, reverse=True):
        if m == root or m.startswith(root + '/'):
            subprocess.run(['umount', '-l', m])


def _configure(root):
    os.makedirs(os.path.join(root, 'usr/local/sbin'), exist_ok=True)
    init = os.path.join(root, 'usr/local/sbin/conduit-test-init')
    with open(init, 'w') as f:
        f.write(TEST_INIT)
    os.chmod(init, 0o755)
    with open(os.path.join(root, 'etc/fstab'), 'w') as f:
        f.write('LABEL=%s / ext4 ro 0 1\n' % ROOT_LABEL)
    # A small initramfs: the few drivers the root needs, nothing probed.
    conf = os.path.join(root, 'etc/initramfs-tools/initramfs.conf')
    with open(conf) as f:
        text = f.read().replace('MODULES=most', 'MODULES=list')
    text = text.replace('COMPRESS=zstd', 'COMPRESS=gzip')
    with open(conf, 'w') as f:
        f.write(text)
    with open(os.path.join(root, 'etc/initramfs-tools/modules'), 'w') as f:
        f.write('\n'.join(INITRAMFS_MODULES) + '\n')
    run(['chroot', root, 'update-initramfs', '-u', '-k', 'all'])
    boot = os.path.join(root, 'boot')
    vmlinuz = sorted(n for n in os.listdir(boot) if n.startswith('vmlinuz-'))
    initrd = sorted(n for n in os.listdir(boot) if n.startswith('initrd.img-'))
    if not vmlinuz or not initrd:
        raise RuntimeError('no kernel or initrd in ' + boot)
    for link, target in (('vmlinuz', vmlinuz[-1]), ('initrd.img', initrd[-1])):
        p = os.path.join(boot, link)
        if os.path.lexists(p):
            os.unlink(p)
        os.symlink(target, p)
    # The initramfs holds the drivers the root needs and the test init
    # loads none: the module tree (most of the kernel package) can go.
    for ver in os.listdir(os.path.join(root, 'usr/lib/modules')):
        shutil.rmtree(os.path.join(root, 'usr/lib/modules', ver, 'kernel'),
                      ignore_errors=True)
    os.makedirs(os.path.join(boot, 'grub'), exist_ok=True)
    with open(os.path.join(boot, 'grub/grub.cfg'), 'w') as f:
        f.write(GRUB_CFG)
    # Keep the image small: no documentation, no apt lists or caches.
    for d in ('usr/share/doc', 'usr/share/man', 'usr/share/locale',
              'var/cache/apt', 'var/lib/apt/lists'):
        shutil.rmtree(os.path.join(root, d), ignore_errors=True)
    open(os.path.join(root, 'var/log/conduit-boots'), 'w').close()


def _grub_images(work):
    early = os.path.join(work, 'early.cfg')
    with open(early, 'w') as f:
        f.write(GRUB_EARLY)
    core = os.path.join(work, 'core.img')
    run(['grub-mkimage', '-O', 'i386-pc', '-o', core, '-c', early,
         '-p', '/boot/grub', 'biosdisk'] + GRUB_MODULES)
    efi = os.path.join(work, 'BOOTX64.EFI')
    run(['grub-mkimage', '-O', 'x86_64-efi', '-o', efi, '-c', early,
         '-p', '/boot/grub', 'efi_gop', 'efi_uga', 'all_video'] +
        GRUB_MODULES)
    return core, efi


def _write_at(disk, lba, data):
    with open(disk, 'r+b') as f:
        f.seek(lba * SECTOR)
        f.write(data)


def _install_bios_boot(disk, core):
    """What grub-bios-setup does for a GPT disk with a BIOS boot
    partition: core.img at its start, boot.img's code in the MBR pointing
    at core.img's first sector, diskboot's block list at the rest."""
    with open(core, 'rb') as f:
        core_data = f.read()
    sectors = (len(core_data) + SECTOR - 1) // SECTOR
    if sectors > BIOS_PART[1]:
        raise RuntimeError('core.img (%d sectors) does not fit' % sectors)
    core_data = bytearray(core_data + b'\0' * (sectors * SECTOR -
                                               len(core_data)))
    # diskboot.img's first block list entry: the rest of core.img.
    struct.pack_into('<QHH', core_data, 0x1f4, BIOS_PART[0] + 1,
                     sectors - 1, 0x820)
    _write_at(disk, BIOS_PART[0], bytes(core_data))
    with open('/usr/lib/grub/i386-pc/boot.img', 'rb') as f:
        boot = bytearray(f.read())
    struct.pack_into('<Q', boot, 0x5c, BIOS_PART[0])
    with open(disk, 'r+b') as f:
        mbr = bytearray(f.read(SECTOR))
        # Boot code only: the protective MBR's table and signature stay.
        mbr[:0x1b8] = boot[:0x1b8]
        f.seek(0)
        f.write(mbr)


def _esp(work, efi):
    esp = os.path.join(work, 'esp.img')
    with open(esp, 'wb') as f:
        f.truncate(ESP_PART[1] * SECTOR)
    run(['mkfs.vfat', '-F', '16', '-n', 'CONDUITESP', esp])
    run(['mmd', '-i', esp, '::EFI', '::EFI/BOOT'])
    run(['mcopy', '-i', esp, efi, '::EFI/BOOT/BOOTX64.EFI'])
    return esp


def _assemble(path, root, work):
    disk = path + '.tmp'
    used = int(run(['du', '-sm', '--apparent-size', root]).split()[0])
    # Small on purpose: every run copies it (the nested L1 through 9p).
    root_mib = int(used * 1.2) + ROOT_SLACK_MIB
    disk_mib = ROOT_START * SECTOR // (1 << 20) + root_mib + 1
    with open(disk, 'wb') as f:
        f.truncate(disk_mib << 20)
    run(['sgdisk', '-Z', disk])
    run(['sgdisk',
         '-n', '1:%d:+%d' % BIOS_PART, '-t', '1:ef02',
         '-c', '1:bios-boot',
         '-n', '2:%d:+%d' % ESP_PART, '-t', '2:ef00',
         '-c', '2:esp',
         '-n', '3:%d:0' % ROOT_START, '-t', '3:8300', '-c', '3:root',
         disk])
    end = int(run(['sgdisk', '-i', '3', disk]).split('Last sector: ')[1]
              .split()[0])
    core, efi = _grub_images(work)
    _install_bios_boot(disk, core)
    with open(_esp(work, efi), 'rb') as f:
        _write_at(disk, ESP_PART[0], f.read())
    rootfs = os.path.join(work, 'root.img')
    with open(rootfs, 'wb') as f:
        f.truncate((end - ROOT_START + 1) * SECTOR)
    run(['mkfs.ext4', '-q', '-F', '-L', ROOT_LABEL, '-d', root,
         '-E', 'root_owner=0:0', rootfs])
    # Copy sparsely: most of the root file system is free space.
    run(['dd', 'if=' + rootfs, 'of=' + disk, 'bs=1M', 'conv=notrunc,sparse',
         'oflag=seek_bytes', 'seek=%d' % (ROOT_START * SECTOR)])
    os.replace(disk, path)


def image(log=None):
    """The cached raw image's path, built on first use (a few minutes:
    debootstrap downloads ~150 MiB of packages)."""
    for t in TOOLS:
        if not shutil.which(t) and not os.path.exists('/usr/sbin/' + t):
            raise Unavailable('%s is missing (scripts/install-deps installs '
                              'it)' % t)
    if os.getuid() != 0:
        raise Unavailable('building the Debian image needs root '
                          '(debootstrap)')
    path = os.path.join(cache_dir(), 'debian-%s-v%d.raw' %
                        (SUITE, IMAGE_VERSION))
    if os.path.exists(path):
        return path
    with tempfile.TemporaryDirectory(prefix='conduit-debian-',
                                     dir=cache_dir()) as work:
        root = os.path.join(work, 'root')
        try:
            _debootstrap(root)
            _unmount_below(root)
            _configure(root)
            _unmount_below(root)
            _assemble(path, root, work)
        finally:
            _unmount_below(root)
    return path


def qcow2_image():
    """The cloud-image layout's backing file: the raw image converted to
    qcow2 once per cache (qemu-img is the reference tool that makes it;
    Conduit only reads it, through an overlay)."""
    raw = image()
    path = os.path.splitext(raw)[0] + '.qcow2'
    if os.path.exists(path):
        return path
    if not shutil.which('qemu-img'):
        raise Unavailable('qemu-img is missing (scripts/install-deps '
                          'installs qemu-utils)')
    tmp = path + '.tmp'
    run(['qemu-img', 'convert', '-f', 'raw', '-O', 'qcow2', raw, tmp])
    os.replace(tmp, path)
    return path


if __name__ == '__main__':
    print(qcow2_image())
