#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The CPUID a guest sees under Conduit's KVM accelerator.

KVM_GET_SUPPORTED_CPUID is filtered to what guests can rely on: CX16 and
MONITOR are withheld, and the HYPERVISOR bit is set.  A crafted PVH image
(see test_kvm_vmm.py) runs CPUID leaf 1 and reports those three bits of
ECX through isa-debug-exit: value = CX16 << 2 | MONITOR << 1 | HYPERVISOR.

Environment (set by meson): CONDUIT_BINARY.  Skips without /dev/kvm.
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


class KvmCpuid(unittest.TestCase):
    def setUp(self):
        if not CONDUIT or not os.access(CONDUIT, os.X_OK):
            self.skipTest('CONDUIT_BINARY not built')
        if not guestboot.kvm_usable():
            self.skipTest('no usable /dev/kvm')
        self.tmp = tempfile.mkdtemp(prefix='conduit-cpuid-')

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def cpuid1_bits(self, *extra):
        image = os.path.join(self.tmp, 'cpuid.elf')
        with open(image, 'wb') as f:
            f.write(pvh_elf(CPUID1_BITS))
        proc = subprocess.run(
            [CONDUIT, '-accel', 'kvm', '-nographic', '-m', '64',
             '-kernel', image,
             '-device', 'isa-debug-exit,iobase=0xf4,iosize=1'] + list(extra),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, timeout=TIMEOUT)
        # The VMM exits with (value << 1) | 1.
        self.assertEqual(proc.returncode & 1, 1,
                         proc.stderr.decode(errors='replace'))
        value = proc.returncode >> 1
        return {'cx16': bool(value & 4), 'monitor': bool(value & 2),
                'hypervisor': bool(value & 1)}

    def test_cx16_and_monitor_withheld_hypervisor_set(self):
        bits = self.cpuid1_bits()
        self.assertEqual(bits, {'cx16': False, 'monitor': False,
                                'hypervisor': True})


if __name__ == '__main__':
    sys.exit(kvmtest.main('pvh'))
