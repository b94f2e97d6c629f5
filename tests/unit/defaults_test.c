/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: one source of defaults (daemon/settings, conf/, the modules)
 *
 * The config's defaults (conf_new, and an empty file) mapped through
 * daemon/settings onto each module's settings must equal the module's own
 * defaults: fib_params_default (fib/), flow_config_default (cache/),
 * ingest_conf_default (daemon/ingest). A default changed on one side
 * only fails here, not in production.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fib/fib.h"
#include "cache/flow.h"
#include "conf/conf.h"
#include "daemon/ingest.h"
#include "daemon/settings.h"
#include "tests/unit/ck_run.h"

static const uint64_t secret[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};

static void
check_conf(const struct conf *c)
{
	struct fib_params pm, pc;
	struct flow_config fm, fc;
	struct ingest_conf im, ic;

	/* zeroed first: the structs are compared with their padding */
	memset(&pm, 0, sizeof(pm));
	memset(&pc, 0, sizeof(pc));
	fib_params_default(&pm);
	settings_fib(c, &pc);
	ck_assert_int_eq(pc.inflate_threshold, pm.inflate_threshold);
	ck_assert_int_eq(pc.halve_threshold, pm.halve_threshold);
	ck_assert_int_eq(pc.inflate_threshold_root, pm.inflate_threshold_root);
	ck_assert_int_eq(pc.halve_threshold_root, pm.halve_threshold_root);
	ck_assert_int_eq(pc.sync_pages, pm.sync_pages);
	ck_assert_int_eq(pc.reclaim_mode, pm.reclaim_mode);
	/* the one difference on purpose: fibd builds compiled tables on
	 * its compaction thread, not in the event that made them due */
	ck_assert_int_eq(pm.accel_defer, 0);
	ck_assert_int_eq(pc.accel_defer, 1);
	pm.accel_defer = 1;
	ck_assert(memcmp(&pc, &pm, sizeof(pm)) == 0);

	memset(&fm, 0, sizeof(fm));
	memset(&fc, 0, sizeof(fc));
	flow_config_default(&fm);
	fm.secret[0] = secret[0];
	fm.secret[1] = secret[1];
	settings_flow(c, secret, &fc);
	ck_assert_int_eq(fc.enabled, fm.enabled);
	ck_assert_uint_eq(fc.buckets, fm.buckets);
	ck_assert_uint_eq(fc.max_entries, fm.max_entries);
	ck_assert_uint_eq(fc.gc_interval, fm.gc_interval);
	ck_assert_uint_eq(fc.gc_timeout, fm.gc_timeout);
	ck_assert_uint_eq(fc.gc_min_interval, fm.gc_min_interval);
	ck_assert_uint_eq(fc.gc_elasticity, fm.gc_elasticity);
	ck_assert_uint_eq(fc.scan_budget, fm.scan_budget);
	ck_assert_uint_eq(fc.yield_check, fm.yield_check);
	ck_assert_uint_eq(fc.chain_cap, fm.chain_cap);
	ck_assert(memcmp(&fc, &fm, sizeof(fm)) == 0);

	memset(&im, 0, sizeof(im));
	memset(&ic, 0, sizeof(ic));
	ingest_conf_default(&im);
	settings_ingest(c, &ic);
	ck_assert_uint_eq(ic.families, im.families);
	ck_assert_uint_eq(ic.ntables, im.ntables);
	for (unsigned i = 0; i < im.ntables; i++)
		ck_assert_uint_eq(ic.tables[i], im.tables[i]);
	ck_assert_uint_eq(ic.rcvbuf, im.rcvbuf);
	ck_assert_uint_eq(ic.budget_us, im.budget_us);
	ck_assert(memcmp(&ic, &im, sizeof(im)) == 0);
}

START_TEST(test_conf_new)
{
	struct conf *c = conf_new();

	ck_assert_ptr_nonnull(c);
	check_conf(c);
	conf_free(c);
}
END_TEST

/* An empty file parses to the same defaults. */
START_TEST(test_empty_file)
{
	char path[] = "/tmp/defaults_test.XXXXXX";
	struct conf_errors errs;
	struct conf *c = NULL;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	memset(&errs, 0, sizeof(errs));
	ck_assert_int_eq(conf_parse_file(path, &c, &errs), 0);
	unlink(path);
	conf_errors_free(&errs);
	check_conf(c);
	conf_free(c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("defaults");
	TCase *tc = tcase_create("defaults");

	tcase_add_test(tc, test_conf_new);
	tcase_add_test(tc, test_empty_file);
	suite_add_tcase(s, tc);
	return ck_run(s, CK_FORK_GETENV);
}
