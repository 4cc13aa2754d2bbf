# SPDX-License-Identifier: GPL-2.0-or-later
"""make bench where this machine has no /dev/kvm: one nested L1 guest.

The bench scripts need KVM.  Where /dev/kvm is missing but Debian's QEMU
(qemu-system-x86) and kernel (linux-image-amd64) are installed, they can
still run: Debian's QEMU boots an L1 Linux guest under TCG (q35,
-cpu max, which offers SVM), kvm-amd is loaded there, and the L1 guest
mounts this machine's root file system read-only over 9p and chroots
into it, so the same python3, build tree and peer QEMU run inside at
their usual paths (kvfio_image.py's HOSTROOT_* helpers, as the nested
libvirt test does).  The bench output directory is shared a second time,
read-write, so results.csv, summary.csv and the chart land where they
would without nesting.

With multi-threaded TCG the L1 guest sometimes stalled for good: the
kernel reported a soft lockup of an idle L1 vCPU that TCG never woke
again, in each of five full runs (one booted with idle=poll;
CONDUIT_BENCH_L1_APPEND adds kernel arguments).  So L1 runs
single-threaded TCG (CONDUIT_BENCH_L1_ACCEL), and a whole make bench
finished in 158 s.  The host side still kills a silent L1 guest after
SILENCE seconds without a line from the scripts; results.csv keeps every
run measured until then.

Every number measured that way is labelled LABEL_NESTED: L2 code runs
under TCG's emulated SVM, so IOPS and latency are orders of magnitude
below a host's and swing with the host's load; the counts per I/O (exits,
trapped and coalesced accesses) are exact.

--nested=auto (the default, or CONDUIT_BENCH_NESTED) runs directly where
the KVM probe of the tests (tests/functional/kvmtest.py: it boots the
hello guest) says this host's KVM runs the guests, and nested otherwise;
on forces the L1 guest, off never boots it.
"""
import os
import re
import selectors
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, 'tests', 'functional'))
import guestboot  # noqa: E402
import kvfio_image  # noqa: E402
import kvmtest  # noqa: E402

LABEL_NESTED = 'nested: L1 = QEMU TCG'
LABEL_HOST = 'host KVM'
# Set by the L1 guest's wrapper for the scripts it runs.
LABEL_ENV = 'CONDUIT_BENCH_LABEL'
MODES = ('auto', 'on', 'off')
# The L1 kernel's own console lines (only in nested-console.log).
KERNEL_LINE = re.compile(r'^\[\s*\d+\.\d+\] ')
# Passed through to the scripts inside the L1 guest.
PASS_ENV = ('CONDUIT_PEER_QEMU',)
# Guards against a hung L1 guest only.
TIMEOUT = int(os.environ.get('CONDUIT_BENCH_NESTED_TIMEOUT', '5400'))
# An L1 guest whose scripts print nothing for this long has wedged (seen
# under TCG: an L1 vCPU in a soft lockup, the kernel's watchdog lines the
# only output, not even the scripts' own watchdog running): it is killed
# and the run reported failed.  Kernel lines do not count as progress.
SILENCE = int(os.environ.get('CONDUIT_BENCH_NESTED_SILENCE', '600'))
L1_MEMORY = os.environ.get('CONDUIT_BENCH_L1_MEMORY', '3G')
L1_SMP = int(os.environ.get('CONDUIT_BENCH_L1_SMP', '2'))
# -accel for L1.  Single-threaded TCG: with one host thread per vCPU an
# idle L1 vCPU was at times never woken again (soft lockup) and no run
# reached its end; single-threaded, a whole make bench takes minutes.
L1_ACCEL = os.environ.get('CONDUIT_BENCH_L1_ACCEL', 'tcg,thread=single')
L1_APPEND = os.environ.get('CONDUIT_BENCH_L1_APPEND', '')


def label():
    """What the numbers of this process are: host KVM or nested."""
    return os.environ.get(LABEL_ENV) or LABEL_HOST


def is_nested():
    return label() != LABEL_HOST


def add_argument(ap):
    ap.add_argument('--nested', choices=MODES,
                    default=os.environ.get('CONDUIT_BENCH_NESTED', 'auto'),
                    help='auto: run directly with /dev/kvm, else inside a '
                         'nested L1 guest of Debian\'s QEMU (TCG); on: '
                         'always nested; off: never (default auto, or '
                         'CONDUIT_BENCH_NESTED)')


def unavailable():
    """Why an L1 guest cannot be booted here, or None."""
    if not guestboot.qemu_binary():
        return 'qemu-system-x86_64 is not installed'
    if not os.access('/bin/busybox', os.X_OK):
        return 'busybox-static is not installed'
    try:
        kvfio_image.find_kernel()
    except kvfio_image.Unavailable as e:
        return str(e)
    return None


def direct_verdict(build):
    """(ok, why): whether this host's KVM runs the tests/guest images,
    from the probe every KVM test uses (tests/functional/kvmtest.py):
    it boots the hello guest, it does not look for /dev/kvm."""
    conduit = os.path.join(build, 'conduit-system-x86_64') if build else None
    v = kvmtest.probe(conduit=conduit,
                      guest_dir=os.path.join(build, 'tests', 'guest')
                      if build else None)
    return v['pvh'], v['why']['pvh']


def decide(mode, build=None):
    """'direct', 'nested', or a sentence saying why nothing can run.
    auto: direct where the kvmtest probe says the host's KVM runs the
    guests, else nested; off never boots L1 (and does not probe)."""
    if mode == 'off':
        if guestboot.kvm_usable():
            return 'direct'
        return ('/dev/kvm is not available and --nested=off: the benchmark '
                'needs KVM (the qtest path has no vCPUs to time)')
    if mode == 'auto':
        ok, why = direct_verdict(build)
        if ok:
            print('%s: direct (kvm-probe: %s)' % (LABEL_HOST, why),
                  flush=True)
            return 'direct'
    else:
        why = '--nested=on'
    l1_why = unavailable()
    if l1_why:
        return ('this host\'s KVM cannot run the guests (%s) and no nested '
                'L1 guest can be booted (%s)' % (why, l1_why))
    print('%s: nested (host: %s)' % (LABEL_NESTED, why), flush=True)
    return 'nested'


def strip_nested(argv):
    """@argv without any --nested option."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == '--nested':
            skip = True
        elif not a.startswith('--nested='):
            out.append(a)
    return out


INIT = kvfio_image.INIT_PROLOGUE + r'''
echo "BENCH-L1-BOOTED $(nproc) CPUs"
for m in @KVM_MODULES@; do
    insmod /lib/modules/$m || echo "BENCH-ERROR insmod $m"
done
for m in @EXTRA@; do
    insmod /conduit/$m || echo "BENCH-ERROR insmod $m"
done
[ -c /dev/kvm ] || echo "BENCH-ERROR no /dev/kvm in the L1 guest"
''' + kvfio_image.HOSTROOT_MOUNT + r'''
# KVM's per-VM counters (exits of Conduit and of a peer QEMU alike).
mount -t debugfs debugfs /host/sys/kernel/debug || \
    echo "BENCH-ERROR no debugfs: exits per I/O of a peer not counted"
mkdir -p /host@OUT@ 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 benchout \
    /host@OUT@ || echo "BENCH-ERROR 9p mount of the output directory"
echo "BENCH-START"
chroot /host /usr/bin/env -i HOME=/root \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    @ENV@ /bin/sh -c @SCRIPT@ 2>&1
echo "BENCH-DONE"
sync
poweroff -f
'''


def l1_script(cwd, commands):
    """The shell the chroot runs: each command, then its exit status."""
    lines = ['cd %s || exit 1' % shlex.quote(cwd)]
    for i, argv in enumerate(commands):
        lines.append('%s; echo "BENCH-EXIT %d $?"' %
                     (' '.join(shlex.quote(a) for a in argv), i))
    return '\n'.join(lines)


def run_in_l1(build, commands, outdir):
    """Boots one L1 guest that runs @commands (argv lists, from the current
    directory) in the chroot, with @outdir shared read-write.  Streams the
    guest's console and keeps it in @outdir/nested-console.log.  Returns
    0 if every command exited 0."""
    qemu = guestboot.qemu_binary()
    ver, bzimage, mods = kvfio_image.find_kernel()
    cache = os.path.join(build, 'tests', 'functional', 'kvfio-cache')
    os.makedirs(cache, exist_ok=True)
    kernel = kvfio_image.cached_vmlinux(cache, ver, bzimage)
    kvm = set(os.path.basename(m) for m in
              kvfio_image.module_load_order(mods, kvfio_image.KVM_MODULES))
    extra = [m for m in kvfio_image.module_load_order(
        mods, kvfio_image.HOSTROOT_MODULES) if os.path.basename(m) not in kvm]
    outdir = os.path.abspath(outdir)
    env = {LABEL_ENV: LABEL_NESTED}
    for name in PASS_ENV:
        if os.environ.get(name):
            env[name] = os.environ[name]
    init = (INIT.replace('@EXTRA@', ' '.join(os.path.basename(m)
                                             for m in extra))
            .replace('@OUT@', shlex.quote(outdir))
            .replace('@ENV@', ' '.join(shlex.quote('%s=%s' % kv)
                                       for kv in sorted(env.items())))
            .replace('@SCRIPT@', shlex.quote(l1_script(os.getcwd(),
                                                       commands))))
    initrd_data = kvfio_image.kvm_l1_initrd(
        mods, init, (), [(os.path.basename(m), m) for m in extra])
    log_path = os.path.join(outdir, 'nested-console.log')
    with tempfile.TemporaryDirectory(prefix='conduit-bench-l1-') as tmp:
        initrd = os.path.join(tmp, 'initrd')
        with open(initrd, 'wb') as f:
            f.write(initrd_data)
        argv = kvfio_image.l1_argv(qemu, kernel, initrd, L1_MEMORY, L1_SMP)
        argv[argv.index('-accel') + 1] = L1_ACCEL
        if L1_APPEND:
            argv[argv.index('-append') + 1] += ' ' + L1_APPEND
        argv += (kvfio_image.hostroot_argv() +
                 kvfio_image.virtfs_argv(outdir, 'benchout',
                                         readonly=False))
        print('%s: booting an L1 guest (%s, %d vCPUs, %s; kvm-amd inside)'
              % (LABEL_NESTED, os.path.basename(qemu), L1_SMP, L1_MEMORY),
              flush=True)
        start = time.time()
        return stream(argv, log_path, len(commands), start)


def lines_of(proc, deadline):
    """The lines @proc prints, until it exits, @deadline passes or it
    prints nothing but kernel lines for SILENCE seconds (then it says so
    on stdout)."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = b''
    last = time.time()
    while True:
        now = time.time()
        if now > deadline:
            print('%s: L1 guest timed out after %d s' % (LABEL_NESTED,
                                                          TIMEOUT))
            return
        if now - last > SILENCE:
            print('%s: no progress from the L1 guest for %d s: wedged, '
                  'killed (what it measured so far is in results.csv)' %
                  (LABEL_NESTED, SILENCE), flush=True)
            return
        if not sel.select(timeout=5):
            continue
        data = os.read(proc.stdout.fileno(), 65536)
        if not data:
            if buf:
                yield buf.decode('utf-8', 'replace').rstrip('\r')
            return
        buf += data
        while b'\n' in buf:
            line, buf = buf.split(b'\n', 1)
            text = line.decode('utf-8', 'replace').rstrip('\r')
            if not KERNEL_LINE.match(text):
                last = time.time()
            yield text


def stream(argv, log_path, ncommands, start):
    """Runs the L1 guest, echoing what the chroot prints; its exit code."""
    status = {}
    started = lockup = False
    with open(log_path, 'w') as log:
        log.write(' '.join(shlex.quote(a) for a in argv) + '\n')
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        try:
            deadline = start + TIMEOUT
            for line in lines_of(proc, deadline):
                log.write(line + '\n')
                log.flush()
                if line.startswith('BENCH-START'):
                    started = True
                    print('%s: L1 guest up after %.0f s' %
                          (LABEL_NESTED, time.time() - start), flush=True)
                elif line.startswith('BENCH-EXIT '):
                    _, i, rc = line.split()[:3]
                    status[int(i)] = int(rc)
                elif line.startswith('BENCH-ERROR'):
                    print(line, flush=True)
                elif 'soft lockup' in line and not lockup:
                    lockup = True
                    print('%s: the L1 kernel reports: %s' %
                          (LABEL_NESTED, line), flush=True)
                elif (started and not line.startswith('BENCH-DONE') and
                      not KERNEL_LINE.match(line)):
                    print(line, flush=True)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    print('%s: L1 guest ran %.0f s; console in %s' %
          (LABEL_NESTED, time.time() - start, log_path), flush=True)
    if not started:
        print('%s: the L1 guest did not reach the benchmark' % LABEL_NESTED)
        return 1
    bad = [i for i in range(ncommands) if status.get(i) != 0]
    return 1 if bad else 0


def dispatch(args, build, script, outdir):
    """For a bench script's main(): None to run the benchmark here, or
    the exit status after it ran nested (or was impossible)."""
    how = decide(args.nested, build)
    if how == 'direct':
        return None
    if how != 'nested':
        print('%s: %s.  Nothing measured.' % (os.path.basename(script), how))
        return 0
    os.makedirs(outdir, exist_ok=True)
    inner = ([sys.executable, os.path.abspath(script), '--nested=off'] +
             strip_nested(sys.argv[1:]))
    return run_in_l1(build, [inner], outdir)
