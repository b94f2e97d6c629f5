# SPDX-License-Identifier: BSD-2-Clause
# Integration tests: fibd and fibctl as built, against golden files and,
# in network namespaces, the real kernel (root; else skipped, exit 77).
# The fast ones run in `make check`; all of them, the full RIS/LINX table
# included, in `make check-integration`. tests/integration/README.md
# lists them.

# The config golden files through `fibd -n` and fibctl's output golden
# files (tests/ctl): no root needed.
TESTS += \
	tests/integration/daemon_conf.sh \
	tests/integration/daemon_fibctl.sh
dist_noinst_SCRIPTS += \
	tests/integration/daemon_conf.sh \
	tests/integration/daemon_fibctl.sh
EXTRA_DIST += tests/ctl

# fib_mphash against the kernel's ECMP choice (`ip route get`, pinned
# seed) in a namespace; mphash_tool runs fib_mphash on its flows (it
# compiles fib/mphash.c itself: fib_mphash is not exported by libfib),
# mphash_rtget asks for IPv6 routes with a flow label.
check_PROGRAMS += tests/integration/mphash_tool tests/integration/mphash_rtget
tests_integration_mphash_tool_SOURCES = tests/integration/mphash_tool.c fib/mphash.c
tests_integration_mphash_rtget_SOURCES = tests/integration/mphash_rtget.c
TESTS += tests/integration/mphash_kernel.sh
dist_noinst_SCRIPTS += tests/integration/mphash_kernel.sh

# The whole daemon and the netlink ingest in a namespace.
NL_INTEGRATION_TESTS = \
	tests/integration/nl_basic.sh \
	tests/integration/nl_enobufs.sh \
	tests/integration/nl_ris.sh \
	tests/integration/nl_reset.sh \
	tests/integration/daemon_basic.sh \
	tests/integration/daemon_cache.sh \
	tests/integration/daemon_fault.sh \
	tests/integration/daemon_robust.sh \
	tests/integration/ctl_flow.sh \
	tests/integration/ctl_stream.sh \
	tests/integration/ingest_policy.sh \
	tests/integration/policy_kernel.sh
TESTS += \
	tests/integration/ctl_flow.sh \
	tests/integration/ctl_stream.sh \
	tests/integration/daemon_basic.sh \
	tests/integration/daemon_cache.sh \
	tests/integration/daemon_fault.sh \
	tests/integration/nl_basic.sh \
	tests/integration/nl_enobufs.sh \
	tests/integration/daemon_robust.sh \
	tests/integration/ingest_policy.sh \
	tests/integration/policy_kernel.sh
dist_noinst_SCRIPTS += \
	tests/integration/ctl_flow.sh \
	tests/integration/ctl_stream.sh \
	tests/integration/daemon_basic.sh \
	tests/integration/daemon_cache.sh \
	tests/integration/daemon_fault.sh \
	tests/integration/nl_basic.sh \
	tests/integration/nl_enobufs.sh \
	tests/integration/daemon_robust.sh \
	tests/integration/ingest_policy.sh \
	tests/integration/policy_kernel.sh
EXTRA_DIST += \
	tests/integration/fault_preload.c \
	tests/integration/route_get_compare.py \
	tests/integration/table_compare.py \
	tests/integration/lib.sh \
	tests/integration/nl_ris.sh \
	tests/integration/nl_reset.sh \
	tests/integration/nlbench.sh \
	tests/integration/README.md

# The Debian packages under a real systemd, a stage of ./quickstart test
# (root; not in make check: it builds packages and boots a container):
# tests/integration/systemd_nspawn.sh and its package builder. They ship
# so the tarball's quickstart is whole; from a tarball the test skips,
# since debian/ stays out of it: Debian packaging belongs to the git tree
# (a native package), and a debian/ in an upstream tarball gets in the
# way of a distribution's own.
EXTRA_DIST += \
	tests/integration/systemd_nspawn.sh \
	tests/integration/deb_build.sh

.PHONY: check-integration bench-nl
check-integration: daemon/fibd client/fibctl
	@fail=0; for t in $(NL_INTEGRATION_TESTS); do \
		echo "== $$t"; srcdir=$(srcdir) bash $(srcdir)/$$t; rc=$$?; \
		if [ $$rc = 77 ]; then echo "SKIP $$t"; elif [ $$rc != 0 ]; then fail=1; fi; \
	done; exit $$fail

# Full-table ingest benchmark (tier1, about 1M routes; minutes, root).
bench-nl: daemon/fibd
	srcdir=$(srcdir) bash $(srcdir)/tests/integration/nlbench.sh
