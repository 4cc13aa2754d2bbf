#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The CPUID a guest sees under Conduit's KVM accelerator.

KVM_GET_SUPPORTED_CPUID is filtered to what guests can rely on: CX16 and
MONITOR are withheld, and the HYPERVISOR bit is set.  A crafted PVH image
(see test_kvm_vmm.py) runs CPUID leaf 1 and reports those three bits of
ECX through isa-debug-exit: value = CX16 << 2 | MONITOR << 1 | HYPERVISOR.

-cpu host,... changes reach the guest's CPUID: a second image reports
the KVM signature (leaf 0x40000000), a non-empty PMU leaf 0xA, AVX and
PDCM (leaf 1 ECX bits 28, 15); kvm=off, pmu=off and -avx clear them.

Needs a KVM that gives the guest the CPUID table Conduit sets (the
kvm-probe's "cpuid"): directly, or in the shared nested L1 guest.  The
paravirtual backend answers leaf 1 ECX on its own, so there it runs
nested.  Environment (set by meson): CONDUIT_BINARY.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestboot  # noqa: E402
import kvmtest  # noqa: E402
from test_kvm_vmm import pvh_elf  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
# Guards against a hung guest only.
TIMEOUT = 120

# 32-bit code: CPUID.1, then shift the three ECX bits into AL with
# BT + ADC AL,AL, write AL to the debug-exit port and halt.
CPUID1_BITS = bytes.fromhex(
    'B801000000'        # mov eax, 1
    '31C9'              # xor ecx, ecx
    '0FA2'              # cpuid
    '31C0'              # xor eax, eax
    '0FBAE10D'          # bt ecx, 13 (CX16)
    '12C0'              # adc al, al
    '0FBAE103'          # bt ecx, 3 (MONITOR)
    '12C0'              # adc al, al
    '0FBAE11F'          # bt ecx, 31 (HYPERVISOR)
    '12C0'              # adc al, al
    '66BAF400EE'        # mov dx, 0xf4; out dx, al
    'F4EBFD')           # hlt; jmp hlt


# value = PDCM << 3 | AVX << 2 | (leaf 0xA EAX != 0) << 1 | KVM signature
CPUID_CHANGES = bytes.fromhex(
    'B800000040'        # mov eax, 0x40000000
    '31C9'              # xor ecx, ecx
    '0FA2'              # cpuid
    '31FF'              # xor edi, edi
    '81FB4B564D4B'      # cmp ebx, "KVMK"
    '7501'              # jne +1
    '47'                # inc edi
    'B80A000000'        # mov eax, 0xa
    '31C9'              # xor ecx, ecx
    '0FA2'              # cpuid
    '85C0'              # test eax, eax
    '7403'              # jz +3
    '83CF02'            # or edi, 2
    'B801000000'        # mov eax, 1
    '31C9'              # xor ecx, ecx
    '0FA2'              # cpuid
    '0FBAE11C'          # bt ecx, 28 (AVX)
    '7303'              # jnc +3
    '83CF04'            # or edi, 4
    '0FBAE10F'          # bt ecx, 15 (PDCM)
    '7303'              # jnc +3
    '83CF08'            # or edi, 8
    '89F8'              # mov eax, edi
    '66BAF400EE'        # mov dx, 0xf4; out dx, al
    'F4EBFD')           # hlt; jmp hlt


class KvmCpuid(unittest.TestCase):
    def setUp(self):
        if not CONDUIT or not os.access(CONDUIT, os.X_OK):
            self.skipTest('CONDUIT_BINARY not built')
        if not guestboot.kvm_usable():
            self.skipTest('no usable /dev/kvm')
        self.tmp = tempfile.mkdtemp(prefix='conduit-cpuid-')

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_image(self, code, *extra):
        image = os.path.join(self.tmp, 'cpuid.elf')
        with open(image, 'wb') as f:
            f.write(pvh_elf(code))
        proc = subprocess.run(
            [CONDUIT, '-accel', 'kvm', '-nographic', '-m', '64',
             '-kernel', image,
             '-device', 'isa-debug-exit,iobase=0xf4,iosize=1'] + list(extra),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, timeout=TIMEOUT)
        # The VMM exits with (value << 1) | 1.
        self.assertEqual(proc.returncode & 1, 1,
                         proc.stderr.decode(errors='replace'))
        return proc.returncode >> 1

    def cpuid1_bits(self, *extra):
        value = self.run_image(CPUID1_BITS, *extra)
        return {'cx16': bool(value & 4), 'monitor': bool(value & 2),
                'hypervisor': bool(value & 1)}

    def test_cx16_and_monitor_withheld_hypervisor_set(self):
        bits = self.cpuid1_bits()
        self.assertEqual(bits, {'cx16': False, 'monitor': False,
                                'hypervisor': True})

    def changes(self, *cpu):
        value = self.run_image(CPUID_CHANGES, *cpu)
        return {'kvm': bool(value & 1), 'pmu': bool(value & 2),
                'avx': bool(value & 4), 'pdcm': bool(value & 8)}

    def test_cpu_host_options(self):
        plain = self.changes()
        print('cpuid as KVM offers it: %s' % plain)
        # The KVM signature is there unless hidden.
        self.assertTrue(plain['kvm'], plain)
        hidden = self.changes('-cpu', 'host,kvm=off,pmu=off,-avx,'
                              'migratable=on')
        self.assertEqual(hidden, {'kvm': False, 'pmu': False, 'avx': False,
                                  'pdcm': False})
        # QEMU's other spellings; the rest as the host has it.
        other = self.changes('-cpu', 'host,avx=off')
        self.assertEqual(other, dict(plain, avx=False))
        self.assertEqual(self.changes('-cpu', 'host,kvm=on,+avx'), plain)


if __name__ == '__main__':
    sys.exit(kvmtest.main('cpuid'))
