# SPDX-License-Identifier: GPL-2.0-or-later
"""One run of the tests/guest `nvme` guest under KVM against vfio-user-nvme.

Shared by scripts/demo and scripts/bench/run.  A run starts the server
(--backend null) with the given options, boots Conduit with -no-shutdown
and a QMP socket, waits for the guest's SHUTDOWN event (isa-debug-exit),
then reads x-query-vfio and x-query-kvm before quitting, so the counters
cover exactly the guest's run.

CPU time is read per thread from /proc (schedstat, nanoseconds): the VMM's
vCPU threads ("CPU n/KVM") are the guest, its other threads the VMM, and
the server's threads the server.  It covers the I/O phase: the first
sample is taken when the guest's serial log shows the line it prints just
before its timed loop (START_MARKER), so boot and controller bring-up,
which dominate under nested TCG, are left out (if the line never shows,
boot is included).  run_qemu() runs the same guest and server under a
peer QEMU (>= 10.1, its vfio-user-pci client, -name debug-threads=on so
its vCPU threads are named alike), which exits at the guest's
isa-debug-exit write, so its threads are sampled every few milliseconds
until it does.
"""
import json
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402

# Guards against a hung run only (scripts/bench/run --run-timeout).
TIMEOUT = 900
# Processes a run started and has not reaped yet (see kill_leftovers()).
LIVE = set()
# What the nvme guest prints just before its timed loop.
START_MARKER = 'I/O queue pairs'

# BAR0 of vfio-user-nvme: registers at 0, doorbells from 0x1000.
TABLE_ON_DOORBELL_PAGE = ['--msix-bar', '0', '--msix-table-offset', '0x1800',
                          '--msix-pba-offset', '0x1c00']
PBA_ON_DOORBELL_PAGE = ['--msix-bar', '0', '--msix-table-offset', '0x2000',
                        '--msix-pba-offset', '0x1800']
TABLE_IN_BAR0_OWN_PAGE = ['--msix-bar', '0', '--msix-table-offset', '0x2000',
                          '--msix-pba-offset', '0x3000']
TABLE_IN_BAR4 = ['--msix-bar', '4']


class Qmp:
    def __init__(self, path, timeout=30):
        deadline = time.time() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        self.sock.settimeout(TIMEOUT)
        self.buf = b''
        self.events = []
        self.recv()                             # greeting
        self.cmd('qmp_capabilities')

    def recv(self):
        while b'\n' not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError('QMP connection closed')
            self.buf += data
        line, self.buf = self.buf.split(b'\n', 1)
        return json.loads(line)

    def cmd(self, name, **args):
        msg = {'execute': name}
        if args:
            msg['arguments'] = args
        self.sock.sendall(json.dumps(msg).encode() + b'\n')
        while True:
            resp = self.recv()
            if 'event' in resp:
                self.events.append(resp)
                continue
            if 'error' in resp:
                raise RuntimeError('%s: %s' % (name, resp['error']))
            return resp.get('return')

    def wait_event(self, name):
        for ev in self.events:
            if ev['event'] == name:
                return ev
        while True:
            resp = self.recv()
            if resp.get('event') == name:
                return resp
            if 'event' in resp:
                self.events.append(resp)


def thread_cpu_ns(pid):
    """{tid: (comm, on-CPU ns)} of a live process (empty once it is gone)."""
    out = {}
    base = '/proc/%d/task' % pid
    try:
        tids = os.listdir(base)
    except OSError:
        return out
    for tid in tids:
        try:
            with open('%s/%s/comm' % (base, tid)) as f:
                comm = f.read().strip()
            with open('%s/%s/schedstat' % (base, tid)) as f:
                ns = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        out[int(tid)] = (comm, ns)
    return out


def split_cpu(sample):
    """(guest ns, VMM ns) of a VMM's threads: vCPU threads are the guest."""
    guest = sum(ns for comm, ns in sample.values() if '/KVM' in comm)
    vmm = sum(ns for comm, ns in sample.values() if '/KVM' not in comm)
    return guest, vmm


def process_cpu_ns(pid):
    return sum(ns for _, ns in thread_cpu_ns(pid).values())


def serial_has(path, marker):
    try:
        with open(path, errors='replace') as f:
            return marker in f.read()
    except OSError:
        return False


def wait_serial(path, marker, proc, timeout=None):
    """True once @marker is in the serial log @path; False if the guest
    got to its summary, @proc exited or @timeout (TIMEOUT) passed first."""
    deadline = time.time() + (timeout or TIMEOUT)
    while time.time() < deadline and proc.poll() is None:
        try:
            with open(path, errors='replace') as f:
                text = f.read()
        except OSError:
            text = ''
        if marker in text:
            return True
        if 'SUMMARY:' in text or 'RESULT ' in text:
            return False
        time.sleep(0.01)
    return False


def spawn(argv, **kw):
    proc = subprocess.Popen(argv, **kw)
    LIVE.add(proc)
    return proc


def reap(proc):
    proc.wait()
    LIVE.discard(proc)


def kill_leftovers():
    """After a run was abandoned: each process it left, with its state
    and kernel wait channel (a hang's first clue), killed without waiting
    (a process stuck in the kernel may never die)."""
    report = []
    for proc in list(LIVE):
        if proc.poll() is not None:
            LIVE.discard(proc)
            continue
        try:
            with open('/proc/%d/stat' % proc.pid) as f:
                state = f.read().rsplit(')', 1)[1].split()[0]
            with open('/proc/%d/wchan' % proc.pid) as f:
                wchan = f.read().strip()
        except OSError:
            state = wchan = '?'
        report.append('%s (pid %d) state %s wchan %s' % (
            os.path.basename(proc.args[0]), proc.pid, state, wchan))
        proc.kill()
    return report


def cpu_delta(end, start):
    """Per-thread CPU of @end minus @start ({tid: (comm, ns)})."""
    return {tid: (comm, ns - start.get(tid, (comm, 0))[1])
            for tid, (comm, ns) in end.items()}


# ---- pinning -------------------------------------------------------------

def pin_plan(cpus=None):
    """Where the busy threads go: {'vcpu': {cpu}, 'other': {cpu}, 'text':
    ...}.  With two or more CPUs the guest's vCPU gets the first and the
    device side (the vfio-user server's poller, the VMM's other threads:
    main loop, virtio worker, QEMU's iothread) the second, so they never
    share one; with one CPU nothing is pinned.  @cpus: the CPUs this
    process may use (default: its affinity)."""
    cpus = sorted(cpus if cpus is not None else os.sched_getaffinity(0))
    if len(cpus) < 2:
        return {'vcpu': None, 'other': None,
                'text': 'not pinned (%d CPU)' % len(cpus)}
    return {'vcpu': {cpus[0]}, 'other': {cpus[1]},
            'text': 'vCPU on CPU %d, server/VMM threads on CPU %d' %
                    (cpus[0], cpus[1])}


def pin_threads(pid, plan, vcpu_threads=True):
    """Pins every thread of @pid by @plan: vCPU threads ('/KVM' in the
    name, as Conduit and QEMU with debug-threads=on call them) to
    plan['vcpu'], the others to plan['other'].  Returns how many vCPU
    threads it found; threads gone meanwhile are skipped."""
    if not plan['vcpu']:
        return 0
    found = 0
    for tid, (comm, _) in thread_cpu_ns(pid).items():
        is_vcpu = vcpu_threads and '/KVM' in comm
        found += is_vcpu
        try:
            os.sched_setaffinity(tid, plan['vcpu'] if is_vcpu
                                 else plan['other'])
        except OSError:
            pass
    return found


def pin_vmm(proc, plan, timeout=30):
    """Waits for the vCPU thread of the VMM @proc, then pins its threads
    (pin_threads); threads it creates later inherit the main thread's
    (device-side) affinity.  False if no vCPU thread showed up."""
    if not plan['vcpu']:
        return True
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if pin_threads(proc.pid, plan):
            return True
        time.sleep(0.005)
    return False


# ---- KVM's own counters ----------------------------------------------------

KVM_DEBUGFS = '/sys/kernel/debug/kvm'


def kvm_vm_stat(pid, names=('mmio_exits', 'exits')):
    """KVM's counters @names for the VM the process @pid created, summed
    over its vCPUs, from debugfs (<pid>-<fd>/<name>): {name: count}, or
    None where debugfs is not mounted or readable.  The same source for
    Conduit and a peer QEMU.  mmio_exits: MMIO exits to the VMM;
    exits: every VM exit, those KVM handles itself (ioeventfd, halt,
    interrupts) included."""
    try:
        dirs = [d for d in os.listdir(KVM_DEBUGFS)
                if d.split('-')[0] == str(pid)]
    except OSError:
        return None
    out = None
    for d in dirs:
        for name in names:
            try:
                with open(os.path.join(KVM_DEBUGFS, d, name)) as f:
                    v = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            out = out or {}
            out[name] = out.get(name, 0) + v
    return out


def stat_delta(end, start, name):
    """@name's change between two kvm_vm_stat() samples, or None."""
    if not end or not start or name not in end or name not in start:
        return None
    return end[name] - start[name]


def start_server(build, tmp, extra):
    sock = os.path.join(tmp, 'nvme.sock')
    if os.path.exists(sock):
        os.unlink(sock)
    argv = [os.path.join(build, 'vfio-user-nvme'), '--socket', sock,
            '--backend', 'null', '--queues', '4'] + list(extra)
    proc = spawn(argv, stdout=subprocess.DEVNULL)
    deadline = time.time() + 30
    while not os.path.exists(sock):
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError('vfio-user-nvme did not start: ' +
                               ' '.join(argv))
        time.sleep(0.02)
    return proc, sock


def parse_result(serial):
    for line in reversed(serial.splitlines()):
        if line.startswith('RESULT '):
            return dict(kv.split('=', 1) for kv in line.split()[1:]
                        if '=' in kv)
    return None


def trapped_counts(vfio):
    """(forwarded, mmap-served, emulated MSI-X) accesses of one device."""
    fwd = served = 0
    for bar in vfio['bars']:
        fwd += bar['forwarded-reads'] + bar['forwarded-writes']
        served += bar['mmap-served-reads'] + bar['mmap-served-writes']
    msix = vfio.get('msix', {})
    emulated = msix.get('table-accesses', 0) + msix.get('pba-accesses', 0)
    return fwd, served, emulated


def run_guest(build, tmp, server_args, device_opts, qd, ios, mode='poll',
              server_extra=(), plan=None, queues=1):
    """Boots the nvme guest once (@queues I/O queue pairs, @qd each).
    Returns a dict of per-run numbers."""
    plan = plan or pin_plan([])
    server, sock = start_server(build, tmp,
                                list(server_args) + list(server_extra))
    pin_threads(server.pid, plan, vcpu_threads=False)
    qmp_path = os.path.join(tmp, 'qmp.sock')
    serial = os.path.join(tmp, 'serial.log')
    for p in (qmp_path, serial):
        if os.path.exists(p):
            os.unlink(p)
    argv = [os.path.join(build, 'conduit-system-x86_64'), '-accel', 'kvm',
            '-m', '256', '-display', 'none', '-nodefaults',
            '-serial', 'file:' + serial, '-no-shutdown',
            '-qmp', 'unix:%s,server=on,wait=off' % qmp_path,
            '-kernel', os.path.join(build, 'tests', 'guest', 'nvme.elf'),
            '-append', 'qd=%d ios=%d mode=%s queues=%d' % (qd, ios, mode,
                                                           queues),
            '-device', 'isa-debug-exit,iobase=0xf4,iosize=4',
            '-device', 'vfio-user-pci,id=nvme0,socket=' + sock +
            ''.join(',' + o for o in device_opts)]
    vmm = None
    status = None
    try:
        # Inside the try: a missing VMM binary must not leave the server.
        vmm = spawn(argv, stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE)
        qmp = Qmp(qmp_path)
        pin_vmm(vmm, plan)
        cpu0_vmm, cpu0_server, exits0 = {}, 0, None
        if wait_serial(serial, START_MARKER, vmm):
            cpu0_vmm = thread_cpu_ns(vmm.pid)
            cpu0_server = process_cpu_ns(server.pid)
            exits0 = kvm_vm_stat(vmm.pid)
        ev = qmp.wait_event('SHUTDOWN')
        status = ev.get('data', {}).get('x-exit-status')
        cpu_guest, cpu_vmm = split_cpu(cpu_delta(thread_cpu_ns(vmm.pid),
                                                 cpu0_vmm))
        cpu_server = process_cpu_ns(server.pid) - cpu0_server
        exits1 = kvm_vm_stat(vmm.pid)
        vfio = qmp.cmd('x-query-vfio')[0]
        kvm = qmp.cmd('x-query-kvm')
        qmp.cmd('quit')
        vmm.wait(timeout=30)
    finally:
        if vmm and vmm.poll() is None:
            vmm.kill()
        if vmm:
            reap(vmm)
        server.terminate()
        reap(server)
    with open(serial, errors='replace') as f:
        out = f.read()
    result = parse_result(out)
    if status != 1 or result is None:
        sys.stderr.write(out + vmm.stderr.read().decode(errors='replace'))
        raise RuntimeError('guest failed (exit status %s): %s' %
                           (status, ' '.join(argv)))
    n = int(result['ios'])
    fwd, served, emulated = trapped_counts(vfio)
    coalesced = sum(b.get('coalesced-writes', 0) for b in vfio['bars'])
    return dict(io_numbers(result, cpu_guest, cpu_vmm, cpu_server), **{
        # KVM's debugfs count from the timed loop on where it is mounted
        # (the source a peer's exits come from too), else Conduit's own.
        'exits_per_io': (kvm['mmio-exits'] / n
                         if stat_delta(exits1, exits0, 'mmio_exits') is None
                         else stat_delta(exits1, exits0, 'mmio_exits') / n),
        'vmexits_per_io': stats.per_io(stat_delta(exits1, exits0, 'exits'),
                                       n),
        'conduit_exits_per_io': kvm['mmio-exits'] / n,
        'coalesce': vfio.get('coalesce-trapped-writes'),
        'forwarded_per_io': fwd / n,
        'served_per_io': served / n,
        'trapped_per_io': (fwd + served + emulated) / n,
        'trapped': [r for b in vfio['bars'] for r in b['trapped']],
        # MSI-X events Conduit's eventfd handler took (KVM irqfd: none).
        'irqs_per_io': int(result.get('irqs', 0)) / n,
        'slow_path_per_io':
            vfio.get('msix', {}).get('slow-path-interrupts', 0) / n,
        'coalesced_per_io': coalesced / n,
        'relocated': vfio.get('msix', {}).get('relocated', False),
    })


def io_numbers(result, cpu_guest, cpu_vmm, cpu_server):
    """What any VMM's run reports: the guest's RESULT line and CPU time."""
    n = int(result['ios'])
    in_flight = int(result.get('qd', 1)) * int(result.get('queues', 1))
    tmean = int(result['tmean_ns']) if 'tmean_ns' in result else None
    return {
        'iops': int(result['iops']),
        # Little's law on the 10 % trimmed mean: what descheduled samples
        # cannot move (stats.py); iops beside it is completed / elapsed.
        'iops_trim': stats.trimmed_iops(tmean, in_flight),
        'p50_us': int(result['p50_ns']) / 1000.0,
        'p90_us': (int(result['p90_ns']) / 1000.0 if 'p90_ns' in result
                   else None),
        'p99_us': int(result['p99_ns']) / 1000.0,
        'tmean_us': tmean / 1000.0 if tmean else None,
        'ios': n,
        'cpu_guest_us_per_io': cpu_guest / 1000.0 / n,
        'cpu_vmm_us_per_io': cpu_vmm / 1000.0 / n,
        'cpu_server_us_per_io': cpu_server / 1000.0 / n,
        'cpu_us_per_io': (cpu_guest + cpu_vmm + cpu_server) / 1000.0 / n,
    }


def run_qemu(qemu, build, tmp, server_args, qd, ios, mode='poll',
             server_extra=(), plan=None, queues=1):
    """The same guest and server under a peer QEMU; numbers QEMU cannot
    report (trapped accesses) are None, its exits come from KVM's
    debugfs where that is mounted."""
    plan = plan or pin_plan([])
    server, sock = start_server(build, tmp,
                                list(server_args) + list(server_extra))
    pin_threads(server.pid, plan, vcpu_threads=False)
    serial = os.path.join(tmp, 'serial-qemu.log')
    if os.path.exists(serial):
        os.unlink(serial)
    # vfio-user needs guest RAM in shared memory the server can map.
    argv = [qemu, '-accel', 'kvm', '-M', 'pc', '-m', '256',
            '-name', 'bench,debug-threads=on',
            '-object', 'memory-backend-memfd,id=mem,size=256M,share=on',
            '-machine', 'memory-backend=mem', '-display', 'none',
            '-nodefaults', '-serial', 'file:' + serial,
            '-kernel', os.path.join(build, 'tests', 'guest', 'nvme.elf'),
            '-append', 'qd=%d ios=%d mode=%s queues=%d' % (qd, ios, mode,
                                                           queues),
            '-device', 'isa-debug-exit,iobase=0xf4,iosize=4',
            '-device', json.dumps({'driver': 'vfio-user-pci',
                                   'socket': {'type': 'unix',
                                              'path': sock}})]
    vmm = None
    try:
        vmm = spawn(argv, stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE)
        watch = watch_peer(vmm, serial, plan, server_pid=server.pid)
        status = vmm.wait(timeout=30)
    finally:
        if vmm and vmm.poll() is None:
            vmm.kill()
        if vmm:
            reap(vmm)
        server.terminate()
        reap(server)
    with open(serial, errors='replace') as f:
        out = f.read()
    result = parse_result(out)
    # isa-debug-exit: QEMU exits with (code << 1) | 1, 1 for a pass.
    if status != 1 or result is None:
        sys.stderr.write(out + vmm.stderr.read().decode(errors='replace'))
        raise RuntimeError('guest failed under QEMU (exit status %s): %s' %
                           (status, ' '.join(argv)))
    n = int(result['ios'])
    # QEMU has no x-query-vfio / x-query-kvm: those columns stay empty.
    return dict(io_numbers(result, watch['cpu_guest'], watch['cpu_vmm'],
                           watch['cpu_server']),
                exits_per_io=stats.per_io(watch['exits'], n),
                vmexits_per_io=stats.per_io(watch['vmexits'], n),
                conduit_exits_per_io=None, forwarded_per_io=None,
                served_per_io=None, trapped_per_io=None,
                coalesced_per_io=None, relocated=None)


def watch_peer(vmm, serial, plan, server_pid=None, marker=START_MARKER):
    """Follows a peer QEMU @vmm that exits at the guest's isa-debug-exit
    write: pins it (@plan), samples its threads' CPU and KVM's exit count
    every few milliseconds (a thread or the VM gone keeps its last
    sample), and returns {cpu_guest, cpu_vmm, cpu_server (ns), exits}
    from @marker in the serial log on (or from the start without it)."""
    deadline = time.time() + TIMEOUT
    pinned = False
    started = False
    last, cpu0 = {}, {}
    cpu0_server = 0
    exits0 = exits = None
    while vmm.poll() is None and time.time() < deadline:
        if not pinned:
            pinned = pin_threads(vmm.pid, plan) > 0 or not plan['vcpu']
        # Threads keep their last count when they exit: merge.
        last.update(thread_cpu_ns(vmm.pid))
        e = kvm_vm_stat(vmm.pid)
        exits = e if e is not None else exits
        if not started and serial_has(serial, marker):
            started = True
            cpu0 = dict(last)
            exits0 = exits
            cpu0_server = process_cpu_ns(server_pid) if server_pid else 0
        time.sleep(0.005)
    cpu_server = (process_cpu_ns(server_pid) - cpu0_server
                  if server_pid else 0)
    cpu_guest, cpu_vmm = split_cpu(cpu_delta(last, cpu0))
    return {'cpu_guest': cpu_guest, 'cpu_vmm': cpu_vmm,
            'cpu_server': cpu_server,
            'exits': stat_delta(exits, exits0, 'mmio_exits'),
            'vmexits': stat_delta(exits, exits0, 'exits')}


def qemu_version(qemu):
    """(major, minor) of a QEMU binary, or None."""
    try:
        out = subprocess.run([qemu, '--version'], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=30,
                             check=True).stdout.decode()
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version (\d+)\.(\d+)', out)
    return (int(m.group(1)), int(m.group(2))) if m else None
