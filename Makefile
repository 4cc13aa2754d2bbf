# SPDX-License-Identifier: GPL-2.0-or-later
# Conduit: a thin wrapper around configure + meson + ninja.
#
#   make demo    install build deps if missing, configure, build, run the demo
#   make check   the same bootstrap, then every test suite (incl. sanitizers)
#   make check-ppc64le  cross-build for ppc64le (POWER) and run the unit,
#                qtest and vfio-user suites under qemu-user with 64 KiB pages

BUILD_DIR ?= build
SAN_BUILD_DIR ?= build-sanitizers
FUZZ_BUILD_DIR ?= build-fuzz
PPC64LE_BUILD_DIR ?= build-ppc64le
CONFIGURE_FLAGS ?=
MESON_TEST = meson test --print-errorlogs --num-processes 2
export QTEST_TIMEOUT ?= 120

.PHONY: all deps bootstrap check check-unit check-qtest check-vfio-user \
        check-functional check-sanitizers fuzz-smoke check-fuzz fuzz demo \
        bench install dist clean distclean fuzz-build check-valgrind \
        check-ppc64le check-firmware

all: bootstrap
	ninja -C $(BUILD_DIR)

deps:
	@scripts/install-deps

$(BUILD_DIR)/build.ninja:
	./configure --builddir=$(BUILD_DIR) $(CONFIGURE_FLAGS)

bootstrap: deps $(BUILD_DIR)/build.ninja

check: all
	$(MESON_TEST) -C $(BUILD_DIR) --no-suite bench --no-suite firmware
	$(MAKE) check-sanitizers
	$(MAKE) fuzz-smoke

check-unit: all
	$(MESON_TEST) -C $(BUILD_DIR) --suite unit

check-qtest: all
	$(MESON_TEST) -C $(BUILD_DIR) --suite qtest

check-vfio-user: all
	$(MESON_TEST) -C $(BUILD_DIR) --suite vfio-user

check-functional: all
	$(MESON_TEST) -C $(BUILD_DIR) --suite functional

# Debian through GRUB with SeaBIOS and OVMF (tests/functional/test_firmware.py):
# minutes per boot where it runs nested, so not part of make check.
check-firmware: all
	$(MESON_TEST) -C $(BUILD_DIR) --suite firmware

# ASan + UBSan build of the unit and qtest suites.
$(SAN_BUILD_DIR)/build.ninja:
	./configure --builddir=$(SAN_BUILD_DIR) --enable-sanitizers $(CONFIGURE_FLAGS)

check-sanitizers: deps $(SAN_BUILD_DIR)/build.ninja
	ninja -C $(SAN_BUILD_DIR)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    $(MESON_TEST) -C $(SAN_BUILD_DIR) --suite unit --suite qtest

# ppc64le host build (scripts/cross/ppc64le-linux-gnu.ini): both system
# binaries and vfio-user-nvme for a POWER host, tested under
# qemu-ppc64le-static -p 65536 so that getpagesize() is 65536 for real.
# KVM needs an x86 host for x86 guests: those tests are not built here.
$(PPC64LE_BUILD_DIR)/build.ninja:
	meson setup --cross-file scripts/cross/ppc64le-linux-gnu.ini \
	    -Dwerror=true -Dguests=disabled $(PPC64LE_BUILD_DIR)

check-ppc64le:
	@scripts/install-deps --cross-ppc64le
	$(MAKE) $(PPC64LE_BUILD_DIR)/build.ninja
	ninja -C $(PPC64LE_BUILD_DIR)
	$(MESON_TEST) -C $(PPC64LE_BUILD_DIR) \
	    --suite unit --suite qtest --suite vfio-user

# libFuzzer targets (clang, ASan+UBSan); see tests/fuzz/meson.build.
FUZZ_TARGETS = $(basename $(notdir $(wildcard tests/fuzz/fuzz-*.c)))
FUZZ_SMOKE_TIME ?= 20
FUZZ_TIME ?= 1800

$(FUZZ_BUILD_DIR)/build.ninja:
	CFLAGS=-fsanitize=fuzzer-no-link ./configure \
	    --builddir=$(FUZZ_BUILD_DIR) --enable-fuzzing --enable-sanitizers \
	    $(CONFIGURE_FLAGS)

fuzz-build: deps $(FUZZ_BUILD_DIR)/build.ninja
	ninja -C $(FUZZ_BUILD_DIR) $(addprefix tests/fuzz/,$(FUZZ_TARGETS))

# Every target for about 20 s from a fresh corpus: part of make check.
fuzz-smoke: fuzz-build
	rm -rf $(FUZZ_BUILD_DIR)/fuzz-smoke
	tests/fuzz/run-fuzz $(FUZZ_BUILD_DIR) $(FUZZ_SMOKE_TIME) \
	    $(FUZZ_BUILD_DIR)/fuzz-smoke $(FUZZ_TARGETS)

check-fuzz: fuzz-smoke

# Long runs: make fuzz FUZZ_TIME=3600 [FUZZ_TARGETS=fuzz-nvme]
fuzz: fuzz-build
	tests/fuzz/run-fuzz $(FUZZ_BUILD_DIR) $(FUZZ_TIME) \
	    $(FUZZ_BUILD_DIR)/fuzz-long $(FUZZ_TARGETS)

# The qtest suite with Conduit under valgrind: zero errors, zero definite
# leaks.  Takes minutes, so it is not part of make check.
check-valgrind: all
	rm -rf $(BUILD_DIR)/valgrind
	tests/qtest/run-valgrind $(BUILD_DIR) $(BUILD_DIR)/valgrind

demo: all
	python3 scripts/demo

# Where the KVM probe (tests/functional/kvmtest.py) says this host's KVM
# cannot run the guests, both benchmarks run in one nested L1 guest (TCG)
# and say so; BENCH_FLAGS=--nested=off|on overrides (scripts/bench/all).
bench: all
	python3 scripts/bench/all --build-dir $(BUILD_DIR) $(BENCH_FLAGS)

# ./configure --prefix=PREFIX, then make install [DESTDIR=DIR]: binaries
# (vfio-user-nvme too) in bin/, man pages in share/man/man1, docs in
# share/doc/conduit.
install: all
	meson install -C $(BUILD_DIR) $(if $(DESTDIR),--destdir $(abspath $(DESTDIR)))

# Release tarball conduit-VERSION.tar.xz of the committed HEAD (git archive:
# uncommitted changes are not in it).  docs/devel/packaging.rst shows a
# distribution patching it.
DIST_NAME = conduit-$(shell cat VERSION)
dist:
	@git diff --quiet HEAD -- || \
	    echo "dist: warning: uncommitted changes are not in the tarball" >&2
	git archive --format=tar --prefix=$(DIST_NAME)/ HEAD | xz -9 > $(DIST_NAME).tar.xz.tmp
	mv $(DIST_NAME).tar.xz.tmp $(DIST_NAME).tar.xz
	@echo "dist: wrote $(DIST_NAME).tar.xz"

clean:
	-ninja -C $(BUILD_DIR) clean

distclean:
	rm -rf $(BUILD_DIR) $(SAN_BUILD_DIR) $(FUZZ_BUILD_DIR) $(PPC64LE_BUILD_DIR)
