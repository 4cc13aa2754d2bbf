#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Linux's own drivers use the devices libvirt adds to every domain.

One nested boot, as test_linux_virtio.py: Debian's kernel under Debian's
QEMU (TCG) is L1, which runs Conduit -accel kvm booting the same kernel
as L2 with the devices libvirt 9.0 and virt-install write:

  piix3-usb-uhci at 00:01.2 (libvirt's implicit pc controller) with a
      usb-tablet, qemu-xhci with a usb-kbd: uhci_hcd, xhci_hcd and usbhid
      bind; QMP input-send-event reaches /dev/input/event* in L2
  virtio-balloon-pci: QMP balloon shrinks L2's MemTotal, BALLOON_CHANGE
      and query-balloon follow, the pages are discarded in Conduit, and
      qom-get guest-stats carries the guest's statistics
  virtio-rng-pci with -object rng-random: /dev/hwrng reads
  virtio-serial-pci with the guest agent's virtserialport on a UNIX
      socket: Debian's qemu-ga runs in L2 and answers guest-ping and
      guest-network-get-interfaces (what virsh qemu-agent-command and
      domifaddr --source agent send) through qga-chat, VSERPORT_CHANGE
      is seen, and guest-shutdown powers L2 off
  virtio-net-pci mq=on on a 2-queue tap: L2 (2 vCPUs) uses both queue
      pairs; set_link down drops the guest's carrier

About two minutes on a quiet host; GUESTBOOT_LIVE_LOG=path follows the
L1 console, LINUX_DEVICES_LOG=path keeps it.

Environment: CONDUIT_BINARY, QGA_CHAT.  Exits 77 (skipped) without
qemu-system-x86_64, the kernel package, busybox-static or
qemu-guest-agent, or when L1 gets no /dev/kvm.
"""
import os
import re
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestboot  # noqa: E402
import kvfio_image  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
QGA_CHAT = os.environ.get('QGA_CHAT', '')
QEMU_GA = '/usr/sbin/qemu-ga'
# Guards against a hung guest only; nothing asserts on time.
TIMEOUT = int(os.environ.get('LINUX_DEVICES_TIMEOUT', '1700'))
L2_MIB = 512
BALLOON_MIB = 256

L2_MODULES = ['virtio_pci', 'virtio_balloon', 'virtio-rng', 'virtio_console',
              'virtio_net', 'usb-common', 'usbcore', 'uhci-hcd', 'xhci-pci',
              'xhci-hcd', 'hid', 'usbhid', 'hid-generic', 'evdev']
L1_MODULES = kvfio_image.KVM_MODULES + ['tun']

# L2: the drivers bind; each check prints L2-* lines; L1 acts on L2-WANT-*.
L2_INIT = kvfio_image.INIT_PROLOGUE + r'''echo "L2-BOOTED"
for m in @MODULES@; do
    insmod /lib/modules/$m || echo "L2-ERROR insmod $m"
done
for i in $(seq 90); do
    [ "$(ls /sys/bus/usb/drivers/usbhid 2>/dev/null | grep -c :)" -ge 2 ] &&
        break
    sleep 1
done
for d in /sys/bus/pci/drivers/uhci_hcd/0000:* /sys/bus/pci/drivers/xhci_hcd/0000:*; do
    [ -e "$d" ] && echo "L2-HCD $(basename $(dirname $d)) $(basename $d)"
done
for d in /sys/bus/usb/devices/*; do
    [ -e $d/idVendor ] || continue
    echo "L2-USBDEV $(basename $d) $(cat $d/idVendor):$(cat $d/idProduct) $(cat $d/product 2>/dev/null | tr ' ' _)"
done
for d in /sys/bus/usb/drivers/usbhid/*:*; do
    [ -e "$d" ] && echo "L2-USBHID $(basename $d)"
done
tablet= kbd= atkbd=
for e in /sys/class/input/event*; do
    n=$(cat $e/device/name)
    echo "L2-INPUT $(basename $e) $(echo $n | tr ' ' _)"
    case "$n" in
    *Tablet*) tablet=$(basename $e) ;;
    *Keyboard*) kbd=$(basename $e) ;;
    "AT Translated Set 2 keyboard") atkbd=$(basename $e) ;;
    esac
done
if [ -n "$tablet" ] && [ -n "$kbd" ] && [ -n "$atkbd" ]; then
    # Whatever arrives within the time (dd writes each event as it comes).
    timeout 40 dd if=/dev/input/$tablet bs=24 count=16 of=/tmp/tablet.ev 2>/dev/null &
    t1=$!
    timeout 40 dd if=/dev/input/$kbd bs=24 count=16 of=/tmp/kbd.ev 2>/dev/null &
    t2=$!
    # send-key's press and release through the i8042 and Linux's atkbd:
    # MSC_SCAN, KEY and SYN each.
    timeout 40 dd if=/dev/input/$atkbd bs=24 count=6 of=/tmp/atkbd.ev 2>/dev/null &
    t3=$!
    sleep 1
    echo "L2-WANT-INPUT"
    wait $t1 $t2 $t3
    od -An -v -tx1 -w24 /tmp/tablet.ev | while read l; do echo "L2-EV tablet $l"; done
    od -An -v -tx1 -w24 /tmp/kbd.ev | while read l; do echo "L2-EV kbd $l"; done
    od -An -v -tx1 -w24 /tmp/atkbd.ev | while read l; do echo "L2-EV atkbd $l"; done
else
    echo "L2-ERROR no tablet, USB keyboard or AT keyboard input device"
fi

echo "L2-HWRNG $(cat /sys/class/misc/hw_random/rng_current)"
echo "L2-HWRNG-BYTES $(dd if=/dev/hwrng bs=32 count=1 2>/dev/null | od -An -v -tx1 | tr -d ' \n')"

before=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
echo "L2-MEMTOTAL-BEFORE $before"
echo "L2-WANT-BALLOON"
cur=$before
for i in $(seq 180); do
    cur=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
    [ $cur -le $((before - @SHRINK_KB@)) ] && break
    sleep 1
done
echo "L2-MEMTOTAL-AFTER $cur"

ip link set lo up
ip link set eth0 up
ip addr add 10.0.3.2/24 dev eth0
sleep 1
echo "L2-NET-QUEUES $(ls /sys/class/net/eth0/queues | tr '\n' ' ')"
echo "L2-NET-FEATURES $(cat /sys/bus/virtio/devices/*/features | sort -u | tr '\n' ' ')"
echo "L2-CARRIER-UP $(cat /sys/class/net/eth0/carrier)"
echo "L2-WANT-LINKDOWN"
for i in $(seq 60); do
    [ "$(cat /sys/class/net/eth0/carrier)" = 0 ] && break
    sleep 1
done
echo "L2-CARRIER-AFTER $(cat /sys/class/net/eth0/carrier)"

port=
for p in /sys/class/virtio-ports/vport*; do
    echo "L2-VPORT $(basename $p) $(cat $p/name)"
    [ "$(cat $p/name)" = org.qemu.guest_agent.0 ] && port=$(basename $p)
done
mkdir -p /var/run /run
# qemu-ga's guest-shutdown runs /sbin/shutdown.
mkdir -p /sbin
printf '#!/bin/sh\necho "L2-SHUTDOWN-BY-AGENT $*" > /dev/ttyS0\nsync\npoweroff -f\n' > /sbin/shutdown
chmod +x /sbin/shutdown
if [ -n "$port" ]; then
    /usr/sbin/qemu-ga -m virtio-serial -p /dev/$port -t /tmp -f /tmp/qga.pid \
        > /tmp/qga.log 2>&1 &
    echo "L2-WANT-AGENT"
else
    echo "L2-ERROR no guest agent port"
fi
if dmesg | grep -q "Call Trace"; then
    echo "L2-ERROR kernel warning in dmesg"
fi
dmesg | grep -iE "uhci|xhci|usb [0-9]|input:|virtio_balloon|hwrng|virtio_rng" | \
    sed 's/^/L2-DMESG /'
echo "L2-DONE"
sleep 600
cat /tmp/qga.log | sed 's/^/L2-QGA-LOG /'
'''

L1_INIT = kvfio_image.L1_MODULES_PROLOGUE + r'''ip link set lo up
mkfifo /tmp/qmp.in
/conduit/conduit-system-x86_64 -accel kvm -M pc -m @L2_MIB@ -smp 2 -nodefaults -no-reboot \
    -display none -serial file:/tmp/l2.log -qmp stdio \
    -kernel /conduit/bzImage -initrd /conduit/l2.cpio \
    -append "console=ttyS0 panic=-1 loglevel=4 noxsave nosoftlockup no_timer_check" \
    -device '{"driver":"piix3-usb-uhci","id":"usb","bus":"pci.0","addr":"0x1.0x2"}' \
    -device '{"driver":"usb-tablet","id":"input0","bus":"usb.0","port":"1"}' \
    -device qemu-xhci,id=xhci,bus=pci.0,addr=0x3 \
    -device usb-kbd,id=kbd0,bus=xhci.0,port=1 \
    -device '{"driver":"virtio-balloon-pci","id":"balloon0","bus":"pci.0","addr":"0x4"}' \
    -object '{"qom-type":"rng-random","id":"objrng0","filename":"/dev/urandom"}' \
    -device '{"driver":"virtio-rng-pci","rng":"objrng0","id":"rng0","bus":"pci.0","addr":"0x5"}' \
    -device '{"driver":"virtio-serial-pci","id":"virtio-serial0","bus":"pci.0","addr":"0x6"}' \
    -chardev socket,id=charchannel0,path=/tmp/ga.sock,server=on,wait=off \
    -device '{"driver":"virtserialport","bus":"virtio-serial0.0","nr":1,"chardev":"charchannel0","id":"channel0","name":"org.qemu.guest_agent.0"}' \
    -netdev tap,id=hostnet0,ifname=tap0,queues=2,script=no,downscript=no \
    -device '{"driver":"virtio-net-pci","netdev":"hostnet0","id":"net0","mac":"52:54:00:de:01:ce","mq":true,"vectors":6,"bus":"pci.0","addr":"0x7"}' \
    </tmp/qmp.in >/tmp/qmp.out 2>/tmp/conduit.err &
vm=$!
exec 3>/tmp/qmp.in
echo '{"execute":"qmp_capabilities"}' >&3
touch /tmp/l2.log
tail -f /tmp/l2.log | sed "s/^/LIVE-L2 /" &
input=0 balloon=0 link=0 agent=0
for i in $(seq 1500); do
    kill -0 $vm 2>/dev/null || break
    if [ $input = 0 ] && grep -q "L2-WANT-INPUT" /tmp/l2.log; then
        echo '{"execute":"input-send-event","id":"in-tab","arguments":{"events":[{"type":"abs","data":{"axis":"x","value":12345}},{"type":"btn","data":{"down":true,"button":"left"}}]}}' >&3
        echo '{"execute":"input-send-event","id":"in-kbd","arguments":{"device":"kbd0","events":[{"type":"key","data":{"down":true,"key":{"type":"qcode","data":"a"}}}]}}' >&3
        echo '{"execute":"send-key","id":"in-sendkey","arguments":{"keys":[{"type":"qcode","data":"b"}]}}' >&3
        input=1
    fi
    if [ $balloon = 0 ] && grep -q "L2-WANT-BALLOON" /tmp/l2.log; then
        echo '{"execute":"qom-set","id":"stats-on","arguments":{"path":"/machine/peripheral/balloon0","property":"guest-stats-polling-interval","value":2}}' >&3
        echo '{"execute":"balloon","id":"balloon","arguments":{"value":@BALLOON_BYTES@}}' >&3
        balloon=1
    fi
    if [ $link = 0 ] && grep -q "L2-WANT-LINKDOWN" /tmp/l2.log; then
        echo '{"execute":"set_link","id":"link","arguments":{"name":"net0","up":false}}' >&3
        link=1
    fi
    if [ $agent = 0 ] && grep -q "L2-DONE" /tmp/l2.log && grep -q "L2-WANT-AGENT" /tmp/l2.log; then
        echo '{"execute":"query-balloon","id":"qb"}' >&3
        echo '{"execute":"x-query-balloon","id":"xqb"}' >&3
        echo '{"execute":"qom-get","id":"gstats","arguments":{"path":"/machine/peripheral/balloon0","property":"guest-stats"}}' >&3
        echo '{"execute":"x-query-usb","id":"usb"}' >&3
        echo '{"execute":"x-query-xhci","id":"xhci"}' >&3
        /conduit/qga-chat /tmp/ga.sock 120 '{"execute":"guest-ping"}' \
            '{"execute":"guest-network-get-interfaces"}' > /tmp/qga.out 2>&1
        echo "NESTED-QGA-EXIT $?"
        sed "s/^/NESTED-QGA /" /tmp/qga.out
        # The agent answered: it has the port open (frontend-open).
        echo '{"execute":"query-chardev","id":"chardev"}' >&3
        echo '{"execute":"x-query-virtio-serial","id":"vser"}' >&3
        sleep 2
        /conduit/qga-chat /tmp/ga.sock 0 '{"execute":"guest-shutdown"}'
        echo "NESTED-QGA-SHUTDOWN-SENT $?"
        agent=1
    fi
    [ -d /sys/class/net/tap0 ] && ip link set tap0 up 2>/dev/null
    sleep 1
done
for i in $(seq 120); do kill -0 $vm 2>/dev/null || break; sleep 1; done
if kill -0 $vm 2>/dev/null; then
    echo "NESTED-ERROR L2 still running after guest-shutdown"
    echo '{"execute":"quit"}' >&3
fi
exec 3>&-
wait $vm
echo "NESTED-CONDUIT-EXIT $?"
sed "s/^/NESTED-L2 /" /tmp/l2.log
sed "s/^/NESTED-QMP /" /tmp/qmp.out
sed "s/^/NESTED-STDERR /" /tmp/conduit.err
echo "NESTED-END"
poweroff -f
'''


def build_l2_initrd(mods_dir):
    mods = kvfio_image.module_load_order(mods_dir, L2_MODULES)
    c = kvfio_image.Cpio()
    c.add_file('bin/busybox', '/bin/busybox', 0o755)
    for ko in mods:
        c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
    c.add_file('usr/sbin/qemu-ga', QEMU_GA, 0o755)
    for lib in sorted(kvfio_image.shared_libraries(QEMU_GA)):
        c.add_file(lib, os.path.realpath(lib), 0o755)
    init = L2_INIT.replace('@MODULES@',
                           ' '.join(os.path.basename(k) for k in mods))
    init = init.replace('@SHRINK_KB@',
                        str((L2_MIB - BALLOON_MIB) * 1024 * 3 // 4))
    c.add_data('init', init.encode(), 0o755)
    return c.finish()


def build_l1_initrd(mods_dir, bzimage, l2_initrd):
    mods = kvfio_image.module_load_order(mods_dir, L1_MODULES)
    c = kvfio_image.Cpio()
    c.add_file('bin/busybox', '/bin/busybox', 0o755)
    for ko in mods:
        c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
    c.add_file('conduit/conduit-system-x86_64', CONDUIT, 0o755)
    c.add_file('conduit/qga-chat', QGA_CHAT, 0o755)
    for lib in sorted(set(kvfio_image.shared_libraries(CONDUIT)) |
                      set(kvfio_image.shared_libraries(QGA_CHAT))):
        c.add_file(lib, os.path.realpath(lib), 0o755)
    c.add_file('conduit/bzImage', bzimage, 0o644)
    c.add_data('conduit/l2.cpio', l2_initrd)
    init = L1_INIT.replace('@MODULES@',
                           ' '.join(os.path.basename(k) for k in mods))
    init = init.replace('@L2_MIB@', str(L2_MIB))
    init = init.replace('@BALLOON_BYTES@', str(BALLOON_MIB << 20))
    c.add_data('init', init.encode(), 0o755)
    import gzip
    return gzip.compress(c.finish(), 1)


def input_events(lines, dev):
    """(type, code, value) of each struct input_event L2 dumped."""
    evs = []
    for line in lines:
        if not line.startswith('L2-EV %s ' % dev):
            continue
        b = bytes(int(x, 16) for x in line.split()[2:])
        if len(b) == 24:
            evs.append((int.from_bytes(b[16:18], 'little'),
                        int.from_bytes(b[18:20], 'little'),
                        int.from_bytes(b[20:24], 'little', signed=True)))
    return evs


class LinuxDevicesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.qemu = guestboot.require_qemu_and([(CONDUIT, 'CONDUIT_BINARY'),
                                               (QGA_CHAT, 'QGA_CHAT')])
        if not os.access(QEMU_GA, os.X_OK):
            raise unittest.SkipTest('qemu-guest-agent is not installed '
                                    '(scripts/install-deps installs it)')
        try:
            cls.l1 = kvfio_image.NestedL1('linux-devices-')
        except kvfio_image.Unavailable as e:
            raise unittest.SkipTest(str(e))
        l1 = cls.l1
        initrd = build_l1_initrd(l1.mods, l1.bzimage,
                                 build_l2_initrd(l1.mods))
        cls.l1_run = l1.boot(cls.qemu, initrd, TIMEOUT, memory='2G',
                             log_env='LINUX_DEVICES_LOG')
        cls.out = cls.l1_run.output
        cls.l2 = kvfio_image.prefixed(cls.out, 'NESTED-L2 ')
        cls.qmp = kvfio_image.json_prefixed(cls.out, 'NESTED-QMP ')
        cls.ctx = '\n'.join(cls.l2)

    @classmethod
    def tearDownClass(cls):
        cls.l1.cleanup()

    def setUp(self):
        kvfio_image.check_l1(self, self.l1_run)

    def value(self, key):
        vals = self.values(key)
        return vals[0] if vals else None

    def values(self, key):
        return [line[len('L2-%s ' % key):].strip() for line in self.l2
                if line.startswith('L2-%s ' % key)]

    def reply(self, cmd_id):
        for msg in self.qmp:
            if msg.get('id') == cmd_id:
                return msg
        return None

    def events(self, name):
        return [m for m in self.qmp if m.get('event') == name]

    def test_01_booted(self):
        self.assertIn('L2-BOOTED', self.l2, self.ctx)
        self.assertIn('L2-DONE', self.l2, self.ctx)
        self.assertFalse([x for x in self.l2 if x.startswith('L2-ERROR')],
                         self.ctx)

    def test_usb(self):
        hcds = self.values('HCD')
        self.assertIn('uhci_hcd 0000:00:01.2', hcds, self.ctx)
        self.assertIn('xhci_hcd 0000:00:03.0', hcds, self.ctx)
        devs = ' '.join(self.values('USBDEV'))
        self.assertIn('0627:0001 QEMU_USB_Tablet', devs, self.ctx)
        self.assertIn('0627:0001 QEMU_USB_Keyboard', devs, self.ctx)
        self.assertGreaterEqual(len(self.values('USBHID')), 2, self.ctx)
        for cmd_id in ('in-tab', 'in-kbd'):
            self.assertIn('return', self.reply(cmd_id) or {}, self.qmp)
        # EV_ABS ABS_X 12345 and BTN_LEFT from the tablet; KEY_A pressed.
        tab = input_events(self.l2, 'tablet')
        self.assertIn((3, 0, 12345), tab, self.ctx)
        self.assertIn((1, 0x110, 1), tab, self.ctx)
        self.assertIn((1, 30, 1), input_events(self.l2, 'kbd'), self.ctx)
        usb = (self.reply('usb') or {}).get('return', [])
        self.assertEqual(sorted(d['bus'] for d in usb), ['usb.0', 'xhci.0'],
                         usb)
        for d in usb:
            self.assertEqual(d['configuration'], 1, d)
            self.assertGreater(d['reports-sent'], 0, d)

    def test_send_key_reaches_the_ps2_keyboard(self):
        # virsh send-key's QMP: the i8042 translates the keyboard's set 2
        # codes to set 1, and Linux's atkbd reports KEY_B pressed, then
        # released when the hold time (100 ms) is over.
        self.assertIn('return', self.reply('in-sendkey') or {}, self.qmp)
        ev = input_events(self.l2, 'atkbd')
        self.assertIn((1, 48, 1), ev, self.ctx)        # KEY_B down
        self.assertIn((1, 48, 0), ev, self.ctx)        # KEY_B up
        self.assertLess(ev.index((1, 48, 1)), ev.index((1, 48, 0)), ev)

    def test_balloon(self):
        before = int(self.value('MEMTOTAL-BEFORE') or 0)
        after = int(self.value('MEMTOTAL-AFTER') or 0)
        # The guest gave back (most of) the 256 MiB it was asked for.
        self.assertGreaterEqual(before - after, (256 * 1024) * 3 // 4,
                                self.ctx)
        self.assertIn('return', self.reply('balloon') or {}, self.qmp)
        actual = (self.reply('qb') or {}).get('return', {}).get('actual', 0)
        self.assertLessEqual(actual, (L2_MIB - 200) << 20, self.qmp)
        self.assertTrue(self.events('BALLOON_CHANGE'), self.qmp)
        x = (self.reply('xqb') or {}).get('return', {})
        self.assertGreater(x.get('discarded-pages', 0), 40000, x)
        self.assertFalse(x.get('discard-disabled'), x)
        stats = (self.reply('gstats') or {}).get('return', {})
        self.assertGreater(stats.get('last-update', 0), 0, stats)
        self.assertGreater(stats['stats']['stat-total-memory'], 0, stats)
        self.assertGreater(stats['stats']['stat-free-memory'], 0, stats)

    def test_rng(self):
        self.assertEqual(self.value('HWRNG'), 'virtio_rng.0', self.ctx)
        self.assertRegex(self.value('HWRNG-BYTES') or '', r'^[0-9a-f]{64}$',
                         self.ctx)

    def test_guest_agent(self):
        self.assertTrue([v for v in self.values('VPORT')
                         if re.match(r'vport\d+p1 org\.qemu\.guest_agent\.0$',
                                     v)], self.ctx)
        qga = kvfio_image.json_prefixed(self.out, 'NESTED-QGA ')
        self.assertIn('NESTED-QGA-EXIT 0', self.out, qga)
        self.assertEqual(qga[0], {'return': {}}, qga)
        names = [i.get('name') for i in qga[1]['return']]
        self.assertIn('lo', names, qga)
        eth = [i for i in qga[1]['return'] if i.get('name') == 'eth0']
        self.assertEqual(eth[0]['hardware-address'], '52:54:00:de:01:ce', qga)
        self.assertIn('10.0.3.2', [a['ip-address'] for a in
                                   eth[0].get('ip-addresses', [])], qga)
        opened = [e['data'] for e in self.events('VSERPORT_CHANGE')]
        self.assertIn({'id': 'channel0', 'open': True}, opened, self.qmp)
        chardev = (self.reply('chardev') or {}).get('return', [])
        ga = [c for c in chardev if c['label'] == 'charchannel0']
        self.assertTrue(ga and ga[0]['frontend-open'], chardev)
        # guest-shutdown: L2 powered itself off, Conduit exited.
        self.assertTrue([x for x in self.l2
                         if x.startswith('L2-SHUTDOWN-BY-AGENT')], self.ctx)
        self.assertRegex(self.out, r'NESTED-CONDUIT-EXIT 0')
        self.assertNotIn('NESTED-ERROR L2 still running', self.out)

    def test_net_multiqueue(self):
        queues = (self.value('NET-QUEUES') or '').split()
        self.assertEqual(sorted(queues), ['rx-0', 'rx-1', 'tx-0', 'tx-1'],
                         self.ctx)

    def test_set_link(self):
        self.assertEqual(self.value('CARRIER-UP'), '1', self.ctx)
        self.assertIn('return', self.reply('link') or {}, self.qmp)
        self.assertEqual(self.value('CARRIER-AFTER'), '0', self.ctx)


if __name__ == '__main__':
    sys.exit(guestboot.main())
