# SPDX-License-Identifier: GPL-2.0-or-later
"""One rule for every test that needs KVM: it runs, directly or nested.

A probe decides once per run what this host's KVM can run, by booting
tiny guests under Conduit (never from /dev/kvm merely existing):

  api       /dev/kvm opens, KVM_GET_API_VERSION is 12, KVM_CREATE_VM works
  pvh       the tests/guest PVH images run (the hello guest passes)
  linux     what a Linux kernel needs at CPL0: SSE, CMPXCHG16B, IRETQ,
            and CPL0 code at native speed (a 10M-instruction loop within
            LINUX_CPL0_BUDGET seconds; emulated CPL0 takes ~5 s)
  firmware  real mode from the reset vector (-bios with a 64 KiB image)
  dirtyring the hello guest passes with -accel kvm,dirty-ring-size=4096
            (KVM_CAP_DIRTY_LOG_RING: test_kvm_migration logs through it)

The verdict is printed in each test's log ("kvm-probe: ...") and cached
for the run (one `meson test` invocation) under the build tree.

A test declares what it needs; kvmtest then runs it

  direct    on this host, when the verdict says it can, or
  nested    inside ONE L1 guest per run (Debian's QEMU under TCG, -cpu
            max, kvm-amd inside; the host's root shared read-only over 9p,
            as scripts/bench/nested.py does), shared by every KVM test of
            the run that cannot run directly: the first one to need it
            boots L1 and runs all of them there, each with its own output,
            status and time; the others replay their own result.

Every test prints "KVM-WAY: <name> <direct|nested> <seconds>s".  A KVM test
skips only when neither way exists, and with CI=true that is a failure.

Python tests end with `sys.exit(kvmtest.main('pvh'))`; any other command
runs as `kvmtest.py run --name NAME --needs api -- ARGV...` (meson does
this for the C unit tests).  meson marks every such test with the
environment variable CONDUIT_KVM_NEEDS, which is how the shared L1 finds
them (build/meson-info/intro-tests.json).  docs/devel/testing.rst has
the details.

Environment:
  CONDUIT_HIDE_KVM=1     behave as if the host had no /dev/kvm
  CONDUIT_KVM_WAY=direct|nested   force a way (nested: even with KVM)
  CONDUIT_KVM_STATE_DIR  where the verdict and nested results are kept
  CONDUIT_KVM_L1_TIMEOUT guard against a hung L1 (seconds, default 3600)
  CONDUIT_KVM_L1_LOG     also copy the L1 console there
"""
import argparse
import contextlib
import fcntl
import json
import os
import re
import selectors
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import guestboot  # noqa: E402
import kvfio_image  # noqa: E402

# distro: firmware, then the Linux kernel it loads (test_firmware): a KVM
# that runs SeaBIOS but emulates CPL0 wrongly cannot boot a disk image.
# cpuid: the guest's CPUID is the table the VMM gave KVM_SET_CPUID2 (the
# paravirtual backend answers leaf 1 ECX from elsewhere).
NEEDS = ('api', 'pvh', 'linux', 'firmware', 'distro', 'cpuid', 'dirtyring')
WAYS = ('direct', 'nested')
NEEDS_ENV = 'CONDUIT_KVM_NEEDS'
IN_L1_ENV = 'CONDUIT_KVM_IN_L1'
RUN_ID_ENV = 'CONDUIT_KVM_RUN_ID'
STATE_ENV = 'CONDUIT_KVM_STATE_DIR'
HIDE_ENV = 'CONDUIT_HIDE_KVM'
WAY_ENV = 'CONDUIT_KVM_WAY'
SKIP = 77
# A loop of this many CPL0 instructions must finish within the budget for
# the "linux" verdict: ~5 ms on hardware, ~5 s where CPL0 is emulated.
LINUX_CPL0_INSNS = 10 * 1000 * 1000
LINUX_CPL0_BUDGET = float(os.environ.get('CONDUIT_KVM_CPL0_BUDGET', '2'))
# Guards against a hung probe guest only.
PROBE_TIMEOUT = 120
L1_TIMEOUT = int(os.environ.get('CONDUIT_KVM_L1_TIMEOUT', '3600'))
# One test inside L1 (its meson timeout, if shorter).
JOB_TIMEOUT = int(os.environ.get('CONDUIT_KVM_JOB_TIMEOUT', '1500'))
# An L1 guest that prints nothing but kernel lines for this long has
# wedged (see scripts/bench/nested.py).
L1_SILENCE = int(os.environ.get('CONDUIT_KVM_L1_SILENCE', '900'))
L1_MEMORY = os.environ.get('CONDUIT_KVM_L1_MEMORY', '3G')
L1_SMP = int(os.environ.get('CONDUIT_KVM_L1_SMP', '2'))
# Single-threaded TCG: with a thread per vCPU an idle L1 vCPU was at
# times never woken again (scripts/bench/nested.py).
L1_ACCEL = os.environ.get('CONDUIT_KVM_L1_ACCEL', 'tcg,thread=single')
# Loaded inside L1 besides kvm/kvm-amd: the 9p root, and what the KVM
# tests' devices use (tap for virtio-net).
L1_MODULES = ['virtio_pci', '9pnet_virtio', '9p', 'tun', 'loop',
              'crc32c_generic', 'ext4']
KERNEL_LINE = re.compile(r'^\[\s*\d+\.\d+\] ')
# What the jobs inside L1 inherit from this run's environment.
L1_PASS_ENV = ('CI', 'ASAN_OPTIONS', 'UBSAN_OPTIONS', 'QTEST_TIMEOUT',
               'GUEST_BOOT_TIMEOUT', 'CONDUIT_PEER_QEMU')


def truthy(value):
    return (value or '').lower() in ('1', 'y', 'yes', 'true', 'on')


def in_ci():
    return truthy(os.environ.get('CI'))


def in_l1():
    return os.environ.get(IN_L1_ENV) == '1'


# '# ' while the output is TAP (kvmtest.py run): comments to meson.
_PREFIX = ''


def log(msg):
    print('\n'.join(_PREFIX + line for line in msg.split('\n')),
          flush=True)


# ---- where things live ----

def build_dir(conduit=None):
    """The build tree: CONDUIT_BUILD_ROOT, else CONDUIT_BINARY's dir."""
    if os.environ.get('CONDUIT_BUILD_ROOT'):
        return os.path.abspath(os.environ['CONDUIT_BUILD_ROOT'])
    conduit = conduit or os.environ.get('CONDUIT_BINARY', '')
    if conduit:
        return os.path.dirname(os.path.abspath(conduit))
    return os.path.abspath('build')


def conduit_binary(build=None):
    return os.environ.get('CONDUIT_BINARY') or \
        os.path.join(build or build_dir(), 'conduit-system-x86_64')


def _proc_start(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[19]
    except (OSError, IndexError):
        return '0'


def _proc_cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return [a.decode(errors='replace')
                    for a in f.read().split(b'\0') if a]
    except OSError:
        return []


def _meson_parent():
    """The pid of the `meson test` that started us (directly, or through
    the kvmtest.py wrapper), or None."""
    pid = os.getppid()
    for _ in range(3):
        argv = _proc_cmdline(pid)
        if any(os.path.basename(a).startswith('meson') for a in argv[:2]) \
                and 'test' in argv:
            return pid
        try:
            with open('/proc/%d/stat' % pid) as f:
                pid = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
        if pid <= 1:
            return None
    return None


def run_id():
    """What "this run" is: one `meson test` invocation (its pid and start
    time), else this process."""
    if os.environ.get(RUN_ID_ENV):
        return os.environ[RUN_ID_ENV]
    pid = _meson_parent() or os.getpid()
    return '%s-%d-%s' % ('meson' if pid != os.getpid() else 'pid', pid,
                         _proc_start(pid))


def state_dir(build=None):
    """This run's directory: the probe's verdict, the nested results."""
    root = os.environ.get(STATE_ENV) or \
        os.path.join(build or build_dir(), 'tests', 'functional',
                     'kvm-state')
    d = os.path.join(root, run_id())
    try:
        os.makedirs(d, exist_ok=True)
        _prune(root, d)
    except OSError:
        # A read-only build tree (inside an L1 guest): a private one.
        d = os.path.join(tempfile.gettempdir(), 'conduit-kvm-state-%d' %
                         os.getuid(), run_id())
        os.makedirs(d, exist_ok=True)
    return d


def _prune(root, keep, runs=4):
    """Only the newest @runs run directories stay."""
    dirs = sorted((os.path.join(root, n) for n in os.listdir(root)),
                  key=lambda p: os.stat(p).st_mtime)
    for old in dirs[:-runs]:
        if old != keep:
            shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def locked(path):
    with open(path, 'a') as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# ---- the probe ----

def probe_api():
    """(ok, why) for /dev/kvm's API itself."""
    return guestboot.kvm_api()


# What a Linux kernel needs of CPL0, step by step: the guest prints the
# step's letter on COM1 once it is done.  A: entered (32-bit PVH),
# B: long mode, C: SSE, D: CMPXCHG16B, E: IRETQ, F: a loop of
# LINUX_CPL0_INSNS instructions; then debug-exit 0x2a.  X: a step
# computed the wrong result (debug-exit 0x15).
LINUX_PROBE_ASM = r"""
        .section .note.pvh, "a", @note
        .align 4
        .long 4, 4, 18
        .asciz "Xen"
        .long _start

        .text
        .code32
        .globl _start
_start:
        mov $0x80000, %esp
        mov $0x3f8, %dx
        mov $'A', %al
        out %al, %dx
        lgdt gdtr
        mov $pml4, %eax
        mov %eax, %cr3
        mov %cr4, %eax
        or $0x20, %eax
        mov %eax, %cr4
        mov $0xc0000080, %ecx
        rdmsr
        or $0x100, %eax
        wrmsr
        mov %cr0, %eax
        or $0x80000000, %eax
        mov %eax, %cr0
        ljmp $0x08, $long_mode

        .code64
long_mode:
        mov $0x10, %ax
        mov %ax, %ds
        mov %ax, %es
        mov %ax, %ss
        mov $0x80000, %rsp
        mov $0x3f8, %dx
        mov $'B', %al
        out %al, %dx
        mov %cr0, %rax
        and $~4, %rax
        or $2, %rax
        mov %rax, %cr0
        mov %cr4, %rax
        or $0x600, %rax
        mov %rax, %cr4
        movups sse_in, %xmm0
        addps %xmm0, %xmm0
        movups %xmm0, sse_out
        cmpl $0x40000000, sse_out
        jne fail
        mov $0x3f8, %dx
        mov $'C', %al
        out %al, %dx
        xor %eax, %eax
        xor %edx, %edx
        mov $1, %ebx
        xor %ecx, %ecx
        lock cmpxchg16b dq
        jnz fail
        cmpq $1, dq
        jne fail
        mov $0x3f8, %dx
        mov $'D', %al
        out %al, %dx
        mov %rsp, %rax
        push $0x10
        push %rax
        pushfq
        push $0x08
        lea 2f(%rip), %rax
        push %rax
        iretq
2:      mov $0x3f8, %dx
        mov $'E', %al
        out %al, %dx
        mov $@LOOPS@, %ecx
3:      dec %ecx
        jnz 3b
        mov $'F', %al
        out %al, %dx
        mov $0x2a, %al
        out %al, $0xf4
4:      hlt
        jmp 4b
fail:   mov $0x3f8, %dx
        mov $'X', %al
        out %al, %dx
        mov $0x15, %al
        out %al, $0xf4
        jmp 4b

        .data
        .align 16
sse_in: .long 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000
sse_out: .long 0, 0, 0, 0
        .align 16
dq:     .quad 0, 0
gdt:    .quad 0, 0x00af9a000000ffff, 0x00cf92000000ffff
gdtr:   .word 23
        .long gdt
        .align 4096
pml4:   .quad pdpt + 3
        .fill 511, 8, 0
pdpt:   .quad pd + 3
        .fill 511, 8, 0
pd:     .quad 0x83
        .quad 0x200083
        .fill 510, 8, 0
"""

PROBE_LDS = """
ENTRY(_start)
PHDRS { image PT_LOAD FLAGS(7); note PT_NOTE FLAGS(4); }
SECTIONS {
    . = 0x100000;
    .text : { *(.text) } :image
    .note : { *(.note.pvh) } :image :note
    .data : { *(.data) } :image
    /DISCARD/ : { *(.note.gnu.*) *(.note.GNU-stack) }
}
"""
LINUX_STEPS = {'A': 'PVH entry', 'B': 'long mode', 'C': 'SSE at CPL0',
               'D': 'CMPXCHG16B at CPL0', 'E': 'IRETQ at CPL0',
               'F': '%dM-instruction CPL0 loop' % (LINUX_CPL0_INSNS // 10**6)}


def firmware_image():
    """64 KiB of firmware: at the reset vector (real mode) it writes 0x2a
    to the debug-exit port and halts."""
    code = bytes.fromhex('B02A' 'E6F4' 'F4' 'EBFD')
    img = bytearray(0x10000)
    img[0xfff0:0xfff0 + len(code)] = code
    return bytes(img)


def _stream(argv, timeout, stop=None):
    """Runs @argv, returns (status or None if killed, [(time, chunk)]).
    @stop(chunks) may return True to kill it early."""
    rc, chunks, _ = guestboot.stream(argv, timeout, stop=stop)
    return rc, chunks


def _conduit_argv(conduit, *extra, accel='kvm'):
    return [conduit, '-accel', accel, '-M', 'pc', '-m', '64', '-nodefaults',
            '-display', 'none', '-serial', 'stdio', '-no-reboot',
            '-device', 'isa-debug-exit,iobase=0xf4,iosize=4'] + list(extra)


def probe_pvh(conduit, guest_dir, accel='kvm'):
    hello = os.path.join(guest_dir, 'hello.elf')
    if not os.path.exists(hello):
        return False, 'the hello guest is not built (%s)' % hello
    rc, chunks = _stream(_conduit_argv(conduit, '-kernel', hello, '-append',
                                       'expect=hello-world', accel=accel),
                         PROBE_TIMEOUT)
    out = b''.join(c for _, c in chunks).decode(errors='replace')
    if rc == guestboot.EXIT_PASS and \
            re.search(r'SUMMARY: \d+ tests, 0 unexpected failures', out):
        return True, 'the hello guest passed'
    tail = out.strip().splitlines()[-1:] or ['no output']
    return False, 'the hello guest did not pass (status %s: %s)' % (
        'timeout' if rc is None else rc, tail[0][:160])


def probe_dirty_ring(conduit, guest_dir):
    ok, why = probe_pvh(conduit, guest_dir,
                        accel='kvm,dirty-ring-size=4096')
    return ok, (why + ' with dirty-ring-size=4096' if ok else
                'dirty-ring-size=4096: ' + why)


def linux_probe_elf(tmp, build=None):
    """The Linux probe guest: kept in the build tree once built there (an
    L1 guest, whose build tree is read-only, finds it ready); else built
    into @tmp.  None without gcc."""
    cached = os.path.join(build or build_dir(), 'tests', 'functional',
                          'kvm-probe', 'linux-probe.elf')
    try:
        if os.stat(cached).st_mtime >= os.stat(__file__).st_mtime:
            return cached
    except OSError:
        pass
    gcc = shutil.which('gcc')
    if not gcc:
        return None
    src, lds, elf = (os.path.join(tmp, n) for n in
                     ('linux-probe.S', 'probe.lds', 'linux-probe.elf'))
    with open(src, 'w') as f:
        f.write(LINUX_PROBE_ASM.replace('@LOOPS@',
                                        str(LINUX_CPL0_INSNS // 2)))
    with open(lds, 'w') as f:
        f.write(PROBE_LDS)
    subprocess.run([gcc, '-nostdlib', '-static', '-no-pie',
                    '-Wl,--build-id=none', '-Wl,-z,noexecstack',
                    '-Wl,--no-warn-rwx-segments', '-T', lds, '-o', elf, src],
                   check=True)
    try:
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        shutil.copy(elf, cached + '.tmp')
        os.replace(cached + '.tmp', cached)
    except OSError:
        pass
    return elf


# 32-bit PVH code: CPUID.1, ECX bits 25-30 (AES, XSAVE, OSXSAVE, AVX,
# F16C, RDRAND) to the debug-exit port.
CPUID_PROBE = bytes.fromhex(
    'B801000000'        # mov eax, 1
    '31C9'              # xor ecx, ecx
    '0FA2'              # cpuid
    '89C8'              # mov eax, ecx
    'C1E819'            # shr eax, 25
    '83E03F'            # and eax, 0x3f
    '66BAF400EE'        # mov dx, 0xf4; out dx, al
    'F4EBFD')           # hlt; jmp hlt
# AES, AVX, F16C, RDRAND of CPUID_PROBE's value, and their -cpu names.
CPUID_PROBE_HIDDEN = 0x39
CPUID_PROBE_CPU = 'host,-aes,-avx,-f16c,-rdrand'


def probe_cpuid(conduit, tmp):
    """Does the guest see the CPUID table Conduit sets?  With
    CPUID_PROBE_CPU, none of the four features may show."""
    from test_kvm_vmm import pvh_elf
    img = os.path.join(tmp, 'cpuid-probe.elf')
    with open(img, 'wb') as f:
        f.write(pvh_elf(CPUID_PROBE))
    seen = {}
    for cpu in (None, CPUID_PROBE_CPU):
        extra = ('-kernel', img) + (('-cpu', cpu) if cpu else ())
        rc, chunks = _stream(_conduit_argv(conduit, *extra), PROBE_TIMEOUT)
        if rc is None or not rc & 1:
            out = b''.join(c for _, c in chunks).decode(errors='replace')
            return False, 'the CPUID guest did not exit (status %s: %s)' % (
                'timeout' if rc is None else rc,
                out.strip()[-160:] or 'no output')
        seen[cpu] = (rc >> 1) & CPUID_PROBE_HIDDEN
    if seen[CPUID_PROBE_CPU]:
        return False, ('-cpu %s, yet the guest sees CPUID.1:ECX %#x '
                       '(mask %#x): KVM does not apply the table' % (
                           CPUID_PROBE_CPU, seen[CPUID_PROBE_CPU] << 25,
                           CPUID_PROBE_HIDDEN << 25))
    return True, 'features cleared in the table are gone (CPUID.1:ECX ' \
        '%#x by default, mask %#x)' % (seen[None] << 25,
                                       CPUID_PROBE_HIDDEN << 25)


def probe_linux(conduit, tmp):
    elf = linux_probe_elf(tmp)
    if not elf:
        return False, 'gcc is needed to build the probe guest', {}

    def seen(chunks, ch):
        for t, data in chunks:
            if ch.encode() in data:
                return t
        return None

    def over_budget(chunks):
        t = seen(chunks, 'E')
        return t is not None and seen(chunks, 'F') is None and \
            time.monotonic() - t > 2 * LINUX_CPL0_BUDGET

    rc, chunks = _stream(_conduit_argv(conduit, '-kernel', elf),
                         PROBE_TIMEOUT, over_budget)
    out = b''.join(c for _, c in chunks).decode(errors='replace')
    steps = {k: k in out for k in LINUX_STEPS}
    t_e, t_f = seen(chunks, 'E'), seen(chunks, 'F')
    detail = {'steps': ''.join(k for k in LINUX_STEPS if steps[k])}
    if t_e is not None and t_f is not None:
        detail['cpl0_loop_s'] = round(t_f - t_e, 3)
    for k in LINUX_STEPS:
        if not steps[k]:
            if k == 'F' and t_e is not None:
                return False, ('CPL0 code is not native: %s took over %.0f '
                               's' % (LINUX_STEPS['F'],
                                      2 * LINUX_CPL0_BUDGET)), detail
            return False, 'the probe guest stopped before: %s (%s)' % (
                LINUX_STEPS[k], out.strip()[-160:] or 'no output'), detail
    if 'X' in out:
        return False, 'a CPL0 instruction computed a wrong result', detail
    if detail['cpl0_loop_s'] > LINUX_CPL0_BUDGET:
        return False, ('CPL0 code is not native: %s took %.2f s' %
                       (LINUX_STEPS['F'], detail['cpl0_loop_s'])), detail
    return True, 'SSE, CMPXCHG16B, IRETQ at CPL0; %s in %.3f s' % (
        LINUX_STEPS['F'], detail['cpl0_loop_s']), detail


def probe_firmware(conduit, tmp):
    img = os.path.join(tmp, 'reset-vector.bin')
    with open(img, 'wb') as f:
        f.write(firmware_image())
    rc, chunks = _stream(_conduit_argv(conduit, '-bios', img), PROBE_TIMEOUT)
    out = b''.join(c for _, c in chunks).decode(errors='replace')
    if rc == (0x2a << 1) | 1:
        return True, 'real mode from the reset vector works'
    if rc == 1 and 'bios' in out.lower():
        return False, 'this Conduit boots no firmware (%s)' % (
            out.strip().splitlines()[0][:120] if out.strip() else rc)
    return False, 'the reset-vector guest did not exit (status %s: %s)' % (
        'timeout' if rc is None else rc, out.strip()[-160:] or 'no output')


def run_probe(conduit, guest_dir):
    """Probes now; returns the verdict (a dict)."""
    start = time.monotonic()
    v = {'where': 'L1 guest' if in_l1() else 'host', 'why': {},
         'detail': {}}
    v['api'], v['why']['api'] = probe_api()
    if not v['api']:
        for need in NEEDS[1:]:
            v[need], v['why'][need] = False, 'no usable KVM'
    elif not os.access(conduit, os.X_OK):
        for need in NEEDS[1:]:
            v[need], v['why'][need] = False, '%s is not built' % conduit
    else:
        with tempfile.TemporaryDirectory(prefix='conduit-kvm-probe-') as t:
            v['pvh'], v['why']['pvh'] = probe_pvh(conduit, guest_dir)
            v['linux'], v['why']['linux'], v['detail']['linux'] = \
                probe_linux(conduit, t)
            v['firmware'], v['why']['firmware'] = probe_firmware(conduit, t)
            v['cpuid'], v['why']['cpuid'] = probe_cpuid(conduit, t)
            if v['pvh']:
                v['dirtyring'], v['why']['dirtyring'] = probe_dirty_ring(
                    conduit, guest_dir)
            else:
                v['dirtyring'], v['why']['dirtyring'] = False, \
                    'the hello guest does not run at all'
        v['distro'] = v['linux'] and v['firmware']
        v['why']['distro'] = 'firmware %s, linux %s' % (
            'yes' if v['firmware'] else 'no', 'yes' if v['linux'] else 'no')
    v['seconds'] = round(time.monotonic() - start, 1)
    return v


def describe(v):
    return 'kvm-probe (%s, %.1f s): %s' % (v['where'], v['seconds'], '; '.join(
        '%s %s (%s)' % (n, 'yes' if v[n] else 'no', v['why'][n])
        for n in NEEDS))


_VERDICT = None


def probe(conduit=None, guest_dir=None, quiet=False):
    """This run's verdict: probed by the first caller, then cached in the
    run's state directory.  Printed unless @quiet."""
    global _VERDICT
    if _VERDICT is None:
        conduit = conduit or conduit_binary()
        guest_dir = guest_dir or guestboot.guest_dir()
        d = state_dir(build_dir(conduit))
        path = os.path.join(d, 'probe.json')
        with locked(os.path.join(d, 'probe.lock')):
            if os.path.exists(path):
                with open(path) as f:
                    _VERDICT = json.load(f)
                _VERDICT['cached'] = True
            else:
                _VERDICT = run_probe(conduit, guest_dir)
                with open(path + '.tmp', 'w') as f:
                    json.dump(_VERDICT, f)
                os.replace(path + '.tmp', path)
                _VERDICT['cached'] = False
        if not quiet:
            log(describe(_VERDICT) + ('; cached for this run' if
                                      _VERDICT['cached'] else
                                      '; probed now, cached for this run'))
    return _VERDICT


def nested_unavailable():
    """Why no L1 guest can be booted here, or None."""
    if not guestboot.qemu_binary():
        return 'qemu-system-x86_64 is not installed'
    if not os.access('/bin/busybox', os.X_OK):
        return 'busybox-static is not installed'
    try:
        kvfio_image.find_kernel()
    except kvfio_image.Unavailable as e:
        return str(e)
    return None


def way(needs, verdict=None):
    """('direct' | 'nested' | None, why) for a test needing @needs."""
    if needs not in NEEDS:
        raise ValueError('unknown KVM need %r (one of %s)' % (needs, NEEDS))
    forced = os.environ.get(WAY_ENV)
    v = verdict or probe()
    if in_l1():
        if v[needs]:
            return 'direct', 'inside the shared L1 guest: %s' % \
                v['why'][needs]
        return None, 'the L1 guest\'s KVM cannot: %s' % v['why'][needs]
    if v[needs] and forced != 'nested':
        return 'direct', v['why'][needs]
    if forced == 'direct':
        return None, '%s=direct, but this host cannot: %s' % (
            WAY_ENV, v['why'][needs])
    why = nested_unavailable()
    if why:
        return None, 'this host cannot (%s) and no L1 guest can boot ' \
            '(%s)' % (v['why'][needs], why)
    return 'nested', 'this host cannot: %s' % v['why'][needs]


def report_way(name, how, seconds, extra=''):
    """The line scripts/ci-summary lists.  Inside the L1 guest it is
    KVM-WAY-IN-L1 (the host side says "nested" for the same test)."""
    log('%s: %s %s %.1fs%s' % ('KVM-WAY-IN-L1' if in_l1() else 'KVM-WAY',
                               name, how, seconds,
                               ' ' + extra if extra else ''))


def no_way(name, why):
    """The exit status when a KVM test has no way to run."""
    if in_ci():
        log('KVM-WAY: %s none: %s; CI=true makes that a failure' %
            (name, why))
        return 1
    log('KVM-WAY: %s none: %s (skipped; with CI=true this fails)' %
        (name, why))
    return SKIP


def require(testcase, needs='pvh'):
    """For a unittest.TestCase that needs KVM outside kvmtest.main():
    returns if it can run here, else skips (fails with CI=true)."""
    how, why = way(needs)
    if how == 'direct':
        return
    msg = 'needs KVM (%s): %s' % (needs, why if how is None else
                                  'runs nested through kvmtest.main()')
    if in_ci() and how is None:
        testcase.fail(msg)
    testcase.skipTest(msg)


def require_l1_kvm(testcase):
    """An L1 guest came up without /dev/kvm (no nested SVM): neither way
    exists for its KVM case.  Skips, or fails with CI=true."""
    msg = 'no /dev/kvm inside the L1 guest (no nested SVM)'
    if in_ci():
        testcase.fail(msg + '; CI=true makes that a failure')
    testcase.skipTest(msg)


# ---- the shared L1 guest ----

def intro_tests(build):
    path = os.path.join(build, 'meson-info', 'intro-tests.json')
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return []


def _meson_selection():
    """(names, suites, no_suites) the parent `meson test` was given."""
    pid = _meson_parent()
    argv = _proc_cmdline(pid) if pid else []
    names, suites, no_suites = [], [], []
    try:
        argv = argv[argv.index('test') + 1:]
    except ValueError:
        return names, suites, no_suites
    with_value = {'-C', '--suite', '--no-suite', '--num-processes', '-j',
                  '--setup', '--wrapper', '--repeat', '--timeout-multiplier',
                  '-t', '--test-args', '--logbase', '--max-lines'}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ('--suite', '--no-suite') and i + 1 < len(argv):
            (suites if a == '--suite' else no_suites).append(argv[i + 1])
            i += 2
            continue
        if a.startswith('--suite='):
            suites.append(a.split('=', 1)[1])
        elif a.startswith('--no-suite='):
            no_suites.append(a.split('=', 1)[1])
        elif a in with_value:
            i += 1
        elif not a.startswith('-'):
            names.append(a.split(':')[-1])
        i += 1
    return names, suites, no_suites


def _suite_match(test_suites, wanted):
    for w in wanted:
        for s in test_suites:
            if s == w or s.split(':')[-1] == w:
                return True
    return False


def nested_jobs(build, me, verdict):
    """The KVM tests of this run that need the L1 guest: from meson's
    introspection, those the parent `meson test` selected; @me always."""
    names, suites, no_suites = _meson_selection()
    jobs = []
    tests = intro_tests(build) if _meson_parent() else []
    if not any(t['name'] == me for t in tests):
        # Not run by meson: this process's own command, and only it.
        keep = ('CONDUIT_', 'GUEST_', 'KVFIO_', 'VFIO_', 'LIBVIRT_')
        tests = [{'name': me, 'cmd': [os.path.realpath(sys.executable)] +
                  [os.path.abspath(sys.argv[0])] + sys.argv[1:],
                  'env': {k: v for k, v in os.environ.items()
                          if k.startswith(keep)},
                  'workdir': os.getcwd(), 'timeout': 3600}]
        tests[0]['env'].setdefault(NEEDS_ENV, 'pvh')
    for t in tests:
        needs = (t.get('env') or {}).get(NEEDS_ENV)
        if not needs or needs not in NEEDS:
            continue
        if t['name'] != me:
            if names and t['name'] not in names:
                continue
            if suites and not _suite_match(t.get('suite', []), suites):
                continue
            if no_suites and _suite_match(t.get('suite', []), no_suites):
                continue
            if verdict[needs] and os.environ.get(WAY_ENV) != 'nested':
                continue
        cmd = list(t['cmd'])
        if os.path.basename(cmd[0]).startswith('python'):
            # Not a pyenv shim: the interpreter itself (the L1 guest's
            # chroot has a bare environment).
            cmd[0] = os.path.realpath(sys.executable)
        env = {k: os.environ[k] for k in L1_PASS_ENV if k in os.environ}
        env.update(t.get('env') or {})
        jobs.append({'name': t['name'], 'cmd': cmd, 'env': env,
                     'workdir': t.get('workdir') or build,
                     'timeout': int(t.get('timeout') or 600)})
    return jobs


L1_INIT = kvfio_image.INIT_PROLOGUE + r'''
echo "KVMTEST-L1-BOOTED $(nproc) CPUs"
for m in @KVM_MODULES@; do
    insmod /lib/modules/$m || echo "KVMTEST-ERROR insmod $m"
done
for m in @EXTRA@; do
    insmod /conduit/$m || echo "KVMTEST-ERROR insmod $m"
done
[ -c /dev/kvm ] || echo "KVMTEST-ERROR no /dev/kvm in the L1 guest"
# Guests with more RAM than L1 (RAM above 4 GiB, mapped on demand): the
# memory is reserved, not touched.
echo 1 > /proc/sys/vm/overcommit_memory
''' + kvfio_image.HOSTROOT_MOUNT + r'''
# /tmp on ext4 (on a loop device over tmpfs), not tmpfs: O_DIRECT works
# there, as on a host's disk (test_kvm_virtio_blk's cache.direct=on).
dd if=/dev/zero of=/host/dev/shm/tmp.ext4 bs=1M count=0 seek=1024 2>/dev/null
if chroot /host /sbin/mkfs.ext4 -q -F /dev/shm/tmp.ext4 &&
   mount -o loop /host/dev/shm/tmp.ext4 /host/tmp; then
    chmod 1777 /host/tmp
else
    echo "KVMTEST-ERROR no ext4 /tmp: O_DIRECT cases will fail"
fi
mkdir -p /host@OUT@ 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 kvmout \
    /host@OUT@ || echo "KVMTEST-ERROR 9p mount of the results directory"
echo "KVMTEST-L1-UP"
chroot /host /usr/bin/env -i HOME=/root \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    @PYTHON@ @SELF@ l1-jobs @OUT@ 2>&1
echo "KVMTEST-L1-DONE"
sync
poweroff -f
'''


def _l1_lines(proc, deadline):
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf, last = b'', time.monotonic()
    while True:
        now = time.monotonic()
        if now > deadline:
            yield 'KVMTEST-HOST L1 guest timed out after %d s' % L1_TIMEOUT
            return
        if now - last > L1_SILENCE:
            yield 'KVMTEST-HOST L1 guest silent for %d s: killed' % L1_SILENCE
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
                last = time.monotonic()
            yield text


def boot_shared_l1(build, jobs, outdir, attempt=1):
    """Boots the L1 guest that runs @jobs and leaves each one's result in
    @outdir/<name>.json; returns a summary dict (boot time, console, the
    job that was running if L1 stopped before its end)."""
    qemu = guestboot.qemu_binary()
    ver, bzimage, mods = kvfio_image.find_kernel()
    cache = os.path.join(build, 'tests', 'functional', 'kvfio-cache')
    os.makedirs(cache, exist_ok=True)
    kernel = kvfio_image.cached_vmlinux(cache, ver, bzimage)
    kvm = set(os.path.basename(m) for m in
              kvfio_image.module_load_order(mods, kvfio_image.KVM_MODULES))
    extra = [m for m in kvfio_image.module_load_order(mods, L1_MODULES)
             if os.path.basename(m) not in kvm]
    with open(os.path.join(outdir, 'jobs.json'), 'w') as f:
        json.dump(jobs, f)
    init = (L1_INIT.replace('@EXTRA@', ' '.join(os.path.basename(m)
                                                for m in extra))
            .replace('@OUT@', shlex.quote(outdir))
            .replace('@PYTHON@', shlex.quote(os.path.realpath(
                sys.executable)))
            .replace('@SELF@', shlex.quote(os.path.abspath(__file__))))
    initrd_data = kvfio_image.kvm_l1_initrd(
        mods, init, (), [(os.path.basename(m), m) for m in extra])
    console = os.path.join(outdir, 'l1-console.log' if attempt == 1 else
                           'l1-console-%d.log' % attempt)
    summary = {'console': console, 'jobs': [j['name'] for j in jobs]}
    with tempfile.TemporaryDirectory(prefix='conduit-kvm-l1-') as tmp:
        initrd = os.path.join(tmp, 'initrd')
        with open(initrd, 'wb') as f:
            f.write(initrd_data)
        argv = kvfio_image.l1_argv(qemu, kernel, initrd, L1_MEMORY, L1_SMP)
        argv[argv.index('-accel') + 1] = L1_ACCEL
        argv += (kvfio_image.hostroot_argv() +
                 kvfio_image.virtfs_argv(outdir, 'kvmout', readonly=False))
        log('kvm-l1: booting the shared L1 guest (%s, TCG, %d vCPUs, %s; '
            'kvm-amd inside) for %d KVM test(s): %s' %
            (os.path.basename(qemu), L1_SMP, L1_MEMORY, len(jobs),
             ' '.join(summary['jobs'])))
        start = time.monotonic()
        with open(console, 'w') as logf:
            logf.write(' '.join(shlex.quote(a) for a in argv) + '\n')
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT)
            try:
                for line in _l1_lines(proc, start + L1_TIMEOUT):
                    logf.write(line + '\n')
                    logf.flush()
                    if line.startswith('KVMTEST-L1-UP'):
                        summary['boot_s'] = round(time.monotonic() - start,
                                                  1)
                        log('kvm-l1: L1 guest up after %.0f s' %
                            summary['boot_s'])
                    elif line.startswith(('KVMTEST-JOB', 'KVMTEST-ERROR',
                                          'KVMTEST-HOST')):
                        log('kvm-l1: ' + line)
                        if line.startswith('KVMTEST-JOB-START '):
                            summary['running'] = line.split()[1]
                        elif line.startswith('KVMTEST-JOB-END '):
                            summary['running'] = None
                    elif line.startswith('KVMTEST-L1-DONE'):
                        summary['finished'] = True
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
        summary['total_s'] = round(time.monotonic() - start, 1)
    if os.environ.get('CONDUIT_KVM_L1_LOG'):
        shutil.copy(console, os.environ['CONDUIT_KVM_L1_LOG'])
    log('kvm-l1: L1 guest ran %.0f s; console in %s' % (summary['total_s'],
                                                        console))
    return summary


def _hide_selftest(conduit):
    """Inside L1 (a real /dev/kvm): both ways of hiding it must work."""
    ok, _ = probe_api()
    lines = ['KVMTEST-HIDE api-visible %s' % ('yes' if ok else 'no')]
    env = dict(os.environ, **{HIDE_ENV: '1'})
    code = ('import sys; sys.path.insert(0, %r); import kvmtest; '
            'print(kvmtest.probe_api()[0])' % HERE)
    r = subprocess.run([sys.executable, '-c', code], env=env,
                       stdout=subprocess.PIPE, universal_newlines=True)
    lines.append('KVMTEST-HIDE env-hidden %s' %
                 ('yes' if r.stdout.strip() == 'False' else 'no'))
    env = dict(os.environ)
    env.pop(HIDE_ENV, None)
    unshare = shutil.which('unshare')
    if unshare:
        r = subprocess.run(
            [unshare, '-m', 'sh', '-c', 'mount --bind /dev/null /dev/kvm && '
             'exec "$0" -c "$1"', sys.executable, code], env=env,
            stdout=subprocess.PIPE, universal_newlines=True)
        lines.append('KVMTEST-HIDE mount-namespace-hidden %s' %
                     ('yes' if r.stdout.strip() == 'False' else 'no'))
    return lines


def _run_streamed(job, env):
    """Runs one job; each line it prints also goes to the L1 console as
    "KVMTEST-OUT name: line" (progress for the host's watchdog, and the
    story of a hang).  (status, output); -9 after JOB_TIMEOUT."""
    proc = subprocess.Popen(job['cmd'], env=env, cwd=job['workdir'],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + min(job['timeout'], JOB_TIMEOUT)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    out, buf = [], b''
    try:
        while True:
            if time.monotonic() > deadline:
                proc.kill()
                out.append(b'\n(timed out in the L1 guest)\n')
                break
            if not sel.select(timeout=1):
                continue
            data = os.read(proc.stdout.fileno(), 65536)
            if not data:
                break
            out.append(data)
            buf += data
            while b'\n' in buf:
                line, buf = buf.split(b'\n', 1)
                log('KVMTEST-OUT %s: %s' % (job['name'], line.decode(
                    'utf-8', 'replace')[:300]))
    finally:
        sel.close()
        proc.stdout.close()
    return proc.wait(), b''.join(out)


def l1_jobs(outdir):
    """Inside the L1 guest's chroot: run every job, one result file each."""
    with open(os.path.join(outdir, 'jobs.json')) as f:
        jobs = json.load(f)
    os.environ[IN_L1_ENV] = '1'
    os.environ[RUN_ID_ENV] = 'l1'
    os.environ[STATE_ENV] = '/tmp/kvm-state'
    os.environ.pop(HIDE_ENV, None)
    for line in _hide_selftest(None):
        log(line)
        with open(os.path.join(outdir, 'hide.log'), 'a') as f:
            f.write(line + '\n')
    for job in jobs:
        env = dict(os.environ)
        env.update(job['env'])
        env.update({IN_L1_ENV: '1', RUN_ID_ENV: 'l1',
                    STATE_ENV: '/tmp/kvm-state', 'PYTHONUNBUFFERED': '1'})
        env.pop(HIDE_ENV, None)
        env.pop(WAY_ENV, None)
        log('KVMTEST-JOB-START %s' % job['name'])
        start = time.monotonic()
        try:
            rc, out = _run_streamed(job, env)
        except OSError as e:
            rc, out = 127, str(e).encode()
        secs = round(time.monotonic() - start, 1)
        res = {'name': job['name'], 'rc': rc, 'seconds': secs,
               'output': out.decode('utf-8', 'replace')}
        tmp = os.path.join(outdir, job['name'] + '.json.tmp')
        with open(tmp, 'w') as f:
            json.dump(res, f)
        os.replace(tmp, os.path.join(outdir, job['name'] + '.json'))
        log('KVMTEST-JOB-END %s rc=%d %.1fs' % (job['name'], rc, secs))
    return 0


def _retry_after_a_stop(build, jobs, outdir, summary):
    """L1 stopped before the end (wedged, killed by the watchdog): the job
    that was running fails with the console's tail, and the jobs after it
    get one fresh L1 guest, so one hang does not cost every KVM test."""
    if summary.get('finished'):
        return summary
    hung = summary.get('running')
    if hung and not os.path.exists(os.path.join(outdir, hung + '.json')):
        with open(summary['console'], errors='replace') as f:
            tail = f.read()[-8000:]
        with open(os.path.join(outdir, hung + '.json'), 'w') as f:
            json.dump({'name': hung, 'rc': 1, 'seconds': 0,
                       'output': 'the L1 guest stopped while this test '
                                 'ran; its console ends:\n' + tail}, f)
    rest = [j for j in jobs
            if not os.path.exists(os.path.join(outdir, j['name'] + '.json'))]
    if not rest:
        return summary
    log('kvm-l1: the L1 guest stopped during %s; a second one runs the %d '
        'test(s) after it' % (hung, len(rest)))
    again = boot_shared_l1(build, rest, outdir, attempt=2)
    again['jobs'] = summary['jobs']
    again['first_boot'] = summary
    return again


def nested_result(name, verdict):
    """This test's result from the run's shared L1 guest, booting it (for
    every KVM test of the run that needs it) if nobody has yet."""
    build = build_dir()
    d = state_dir(build)
    outdir = os.path.join(d, 'l1')
    path = os.path.join(outdir, name + '.json')
    booted_here = False
    with locked(os.path.join(d, 'l1.lock')):
        done = os.path.join(outdir, 'done.json')
        if not os.path.exists(path) and (not os.path.exists(done) or
                                         name not in _load(done)['jobs']):
            if os.path.isdir(outdir) and not os.path.exists(done):
                shutil.rmtree(outdir)   # an earlier boot was killed
            elif os.path.exists(done):
                # A second boot for a test the first did not know of.
                outdir = os.path.join(d, 'l1-' + name)
                path = os.path.join(outdir, name + '.json')
                done = os.path.join(outdir, 'done.json')
            os.makedirs(outdir, exist_ok=True)
            jobs = nested_jobs(build, name, verdict)
            with tempfile.TemporaryDirectory() as tmp:
                linux_probe_elf(tmp, build)    # ready for L1's probe
            summary = boot_shared_l1(build, jobs, outdir)
            summary = _retry_after_a_stop(build, jobs, outdir, summary)
            summary['booted_by'] = name
            with open(done, 'w') as f:
                json.dump(summary, f)
            booted_here = True
        summary = _load(done)
    if not os.path.exists(path):
        with open(summary['console'], errors='replace') as f:
            tail = f.read()[-6000:]
        return None, summary, tail
    res = _load(path)
    res['booted_here'] = booted_here
    return res, summary, None


def _load(path):
    with open(path) as f:
        return json.load(f)


def run_nested(name, verdict):
    """Replays this test's nested result; its exit status."""
    res, summary, tail = nested_result(name, verdict)
    who = 'booted here' if res and res.get('booted_here') else \
        'booted by %s' % summary.get('booted_by')
    if os.path.exists(os.path.join(os.path.dirname(summary['console']),
                                   'hide.log')):
        with open(os.path.join(os.path.dirname(summary['console']),
                               'hide.log')) as f:
            log('kvm-l1: ' + ' '.join(f.read().split()))
    if res is None:
        log('kvm-l1: the shared L1 guest (%s) left no result for %s; its '
            'console ends:\n%s' % (who, name, tail))
        report_way(name, 'nested', 0, 'FAILED (no result from L1)')
        return 1
    log('kvm-l1: %s ran inside the shared L1 guest (%s; L1 up after %s s, '
        'ran %s s for %d KVM test(s)); its output:' %
        (name, who, summary.get('boot_s', '?'), summary.get('total_s', '?'),
         len(summary.get('jobs', []))))
    sys.stdout.write(res['output'])
    if not res['output'].endswith('\n'):
        sys.stdout.write('\n')
    report_way(name, 'nested', res['seconds'], 'rc=%d' % res['rc'])
    sys.stdout.flush()
    return res['rc']


# ---- entry points ----

def main(needs='pvh', name=None, run=None):
    """A Python KVM test's __main__: runs @run (default: the unittest
    classes of __main__, through guestboot.main()) directly or nested."""
    name = name or os.path.splitext(os.path.basename(sys.argv[0]))[0]
    verdict = probe()
    how, why = way(needs, verdict)
    log('kvm-way: %s needs %s: %s (%s)' % (name, needs, how or 'none', why))
    if how is None:
        return no_way(name, why)
    if how == 'nested':
        return run_nested(name, verdict)
    start = time.monotonic()
    rc = (run or guestboot.main)()
    if rc == SKIP:
        rc = no_way(name, 'every case skipped')
    report_way(name, 'direct', time.monotonic() - start,
               '(inside the shared L1 guest)' if in_l1() else '')
    return rc


def cmd_run(args):
    """A non-Python KVM test (a C unit test): the same, for a command."""
    global _PREFIX
    _PREFIX = '# '
    verdict = probe()
    how, why = way(args.needs, verdict)
    log('kvm-way: %s needs %s: %s (%s)' % (args.name, args.needs,
                                           how or 'none', why))
    if how is None:
        return no_way(args.name, why)
    if how == 'nested':
        return run_nested(args.name, verdict)
    start = time.monotonic()
    sys.stdout.flush()
    rc = subprocess.call(args.argv)
    report_way(args.name, 'direct', time.monotonic() - start,
               '(inside the shared L1 guest)' if in_l1() else '')
    return rc


def cli():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('probe', help='print this host\'s verdict')
    p.add_argument('--build-dir')
    p.add_argument('--json', action='store_true')
    p = sub.add_parser('run', help='run a command that needs KVM')
    p.add_argument('--name', required=True)
    p.add_argument('--needs', choices=NEEDS, default='api')
    p.add_argument('argv', nargs=argparse.REMAINDER)
    p = sub.add_parser('l1-jobs', help=argparse.SUPPRESS)
    p.add_argument('outdir')
    args = ap.parse_args()
    if args.cmd == 'probe':
        if args.build_dir:
            os.environ['CONDUIT_BUILD_ROOT'] = os.path.abspath(args.build_dir)
        v = probe(quiet=args.json)
        if args.json:
            print(json.dumps(v))
        return 0
    if args.cmd == 'run':
        if args.argv and args.argv[0] == '--':
            args.argv = args.argv[1:]
        return cmd_run(args)
    return l1_jobs(args.outdir)


if __name__ == '__main__':
    sys.exit(cli())
