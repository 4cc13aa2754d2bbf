#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A Linux guest doing checksummed I/O moves: live, then save and restore.

One nested boot: Debian's kernel under Debian's QEMU (TCG) is L1, which
loads kvm-amd, tun and bridge, puts 10.0.4.1/24 on a bridge br0 and runs
the same kernel as L2 under Conduit -accel kvm with

  virtio-blk-pci   on a raw file,
  vfio-user-pci    on vfio-user-nvme, which serves a second file,
  virtio-net-pci   on a tap L1 adds to br0 (vhost=off: with vhost=on
                   the L1 guest wedged in 3 boots out of 3, see
                   docs/system/migration.rst),
  qemu-xhci        with a usb-tablet, as virt-install gives every domain,
  virtio-serial    with the guest agent's port, where Debian's qemu-ga
                   runs in L2,
  virtio-blk-pci   read-only, an ext4 image with Debian's fio and its
                   libraries.

L2's init pings 10.0.4.1 (L1, on the bridge) twice a second and loops:
each round writes one 4 KiB block on each disk, with O_DIRECT and an
fsync (a flush), whose content names the disk, the write's number and
the block (round w writes block w % BLOCKS), reads it back and compares.
Every PROGRESS_EVERY rounds it prints a line with the round, its uptime,
its wall clock, the last ping reply it got and its interrupt counts
(virtio-blk, the NVMe I/O queues, virtio-net receive) and fio's counts.
All along, one fio run does verify on a region of the NVMe past those
blocks: random 4 KiB direct writes at QD 4, each read back and checked
soon after (verify_backlog, crc32c and fio's header), a mismatch fatal,
held to FIO_IOPS writes a second.

While it does, L1 moves it:

  live   A to B1, B1 to B2, ... (LIVE_HOPS moves, 3 by default): each
         destination (its own vfio-user-nvme on the same file, its own
         tap) is started with -incoming unix:, the source migrates to it
         and quits, and the source's server is stopped after the
         switchover;
  save   the last B is stopped and migrated to a file, then quits with
         its server;
  restore C, with a new server, -incoming defer -S, migrate-incoming
         from the file, cont.

Each move happens once the guest has printed three progress lines on the
process it is leaving.  A, the last B and C get an absolute tablet
position through QMP (input-send-event, a different X on each).  Once C
has printed three lines, L1 writes STOP into a block of the virtio-blk
file the guest reads each round; the guest reads every block back,
prints the md5 of each disk and the number of rounds, and L1 quits C.

Checked: no L2 I/O error, every process saw the guest progress, the
guest's uptime and clock never went back, its interrupts (the three PCI
devices) and ping replies continued on each destination, the three
tablet positions reached Linux's evdev (the xHCI and the tablet moved
with their state), the guest agent answered guest-ping on A and, with
its port still open (query-chardev frontend-open), on C, and each
disk's md5 (as L2 read it, and as the files hold it in L1) is the one
the number of rounds implies: no write was lost or done twice; fio was
still running at the stop, without an error, and wrote and verified on
every process.  The
query-migrate figures of every move are printed.

About two minutes.  LINUX_MIGRATION_LOG=path keeps the L1 console;
LINUX_MIGRATION_HOPS=N makes N live moves instead of 3 (ten took 247 s
in CI on 2026-12-03).

Environment (set by meson): CONDUIT_BINARY, VFIO_USER_NVME, QGA_CHAT.
Exits 77 (skipped) without qemu-system-x86_64, the kernel package,
busybox-static or qemu-guest-agent, or when L1 gets no /dev/kvm (a
failure under CI=true).
"""
import hashlib
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestboot  # noqa: E402
import kvfio_image  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
SERVER = os.environ.get('VFIO_USER_NVME', '')
QGA_CHAT = os.environ.get('QGA_CHAT', '')
QEMU_GA = '/usr/sbin/qemu-ga'
FIO = '/usr/bin/fio'
# fio verify on the NVMe through the moves: LINUX_MIGRATION_FIO=1.  Not in
# make check: with it the nested L1 wedged after the first hop in 4 boots
# out of 5 on 2026-12-03, and the one clean run took 715 s, not 142 s.
FIO_ON = os.environ.get('LINUX_MIGRATION_FIO') == '1'
# fio's region of the NVMe: past the blocks the round loop writes.
FIO_OFFSET_MIB = 1
FIO_SIZE_MIB = 4
# I/Os per second (writes and their verify reads): unthrottled, fio slowed the
# nested L1 fivefold (715 s for the test instead of 142 s).
FIO_IOPS = 5
# Guards against a hung guest only; nothing asserts on time.
TIMEOUT = int(os.environ.get('LINUX_MIGRATION_TIMEOUT', '1700'))
L2_MIB = 256
DISK_MIB = 8
BLOCK = 4096
# Round w writes block w % BLOCKS of each disk; block BLOCKS of the
# virtio-blk disk is where L1 writes STOP.
BLOCKS = 16
# Live moves before the save.  Each costs ~17 s of the nested L1, and
# make check must stay under 45 minutes: three here, while ten hops of
# the vfio-user NVMe run in qtest (vfio-user-migration-test's ten-hops);
# LINUX_MIGRATION_HOPS=10 runs the ten with Linux (~250 s).
LIVE_HOPS = int(os.environ.get('LINUX_MIGRATION_HOPS', '3'))
NAMES = ['a'] + ['b%d' % k for k in range(1, LIVE_HOPS + 1)] + ['c']
PROGRESS_EVERY = 4
DISKS = ('vda', 'nvme0n1')

L2_MODULES = ['virtio_pci', 'virtio_blk', 'virtio_net', 'nvme', 'usb-common',
              'usbcore', 'xhci-pci', 'xhci-hcd', 'hid', 'usbhid',
              'hid-generic', 'evdev', 'virtio_console', 'crc32c_generic',
              'ext4']
# The tablet's X on A, B and C (ABS_X events in L2).
TABLET_X = (11111, 22222, 23456)
L1_MODULES = kvfio_image.KVM_MODULES + ['tun', 'bridge']

L2_INIT = kvfio_image.INIT_PROLOGUE + r'''echo "L2-BOOTED"
for m in @MODULES@; do
    insmod /lib/modules/$m || echo "L2-ERROR insmod $m"
done
for i in $(seq 60); do
    [ -b /dev/vda ] && [ -b /dev/nvme0n1 ] && [ -d /sys/class/net/eth0 ] &&
        break
    sleep 1
done
[ -b /dev/vda ] || echo "L2-ERROR no /dev/vda"
[ -b /dev/nvme0n1 ] || echo "L2-ERROR no /dev/nvme0n1"
tab=
for i in $(seq 60); do
    for e in /sys/class/input/event*; do
        case "$(cat $e/device/name 2>/dev/null)" in
        *Tablet*) tab=${e##*/} ;;
        esac
    done
    [ -n "$tab" ] && break
    sleep 1
done
[ -n "$tab" ] || echo "L2-ERROR no USB tablet input device"
port=
for p in /sys/class/virtio-ports/vport*; do
    [ "$(cat $p/name)" = org.qemu.guest_agent.0 ] && port=${p##*/}
done
if [ -n "$port" ]; then
    mkdir -p /var/run /run
    /usr/sbin/qemu-ga -m virtio-serial -p /dev/$port -t /tmp -f /tmp/qga.pid \
        > /tmp/qga.log 2>&1 &
else
    echo "L2-ERROR no guest agent port"
fi
# Each struct input_event as it comes (dd writes every block it reads).
dd if=/dev/input/$tab of=/tmp/tab.ev bs=24 2>/dev/null &
tabdd=$!
ip link set lo up
ip link set eth0 up
ip addr add 10.0.4.2/24 dev eth0
ping -i 0.5 10.0.4.1 > /tmp/ping.log 2>&1 &
# fio verify on the NVMe all along: random 4 KiB direct writes, each read
# back and checked (crc32c, and fio's header: offset and write number)
# soon after (verify_backlog); a mismatch ends fio at once (verify_fatal).
# Debian's fio and its libraries come on a read-only ext4 disk.
fio=
if [ @FIO_ON@ = 1 ]; then
mkdir -p /fio
mount -t ext4 -o ro /dev/vdb /fio || echo "L2-ERROR mount the fio disk"
/fio/lib64/ld-linux-x86-64.so.2 \
    --library-path /fio/lib/x86_64-linux-gnu:/fio/usr/lib/x86_64-linux-gnu/ceph \
    /fio/usr/bin/fio --name=nvme-verify --filename=/dev/nvme0n1 \
    --offset=@FIO_OFFSET_MIB@M --size=@FIO_SIZE_MIB@M --rw=randwrite --bs=4k \
    --ioengine=libaio --iodepth=4 --direct=1 --verify=crc32c \
    --verify_backlog=16 --verify_fatal=1 --time_based --runtime=100000 \
    --rate_iops=@FIO_IOPS@ --status-interval=1 --output-format=terse \
    > /tmp/fio.out 2>&1 &
fio=$!
# Loading it takes L2 tens of seconds here: it is at work before the
# first move.
for i in $(seq 300); do
    grep -q '^3;' /tmp/fio.out && break
    kill -0 $fio 2>/dev/null || break
    sleep 1
done
grep -q '^3;' /tmp/fio.out || echo "L2-ERROR fio did not start: $(tail -3 /tmp/fio.out)"
fi
status() {
    seq=$(sed -n 's/.*seq=\([0-9]*\).*/\1/p' /tmp/ping.log | tail -n 1)
    irqs=$(awk '/virtio.*-req/ {b += $2} /nvme0q[1-9]/ {n += $2}
                /virtio.*-input/ {e += $2}
                END {print "blk=" b+0 " nvme=" n+0 " net=" e+0}' /proc/interrupts)
    f=$(grep '^3;' /tmp/fio.out | tail -n 1 | cut -d';' -f6,47)
    echo "L2-PROGRESS $1 $(cut -d' ' -f1 /proc/uptime) $(date +%s) ping=${seq:--1} $irqs fio=${f:-0;0}"
}
echo "L2-READY"
w=0
while :; do
    k=$((w % @BLOCKS@))
    for d in @DISKS@; do
        yes "$d write $w block $k" | head -c @BLOCK@ > /tmp/blk
        dd if=/tmp/blk of=/dev/$d bs=@BLOCK@ seek=$k count=1 oflag=direct \
            conv=fsync 2>/dev/null || echo "L2-ERROR write $d $w"
        dd if=/dev/$d of=/tmp/rb bs=@BLOCK@ skip=$k count=1 iflag=direct \
            2>/dev/null || echo "L2-ERROR read $d $w"
        cmp -s /tmp/blk /tmp/rb || echo "L2-ERROR verify $d $w"
    done
    w=$((w + 1))
    [ $((w % @PROGRESS_EVERY@)) = 0 ] && status $w
    [ "$(dd if=/dev/vda bs=@BLOCK@ skip=@BLOCKS@ count=1 iflag=direct \
        2>/dev/null | head -c 4)" = STOP ] && break
done
status $w
echo "L2-ROUNDS $w"
if [ -z "$fio" ]; then
    :
elif kill -0 $fio 2>/dev/null; then
    echo "L2-FIO-RUNNING"
    kill -INT $fio
    wait $fio
    echo "L2-FIO-EXIT $?"
else
    wait $fio
    echo "L2-ERROR fio ended before the stop (exit $?)"
fi
if [ -n "$fio" ]; then
    grep -v '^3;' /tmp/fio.out | sed 's/^/L2-FIO-OUT /'
    echo "L2-FIO-FINAL $(grep '^3;' /tmp/fio.out | tail -n 1 | cut -d';' -f5,6,47)"
fi
for d in @DISKS@; do
    echo "L2-MD5 $d $(dd if=/dev/$d bs=@BLOCK@ count=@BLOCKS@ iflag=direct \
        2>/dev/null | md5sum | cut -d' ' -f1)"
done
echo "L2-PING-REPLIES $(grep -c 'bytes from' /tmp/ping.log)"
kill $tabdd
od -An -v -tx1 -w24 /tmp/tab.ev | while read l; do echo "L2-EV $l"; done
s=/sys/class/net/eth0/statistics
echo "L2-NETSTAT rx=$(cat $s/rx_packets) tx=$(cat $s/tx_packets) rx_dropped=$(cat $s/rx_dropped)"
grep -E "virtio|nvme" /proc/interrupts | sed 's/^/L2-INTERRUPTS /'
if dmesg | grep -q "Call Trace"; then
    echo "L2-ERROR kernel warning in dmesg"
    dmesg | grep -A3 -E "cut here|BUG:" | sed 's/^/L2-WARNING /'
fi
dmesg | grep -iE "nvme|virtio|clocksource" | sed 's/^/L2-DMESG /'
echo "L2-DONE"
sleep 600
'''

# L1: the bridge, then the three processes.  QMP is on stdio through a
# fifo per process (busybox's nc has no UNIX sockets); fd 3, 4 and 5 are
# A's, B's and C's.
L1_INIT = kvfio_image.L1_MODULES_PROLOGUE + r'''ip link set lo up
ip link add br0 type bridge || brctl addbr br0
# A bridge without an address of its own takes its ports' lowest, so it
# would change as taps come and go, and L2's ARP entry for 10.0.4.1
# with it: L1 would stop seeing the pings for reasons of its own.
ip link set br0 address 02:00:0a:00:04:01
ip addr add 10.0.4.1/24 dev br0
ip link set br0 up
truncate -s @DISK_MIB@M /tmp/vda.img /tmp/nvme.img
FIODISK=
[ -e /conduit/fio.ext4 ] && FIODISK="-blockdev driver=file,filename=/conduit/fio.ext4,node-name=fio0,read-only=on -device virtio-blk-pci,drive=fio0,id=vblk1,addr=0x9"

server() {
    /conduit/vfio-user-nvme --socket /tmp/nvme-$1.sock \
        --backend file:/tmp/nvme.img 2>/tmp/server-$1.err &
    eval srv_$1=$!
    for i in $(seq 100); do [ -S /tmp/nvme-$1.sock ] && break; usleep 100000; done
}
# vm NAME ARGS...: fd is set by the caller's exec afterwards.
vm() {
    name=$1
    shift
    rm -f /tmp/qmp-$name.in
    mkfifo /tmp/qmp-$name.in
    touch /tmp/l2-$name.log
    /conduit/conduit-system-x86_64 -accel kvm -M pc -m @L2_MIB@ -nodefaults \
        -no-reboot -display none -serial file:/tmp/l2-$name.log -qmp stdio \
        -kernel /conduit/bzImage -initrd /conduit/l2.cpio \
        -append "console=ttyS0 panic=-1 loglevel=4 noxsave nosoftlockup no_timer_check" \
        -blockdev driver=file,filename=/tmp/vda.img,node-name=disk0 \
        -device virtio-blk-pci,drive=disk0,id=vblk0,addr=0x4 \
        -device vfio-user-pci,socket=/tmp/nvme-$name.sock,id=nvme0,addr=0x5 \
        -netdev tap,id=net0,ifname=tap$name,script=no,downscript=no \
        -device virtio-net-pci,netdev=net0,id=nic0,mac=52:54:00:c0:ff:01,addr=0x6 \
        -device qemu-xhci,p2=15,p3=15,id=usb,addr=0x7 \
        -device usb-tablet,id=input0,bus=usb.0,port=1 \
        -device virtio-serial-pci,id=virtio-serial0,addr=0x8 \
        -chardev socket,id=charchannel0,path=/tmp/ga-$name.sock,server=on,wait=off \
        -device virtserialport,bus=virtio-serial0.0,nr=1,chardev=charchannel0,id=channel0,name=org.qemu.guest_agent.0 \
        $FIODISK \
        "$@" </tmp/qmp-$name.in >/tmp/qmp-$name.out 2>/tmp/conduit-$name.err &
    eval vm_$name=$!
    tail -f /tmp/l2-$name.log | sed "s/^/LIVE-L2 $name /" &
    eval tail_$name=$!
}
tap_up() {
    for i in $(seq 100); do [ -d /sys/class/net/tap$1 ] && break; usleep 100000; done
    brctl addif br0 tap$1 || echo "NESTED-ERROR addif tap$1"
    ip link set tap$1 up
}
# wait_lines NAME PATTERN COUNT SECONDS: COUNT lines of the guest's log
# match PATTERN, or a NESTED-ERROR.
wait_lines() {
    for i in $(seq $4); do
        [ "$(grep -c "$2" /tmp/l2-$1.log)" -ge $3 ] && return 0
        sleep 1
    done
    echo "NESTED-ERROR $1: fewer than $3 lines '$2' after $4 s"
    return 1
}
# wait_migrated NAME FD: query-migrate until one more reply than before
# says it completed or failed.
ended() {
    grep -cE '"status": ?"(completed|failed|cancelled)"' /tmp/qmp-$1.out
}
wait_migrated() {
    before=$(ended $1)
    for i in $(seq 600); do
        echo '{"execute":"query-migrate","id":"qm-'$1'"}' >&$2
        sleep 1
        [ $(ended $1) -gt $before ] && return 0
    done
    echo "NESTED-ERROR $1: migration did not finish"
    return 1
}
# tablet FD X: an absolute position, as a VNC client's pointer gives.
tablet() {
    echo '{"execute":"input-send-event","id":"tablet","arguments":{"events":[{"type":"abs","data":{"axis":"x","value":'$2'}},{"type":"abs","data":{"axis":"y","value":1000}}]}}' >&$1
}
# agent NAME: guest-ping through the process's agent socket, as libvirt's
# qemu-agent-command does.
agent() {
    /conduit/qga-chat /tmp/ga-$1.sock 120 '{"execute":"guest-ping"}' \
        > /tmp/qga-$1.out 2>&1
    echo "NESTED-QGA-EXIT $1 $?"
    sed "s/^/NESTED-QGA $1 /" /tmp/qga-$1.out
}
# finish NAME FD: quit the process, then its server.
finish() {
    echo '{"execute":"x-query-virtio","id":"virtio-'$1'"}' >&$2
    # The network as L1 sees it, for the failure message.
    for t in /sys/class/net/tap*; do
        st=$t/statistics
        echo "NESTED-TAP $1 ${t##*/} $(cat $t/operstate) rx=$(cat $st/rx_packets) tx=$(cat $st/tx_packets) tx_dropped=$(cat $st/tx_dropped)"
    done
    brctl showmacs br0 | sed "s/^/NESTED-FDB $1 /"
    sed "s/^/NESTED-ARP $1 /" /proc/net/arp
    sleep 1
    echo '{"execute":"quit"}' >&$2
    for i in $(seq 60); do eval kill -0 \$vm_$1 2>/dev/null || break; sleep 1; done
    eval kill -9 \$vm_$1 2>/dev/null
    eval wait \$vm_$1
    echo "NESTED-CONDUIT-EXIT $1 $?"
    eval kill \$srv_$1
    eval wait \$srv_$1
    echo "NESTED-SERVER-EXIT $1 $?"
    eval kill \$tail_$1 2>/dev/null
}

server a
vm a
exec 3>/tmp/qmp-a.in
echo '{"execute":"qmp_capabilities"}' >&3
tap_up a
wait_lines a L2-PROGRESS 3 900
tablet 3 @X_A@
agent a

# LIVE_HOPS live moves, each to a new process (b1, b2, ...) with its own
# server and tap; fd 3 and 4 take turns.
prev=a pfd=3
for k in $(seq @LIVE_HOPS@); do
    n=b$k
    if [ $pfd = 3 ]; then fd=4; else fd=3; fi
    server $n
    vm $n -incoming unix:/tmp/mig-$n.sock
    eval "exec $fd>/tmp/qmp-$n.in"
    echo '{"execute":"qmp_capabilities"}' >&$fd
    tap_up $n
    for i in $(seq 100); do [ -S /tmp/mig-$n.sock ] && break; usleep 100000; done
    echo "NESTED-MOVE live $prev $n"
    echo '{"execute":"migrate","id":"mig-'$prev'","arguments":{"uri":"unix:/tmp/mig-'$n'.sock"}}' >&$pfd
    wait_migrated $prev $pfd
    finish $prev $pfd
    eval "exec $pfd>&-"
    wait_migrated $n $fd
    wait_lines $n L2-PROGRESS 3 900 || break
    prev=$n pfd=$fd
done
tablet $pfd @X_B@

echo "NESTED-MOVE save $prev"
echo '{"execute":"stop","id":"stop"}' >&$pfd
echo '{"execute":"migrate","id":"mig-'$prev'","arguments":{"uri":"file:/tmp/saved.state"}}' >&$pfd
wait_migrated $prev $pfd
finish $prev $pfd
eval "exec $pfd>&-"

server c
vm c -incoming defer -S
exec 5>/tmp/qmp-c.in
echo '{"execute":"qmp_capabilities"}' >&5
tap_up c
echo "NESTED-MOVE restore"
echo '{"execute":"migrate-incoming","id":"inc-c","arguments":{"uri":"file:/tmp/saved.state"}}' >&5
wait_migrated c 5
echo '{"execute":"cont","id":"cont-c"}' >&5
wait_lines c L2-PROGRESS 3 900
tablet 5 @X_C@
echo '{"execute":"query-chardev","id":"chardev-c"}' >&5
agent c
wait_lines c L2-PROGRESS 5 900
echo "STOP" | dd of=/tmp/vda.img bs=@BLOCK@ seek=@BLOCKS@ conv=notrunc,fsync 2>/dev/null
wait_lines c L2-DONE 1 900
echo '{"execute":"query-status","id":"st-c"}' >&5
finish c 5
exec 5>&-

for n in @NAMES@; do
    sed "s/^/NESTED-L2 $n /" /tmp/l2-$n.log
    sed "s/^/NESTED-QMP $n /" /tmp/qmp-$n.out
    sed "s/^/NESTED-STDERR $n /" /tmp/conduit-$n.err /tmp/server-$n.err
done
for f in vda nvme; do
    echo "NESTED-FILE-MD5 $f $(dd if=/tmp/$f.img bs=@BLOCK@ count=@BLOCKS@ \
        2>/dev/null | md5sum | cut -d' ' -f1)"
done
echo "NESTED-END"
poweroff -f
'''


def fill(template):
    for key, val in (('@BLOCKS@', BLOCKS),
                     ('@BLOCK@', BLOCK), ('@DISKS@', ' '.join(DISKS)),
                     ('@PROGRESS_EVERY@', PROGRESS_EVERY),
                     ('@DISK_MIB@', DISK_MIB), ('@L2_MIB@', L2_MIB),
                     ('@X_A@', TABLET_X[0]), ('@X_B@', TABLET_X[1]),
                     ('@X_C@', TABLET_X[2]), ('@LIVE_HOPS@', LIVE_HOPS),
                     ('@NAMES@', ' '.join(NAMES)),
                     ('@FIO_OFFSET_MIB@', FIO_OFFSET_MIB),
                     ('@FIO_SIZE_MIB@', FIO_SIZE_MIB),
                     ('@FIO_IOPS@', FIO_IOPS),
                     ('@FIO_ON@', int(FIO_ON))):
        template = template.replace(key, str(val))
    return template


def build_l2_initrd(mods_dir):
    return kvfio_image.busybox_initrd(
        mods_dir, L2_MODULES, fill(L2_INIT),
        binaries=[('usr/sbin/qemu-ga', QEMU_GA)])


def build_fio_disk(path, scratch):
    """An ext4 image at @path holding Debian's fio and every library it
    loads, at their own paths (L2 runs it with this disk's loader): a
    disk, not the initrd, so that only the pages fio touches enter L2's
    RAM, which every move copies."""
    import shutil
    import subprocess
    root = os.path.join(scratch, 'fio-root')
    for src in [FIO] + kvfio_image.shared_libraries(FIO):
        dest = root + src
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(os.path.realpath(src), dest)
    size = sum(os.path.getsize(os.path.join(d, f))
               for d, _, files in os.walk(root) for f in files)
    subprocess.run(['mkfs.ext4', '-q', '-F', '-O', '^has_journal', '-m', '0',
                    '-L', 'fio', '-d', root, path,
                    '%dK' % (size * 5 // 4 // 1024 + 8192)], check=True)
    shutil.rmtree(root)


def build_l1_initrd(mods_dir, bzimage, l2_initrd, fio_disk):
    import gzip
    return gzip.compress(kvfio_image.busybox_initrd(
        mods_dir, L1_MODULES, fill(L1_INIT),
        binaries=[('conduit/' + os.path.basename(b), b)
                  for b in (CONDUIT, SERVER, QGA_CHAT)],
        files=[('conduit/bzImage', bzimage), ('conduit/l2.cpio', l2_initrd)] +
        ([('conduit/fio.ext4', fio_disk)] if fio_disk else [])),
        1)


def expected_md5(disk, rounds):
    """The md5 of the first BLOCKS blocks after @rounds rounds: block k
    holds the last round that wrote it (k, k + BLOCKS, ...), or zeros."""
    h = hashlib.md5()
    for k in range(BLOCKS):
        if rounds > k:
            last = k + BLOCKS * ((rounds - 1 - k) // BLOCKS)
            line = '%s write %d block %d\n' % (disk, last, k)
            data = (line * (BLOCK // len(line) + 1))[:BLOCK].encode()
        else:
            data = bytes(BLOCK)
        h.update(data)
    return h.hexdigest()


PROGRESS_RE = re.compile(r'L2-PROGRESS (\d+) ([\d.]+) (\d+) ping=(-?\d+) '
                         r'blk=(\d+) nvme=(\d+) net=(\d+) '
                         r'fio=(\d+);(\d+)$')


class LinuxMigrationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.qemu = guestboot.require_qemu_and([(CONDUIT, 'CONDUIT_BINARY'),
                                               (SERVER, 'VFIO_USER_NVME'),
                                               (QGA_CHAT, 'QGA_CHAT')])
        for path, pkg in ((QEMU_GA, 'qemu-guest-agent'),) + (
                ((FIO, 'fio'),) if FIO_ON else ()):
            if not os.access(path, os.X_OK):
                raise unittest.SkipTest('%s is not installed (scripts/'
                                        'install-deps installs it)' % pkg)
        try:
            cls.l1 = kvfio_image.NestedL1('linux-migration-')
        except kvfio_image.Unavailable as e:
            raise unittest.SkipTest(str(e))
        fio_disk = None
        if FIO_ON:
            fio_disk = cls.l1.path('fio.ext4')
            build_fio_disk(fio_disk, cls.l1.path(''))
        initrd = build_l1_initrd(cls.l1.mods, cls.l1.bzimage,
                                 build_l2_initrd(cls.l1.mods), fio_disk)
        cls.l1_run = cls.l1.boot(cls.qemu, initrd, TIMEOUT, memory='2G',
                                 log_env='LINUX_MIGRATION_LOG')
        cls.out = cls.l1_run.output
        cls.l2 = {n: kvfio_image.prefixed(cls.out, 'NESTED-L2 %s ' % n)
                  for n in NAMES}
        cls.qmp = {n: kvfio_image.json_prefixed(cls.out, 'NESTED-QMP %s ' % n)
                   for n in NAMES}
        cls.ctx = '\n'.join(line for n in NAMES for line in
                            ['--- %s' % n] + cls.l2[n] +
                            kvfio_image.prefixed(cls.out,
                                                 'NESTED-STDERR %s ' % n) +
                            [x for x in cls.out.splitlines()
                             if x.startswith(('NESTED-TAP %s ' % n,
                                              'NESTED-FDB %s ' % n,
                                              'NESTED-ARP %s ' % n))])

    @classmethod
    def tearDownClass(cls):
        cls.l1.cleanup()

    def setUp(self):
        kvfio_image.check_l1(self, self.l1_run)

    def progress(self, name):
        rows = []
        for line in self.l2[name]:
            m = PROGRESS_RE.match(line)
            if m:
                g = m.groups()
                rows.append({'round': int(g[0]), 'uptime': float(g[1]),
                             'date': int(g[2]), 'ping': int(g[3]),
                             'blk': int(g[4]), 'nvme': int(g[5]),
                             'net': int(g[6]), 'fio_read': int(g[7]),
                             'fio_written': int(g[8])})
        return rows

    def value(self, name, key):
        for line in self.l2[name]:
            if line.startswith('L2-%s ' % key):
                return line[len('L2-%s ' % key):].strip()
        return None

    def migrated(self, name):
        """The last query-migrate reply of process @name."""
        last = None
        for msg in self.qmp[name]:
            if str(msg.get('id', '')).startswith('qm-'):
                last = msg.get('return')
        return last or {}

    def test_01_guest_ran_to_the_end(self):
        self.assertNotIn('NESTED-ERROR', self.out, self.ctx)
        for n in NAMES:
            errors = [x for x in self.l2[n] if x.startswith('L2-ERROR')]
            self.assertFalse(errors, self.ctx)
        self.assertIn('L2-BOOTED', self.l2['a'], self.ctx)
        # The others have only what the guest printed after it moved.
        for n in NAMES[1:]:
            self.assertNotIn('L2-BOOTED', self.l2[n], (n, self.ctx))
        self.assertIn('L2-DONE', self.l2['c'], self.ctx)
        for n in NAMES:
            self.assertRegex(self.out, r'NESTED-CONDUIT-EXIT %s 0' % n)
            self.assertRegex(self.out, r'NESTED-SERVER-EXIT %s 0' % n)

    def test_moves_completed(self):
        moves = [(n, 'live to %s' % NAMES[i + 1])
                 for i, n in enumerate(NAMES[:-2])]
        moves += [(NAMES[-2], 'save'), ('c', 'restore')]
        for n, what in moves:
            info = self.migrated(n)
            self.assertEqual(info.get('status'), 'completed',
                             (n, info, self.ctx))
            print('MIGRATION: %s (%s) total %s ms downtime %s ms '
                  'transferred %s bytes' % (
                      what, n, info.get('total-time'), info.get('downtime'),
                      info.get('ram', {}).get('transferred')))

    def test_progress_on_every_process_clock_continues(self):
        rows = []
        for n in NAMES:
            mine = self.progress(n)
            # L1 moved the guest only after three lines on each.
            self.assertGreaterEqual(len(mine), 3 if n != 'c' else 4,
                                    (n, self.ctx))
            rows += mine
        rounds = [r['round'] for r in rows]
        self.assertEqual(rounds, sorted(rounds), self.ctx)
        for key in ('uptime', 'date'):
            vals = [r[key] for r in rows]
            self.assertEqual(vals, sorted(vals), (key, self.ctx))
        print('ROUNDS: ' + ', '.join(
            '%s %d-%d' % (n, p[0]['round'], p[-1]['round'])
            for n, p in ((n, self.progress(n)) for n in NAMES)))

    def test_interrupts_and_ping_continue_on_each_destination(self):
        for n in NAMES[1:]:
            rows = self.progress(n)
            first, last = rows[0], rows[-1]
            for key in ('blk', 'nvme', 'net', 'ping'):
                self.assertGreater(last[key], first[key],
                                   (n, key, first, last, self.ctx))
        replies = int(self.value('c', 'PING-REPLIES') or 0)
        self.assertGreater(replies, 0, self.ctx)

    def test_tablet_input_reaches_linux_on_every_process(self):
        xs = []
        for line in self.l2['c']:
            if not line.startswith('L2-EV '):
                continue
            b = bytes(int(x, 16) for x in line.split()[1:])
            # struct input_event: type, code, value after the timeval.
            if len(b) == 24 and int.from_bytes(b[16:18], 'little') == 3 \
                    and int.from_bytes(b[18:20], 'little') == 0:
                xs.append(int.from_bytes(b[20:24], 'little', signed=True))
        for x in TABLET_X:
            self.assertIn(x, xs, (xs, self.ctx))
        for n in ('a', NAMES[-2], 'c'):
            self.assertTrue([m for m in self.qmp[n] if m.get('id') == 'tablet'
                             and 'return' in m], (n, self.qmp[n]))

    def test_guest_agent_answers_after_the_moves(self):
        qga = {n: kvfio_image.json_prefixed(self.out, 'NESTED-QGA %s ' % n)
               for n in 'ac'}
        for n in 'ac':
            self.assertIn('NESTED-QGA-EXIT %s 0' % n, self.out, (n, qga))
            self.assertEqual(qga[n][:1], [{'return': {}}], (n, qga))
        chardev = [m for m in self.qmp['c'] if m.get('id') == 'chardev-c']
        self.assertTrue(chardev, self.qmp['c'])
        ga = [x for x in chardev[0]['return']
              if x['label'] == 'charchannel0']
        # The guest's qemu-ga had the port open all along.
        self.assertTrue(ga and ga[0]['frontend-open'], chardev)

    @unittest.skipUnless(FIO_ON, 'fio verify runs with LINUX_MIGRATION_FIO=1 '
                         '(by hand: it wedges the nested L1 too often for '
                         'make check)')
    def test_fio_verify_on_the_nvme_through_the_moves(self):
        # One fio run, started on A, still running at the stop on C: it
        # ended neither by a verify mismatch nor by an I/O error, and it
        # wrote and verified on every process (its KiB counters, as the
        # guest printed them on each, went up on each).
        self.assertIn('L2-FIO-RUNNING', self.l2['c'], self.ctx)
        final = self.value('c', 'FIO-FINAL')
        self.assertIsNotNone(final, self.ctx)
        err, read_kib, written_kib = (int(x) for x in final.split(';'))
        self.assertEqual(err, 0, self.ctx)
        self.assertGreater(written_kib, 0, self.ctx)
        self.assertGreater(read_kib, 0, self.ctx)
        last = {'fio_read': 0, 'fio_written': 0}
        for n in NAMES:
            rows = self.progress(n)
            self.assertTrue(rows, (n, self.ctx))
            for key in ('fio_written', 'fio_read'):
                self.assertGreater(max(r[key] for r in rows), last[key],
                                   (n, key, self.ctx))
            last = {k: max(r[k] for r in rows) for k in last}
        self.assertGreaterEqual(written_kib, last['fio_written'])
        print('FIO: %d KiB written, %d KiB verified, over %d processes' % (
            written_kib, read_kib, len(NAMES)))

    def test_no_write_lost_or_repeated(self):
        rounds = int(self.value('c', 'ROUNDS') or 0)
        self.assertGreater(rounds, 0, self.ctx)
        files = dict(re.findall(r'^NESTED-FILE-MD5 (\w+) (\w+)', self.out,
                                re.M))
        for disk, f in (('vda', 'vda'), ('nvme0n1', 'nvme')):
            want = expected_md5(disk, rounds)
            got = None
            for line in self.l2['c']:
                m = re.match(r'L2-MD5 %s (\w+)' % disk, line)
                if m:
                    got = m.group(1)
            self.assertEqual(got, want, (disk, rounds, self.ctx))
            self.assertEqual(files.get(f), want, (f, files))


if __name__ == '__main__':
    sys.exit(guestboot.main())
