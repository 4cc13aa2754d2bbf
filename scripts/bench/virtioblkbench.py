# SPDX-License-Identifier: GPL-2.0-or-later
"""Boots the tests/guest virtio-blk guest once, under Conduit or a peer.

Shared by `make bench` (scripts/bench/virtio-blk) and the functional test
tests/functional/test_kvm_virtio_blk.py.  Under Conduit, after the guest
exits the run reads x-query-virtio, x-query-kvm and x-query-io-counters,
so every count covers the whole run, and Conduit's CPU time from /proc.
run_qemu() boots the same guest on the same image under a peer QEMU
(Debian's qemu-system-x86_64, or CONDUIT_PEER_QEMU): its virtio-blk-pci,
-blockdev raw or qcow2, with or without an iothread.  Both runs pin the
vCPU and the device side to different CPUs (nvmebench.pin_plan) and take
exits from KVM's debugfs where it is mounted, so the two are counted
alike.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402
from nvmebench import (Qmp, parse_result,  # noqa: E402,F401 (re-exported)
                       wait_serial, thread_cpu_ns,
                       split_cpu, cpu_delta, kvm_vm_stat, stat_delta, pin_plan, pin_vmm,
                       watch_peer, spawn, reap)

SIGNATURE = b'CONDUIT-VIRTIOBLK'
# What the guest prints once the device is up, just before its I/O.
START_MARKER = 'DRIVER_OK'
IMAGE_MIB = 64


def make_image(path, mib=IMAGE_MIB):
    with open(path, 'wb') as f:
        f.write(SIGNATURE + bytes(512 - len(SIGNATURE)))
        f.truncate(mib << 20)


def make_qcow2(raw, path):
    """@path: a qcow2 copy of @raw with every cluster allocated (qemu-img
    convert -S 0, QEMU's reference tool), so reads reach data clusters
    and writes do not allocate: the cost measured is the format's
    mapping, not first-touch allocation."""
    subprocess.run(['qemu-img', 'convert', '-q', '-S', '0', '-f', 'raw',
                    '-O', 'qcow2', raw, path], check=True)


def blockdev_args(image, fmt, drive_opts=''):
    """-blockdev arguments for @image as node disk0 (@fmt raw or qcow2),
    written alike for Conduit and QEMU."""
    if fmt == 'qcow2':
        return ['-blockdev', 'driver=file,filename=%s,node-name=file0%s' %
                (image, drive_opts),
                '-blockdev', 'driver=qcow2,file=file0,node-name=disk0']
    return ['-blockdev', 'driver=file,filename=%s,node-name=disk0%s' %
            (image, drive_opts)]


def process_stat_ns(pid):
    """CPU time (user + system) of process @pid from /proc/<pid>/stat, in
    ns: unlike the per-thread counters it keeps the time of threads that
    have exited (Conduit's virtio worker ends when the guest resets the
    device, before the run's last sample).  None once the process is
    gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
    except (OSError, IndexError):
        return None
    # Fields 14 and 15 (utime, stime), counted from 3 (state) here.
    ticks = int(fields[11]) + int(fields[12])
    return ticks * 1000000000 // os.sysconf('SC_CLK_TCK')


def run_guest(build, tmp, device_opts, append, drive_opts='', plan=None,
              image=None, fmt='raw'):
    """Boots the guest; returns (status, serial, virtio, kvm, notify, cpu):
    cpu is Conduit's CPU seconds (all threads) from START_MARKER on, or
    from its start if the guest never printed it.  The details (CPU of
    vCPU and other threads, KVM's exit count) are in run_guest.last."""
    if image is None:
        image = os.path.join(tmp, 'disk.raw')
        if not os.path.exists(image):
            make_image(image)
    plan = plan or pin_plan([])
    qmp_path = os.path.join(tmp, 'qmp.sock')
    serial = os.path.join(tmp, 'serial.log')
    for p in (qmp_path, serial):
        if os.path.exists(p):
            os.unlink(p)
    argv = ([os.path.join(build, 'conduit-system-x86_64'), '-accel', 'kvm',
             '-m', '256', '-display', 'none', '-nodefaults',
             '-serial', 'file:' + serial, '-no-shutdown',
             '-qmp', 'unix:%s,server=on,wait=off' % qmp_path,
             '-kernel', os.path.join(build, 'tests', 'guest',
                                     'virtio-blk.elf'),
             '-append', append,
             '-device', 'isa-debug-exit,iobase=0xf4,iosize=4'] +
            blockdev_args(image, fmt, drive_opts) +
            ['-device', 'virtio-blk-pci,id=vblk0,drive=disk0' +
             ''.join(',' + o for o in device_opts)])
    vmm = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
    try:
        try:
            qmp = Qmp(qmp_path)
        except (OSError, EOFError) as e:
            # A VMM that refuses an option closes the socket and exits.
            try:
                vmm.wait(timeout=10)
            except subprocess.TimeoutExpired:
                raise e from None
            # Refused at start (an option it does not know): say why.
            err = vmm.stderr.read().decode(errors='replace').strip()
            raise RuntimeError('Conduit exited at start: %s' %
                               (err.splitlines() or ['?'])[-1])
        pin_vmm(vmm, plan)
        start, t0, exits0 = 0, {}, None
        if wait_serial(serial, START_MARKER, vmm):
            t0 = thread_cpu_ns(vmm.pid)
            start = process_stat_ns(vmm.pid) or 0
            exits0 = kvm_vm_stat(vmm.pid)
        ev = qmp.wait_event('SHUTDOWN')
        status = ev.get('data', {}).get('x-exit-status')
        t1 = thread_cpu_ns(vmm.pid)
        exits1 = kvm_vm_stat(vmm.pid)
        total = (process_stat_ns(vmm.pid) or 0) - start
        cpu = total / 1e9
        # vCPU threads live to the end; the rest (worker included) is
        # the process's total less theirs.
        guest = split_cpu(cpu_delta(t1, t0))[0]
        other = max(total - guest, 0)
        virtio = qmp.cmd('x-query-virtio')[0]
        kvm = qmp.cmd('x-query-kvm')
        notify = sum(r['writes'] for r in qmp.cmd('x-query-io-counters')
                     if r['name'] == 'virtio-pci-notify')
        qmp.cmd('quit')
        err = vmm.communicate(timeout=30)[1].decode(errors='replace')
    finally:
        if vmm.poll() is None:
            vmm.kill()
            vmm.wait()
    with open(serial, errors='replace') as f:
        out = f.read()
    if status != 1:
        sys.stderr.write(out + err)
    run_guest.last = {
        'stderr': err,
        'cpu_guest': guest, 'cpu_vmm': other,
        'exits': stat_delta(exits1, exits0, 'mmio_exits'),
        'vmexits': stat_delta(exits1, exits0, 'exits')}
    return status, out, virtio, kvm, notify, cpu


def numbers(result, cpu_guest_ns, cpu_vmm_ns, exits, vmexits=None):
    """The per-I/O figures any VMM's run gives (stats.py for the trimmed
    throughput)."""
    n = int(result['ios'])
    tmean = int(result['tmean_ns']) if 'tmean_ns' in result else None
    return {
        'iops': int(result['iops']),
        'iops_trim': stats.trimmed_iops(tmean, int(result.get('qd', 1))),
        'p50_us': int(result['p50_ns']) / 1000.0,
        'p90_us': (int(result['p90_ns']) / 1000.0 if 'p90_ns' in result
                   else None),
        'p99_us': int(result['p99_ns']) / 1000.0,
        'tmean_us': tmean / 1000.0 if tmean else None,
        'ios': n,
        'exits_per_io': stats.per_io(exits, n),
        'vmexits_per_io': stats.per_io(vmexits, n),
        'cpu_guest_us_per_io': cpu_guest_ns / 1000.0 / n,
        'cpu_vmm_us_per_io': cpu_vmm_ns / 1000.0 / n,
        'cpu_us_per_io': (cpu_guest_ns + cpu_vmm_ns) / 1000.0 / n,
    }


def bench_append(qd, ios, mode, write=False):
    return 'qd=%d ios=%d mode=%s randwrite=%d' % (qd, ios, mode,
                                                 1 if write else 0)


def measure(build, tmp, device_opts, qd, ios, mode, plan=None, image=None,
            fmt='raw', write=False):
    """One benchmark run under Conduit: a dict of per-I/O numbers."""
    status, out, virtio, kvm, notify, cpu = run_guest(
        build, tmp, device_opts, bench_append(qd, ios, mode, write),
        plan=plan, image=image, fmt=fmt)
    result = parse_result(out)
    last = run_guest.last
    if status != 1 or result is None:
        raise RuntimeError('virtio-blk guest failed (status %s)%s' % (
            status, ': ' + last['stderr'].strip().splitlines()[-1]
            if last['stderr'].strip() else ''))
    n = int(result['ios'])
    r = numbers(result, last['cpu_guest'], last['cpu_vmm'],
                last['exits'] if last['exits'] is not None
                else kvm['mmio-exits'], last['vmexits'])
    r.update({
        'conduit_exits_per_io': kvm['mmio-exits'] / n,
        'trapped_kicks_per_io': notify / n,
        'kicks_per_io': virtio['kicks'] / n,
        'slow_irqs_per_io': virtio['slow-path-interrupts'] / n,
    })
    return r


def run_qemu(qemu, build, tmp, qd, ios, mode, iothread=False, plan=None,
             image=None, fmt='raw', write=False):
    """The same guest on the same image under the peer QEMU @qemu:
    virtio-blk-pci on -blockdev (@fmt), in QEMU's main loop or, with
    @iothread, in an iothread of its own.  Exits from KVM's debugfs
    (None where it is not mounted); the Conduit-only counters are None."""
    if image is None:
        image = os.path.join(tmp, 'disk.raw')
        if not os.path.exists(image):
            make_image(image)
    plan = plan or pin_plan([])
    serial = os.path.join(tmp, 'serial-qemu.log')
    if os.path.exists(serial):
        os.unlink(serial)
    # Modern-only, as Conduit's (the guest looks for device 0x1042).
    dev = 'virtio-blk-pci,drive=disk0,disable-legacy=on'
    extra = []
    if iothread:
        extra = ['-object', 'iothread,id=io0']
        dev += ',iothread=io0'
    argv = ([qemu, '-accel', 'kvm', '-M', 'pc', '-m', '256',
             '-name', 'bench,debug-threads=on', '-display', 'none',
             '-nodefaults', '-serial', 'file:' + serial,
             '-kernel', os.path.join(build, 'tests', 'guest',
                                     'virtio-blk.elf'),
             '-append', bench_append(qd, ios, mode, write),
             '-device', 'isa-debug-exit,iobase=0xf4,iosize=4'] + extra +
            blockdev_args(image, fmt) + ['-device', dev])
    vmm = spawn(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        watch = watch_peer(vmm, serial, plan, marker=START_MARKER)
        status = vmm.wait(timeout=30)
    finally:
        if vmm.poll() is None:
            vmm.kill()
        reap(vmm)
    with open(serial, errors='replace') as f:
        out = f.read()
    result = parse_result(out)
    # isa-debug-exit: QEMU exits with (code << 1) | 1, 1 for a pass.
    if status != 1 or result is None:
        sys.stderr.write(out + vmm.stderr.read().decode(errors='replace'))
        raise RuntimeError('virtio-blk guest failed under %s (exit status '
                           '%s): %s' % (qemu, status, ' '.join(argv)))
    r = numbers(result, watch['cpu_guest'], watch['cpu_vmm'],
                watch['exits'], watch['vmexits'])
    r.update(conduit_exits_per_io=None, trapped_kicks_per_io=None,
             kicks_per_io=None, slow_irqs_per_io=None)
    return r
