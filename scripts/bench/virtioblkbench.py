# SPDX-License-Identifier: GPL-2.0-or-later
"""Boots the tests/guest virtio-blk guest under Conduit -accel kvm once.

Shared by `make bench` (scripts/bench/virtio-blk) and the functional test
tests/functional/test_kvm_virtio_blk.py.  After the guest exits the run
reads x-query-virtio, x-query-kvm and x-query-io-counters, so every count
covers the whole run, and Conduit's CPU time from /proc.
"""
import os
import subprocess
import sys

from nvmebench import (Qmp, parse_result,  # noqa: F401  (re-exported)
                       process_cpu_ns, wait_serial)

SIGNATURE = b'CONDUIT-VIRTIOBLK'
# What the guest prints once the device is up, just before its I/O.
START_MARKER = 'DRIVER_OK'


def make_image(path, mib=64):
    with open(path, 'wb') as f:
        f.write(SIGNATURE + bytes(512 - len(SIGNATURE)))
        f.truncate(mib << 20)


def run_guest(build, tmp, device_opts, append, drive_opts=''):
    """Boots the guest; returns (status, serial, virtio, kvm, notify, cpu):
    cpu is Conduit's CPU seconds (all threads) from START_MARKER on, or
    from its start if the guest never printed it."""
    image = os.path.join(tmp, 'disk.raw')
    if not os.path.exists(image):
        make_image(image)
    qmp_path = os.path.join(tmp, 'qmp.sock')
    serial = os.path.join(tmp, 'serial.log')
    for p in (qmp_path, serial):
        if os.path.exists(p):
            os.unlink(p)
    argv = [os.path.join(build, 'conduit-system-x86_64'), '-accel', 'kvm',
            '-m', '256', '-display', 'none', '-nodefaults',
            '-serial', 'file:' + serial, '-no-shutdown',
            '-qmp', 'unix:%s,server=on,wait=off' % qmp_path,
            '-kernel', os.path.join(build, 'tests', 'guest',
                                    'virtio-blk.elf'),
            '-append', append,
            '-device', 'isa-debug-exit,iobase=0xf4,iosize=4',
            '-blockdev', 'driver=file,filename=%s,node-name=disk0%s' %
            (image, drive_opts),
            '-device', 'virtio-blk-pci,id=vblk0,drive=disk0' +
            ''.join(',' + o for o in device_opts)]
    vmm = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
    try:
        qmp = Qmp(qmp_path)
        start = 0
        if wait_serial(serial, START_MARKER, vmm):
            start = process_cpu_ns(vmm.pid)
        ev = qmp.wait_event('SHUTDOWN')
        status = ev.get('data', {}).get('x-exit-status')
        cpu = (process_cpu_ns(vmm.pid) - start) / 1e9
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
    return status, out, virtio, kvm, notify, cpu


def measure(build, tmp, device_opts, qd, ios, mode):
    """One benchmark run: a dict of per-I/O numbers."""
    status, out, virtio, kvm, notify, cpu = run_guest(
        build, tmp, device_opts, 'qd=%d ios=%d mode=%s' % (qd, ios, mode))
    result = parse_result(out)
    if status != 1 or result is None:
        raise RuntimeError('virtio-blk guest failed (status %s)' % status)
    n = int(result['ios'])
    return {
        'iops': int(result['iops']),
        'p50_us': int(result['p50_ns']) / 1000.0,
        'p99_us': int(result['p99_ns']) / 1000.0,
        'exits_per_io': kvm['mmio-exits'] / n,
        'trapped_kicks_per_io': notify / n,
        'kicks_per_io': virtio['kicks'] / n,
        'slow_irqs_per_io': virtio['slow-path-interrupts'] / n,
        'cpu_us_per_io': cpu * 1e6 / n,
    }
