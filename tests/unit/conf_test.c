// SPDX-License-Identifier: BSD-2-Clause
/*
 * DOC: conf unit and golden tests
 *
 * Golden files, as bgpd's regress: every tests/conf/valid/NAME.yaml must
 * parse and print exactly NAME.out, and that output must parse back to an
 * equal conf; every tests/conf/invalid/NAME.yaml must fail with exactly the
 * lines of NAME.err ("invalid/NAME.yaml:LINE:COLUMN: message"). Files are
 * named relative to tests/conf (the test chdirs there), so the expected
 * text does not depend on the source path. CONF_GOLDEN_UPDATE=1 in the
 * environment rewrites the expected files instead of comparing: review the
 * diff before committing them.
 *
 * The rest drives the API directly: defaults, units, diff, reload keeping
 * the old conf, unreadable files, and the example config and man page
 * staying in step with the schema.
 */
#include "config.h"

#include "conf/conf.h"
#include "tests/unit/ck_run.h"

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIN_INVALID 40
#define MIN_VALID 5

static char *
slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, len = 0, n;

	if (!fp)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 8192;
			buf = realloc(buf, cap + 1);
			ck_assert_ptr_nonnull(buf);
		}
		n = fread(buf + len, 1, cap - len, fp);
		len += n;
	} while (n > 0);
	fclose(fp);
	buf[len] = '\0';
	return buf;
}

static void
spit(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted "dir/NAME.yaml" paths; returns the count. */
static size_t
list_yaml(const char *dir, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0;

	ck_assert_msg(d != NULL, "cannot open %s", dir);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		ck_assert_ptr_nonnull(v);
		ck_assert_int_ge(asprintf(&v[n], "%s/%s", dir, de->d_name), 0);
		n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_names);
	*out = v;
	return n;
}

static char *
expected_path(const char *yaml, const char *ext)
{
	char *p;

	ck_assert_int_ge(asprintf(&p, "%.*s%s", (int)(strlen(yaml) - 5), yaml, ext), 0);
	return p;
}

static bool
updating(void)
{
	const char *e = getenv("CONF_GOLDEN_UPDATE");

	return e && *e && strcmp(e, "0");
}

static char *
errors_text(const struct conf_errors *errs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(conf_errors_print(errs, fp), 0);
	fclose(fp);
	return buf;
}

START_TEST(test_golden_valid)
{
	char **files;
	size_t n = list_yaml("valid", &files), i;

	ck_assert_uint_ge(n, MIN_VALID);
	for (i = 0; i < n; i++) {
		struct conf_errors errs = { 0 };
		struct conf *c = NULL, *back = NULL;
		char *out, *again, *want, *exp = expected_path(files[i], ".out");
		int rc = conf_parse_file(files[i], &c, &errs);

		if (rc) {
			char *t = errors_text(&errs);

			ck_abort_msg("%s: rc %d:\n%s", files[i], rc, t);
		}
		ck_assert_int_eq(conf_format(c, &out), 0);
		if (updating())
			spit(exp, out);
		want = slurp(exp);
		ck_assert_msg(want != NULL, "%s is missing", exp);
		ck_assert_msg(!strcmp(out, want), "%s: got\n%s\nexpected\n%s", files[i], out, want);

		/* print, parse, print: a fixed point and an equal conf */
		ck_assert_int_eq(conf_parse_buf(out, strlen(out), "printed", &back, &errs), 0);
		ck_assert_uint_eq(conf_diff(c, back), 0);
		ck_assert_int_eq(conf_format(back, &again), 0);
		ck_assert_str_eq(out, again);

		free(again);
		free(want);
		free(out);
		free(exp);
		conf_free(back);
		conf_free(c);
		conf_errors_free(&errs);
		free(files[i]);
	}
	free(files);
}
END_TEST

START_TEST(test_golden_invalid)
{
	char **files;
	size_t n = list_yaml("invalid", &files), i;

	ck_assert_uint_ge(n, MIN_INVALID);
	for (i = 0; i < n; i++) {
		struct conf_errors errs = { 0 };
		struct conf *c = NULL;
		char *got, *want, *exp = expected_path(files[i], ".err");
		int rc = conf_parse_file(files[i], &c, &errs);

		ck_assert_msg(rc == -EINVAL, "%s: rc %d, expected -EINVAL", files[i], rc);
		ck_assert_ptr_null(c);
		ck_assert_uint_ge(errs.count, 1);
		got = errors_text(&errs);
		if (updating())
			spit(exp, got);
		want = slurp(exp);
		ck_assert_msg(want != NULL, "%s is missing", exp);
		ck_assert_msg(!strcmp(got, want), "%s: got\n%s\nexpected\n%s", files[i], got, want);
		free(want);
		free(got);
		free(exp);
		conf_errors_free(&errs);
		free(files[i]);
	}
	free(files);
}
END_TEST

START_TEST(test_defaults)
{
	struct conf *d = conf_new(), *c = NULL;
	struct conf_errors errs = { 0 };

	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->fib.inflate_threshold, 50);
	ck_assert_uint_eq(d->fib.halve_threshold, 25);
	ck_assert_uint_eq(d->fib.inflate_threshold_root, 30);
	ck_assert_uint_eq(d->fib.halve_threshold_root, 15);
	ck_assert_uint_eq(d->fib.sync_pages, 128);
	ck_assert_int_eq(d->fib.reclaim, CONF_RECLAIM_CALL_RCU);
	ck_assert(d->cache.enabled);
	ck_assert_uint_eq(d->cache.buckets, 131072);
	ck_assert_uint_eq(d->cache.max_entries, 524288);
	ck_assert_uint_eq(d->cache.gc_interval_us, 60000000);
	ck_assert_uint_eq(d->cache.gc_timeout_us, 300000000);
	ck_assert_uint_eq(d->cache.gc_min_interval_us, 500000);
	ck_assert_uint_eq(d->cache.gc_elasticity, 8);
	ck_assert_uint_eq(d->cache.scan_budget_us, 2000);
	ck_assert_uint_eq(d->netlink.families, CONF_FAMILY_IPV4 | CONF_FAMILY_IPV6);
	ck_assert(d->netlink.all_tables);
	ck_assert_uint_eq(d->netlink.ntables, 0);
	ck_assert_uint_eq(d->netlink.slice_budget_us, 2000);
	ck_assert_str_eq(d->control.socket, "/run/fibd/fibd.sock");
	ck_assert_uint_eq(d->control.mode, 0660);
	ck_assert_uint_eq(d->control.idle_timeout_us, 60000000);
	ck_assert_uint_eq(d->lookup.idle_timeout_us, 300000000);
	ck_assert(!d->metrics.enabled);
	ck_assert_str_eq(d->metrics.address, "127.0.0.1:9342");
	ck_assert_int_eq(d->log.level, CONF_LOG_INFO);

	/* an empty file, a comment-only file and "~" all mean the defaults */
	ck_assert_int_eq(conf_parse_buf("", 0, "empty", &c, &errs), 0);
	ck_assert_uint_eq(conf_diff(c, d), 0);
	conf_free(c);
	c = NULL;
	ck_assert_int_eq(conf_parse_buf("# nothing\n", 10, "comment", &c, &errs), 0);
	ck_assert_uint_eq(conf_diff(c, d), 0);
	conf_free(c);
	c = NULL;
	ck_assert_int_eq(conf_parse_buf("~\n", 2, "null", &c, &errs), 0);
	ck_assert_uint_eq(conf_diff(c, d), 0);
	conf_free(c);
	conf_free(d);
	conf_errors_free(&errs);
}
END_TEST

static struct conf *
parse_ok(const char *text)
{
	struct conf_errors errs = { 0 };
	struct conf *c = NULL;
	int rc = conf_parse_buf(text, strlen(text), "t", &c, &errs);

	if (rc) {
		char *t = errors_text(&errs);

		ck_abort_msg("%s: rc %d: %s", text, rc, t);
	}
	conf_errors_free(&errs);
	return c;
}

START_TEST(test_units)
{
	static const struct {
		const char *text;
		uint64_t us;
	} d[] = {
		{ "250us", 250 },	{ "500ms", 500000 },	 { "60s", 60000000 },
		{ "2m", 120000000 },	{ "1h", 3600000000ull }, { "0s", 0 },
		{ "1000us", 1000 },
	};
	static const struct {
		const char *text;
		uint64_t bytes;
	} s[] = {
		{ "64M", 64ull << 20 },	 { "64MiB", 64ull << 20 }, { "65536", 65536 },
		{ "1G", 1ull << 30 },	 { "512KiB", 512 << 10 },  { "100000B", 100000 },
		{ "65537", 65537 },
	};
	char text[128];
	size_t i;

	for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		struct conf *c;

		snprintf(text, sizeof(text),
			 "cache:\n  gc_interval: 24h\n  gc_timeout: 168h\n  gc_min_interval: %s\n",
			 d[i].text);
		c = parse_ok(text);
		ck_assert_msg(c->cache.gc_min_interval_us == d[i].us, "%s", d[i].text);
		conf_free(c);
	}
	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		struct conf *c;

		snprintf(text, sizeof(text), "netlink: {rcvbuf: \"%s\"}\n", s[i].text);
		c = parse_ok(text);
		ck_assert_msg(c->netlink.rcvbuf == s[i].bytes, "%s", s[i].text);
		conf_free(c);
	}
}
END_TEST

START_TEST(test_diff)
{
	struct conf *a = conf_new(), *b = conf_new();

	ck_assert_uint_eq(conf_diff(a, b), 0);
	b->cache.gc_timeout_us += 1;
	ck_assert_uint_eq(conf_diff(a, b), CONF_CACHE);
	b->log.level = CONF_LOG_DEBUG;
	ck_assert_uint_eq(conf_diff(a, b), CONF_CACHE | CONF_LOG);
	*b = *a;
	b->netlink.tables[b->netlink.ntables++] = 100;
	ck_assert_uint_eq(conf_diff(a, b), CONF_NETLINK);
	*b = *a;
	strcpy(b->control.group, "fibd");
	ck_assert_uint_eq(conf_diff(a, b), CONF_CONTROL);
	ck_assert_str_eq(conf_section_name(CONF_FIB), "fib");
	ck_assert_str_eq(conf_section_name(CONF_LOG), "log");
	ck_assert_ptr_null(conf_section_name(CONF_FIB | CONF_LOG));
	conf_free(a);
	conf_free(b);
}
END_TEST

/* What fibd does on SIGHUP: a bad file leaves the running conf as it was. */
START_TEST(test_reload_keeps_old)
{
	static const char good[] = "fib:\n  inflate_threshold: 60\ncache:\n  buckets: 4096\n";
	static const char bad[] = "fib:\n  inflate_threshold: 10\ncache:\n  buckets: 4000\n";
	struct conf_errors errs = { 0 };
	struct conf *cur = NULL, *next = NULL, snapshot;

	ck_assert_int_eq(conf_parse_buf(good, strlen(good), "good", &cur, &errs), 0);
	snapshot = *cur;
	ck_assert_int_eq(conf_parse_buf(bad, strlen(bad), "bad", &next, &errs), -EINVAL);
	ck_assert_ptr_null(next);
	ck_assert_uint_eq(errs.count, 2);
	ck_assert_uint_eq(conf_diff(cur, &snapshot), 0);
	ck_assert_uint_eq(cur->fib.inflate_threshold, 60);

	/* a good new file gives the sections to reconfigure */
	ck_assert_int_eq(conf_parse_buf("cache: {buckets: 8192}\n", 23, "n", &next, &errs), 0);
	ck_assert_uint_eq(conf_diff(cur, next), CONF_FIB | CONF_CACHE);
	conf_free(cur);
	conf_free(next);
	conf_errors_free(&errs);
}
END_TEST

START_TEST(test_unreadable)
{
	struct conf_errors errs = { 0 };
	struct conf *c = NULL;
	char line[256];

	ck_assert_int_eq(conf_parse_file("/nonexistent/fibd.yaml", &c, &errs), -ENOENT);
	ck_assert_ptr_null(c);
	ck_assert_uint_eq(errs.count, 1);
	conf_error_format(&errs, 0, line, sizeof(line));
	ck_assert_str_eq(line, "/nonexistent/fibd.yaml: cannot read: No such file or directory");
	ck_assert_int_eq(conf_parse_file(".", &c, &errs), -EISDIR);
	conf_errors_free(&errs);
	/* errs may be NULL */
	ck_assert_int_eq(conf_parse_buf("fib: 1", 6, "x", &c, NULL), -EINVAL);
	ck_assert_ptr_null(c);
}
END_TEST

/* The buffer needs no NUL: parsing stops at len. */
START_TEST(test_buffer_len)
{
	static const char text[] = "log:\n  level: debug\nbogus: 1\n";
	struct conf *c = parse_ok("log:\n  level: debug\n");

	conf_free(c);
	c = NULL;
	ck_assert_int_eq(conf_parse_buf(text, 20, "t", &c, NULL), 0);
	ck_assert_int_eq(c->log.level, CONF_LOG_DEBUG);
	conf_free(c);
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* Uniform in [lo, hi]. */
static uint64_t
rng_in(uint64_t lo, uint64_t hi)
{
	return lo + rng() % (hi - lo + 1);
}

static uint64_t
umin(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Durations in a random unit, so every printing branch is taken. */
static uint64_t
rng_duration(uint64_t lo, uint64_t hi)
{
	static const uint64_t unit[] = { 1, 1000, 1000000, 60000000, 3600000000ull };
	uint64_t u = unit[rng() % 5];

	if (hi / u < (lo + u - 1) / u)
		u = 1;
	return u * rng_in((lo + u - 1) / u, hi / u);
}

static void
rng_path(char *p)
{
	static const char extra[] = " \"\\#:'{}[],&*!|>%@`-_.\xc3\xa9";
	size_t len = rng_in(2, CONF_PATH_MAX - 1), i;

	p[0] = '/';
	for (i = 1; i < len; i++) {
		uint64_t r = rng() % 4;

		p[i] = r == 0 ? extra[rng() % (sizeof(extra) - 1)] : (char)rng_in('a', 'z');
	}
	if (p[len - 1] == '/' || (unsigned char)p[len - 1] == 0xc3)
		p[len - 1] = 'x';
	p[len] = '\0';
	/* keep UTF-8 whole: a lone lead or continuation byte is not text */
	for (i = 1; i < len; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (ch == 0xc3 && (unsigned char)p[i + 1] != 0xa9)
			p[i] = 'y';
		else if (ch == 0xa9 && (unsigned char)p[i - 1] != 0xc3)
			p[i] = 'z';
	}
}

/* Random valid confs survive print and parse unchanged. */
START_TEST(test_roundtrip_random)
{
	unsigned iter;

	for (iter = 0; iter < 2000; iter++) {
		struct conf *c = conf_new(), *back = NULL;
		struct conf_errors errs = { 0 };
		unsigned char bin[16];
		char *text, *again, addr[INET6_ADDRSTRLEN];
		size_t i;
		int rc;

		ck_assert_ptr_nonnull(c);
		c->fib.inflate_threshold = (unsigned)rng_in(2, 100);
		c->fib.halve_threshold = (unsigned)rng_in(1, c->fib.inflate_threshold - 1);
		c->fib.inflate_threshold_root = (unsigned)rng_in(2, 100);
		c->fib.halve_threshold_root = (unsigned)rng_in(1, c->fib.inflate_threshold_root - 1);
		c->fib.sync_pages = (unsigned)rng_in(1, 65536);
		c->fib.reclaim = rng() & 1 ? CONF_RECLAIM_SYNC : CONF_RECLAIM_CALL_RCU;
		c->cache.enabled = rng() & 1;
		c->cache.buckets = 1u << rng_in(4, 28);
		c->cache.gc_timeout_us = rng_duration(1000000, 7 * 24 * 3600000000ull);
		c->cache.gc_interval_us =
			rng_duration(1000000, umin(c->cache.gc_timeout_us, 86400000000ull));
		c->cache.gc_min_interval_us =
			rng_duration(0, umin(c->cache.gc_interval_us, 3600000000ull));
		c->cache.gc_elasticity = (unsigned)rng_in(1, 1024);
		c->cache.chain_cap = (unsigned)rng_in(c->cache.gc_elasticity, 1024);
		c->cache.max_entries = (unsigned)rng_in(c->cache.chain_cap, 1u << 30);
		c->cache.scan_budget_us = rng_duration(100, 1000000);
		c->cache.yield_every = (unsigned)rng_in(1, 1u << 20);
		c->netlink.families = (unsigned)rng_in(1, 3);
		c->netlink.all_tables = rng() % 4 == 0;
		c->netlink.ntables = c->netlink.all_tables ? 0 : rng_in(1, CONF_TABLES_MAX);
		for (i = 0; i < c->netlink.ntables; i++) {
			size_t j;

			/* distinct, reserved names included */
			do {
				c->netlink.tables[i] = rng() & 1 ? (uint32_t)rng_in(250, 256)
								 : (uint32_t)rng_in(1, UINT32_MAX);
				for (j = 0; j < i && c->netlink.tables[j] != c->netlink.tables[i]; j++)
					;
			} while (j < i);
		}
		c->netlink.rcvbuf = rng() & 1 ? rng_in(64, 1024) << (10 * rng_in(1, 2))
					      : rng_in(65536, 1ull << 30);
		c->netlink.slice_budget_us = rng_duration(100, 1000000);
		c->lookup.threads = (unsigned)rng_in(0, 256);
		rng_path(c->lookup.socket);
		c->lookup.idle_timeout_us = rng() & 1 ? 0 : rng_duration(1000000, 86400000000ull);
		rng_path(c->control.socket);
		c->control.mode = (unsigned)rng_in(0, 0777);
		if (rng() & 1)
			snprintf(c->control.group, sizeof(c->control.group), "%u",
				 (unsigned)rng_in(0, UINT32_MAX - 1));
		else
			snprintf(c->control.group, sizeof(c->control.group), "_g%.*s-x.y$",
				 (int)rng_in(0, 20), "abcdefghijklmnopqrstuvwxyz");
		c->metrics.enabled = rng() & 1;
		for (i = 0; i < sizeof(bin); i++)
			bin[i] = (unsigned char)rng();
		if (rng() & 1) {
			inet_ntop(AF_INET, bin, addr, sizeof(addr));
			snprintf(c->metrics.address, sizeof(c->metrics.address), "%s:%u", addr,
				 (unsigned)rng_in(1, 65535));
		} else {
			if (rng() & 1)
				memset(bin, 0, 12); /* runs of zeros: "::" */
			inet_ntop(AF_INET6, bin, addr, sizeof(addr));
			snprintf(c->metrics.address, sizeof(c->metrics.address), "[%s]:%u", addr,
				 (unsigned)rng_in(1, 65535));
		}
		c->log.level = (enum conf_log_level)rng_in(CONF_LOG_ERR, CONF_LOG_DEBUG);

		ck_assert_int_eq(conf_format(c, &text), 0);
		rc = conf_parse_buf(text, strlen(text), "random", &back, &errs);
		if (rc) {
			char *t = errors_text(&errs);

			ck_abort_msg("iteration %u: rc %d\n%s\n%s", iter, rc, t, text);
		}
		ck_assert_msg(conf_diff(c, back) == 0, "iteration %u: 0x%x\n%s", iter,
			      conf_diff(c, back), text);
		ck_assert_int_eq(conf_format(back, &again), 0);
		ck_assert_str_eq(text, again);
		free(again);
		free(text);
		conf_free(back);
		conf_free(c);
		conf_errors_free(&errs);
	}
}
END_TEST

/* A file full of mistakes gives the first 100 and a count of the rest. */
START_TEST(test_many_errors)
{
	struct conf_errors errs = { 0 };
	struct conf *c = NULL;
	char *text = NULL, line[256];
	size_t len = 0, i;
	FILE *fp = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(fp);
	fputs("fib:\n", fp);
	for (i = 0; i < 150; i++)
		fprintf(fp, "  key%zu: 1\n", i);
	fclose(fp);
	ck_assert_int_eq(conf_parse_buf(text, len, "many", &c, &errs), -EINVAL);
	ck_assert_uint_eq(errs.count, 101);
	conf_error_format(&errs, 0, line, sizeof(line));
	ck_assert_str_eq(line, "many:2:3: unknown key \"key0\" in section fib");
	conf_error_format(&errs, 99, line, sizeof(line));
	ck_assert_str_eq(line, "many:101:3: unknown key \"key99\" in section fib");
	conf_error_format(&errs, 100, line, sizeof(line));
	ck_assert_str_eq(line, "many: 50 more errors not shown");
	free(text);
	conf_errors_free(&errs);
}
END_TEST

/* The example parses clean and the man page documents every key. */
START_TEST(test_docs)
{
	struct conf_errors errs = { 0 };
	struct conf *c = NULL, *d = conf_new();
	char *text, *man = slurp(CONF_MANPAGE), *line, *save = NULL;
	int rc = conf_parse_file(CONF_EXAMPLE, &c, &errs);

	if (rc) {
		char *t = errors_text(&errs);

		ck_abort_msg("example: %s", t);
	}
	ck_assert_ptr_nonnull(man);
	ck_assert_int_eq(conf_format(d, &text), 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[64];

		ck_assert_int_eq(sscanf(line, " %63[a-z_0-9]", key), 1);
		ck_assert_msg(strstr(man, key) != NULL, "man page lacks %s", key);
	}
	free(text);
	free(man);
	conf_free(c);
	conf_free(d);
	conf_errors_free(&errs);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("conf");
	TCase *tc = tcase_create("conf");

	if (chdir(CONF_TESTDIR) != 0) {
		perror(CONF_TESTDIR);
		return 99;
	}
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_units);
	tcase_add_test(tc, test_diff);
	tcase_add_test(tc, test_reload_keeps_old);
	tcase_add_test(tc, test_unreadable);
	tcase_add_test(tc, test_buffer_len);
	tcase_add_test(tc, test_many_errors);
	tcase_add_test(tc, test_roundtrip_random);
	tcase_add_test(tc, test_golden_valid);
	tcase_add_test(tc, test_golden_invalid);
	tcase_add_test(tc, test_docs);
	suite_add_tcase(s, tc);
	return ck_run(s, CK_FORK_GETENV);
}
