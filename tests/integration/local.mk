# SPDX-License-Identifier: BSD-2-Clause
# Integration tests added for issue 6 (robustness); the others are listed
# in daemon/local.mk. Root and network namespaces, else skipped (77).
TESTS += tests/integration/daemon_robust.sh
NL_INTEGRATION_TESTS += tests/integration/daemon_robust.sh
dist_noinst_SCRIPTS += tests/integration/daemon_robust.sh
EXTRA_DIST += tests/integration/local.mk
