#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The KVM accelerator's own behaviour, seen from outside the VMM.

test_guest_conduit.py checks what the tests/guest images report; this file
checks the VMM around them with crafted PVH images (built here, byte by
byte): the PVH entry ABI, isa-debug-exit statuses, serial backends, triple
fault -> reset or exit (-no-reboot), fatal KVM exits reported with
registers, bad -kernel files, and -smp.

Environment (set by meson): CONDUIT_BINARY, GUEST_DIR.  Runs directly or
nested (kvmtest.py).  CONDUIT_TEST_LINUX=1 also boots a Linux bzImage
(CONDUIT_LINUX_KERNEL, default the host's newest /boot/vmlinuz-*) where
the probe says this KVM can run Linux.
"""
import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestboot  # noqa: E402
import kvmtest  # noqa: E402

CONDUIT = os.environ.get("CONDUIT_BINARY", "")
GUEST_DIR = guestboot.guest_dir()
TIMEOUT = 120

EXIT_PASS = (0 << 1) | 1
EXIT_FAIL = (1 << 1) | 1
SUMMARY_RE = re.compile(r"SUMMARY: (\d+) tests, (\d+) unexpected failures")
START_INFO_MAGIC = 0x336EC578


def pvh_elf(code, load=0x100000):
    """A minimal ELF64 with one PT_LOAD at load and the PVH entry note.

    The code gets a stack first: ESP is undefined at the PVH entry.
    """
    code = bytes.fromhex("BC") + struct.pack("<I", 0x80000) + code
    ehsize, phsize = 64, 56
    note = struct.pack("<III", 4, 4, 18) + b"Xen\0" + struct.pack("<I", load)
    note_off = ehsize + 2 * phsize
    code_off = 0x1000
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    eh = ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, load, ehsize, 0, 0,
                             ehsize, phsize, 2, 64, 0, 0)
    ph_load = struct.pack("<IIQQQQQQ", 1, 7, code_off, load, load,
                          len(code), len(code) + 0x1000, 0x1000)
    ph_note = struct.pack("<IIQQQQQQ", 4, 4, note_off, 0, 0, len(note),
                          len(note), 4)
    img = eh + ph_load + ph_note + note
    return img + bytes(code_off - len(img)) + code


# 32-bit code snippets (the PVH entry runs in flat protected mode).
def out_char(ch):
    return bytes.fromhex("66BAF803") + bytes([0xB0, ord(ch), 0xEE])


def debug_exit(value):
    return bytes([0xB0, value]) + bytes.fromhex("66BAF400EE") + \
        bytes.fromhex("F4EBFD")


TRIPLE_FAULT_ASM = r"""
#define MARKER 0x200000
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
        cmpl $0x600d, MARKER
        je second
        movl $0x600d, MARKER
        mov $'1', %al
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
second:
        mov $'2', %al
        out %al, %dx
        mov $0x33, %al
        out %al, $0xf4
1:      hlt
        jmp 1b

        .code64
long_mode:
        lidt idtr_empty
        movabs $0x8000000000000000, %rax
        movl (%rax), %eax
        mov $0x44, %al
        out %al, $0xf4
        jmp long_mode

        .data
        .align 8
gdt:    .quad 0, 0x00af9a000000ffff
gdtr:   .word 15
        .long gdt
idtr_empty:
        .word 0
        .quad 0
        .align 4096
pml4:   .quad pdpt + 3
        .fill 511, 8, 0
pdpt:   .quad pd + 3
        .fill 511, 8, 0
pd:     .quad 0x83
        .quad 0x200083
        .fill 510, 8, 0
"""

TRIPLE_FAULT_LDS = """
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


class ConduitTest(unittest.TestCase):
    def setUp(self):
        if not CONDUIT or not os.path.exists(CONDUIT):
            self.skipTest("CONDUIT_X86 not built")
        if not guestboot.kvm_usable():
            self.skipTest("no usable /dev/kvm")
        self.tmp = tempfile.mkdtemp(prefix="conduit-kvm-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_conduit(self, kernel, *extra, append=None, timeout=TIMEOUT,
                    debug_exit_dev=True, stdin_data=None):
        args = [CONDUIT, "-accel", "kvm", "-nographic", "-m", "128",
                "-kernel", kernel]
        if debug_exit_dev:
            args += ["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
        if append is not None:
            args += ["-append", append]
        args += list(extra)
        if stdin_data is None:
            proc = subprocess.run(args, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=timeout)
        else:
            proc = subprocess.run(args, input=stdin_data,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=timeout)
        return (proc.returncode, proc.stdout.decode(errors="replace"),
                proc.stderr.decode(errors="replace"))

    def write_image(self, name, code):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(pvh_elf(code))
        return path

    def guest(self, name):
        path = os.path.join(GUEST_DIR, name + ".elf")
        if not os.path.exists(path):
            self.skipTest(f"guest {name} not built")
        return path

    def assert_summary_clean(self, status, out, err):
        m = SUMMARY_RE.search(out)
        self.assertIsNotNone(m, f"no SUMMARY line\nstdout:\n{out}\n"
                                f"stderr:\n{err}")
        self.assertGreater(int(m.group(1)), 0, out)
        self.assertEqual(int(m.group(2)), 0, out)
        self.assertNotIn("FAIL:", out)
        self.assertEqual(status, EXIT_PASS, f"stdout:\n{out}\nstderr:\n{err}")


class CraftedImages(ConduitTest):
    def test_entry_abi_ebx_points_at_start_info(self):
        # cmp dword [ebx], magic; jne -> exit 0x21 without printing.
        body = b"".join(out_char(c) for c in "ok\n")
        code = bytes.fromhex("813B") + struct.pack("<I", START_INFO_MAGIC)
        code += bytes([0x75, len(body)]) + body + debug_exit(0x21)
        status, out, _ = self.run_conduit(self.write_image("ebx.elf", code))
        self.assertEqual(out, "ok\n")
        self.assertEqual(status, (0x21 << 1) | 1)

    def test_debug_exit_status_follows_value(self):
        for value in (0, 1, 0x7f):
            code = debug_exit(value)
            status, _, _ = self.run_conduit(self.write_image("v.elf", code))
            self.assertEqual(status, ((value << 1) | 1) & 0xff)

    def test_serial_file_backend(self):
        log = os.path.join(self.tmp, "serial.log")
        code = b"".join(out_char(c) for c in "to-file") + debug_exit(0)
        status, out, _ = self.run_conduit(self.write_image("s.elf", code),
                                          "-serial", f"file:{log}")
        self.assertEqual(status, EXIT_PASS)
        with open(log) as f:
            self.assertEqual(f.read(), "to-file")
        self.assertEqual(out, "")

    def test_serial_chardev_backend(self):
        log = os.path.join(self.tmp, "chardev.log")
        code = b"".join(out_char(c) for c in "via-chardev") + debug_exit(0)
        status, out, _ = self.run_conduit(
            self.write_image("c.elf", code),
            "-chardev", f"file,id=con0,path={log}", "-serial", "chardev:con0")
        self.assertEqual(status, EXIT_PASS)
        with open(log) as f:
            self.assertEqual(f.read(), "via-chardev")
        self.assertEqual(out, "")

    def test_serial_input_reaches_the_guest(self):
        # Poll LSR.DR, read RBR, echo it, stop at 'q'.
        code = bytes.fromhex("66BAFD03" "EC" "A801" "74FB"      # wait DR
                             "66BAF803" "EC" "EE"               # echo
                             "3C71" "75ED") + debug_exit(0)     # until 'q'
        status, out, err = self.run_conduit(self.write_image("echo.elf",
                                                             code),
                                            stdin_data=b"typed 123 q")
        self.assertEqual(out, "typed 123 q", err)
        self.assertEqual(status, 1)

    def build_triple_fault_guest(self):
        """A PVH guest that prints '1', marks RAM, enters long mode and
        triple-faults (#GP on a non-canonical load with an empty IDT); booted
        again, it sees the mark, prints '2' and exits with 0x33.  Long mode,
        because some KVMs cannot deliver exceptions in 32-bit mode."""
        gcc = shutil.which("gcc")
        if not gcc:
            self.skipTest("gcc not installed")
        src = os.path.join(self.tmp, "tf.S")
        lds = os.path.join(self.tmp, "tf.lds")
        elf = os.path.join(self.tmp, "tf.elf")
        with open(src, "w") as f:
            f.write(TRIPLE_FAULT_ASM)
        with open(lds, "w") as f:
            f.write(TRIPLE_FAULT_LDS)
        subprocess.run([gcc, "-nostdlib", "-static", "-no-pie",
                        "-Wl,--build-id=none", "-Wl,-z,noexecstack",
                        "-Wl,--no-warn-rwx-segments", "-T", lds, "-o", elf,
                        src], check=True)
        return elf

    def test_triple_fault_with_no_reboot_exits(self):
        status, out, err = self.run_conduit(self.build_triple_fault_guest(),
                                            "-no-reboot")
        self.assertEqual(out, "1", err)
        self.assertEqual(status, 0, err)

    def test_triple_fault_resets_the_guest(self):
        # The reset reloads the image and the vCPU state but keeps RAM
        # outside the image, so the second boot takes the other branch.
        status, out, err = self.run_conduit(self.build_triple_fault_guest())
        self.assertEqual(out, "12", err)
        self.assertEqual(status, (0x33 << 1) | 1, err)

    def test_unassigned_fetch_reports_registers(self):
        # Jump into unassigned MMIO space: KVM cannot run it; Conduit must
        # report the registers and exit with status 1, not hang or crash.
        code = bytes.fromhex("B8000000D0" "FFE0")   # mov eax,0xd0000000; jmp
        status, out, err = self.run_conduit(self.write_image("bad.elf", code))
        self.assertEqual(status, 1, err)
        self.assertIn("RIP=", err)
        self.assertIn("vCPU 0", err)

    def test_bad_kernel_is_a_startup_error(self):
        path = os.path.join(self.tmp, "junk.bin")
        with open(path, "wb") as f:
            f.write(b"\x7fELF" + bytes(60))
        status, _, err = self.run_conduit(path)
        self.assertEqual(status, 1)
        self.assertIn("-kernel", err)
        with open(path, "wb") as f:
            f.write(b"hello world" * 100)
        status, _, err = self.run_conduit(path)
        self.assertEqual(status, 1)
        self.assertIn("neither a PVH ELF image nor a Linux bzImage", err)


class SmpGuests(ConduitTest):
    def test_hello_with_two_vcpus(self):
        # The APs wait for INIT/SIPI; the BSP must run the guest unchanged.
        status, out, err = self.run_conduit(self.guest("hello"), "-smp", "2")
        self.assert_summary_clean(status, out, err)

    def test_msix_with_four_vcpus(self):
        status, out, err = self.run_conduit(self.guest("msix"), "-smp", "4",
                                            "-device", "pci-testdev")
        self.assert_summary_clean(status, out, err)

    def test_cpuid_describes_libvirt_topology(self):
        # 2 sockets x 1 die x 2 cores x 2 threads, 4 of 8 vCPUs present.
        status, out, err = self.run_conduit(
            self.guest("topology"),
            "-smp", "4,maxcpus=8,sockets=2,dies=1,cores=2,threads=2",
            append="threads=2 pkg=4")
        self.assert_summary_clean(status, out, err)

    def test_cpuid_cores_preferred(self):
        # -smp 2 means one socket of two single-threaded cores.
        status, out, err = self.run_conduit(self.guest("topology"), "-smp",
                                            "2", append="threads=1 pkg=2")
        self.assert_summary_clean(status, out, err)


@unittest.skipUnless(os.environ.get("CONDUIT_TEST_LINUX") == "1",
                     "set CONDUIT_TEST_LINUX=1 to boot Linux (minutes)")
class LinuxBoot(ConduitTest):
    def test_bzimage_reaches_the_kernel(self):
        # Only where the probe says this KVM runs Linux (not CPL0-emulated).
        kvmtest.require(self, "linux")
        kernel = os.environ.get("CONDUIT_LINUX_KERNEL")
        if not kernel:
            found = sorted(glob.glob("/boot/vmlinuz-*"))
            if not found:
                self.skipTest("no bzImage (set CONDUIT_LINUX_KERNEL)")
            kernel = found[-1]
        try:
            status, out, err = self.run_conduit(
                kernel, "-m", "512", "-no-reboot",
                append="console=ttyS0 earlyprintk=serial,ttyS0 panic=-1",
                timeout=int(os.environ.get("CONDUIT_LINUX_TIMEOUT", "1800")),
                debug_exit_dev=False)
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace")
        # The decompressed kernel prints its banner: boot_params, the
        # command line and long-mode entry all worked.
        self.assertIn("Linux version", out)


if __name__ == "__main__":
    sys.exit(kvmtest.main('pvh'))
