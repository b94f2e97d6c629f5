// SPDX-License-Identifier: BSD-2-Clause
/*
 * DOC: conf, YAML to struct conf
 *
 * libyaml loads the whole document into a node tree (its document API), so
 * every node keeps its start mark and errors can name file:line:column.
 * The schema is one table, conf_fields[]: section, key, type, offset in
 * struct conf, range and default. Parsing, printing, diffing and the
 * defaults all walk that table, and each type is one row of conf_types[]
 * (parse, print, storage), so a new key is one line of conf_fields[].
 *
 *   root mapping --section--> mapping --key--> scalar | sequence
 *        |                        |               |
 *   unknown/duplicate        unknown/duplicate   type, unit, range
 *   section                  key                 -> at[field] = mark
 *                                  then cross-field checks use at[]
 *
 * A field is written into the new conf only once its whole value passed,
 * and cross-field checks skip fields that already failed, so one mistake
 * gives one message. Values need units where a bare number would be
 * ambiguous: durations ("250us", "500ms", "60s", "2m", "1h") and, for
 * sizes, bytes or binary multiples ("64M" and "64MiB" are both 2^26).
 * Booleans are true or false only (no "yes", "on": the Norway problem).
 *
 * Defaults: the trie tunables are those of Linux net/ipv4/fib_trie.c,
 * the cache ones those of the old IPv4 route cache (rt_check_expire,
 * ip_rt_gc_elasticity).
 */
#include "config.h"

#include "conf/conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define CONF_FILE_MAX (1u << 20)  /* a config file is a few KiB */
#define CONF_ERRORS_MAX 100       /* then one "N more errors" line */

#define US_MS 1000ull
#define US_S (1000ull * US_MS)
#define US_M (60ull * US_S)
#define US_H (60ull * US_M)
#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)

/* ---- schema ----------------------------------------------------------- */

static const char *const conf_sections[] = {
	"fib", "cache", "netlink", "lookup", "control", "metrics", "log",
};
#define NSECTIONS (sizeof(conf_sections) / sizeof(conf_sections[0]))

/* Indexes into conf_sections[]; bit i of conf_diff() is section i. */
enum conf_sid { S_FIB, S_CACHE, S_NETLINK, S_LOOKUP, S_CONTROL, S_METRICS, S_LOG };

enum conf_type {
	T_UINT,     /* unsigned, decimal */
	T_POW2,     /* unsigned, decimal, a power of two */
	T_BOOL,     /* bool: true | false */
	T_DURATION, /* uint64_t microseconds, unit required */
	T_SIZE,     /* uint64_t bytes, optional binary unit */
	T_ENUM,     /* int, one of names[] */
	T_PATH,     /* char[CONF_PATH_MAX], absolute */
	T_MODE,     /* unsigned, octal string */
	T_GROUP,    /* char[CONF_GROUP_MAX], name or gid, may be empty */
	T_ADDR,     /* char[CONF_ADDR_MAX], IP:port, stored canonical */
	T_FAMILIES, /* unsigned CONF_FAMILY_* bits */
	T_TABLES,   /* struct conf_netlink tables, ntables, all_tables */
};

struct conf_name {
	const char *name;
	int value;
};

static const struct conf_name conf_reclaim_names[] = {
	{ "call_rcu", CONF_RECLAIM_CALL_RCU },
	{ "sync", CONF_RECLAIM_SYNC },
	{ NULL, 0 },
};

static const struct conf_name conf_level_names[] = {
	{ "debug", CONF_LOG_DEBUG },   { "info", CONF_LOG_INFO },
	{ "notice", CONF_LOG_NOTICE }, { "warning", CONF_LOG_WARNING },
	{ "err", CONF_LOG_ERR },       { NULL, 0 },
};

static const struct conf_name conf_family_names[] = {
	{ "ipv4", CONF_FAMILY_IPV4 },
	{ "ipv6", CONF_FAMILY_IPV6 },
	{ NULL, 0 },
};

/* Table names the kernel reserves (rtnetlink.h RT_TABLE_*). */
static const struct conf_name conf_table_names[] = {
	{ "default", 253 },
	{ "main", 254 },
	{ "local", 255 },
	{ NULL, 0 },
};

/*
 * One row a key: where it lives, how it is typed, its range and its
 * default. def is the default of a number, bool, enum or set of bits (for
 * tables, the one table); str that of a string.
 */
struct conf_field {
	unsigned section; /* index into conf_sections[] */
	const char *key;
	enum conf_type type;
	size_t off;
	uint64_t min, max;
	const struct conf_name *names;
	uint64_t def;
	const char *str;
};

enum conf_fid {
	F_INFLATE,
	F_HALVE,
	F_INFLATE_ROOT,
	F_HALVE_ROOT,
	F_SYNC_PAGES,
	F_RECLAIM,
	F_COMPACT_QUIET,
	F_COMPACT_MARGIN,
	F_ACCEL_MIN,
	F_CACHE_ENABLED,
	F_BUCKETS,
	F_MAX_ENTRIES,
	F_GC_INTERVAL,
	F_GC_TIMEOUT,
	F_GC_MIN_INTERVAL,
	F_GC_ELASTICITY,
	F_SCAN_BUDGET,
	F_YIELD_EVERY,
	F_CHAIN_CAP,
	F_FAMILIES,
	F_TABLES,
	F_RCVBUF,
	F_SLICE_BUDGET,
	F_THREADS,
	F_LOOKUP_SOCKET,
	F_LOOKUP_IDLE_TIMEOUT,
	F_CONTROL_SOCKET,
	F_MODE,
	F_GROUP,
	F_IDLE_TIMEOUT,
	F_METRICS_ENABLED,
	F_METRICS_ADDRESS,
	F_LOG_LEVEL,
	F_COUNT
};

#define OFF(sec, member) offsetof(struct conf, sec.member)

static const struct conf_field conf_fields[F_COUNT] = {
	[F_INFLATE] = { S_FIB, "inflate_threshold", T_UINT, OFF(fib, inflate_threshold),
		1, 100, NULL, 50, NULL },
	[F_HALVE] = { S_FIB, "halve_threshold", T_UINT, OFF(fib, halve_threshold),
		1, 100, NULL, 25, NULL },
	[F_INFLATE_ROOT] = { S_FIB, "inflate_threshold_root", T_UINT, OFF(fib, inflate_threshold_root),
		1, 100, NULL, 30, NULL },
	[F_HALVE_ROOT] = { S_FIB, "halve_threshold_root", T_UINT, OFF(fib, halve_threshold_root),
		1, 100, NULL, 15, NULL },
	[F_SYNC_PAGES] = { S_FIB, "sync_pages", T_UINT, OFF(fib, sync_pages),
		1, 65536, NULL, 128, NULL },
	[F_RECLAIM] = { S_FIB, "reclaim", T_ENUM, OFF(fib, reclaim),
		0, 0, conf_reclaim_names, CONF_RECLAIM_CALL_RCU, NULL },
	[F_COMPACT_QUIET] = { S_FIB, "compact_quiet", T_DURATION, OFF(fib, compact_quiet_us),
		0, US_H, NULL, 10 * US_S, NULL },
	[F_COMPACT_MARGIN] = { S_FIB, "compact_margin", T_UINT, OFF(fib, compact_margin),
		1, 1000, NULL, 10, NULL },
	[F_ACCEL_MIN] = { S_FIB, "accel_min_routes", T_UINT, OFF(fib, accel_min_routes),
		0, 100000000, NULL, 100000, NULL },
	[F_CACHE_ENABLED] = { S_CACHE, "enabled", T_BOOL, OFF(cache, enabled),
		0, 0, NULL, true, NULL },
	[F_BUCKETS] = { S_CACHE, "buckets", T_POW2, OFF(cache, buckets),
		16, 1u << 28, NULL, 1u << 17, NULL },
	[F_MAX_ENTRIES] = { S_CACHE, "max_entries", T_UINT, OFF(cache, max_entries),
		16, 1u << 30, NULL, 1u << 19, NULL },
	[F_GC_INTERVAL] = { S_CACHE, "gc_interval", T_DURATION, OFF(cache, gc_interval_us),
		US_S, 24 * US_H, NULL, 60 * US_S, NULL },
	[F_GC_TIMEOUT] = { S_CACHE, "gc_timeout", T_DURATION, OFF(cache, gc_timeout_us),
		US_S, 7 * 24 * US_H, NULL, 300 * US_S, NULL },
	[F_GC_MIN_INTERVAL] = { S_CACHE, "gc_min_interval", T_DURATION, OFF(cache, gc_min_interval_us),
		0, US_H, NULL, 500 * US_MS, NULL },
	[F_GC_ELASTICITY] = { S_CACHE, "gc_elasticity", T_UINT, OFF(cache, gc_elasticity),
		1, 1024, NULL, 8, NULL },
	[F_SCAN_BUDGET] = { S_CACHE, "scan_budget", T_DURATION, OFF(cache, scan_budget_us),
		100, US_S, NULL, 2 * US_MS, NULL },
	[F_YIELD_EVERY] = { S_CACHE, "yield_every", T_UINT, OFF(cache, yield_every),
		1, 1u << 20, NULL, 64, NULL },
	[F_CHAIN_CAP] = { S_CACHE, "chain_cap", T_UINT, OFF(cache, chain_cap),
		1, 1024, NULL, 16, NULL },
	[F_FAMILIES] = { S_NETLINK, "families", T_FAMILIES, OFF(netlink, families),
		0, 0, conf_family_names, CONF_FAMILY_IPV4 | CONF_FAMILY_IPV6, NULL },
	[F_TABLES] = { S_NETLINK, "tables", T_TABLES, offsetof(struct conf, netlink),
		1, UINT32_MAX, conf_table_names, 0 /* all */, NULL },
	[F_RCVBUF] = { S_NETLINK, "rcvbuf", T_SIZE, OFF(netlink, rcvbuf),
		64 * KIB, GIB, NULL, 64 * MIB, NULL },
	[F_SLICE_BUDGET] = { S_NETLINK, "slice_budget", T_DURATION, OFF(netlink, slice_budget_us),
		100, US_S, NULL, 2 * US_MS, NULL },
	[F_THREADS] = { S_LOOKUP, "threads", T_UINT, OFF(lookup, threads),
		0, 256, NULL, 2, NULL },
	[F_LOOKUP_SOCKET] = { S_LOOKUP, "socket", T_PATH, OFF(lookup, socket),
		0, 0, NULL, 0, "/run/fibd/lookup.sock" },
	[F_LOOKUP_IDLE_TIMEOUT] = { S_LOOKUP, "idle_timeout", T_DURATION, OFF(lookup, idle_timeout_us),
		0, 24 * US_H, NULL, 300 * US_S, NULL },
	[F_CONTROL_SOCKET] = { S_CONTROL, "socket", T_PATH, OFF(control, socket),
		0, 0, NULL, 0, "/run/fibd/fibd.sock" },
	[F_MODE] = { S_CONTROL, "mode", T_MODE, OFF(control, mode),
		0, 0777, NULL, 0660, NULL },
	[F_GROUP] = { S_CONTROL, "group", T_GROUP, OFF(control, group),
		0, 0, NULL, 0, "" },
	[F_IDLE_TIMEOUT] = { S_CONTROL, "idle_timeout", T_DURATION, OFF(control, idle_timeout_us),
		0, 24 * US_H, NULL, 60 * US_S, NULL },
	[F_METRICS_ENABLED] = { S_METRICS, "enabled", T_BOOL, OFF(metrics, enabled),
		0, 0, NULL, false, NULL },
	[F_METRICS_ADDRESS] = { S_METRICS, "address", T_ADDR, OFF(metrics, address),
		0, 0, NULL, 0, "127.0.0.1:9342" },
	[F_LOG_LEVEL] = { S_LOG, "level", T_ENUM, OFF(log, level),
		0, 0, conf_level_names, CONF_LOG_INFO, NULL },
};

/* ---- value formatting (shared by messages and conf_print) ------------- */

/*
 * Units of durations (in microseconds) and sizes (in bytes), largest
 * first. Every name parses; printing takes the first unit marked print
 * that divides the value, and zero for 0. Durations print no minutes, so
 * "300s" reads as in the kernel and the docs.
 */
struct conf_unit {
	const char *name;
	uint64_t mult;
	bool print, zero;
};

static const struct conf_unit conf_time_units[] = {
	{ "h", US_H, true, false },   { "m", US_M, false, false }, { "s", US_S, true, true },
	{ "ms", US_MS, true, false }, { "us", 1, true, false },    { NULL, 0, false, false },
};

static const struct conf_unit conf_size_units[] = {
	{ "GiB", GIB, true, false }, { "G", GIB, false, false }, { "MiB", MIB, true, false },
	{ "M", MIB, false, false },  { "KiB", KIB, true, false }, { "K", KIB, false, false },
	{ "", 1, true, true },       { "B", 1, false, false },    { NULL, 0, false, false },
};

static void
conf_fmt_unit(uint64_t v, const struct conf_unit *u, char *buf, size_t len)
{
	for (; u[1].name; u++)
		if (v == 0 ? u->zero : u->print && v % u->mult == 0)
			break;
	snprintf(buf, len, "%llu%s", (unsigned long long)(v / u->mult), u->name);
}

static const char *
conf_name_of(const struct conf_name *n, int value)
{
	for (; n->name; n++)
		if (n->value == value)
			return n->name;
	return NULL;
}

/* "a, b or c" */
static void
conf_fmt_names(const struct conf_name *n, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; n[i].name && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s",
				 i == 0 ? "" : n[i + 1].name ? ", " : " or ", n[i].name);
}

/* ---- errors ------------------------------------------------------------ */

struct conf_at {
	unsigned line, column;
	bool set; /* given in the file and valid */
	bool bad; /* given and refused */
};

struct conf_parse {
	const char *buf;
	size_t len;
	yaml_document_t *doc;
	struct conf *conf;
	struct conf_errors *errs;
	bool nomem;
	size_t dropped; /* errors past CONF_ERRORS_MAX */
	struct conf_at at[F_COUNT];
};

/* A new slot at the end of the list, or NULL (ENOMEM noted in ps). */
static struct conf_error *
conf_err_push(struct conf_parse *ps, unsigned line, unsigned column)
{
	struct conf_errors *e = ps->errs;
	struct conf_error *ce;

	if (e->count == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 8;
		struct conf_error *v = realloc(e->v, cap * sizeof(*v));

		if (!v) {
			ps->nomem = true;
			return NULL;
		}
		e->v = v;
		e->cap = cap;
	}
	ce = &e->v[e->count++];
	ce->line = line;
	ce->column = column;
	return ce;
}

static void conf_err(struct conf_parse *ps, unsigned line, unsigned column,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Keep the first CONF_ERRORS_MAX, count the rest for one closing line. */
static void
conf_err(struct conf_parse *ps, unsigned line, unsigned column, const char *fmt, ...)
{
	struct conf_error *ce;
	va_list ap;

	if (ps->errs->count >= CONF_ERRORS_MAX) {
		ps->dropped++;
		return;
	}
	ce = conf_err_push(ps, line, column);
	if (!ce)
		return;
	va_start(ap, fmt);
	vsnprintf(ce->msg, sizeof(ce->msg), fmt, ap);
	va_end(ap);
}

#define conf_err_node(ps, node, ...)                                           \
	conf_err((ps), (unsigned)(node)->start_mark.line + 1,                  \
		 (unsigned)(node)->start_mark.column + 1, __VA_ARGS__)

static int
conf_err_cmp(const void *a, const void *b)
{
	const struct conf_error *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->column != y->column)
		return x->column < y->column ? -1 : 1;
	return strcmp(x->msg, y->msg); /* qsort is not stable */
}

/* ---- scalar helpers ----------------------------------------------------- */

static bool
conf_is_null(const yaml_node_t *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = (const char *)n->data.scalar.value;
	return !strcmp(s, "") || !strcmp(s, "~") || !strcmp(s, "null") ||
	       !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static const char *
conf_kind(const yaml_node_t *n)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	if (conf_is_null(n))
		return "nothing";
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		return "a plain value";
	return "a quoted string";
}

/* Decimal digits only; -EINVAL for anything else, -ERANGE past 2^64-1. */
static int
conf_parse_u64(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (len == 0)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		d = (unsigned)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

static size_t
conf_digits(const char *s)
{
	size_t i = 0;

	while (s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/* A whole number and one of the units: 0 when valid, -EINVAL, -ERANGE. */
static int
conf_parse_unit(const char *s, const struct conf_unit *u, uint64_t *out)
{
	size_t n = conf_digits(s);
	uint64_t v;
	int rc;

	if (n == 0)
		return -EINVAL;
	rc = conf_parse_u64(s, n, &v);
	if (rc)
		return rc;
	for (; u->name; u++) {
		if (strcmp(s + n, u->name))
			continue;
		if (v > UINT64_MAX / u->mult)
			return -ERANGE;
		*out = v * u->mult;
		return 0;
	}
	return -EINVAL;
}

/*
 * The first character of s that YAML cannot keep in a printed quoted
 * string as it is, or 0: C0 controls and DEL, C1 controls (U+0080..U+009F;
 * U+0085, NEL, is a line break to YAML 1.1, folded into a space when read
 * back), and the line and paragraph separators U+2028 and U+2029 (line
 * breaks too). s is valid UTF-8: libyaml checked it.
 */
static unsigned
conf_ctrl_char(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	for (; *u; u++) {
		if (*u < 0x20 || *u == 0x7f)
			return *u;
		if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)
			return u[1];
		if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
			return 0x2000u + (unsigned)(u[2] - 0x80);
	}
	return 0;
}

static bool
conf_valid_group(const char *s)
{
	size_t i, len = strlen(s);
	uint64_t gid;

	if (len == 0)
		return true;
	if (conf_parse_u64(s, len, &gid) == 0)
		return gid < UINT32_MAX;
	if (len >= CONF_GROUP_MAX)
		return false;
	if (!(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (i = 1; i < len; i++) {
		char ch = s[i];

		if (ch == '$' && i == len - 1)
			break;
		if (!(ch == '_' || ch == '-' || ch == '.' || (ch >= 'a' && ch <= 'z') ||
		      (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')))
			return false;
	}
	return true;
}

/* "IPv4:port" or "[IPv6]:port" into canonical text; -EINVAL or -ERANGE. */
static int
conf_parse_addr(const char *s, char *out, size_t outlen)
{
	char host[INET6_ADDRSTRLEN + 1], canon[INET6_ADDRSTRLEN];
	unsigned char bin[sizeof(struct in6_addr)];
	const char *colon, *hs = s;
	size_t hlen;
	uint64_t port;
	int af = AF_INET;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		hs = s + 1;
		hlen = (size_t)(close - hs);
		colon = close + 1;
		af = AF_INET6;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return -EINVAL;
		hlen = (size_t)(colon - s);
	}
	if (hlen == 0 || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, hs, hlen);
	host[hlen] = '\0';
	if (inet_pton(af, host, bin) != 1)
		return -EINVAL;
	if (conf_parse_u64(colon + 1, strlen(colon + 1), &port) != 0)
		return -EINVAL;
	if (port == 0 || port > 65535)
		return -ERANGE;
	inet_ntop(af, bin, canon, sizeof(canon));
	snprintf(out, outlen, af == AF_INET6 ? "[%s]:%u" : "%s:%u", canon, (unsigned)port);
	return 0;
}

/* ---- one field ---------------------------------------------------------- */

/*
 * Each type is a row of conf_types[] below: how a node parses into the
 * field at p (false after reporting why not), how the field prints as
 * YAML, and how it is stored, which sets the default and the comparison.
 */

/*
 * The text of a scalar node for field f, or NULL after reporting why there
 * is none. plain_only refuses quoted values (numbers and booleans).
 */
static const char *
conf_scalar(struct conf_parse *ps, const char *key, const yaml_node_t *n,
	    const char *want, bool plain_only)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE) {
		conf_err_node(ps, n, "%s: expected %s, got %s", key, want, conf_kind(n));
		return NULL;
	}
	if (conf_is_null(n)) {
		conf_err_node(ps, n, "%s: missing value, expected %s", key, want);
		return NULL;
	}
	if (plain_only && n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
		conf_err_node(ps, n, "%s: expected %s, got a quoted string", key, want);
		return NULL;
	}
	s = (const char *)n->data.scalar.value;
	if (strlen(s) != n->data.scalar.length) {
		conf_err_node(ps, n, "%s: contains a NUL character", key);
		return NULL;
	}
	return s;
}

/* T_UINT and T_POW2 */
static bool
conf_parse_uint(struct conf_parse *ps, const struct conf_field *f, const char *key,
		const yaml_node_t *n, void *p)
{
	const char *s = conf_scalar(ps, key, n, "a whole number", true);
	uint64_t v;
	int rc;

	if (!s)
		return false;
	rc = conf_parse_u64(s, strlen(s), &v);
	if (rc == -EINVAL) {
		conf_err_node(ps, n, "%s: \"%s\" is not a whole number", key, s);
		return false;
	}
	if (rc || v < f->min || v > f->max) {
		conf_err_node(ps, n, "%s: %s is out of range (%llu..%llu)", key, s,
			      (unsigned long long)f->min, (unsigned long long)f->max);
		return false;
	}
	if (f->type == T_POW2 && (v & (v - 1))) {
		conf_err_node(ps, n, "%s: %s is not a power of two", key, s);
		return false;
	}
	*(unsigned *)p = (unsigned)v;
	return true;
}

static bool
conf_parse_bool(struct conf_parse *ps, const struct conf_field *f, const char *key,
		const yaml_node_t *n, void *p)
{
	const char *s = conf_scalar(ps, key, n, "true or false", true);

	(void)f;
	if (!s)
		return false;
	if (strcmp(s, "true") && strcmp(s, "false")) {
		conf_err_node(ps, n, "%s: expected true or false, got \"%s\"", key, s);
		return false;
	}
	*(bool *)p = !strcmp(s, "true");
	return true;
}

/* T_DURATION and T_SIZE */
static bool
conf_parse_amount(struct conf_parse *ps, const struct conf_field *f, const char *key,
		  const yaml_node_t *n, void *p)
{
	bool dur = f->type == T_DURATION;
	const struct conf_unit *u = dur ? conf_time_units : conf_size_units;
	const char *s = conf_scalar(ps, key, n, dur ? "a duration" : "a size", false);
	char a[32], b[32];
	uint64_t v;
	int rc;

	if (!s)
		return false;
	rc = conf_parse_unit(s, u, &v);
	if (rc == -EINVAL && dur && s[0] && conf_digits(s) == strlen(s)) {
		conf_err_node(ps, n, "%s: \"%s\" needs a unit (us, ms, s, m or h)", key, s);
		return false;
	}
	if (rc == -EINVAL) {
		conf_err_node(ps, n, "%s: \"%s\" is not %s", key, s,
			      dur ? "a duration (a whole number and us, ms, s, m or h)"
				  : "a size (a whole number of bytes, K/KiB, M/MiB or G/GiB)");
		return false;
	}
	if (rc || v < f->min || v > f->max) {
		conf_fmt_unit(f->min, u, a, sizeof(a));
		conf_fmt_unit(f->max, u, b, sizeof(b));
		conf_err_node(ps, n, "%s: %s is out of range (%s..%s)", key, s, a, b);
		return false;
	}
	*(uint64_t *)p = v;
	return true;
}

static bool
conf_parse_enum(struct conf_parse *ps, const struct conf_field *f, const char *key,
		const yaml_node_t *n, void *p)
{
	const struct conf_name *e;
	char names[128];
	const char *s;

	conf_fmt_names(f->names, names, sizeof(names));
	s = conf_scalar(ps, key, n, names, false);
	if (!s)
		return false;
	for (e = f->names; e->name && strcmp(e->name, s); e++)
		;
	if (!e->name) {
		conf_err_node(ps, n, "%s: unknown value \"%s\", expected %s", key, s, names);
		return false;
	}
	*(int *)p = e->value;
	return true;
}

static bool
conf_parse_path(struct conf_parse *ps, const struct conf_field *f, const char *key,
		const yaml_node_t *n, void *p)
{
	const char *s = conf_scalar(ps, key, n, "an absolute path", false);
	unsigned ch;

	(void)f;
	if (!s)
		return false;
	if ((ch = conf_ctrl_char(s)) != 0) {
		conf_err_node(ps, n, "%s: contains %s (U+%04X)", key,
			      ch >= 0x2000 ? "a line or paragraph separator" : "a control character",
			      ch);
		return false;
	}
	if (s[0] != '/') {
		conf_err_node(ps, n, "%s: \"%s\" is not an absolute path", key, s);
		return false;
	}
	if (strlen(s) >= CONF_PATH_MAX) {
		conf_err_node(ps, n, "%s: path is too long (at most %d bytes)", key,
			      CONF_PATH_MAX - 1);
		return false;
	}
	if (s[strlen(s) - 1] == '/') {
		conf_err_node(ps, n, "%s: \"%s\" names a directory, not a socket", key, s);
		return false;
	}
	strcpy(p, s);
	return true;
}

static bool
conf_parse_mode(struct conf_parse *ps, const struct conf_field *f, const char *key,
		const yaml_node_t *n, void *p)
{
	const char *s = conf_scalar(ps, key, n, "an octal mode such as \"0660\"", false);
	uint64_t v = 0;
	size_t i, len;

	if (!s)
		return false;
	len = strlen(s);
	for (i = 1; i < len && s[i] >= '0' && s[i] <= '7'; i++)
		v = v * 8 + (unsigned)(s[i] - '0');
	if (s[0] != '0' || len < 2 || len > 5 || i != len) {
		conf_err_node(ps, n, "%s: expected an octal mode such as \"0660\", got \"%s\"",
			      key, s);
		return false;
	}
	if (v > f->max) {
		conf_err_node(ps, n, "%s: %s is out of range (0000..0777)", key, s);
		return false;
	}
	*(unsigned *)p = (unsigned)v;
	return true;
}

static bool
conf_parse_group(struct conf_parse *ps, const struct conf_field *f, const char *key,
		 const yaml_node_t *n, void *p)
{
	const char *s;

	(void)f;
	/* "" passes both checks: the daemon's own group */
	s = conf_scalar(ps, key, n, "a group name or number", false);
	if (!s)
		return false;
	if (!conf_valid_group(s)) {
		conf_err_node(ps, n, "%s: \"%.40s\" is not a valid group name or number", key, s);
		return false;
	}
	strcpy(p, s);
	return true;
}

static bool
conf_parse_address(struct conf_parse *ps, const struct conf_field *f, const char *key,
		   const yaml_node_t *n, void *p)
{
	const char *s = conf_scalar(ps, key, n, "ADDRESS:PORT", false);
	int rc;

	(void)f;
	if (!s)
		return false;
	rc = conf_parse_addr(s, p, CONF_ADDR_MAX);
	if (rc == -ERANGE) {
		conf_err_node(ps, n, "%s: port out of range (1..65535) in \"%.64s\"", key, s);
		return false;
	}
	if (rc) {
		conf_err_node(ps, n,
			      "%s: expected an IP address and port such as \"127.0.0.1:9342\" or \"[::1]:9342\", got \"%.64s\"",
			      key, s);
		return false;
	}
	return true;
}

/* p: unsigned CONF_FAMILY_* bits */
static bool
conf_parse_families(struct conf_parse *ps, const struct conf_field *f, const char *key,
		    const yaml_node_t *n, void *p)
{
	yaml_node_item_t *it;
	unsigned mask = 0;
	bool ok = true;

	if (n->type != YAML_SEQUENCE_NODE) {
		conf_err_node(ps, n, "%s: expected a list such as [ipv4, ipv6], got %s", key,
			      conf_kind(n));
		return false;
	}
	if (n->data.sequence.items.start == n->data.sequence.items.top) {
		conf_err_node(ps, n, "%s: the list is empty; name ipv4, ipv6 or both", key);
		return false;
	}
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(ps->doc, *it);
		const char *s = conf_scalar(ps, key, item, "ipv4 or ipv6", false);
		const struct conf_name *fam;

		if (!s) {
			ok = false;
			continue;
		}
		for (fam = f->names; fam->name && strcmp(fam->name, s); fam++)
			;
		if (!fam->name) {
			conf_err_node(ps, item, "%s: unknown family \"%s\", expected ipv4 or ipv6",
				      key, s);
			ok = false;
		} else if (mask & (unsigned)fam->value) {
			conf_err_node(ps, item, "%s: duplicate family %s", key, s);
			ok = false;
		}
		mask |= (unsigned)fam->value;
	}
	if (ok)
		*(unsigned *)p = mask;
	return ok;
}

static bool
conf_table_item(struct conf_parse *ps, const struct conf_field *f, const char *key,
		const yaml_node_t *item, struct conf_netlink *nl, size_t nitems)
{
	const struct conf_name *t;
	const char *s = conf_scalar(ps, key, item, "a table name or number", false);
	uint64_t v = 0;
	size_t i;
	int rc;

	if (!s)
		return false;
	if (!strcmp(s, "all")) {
		if (nitems > 1) {
			conf_err_node(ps, item, "%s: \"all\" cannot be combined with other tables", key);
			return false;
		}
		nl->all_tables = true;
		return true;
	}
	for (t = f->names; t->name && strcmp(t->name, s); t++)
		;
	if (t->name) {
		v = (uint64_t)t->value;
	} else {
		rc = conf_parse_u64(s, strlen(s), &v);
		if (rc == -EINVAL) {
			conf_err_node(ps, item,
				      "%s: unknown table \"%s\", expected main, local, default, all or a number",
				      key, s);
			return false;
		}
		if (rc || v < f->min || v > f->max) {
			conf_err_node(ps, item, "%s: table %s is out of range (%llu..%llu)", key, s,
				      (unsigned long long)f->min, (unsigned long long)f->max);
			return false;
		}
	}
	for (i = 0; i < nl->ntables; i++) {
		if (nl->tables[i] == v) {
			conf_err_node(ps, item, "%s: duplicate table %s", key, s);
			return false;
		}
	}
	if (nl->ntables == CONF_TABLES_MAX) {
		conf_err_node(ps, item, "%s: too many tables (at most %d)", key, CONF_TABLES_MAX);
		return false;
	}
	nl->tables[nl->ntables++] = (uint32_t)v;
	return true;
}

/* p: the struct conf_netlink whose tables, ntables and all_tables are set */
static bool
conf_parse_tables(struct conf_parse *ps, const struct conf_field *f, const char *key,
		  const yaml_node_t *n, void *p)
{
	struct conf_netlink nl = { 0 }, *out = p;
	yaml_node_item_t *it;
	size_t nitems;
	bool ok = true;

	if (n->type == YAML_SCALAR_NODE && !conf_is_null(n) &&
	    !strcmp((const char *)n->data.scalar.value, "all")) {
		nl.all_tables = true;
		goto done;
	}
	if (n->type != YAML_SEQUENCE_NODE) {
		conf_err_node(ps, n, "%s: expected a list such as [main] or all, got %s", key,
			      conf_kind(n));
		return false;
	}
	nitems = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (nitems == 0) {
		conf_err_node(ps, n, "%s: the list is empty; name tables or use all", key);
		return false;
	}
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
		if (!conf_table_item(ps, f, key, yaml_document_get_node(ps->doc, *it), &nl,
				     nitems))
			ok = false;
	if (!ok)
		return false;
done:
	out->all_tables = nl.all_tables;
	out->ntables = nl.ntables;
	memcpy(out->tables, nl.tables, sizeof(out->tables));
	return true;
}

/*
 * A double-quoted YAML scalar that reads back as s. Parsed values hold no
 * control characters or line breaks (conf_ctrl_char), but a conf built
 * by a program may: those are escaped too (\xNN, \L, \P), never written
 * raw, since YAML folds a raw line break (NEL included) into a space.
 */
static void
conf_print_quoted(FILE *fp, const struct conf_field *f, const void *p)
{
	const unsigned char *u = p;

	(void)f;
	fputc('"', fp);
	for (; *u; u++) {
		if (*u == '"' || *u == '\\') {
			fputc('\\', fp);
			fputc(*u, fp);
		} else if (*u < 0x20 || *u == 0x7f) {
			fprintf(fp, "\\x%02x", *u);
		} else if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f) {
			fprintf(fp, "\\x%02x", u[1]);
			u++;
		} else if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9)) {
			fputs(u[2] == 0xa8 ? "\\L" : "\\P", fp);
			u += 2;
		} else {
			fputc(*u, fp);
		}
	}
	fputc('"', fp);
}

static void
conf_print_uint(FILE *fp, const struct conf_field *f, const void *p)
{
	(void)f;
	fprintf(fp, "%u", *(const unsigned *)p);
}

static void
conf_print_bool(FILE *fp, const struct conf_field *f, const void *p)
{
	(void)f;
	fputs(*(const bool *)p ? "true" : "false", fp);
}

static void
conf_print_amount(FILE *fp, const struct conf_field *f, const void *p)
{
	char buf[32];

	conf_fmt_unit(*(const uint64_t *)p,
		      f->type == T_DURATION ? conf_time_units : conf_size_units, buf, sizeof(buf));
	fputs(buf, fp);
}

static void
conf_print_enum(FILE *fp, const struct conf_field *f, const void *p)
{
	fputs(conf_name_of(f->names, *(const int *)p), fp);
}

static void
conf_print_mode(FILE *fp, const struct conf_field *f, const void *p)
{
	(void)f;
	fprintf(fp, "\"%04o\"", *(const unsigned *)p);
}

static void
conf_print_families(FILE *fp, const struct conf_field *f, const void *p)
{
	const char *sep = "";
	size_t i;

	fputc('[', fp);
	for (i = 0; f->names[i].name; i++) {
		if (*(const unsigned *)p & (unsigned)f->names[i].value) {
			fprintf(fp, "%s%s", sep, f->names[i].name);
			sep = ", ";
		}
	}
	fputc(']', fp);
}

static void
conf_print_tables(FILE *fp, const struct conf_field *f, const void *p)
{
	const struct conf_netlink *nl = p;
	size_t i;

	if (nl->all_tables) {
		fputs("all", fp);
		return;
	}
	fputc('[', fp);
	for (i = 0; i < nl->ntables; i++) {
		const char *name = conf_name_of(f->names, (int)nl->tables[i]);

		if (i)
			fputs(", ", fp);
		if (name && nl->tables[i] <= 255)
			fputs(name, fp);
		else
			fprintf(fp, "%u", nl->tables[i]);
	}
	fputc(']', fp);
}

/* How a field is stored: sets its default and its comparison. */
enum conf_store { ST_UINT, ST_BOOL, ST_U64, ST_INT, ST_STR, ST_TABLES };

static const struct conf_type_ops {
	bool (*parse)(struct conf_parse *ps, const struct conf_field *f, const char *key,
		      const yaml_node_t *n, void *p);
	void (*print)(FILE *fp, const struct conf_field *f, const void *p);
	enum conf_store store;
} conf_types[] = {
	[T_UINT] = { conf_parse_uint, conf_print_uint, ST_UINT },
	[T_POW2] = { conf_parse_uint, conf_print_uint, ST_UINT },
	[T_BOOL] = { conf_parse_bool, conf_print_bool, ST_BOOL },
	[T_DURATION] = { conf_parse_amount, conf_print_amount, ST_U64 },
	[T_SIZE] = { conf_parse_amount, conf_print_amount, ST_U64 },
	[T_ENUM] = { conf_parse_enum, conf_print_enum, ST_INT },
	[T_PATH] = { conf_parse_path, conf_print_quoted, ST_STR },
	[T_MODE] = { conf_parse_mode, conf_print_mode, ST_UINT },
	[T_GROUP] = { conf_parse_group, conf_print_quoted, ST_STR },
	[T_ADDR] = { conf_parse_address, conf_print_quoted, ST_STR },
	[T_FAMILIES] = { conf_parse_families, conf_print_families, ST_UINT },
	[T_TABLES] = { conf_parse_tables, conf_print_tables, ST_TABLES },
};

/* Parse node n into field f of ps->conf; false after reporting an error. */
static bool
conf_parse_field(struct conf_parse *ps, const struct conf_field *f, const yaml_node_t *n)
{
	char key[64];

	snprintf(key, sizeof(key), "%s.%s", conf_sections[f->section], f->key);
	return conf_types[f->type].parse(ps, f, key, n, (char *)ps->conf + f->off);
}

static void
conf_defaults(struct conf *c)
{
	unsigned i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < F_COUNT; i++) {
		const struct conf_field *f = &conf_fields[i];
		void *p = (char *)c + f->off;

		switch (conf_types[f->type].store) {
		case ST_UINT:
			*(unsigned *)p = (unsigned)f->def;
			break;
		case ST_BOOL:
			*(bool *)p = f->def != 0;
			break;
		case ST_U64:
			*(uint64_t *)p = f->def;
			break;
		case ST_INT:
			*(int *)p = (int)f->def;
			break;
		case ST_STR:
			strcpy(p, f->str);
			break;
		case ST_TABLES: /* def 0: all tables, as rules may send a flow to any */
			((struct conf_netlink *)p)->all_tables = f->def == 0;
			((struct conf_netlink *)p)->ntables = f->def != 0;
			((struct conf_netlink *)p)->tables[0] = (uint32_t)f->def;
			break;
		}
	}
}

/* ---- tree walk ---------------------------------------------------------- */

static const char *
conf_key(struct conf_parse *ps, const yaml_node_t *k, const char *what)
{
	if (k->type != YAML_SCALAR_NODE || conf_is_null(k)) {
		conf_err_node(ps, k, "%s must be a plain name, got %s", what, conf_kind(k));
		return NULL;
	}
	return (const char *)k->data.scalar.value;
}

static void
conf_walk_section(struct conf_parse *ps, unsigned sec, const yaml_node_t *map)
{
	yaml_node_pair_t *pr;

	for (pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(ps->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(ps->doc, pr->value);
		const char *name = conf_key(ps, k, "a key");
		struct conf_at *at;
		unsigned i;

		if (!name)
			continue;
		for (i = 0; i < F_COUNT; i++)
			if (conf_fields[i].section == sec && !strcmp(conf_fields[i].key, name))
				break;
		if (i == F_COUNT) {
			conf_err_node(ps, k, "unknown key \"%.40s\" in section %s", name,
				      conf_sections[sec]);
			continue;
		}
		at = &ps->at[i];
		if (at->line) {
			conf_err_node(ps, k, "duplicate key %s.%s (first given at line %u)",
				      conf_sections[sec], name, at->line);
			continue;
		}
		at->line = (unsigned)v->start_mark.line + 1;
		at->column = (unsigned)v->start_mark.column + 1;
		if (conf_parse_field(ps, &conf_fields[i], v))
			at->set = true;
		else
			at->bad = true;
	}
}

static void
conf_walk(struct conf_parse *ps, const yaml_node_t *root)
{
	unsigned first[NSECTIONS] = { 0 };
	yaml_node_pair_t *pr;

	if (conf_is_null(root))
		return;
	if (root->type != YAML_MAPPING_NODE) {
		conf_err_node(ps, root, "the top level must be a mapping of sections, got %s",
			      conf_kind(root));
		return;
	}
	for (pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(ps->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(ps->doc, pr->value);
		const char *name = conf_key(ps, k, "a section name");
		unsigned sec;

		if (!name)
			continue;
		for (sec = 0; sec < NSECTIONS && strcmp(conf_sections[sec], name); sec++)
			;
		if (sec == NSECTIONS) {
			conf_err_node(ps, k,
				      "unknown section \"%.40s\", expected fib, cache, netlink, lookup, control, metrics or log",
				      name);
			continue;
		}
		if (first[sec]) {
			conf_err_node(ps, k, "duplicate section %s (first given at line %u)", name,
				      first[sec]);
			continue;
		}
		first[sec] = (unsigned)k->start_mark.line + 1;
		if (conf_is_null(v))
			continue;
		if (v->type != YAML_MAPPING_NODE) {
			conf_err_node(ps, v, "section %s must be a mapping of keys, got %s", name,
				      conf_kind(v));
			continue;
		}
		conf_walk_section(ps, sec, v);
	}
}

/*
 * Cross-field checks. Report at the first field if the file set it, else
 * at the second; skip pairs where either already failed on its own.
 */
static const struct conf_at *
conf_pair_at(struct conf_parse *ps, enum conf_fid a, enum conf_fid b)
{
	if (ps->at[a].bad || ps->at[b].bad)
		return NULL;
	return ps->at[a].set ? &ps->at[a] : &ps->at[b];
}

/* An idle timeout (field fid of section sec, us) is 0 (off) or at least
 * a second. */
static void
conf_check_idle(struct conf_parse *ps, enum conf_fid fid, const char *sec, uint64_t us)
{
	char a[32];

	if (!us || us >= US_S || !ps->at[fid].set)
		return;
	conf_fmt_unit(us, conf_time_units, a, sizeof(a));
	conf_err(ps, ps->at[fid].line, ps->at[fid].column,
		 "%s.idle_timeout: %s is too short (0s turns it off, else at least 1s)", sec, a);
}

static void
conf_check(struct conf_parse *ps)
{
	const struct conf *c = ps->conf;
	const struct conf_at *at;
	char a[32], b[32];

	if (c->fib.halve_threshold >= c->fib.inflate_threshold &&
	    (at = conf_pair_at(ps, F_HALVE, F_INFLATE)))
		conf_err(ps, at->line, at->column,
			 "fib.halve_threshold (%u) must be below fib.inflate_threshold (%u)",
			 c->fib.halve_threshold, c->fib.inflate_threshold);
	if (c->fib.halve_threshold_root >= c->fib.inflate_threshold_root &&
	    (at = conf_pair_at(ps, F_HALVE_ROOT, F_INFLATE_ROOT)))
		conf_err(ps, at->line, at->column,
			 "fib.halve_threshold_root (%u) must be below fib.inflate_threshold_root (%u)",
			 c->fib.halve_threshold_root, c->fib.inflate_threshold_root);
	if (c->cache.gc_min_interval_us > c->cache.gc_interval_us &&
	    (at = conf_pair_at(ps, F_GC_MIN_INTERVAL, F_GC_INTERVAL))) {
		conf_fmt_unit(c->cache.gc_min_interval_us, conf_time_units, a, sizeof(a));
		conf_fmt_unit(c->cache.gc_interval_us, conf_time_units, b, sizeof(b));
		conf_err(ps, at->line, at->column,
			 "cache.gc_min_interval (%s) must not exceed cache.gc_interval (%s)", a, b);
	}
	if (c->cache.gc_interval_us > c->cache.gc_timeout_us &&
	    (at = conf_pair_at(ps, F_GC_INTERVAL, F_GC_TIMEOUT))) {
		conf_fmt_unit(c->cache.gc_interval_us, conf_time_units, a, sizeof(a));
		conf_fmt_unit(c->cache.gc_timeout_us, conf_time_units, b, sizeof(b));
		conf_err(ps, at->line, at->column,
			 "cache.gc_interval (%s) must not exceed cache.gc_timeout (%s)", a, b);
	}
	if (c->cache.chain_cap < c->cache.gc_elasticity &&
	    (at = conf_pair_at(ps, F_CHAIN_CAP, F_GC_ELASTICITY)))
		conf_err(ps, at->line, at->column,
			 "cache.chain_cap (%u) must be at least cache.gc_elasticity (%u)",
			 c->cache.chain_cap, c->cache.gc_elasticity);
	if (c->cache.max_entries < c->cache.chain_cap &&
	    (at = conf_pair_at(ps, F_MAX_ENTRIES, F_CHAIN_CAP)))
		conf_err(ps, at->line, at->column,
			 "cache.max_entries (%u) must be at least cache.chain_cap (%u)",
			 c->cache.max_entries, c->cache.chain_cap);
	/* Under a second would drop a control client typing its request by
	 * hand; for a lookup client (a program) a second is short, not too
	 * short. */
	conf_check_idle(ps, F_IDLE_TIMEOUT, "control", c->control.idle_timeout_us);
	conf_check_idle(ps, F_LOOKUP_IDLE_TIMEOUT, "lookup", c->lookup.idle_timeout_us);
	if (c->lookup.threads > 0 && !strcmp(c->lookup.socket, c->control.socket) &&
	    (at = conf_pair_at(ps, F_LOOKUP_SOCKET, F_CONTROL_SOCKET)))
		conf_err(ps, at->line, at->column,
			 "lookup.socket and control.socket are the same path %s", c->lookup.socket);
}

/* libyaml reader errors carry a byte offset, not a mark. */
static void
conf_offset_mark(const char *buf, size_t len, size_t off, unsigned *line, unsigned *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static void
conf_err_syntax(struct conf_parse *ps, const yaml_parser_t *yp)
{
	unsigned line, col;

	if (yp->error == YAML_MEMORY_ERROR) {
		ps->nomem = true;
		return;
	}
	if (yp->error == YAML_READER_ERROR) {
		conf_offset_mark(ps->buf, ps->len, yp->problem_offset, &line, &col);
		conf_err(ps, line, col, "not valid UTF-8 text: %s", yp->problem);
		return;
	}
	line = (unsigned)yp->problem_mark.line + 1;
	col = (unsigned)yp->problem_mark.column + 1;
	if (yp->context)
		conf_err(ps, line, col, "YAML syntax error: %s (%s started at line %u, column %u)",
			 yp->problem, yp->context, (unsigned)yp->context_mark.line + 1,
			 (unsigned)yp->context_mark.column + 1);
	else
		conf_err(ps, line, col, "YAML syntax error: %s",
			 yp->problem ? yp->problem : "unknown problem");
}

static void
conf_load(struct conf_parse *ps)
{
	yaml_parser_t yp;
	yaml_document_t doc, extra;
	yaml_node_t *root;

	if (!yaml_parser_initialize(&yp)) {
		ps->nomem = true;
		return;
	}
	yaml_parser_set_input_string(&yp, (const unsigned char *)ps->buf, ps->len);
	if (!yaml_parser_load(&yp, &doc)) {
		conf_err_syntax(ps, &yp);
		goto out;
	}
	ps->doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (root) {
		conf_walk(ps, root);
		if (!yaml_parser_load(&yp, &extra)) {
			conf_err_syntax(ps, &yp);
		} else {
			yaml_node_t *r2 = yaml_document_get_root_node(&extra);

			if (r2)
				conf_err(ps, (unsigned)extra.start_mark.line + 1,
					 (unsigned)extra.start_mark.column + 1,
					 "only one YAML document is allowed");
			yaml_document_delete(&extra);
		}
	}
	conf_check(ps);
	ps->doc = NULL;
	yaml_document_delete(&doc);
out:
	yaml_parser_delete(&yp);
}

/* ---- API ------------------------------------------------------------------ */

struct conf *
conf_new(void)
{
	struct conf *c = malloc(sizeof(*c));

	if (c)
		conf_defaults(c);
	return c;
}

void
conf_free(struct conf *conf)
{
	free(conf);
}

void
conf_errors_free(struct conf_errors *errs)
{
	if (!errs)
		return;
	free(errs->name);
	free(errs->v);
	memset(errs, 0, sizeof(*errs));
}

int
conf_parse_buf(const char *buf, size_t len, const char *name, struct conf **out,
	       struct conf_errors *errs)
{
	struct conf_errors local = { 0 };
	struct conf_parse ps;
	int rc;

	if (!errs)
		errs = &local;
	conf_errors_free(errs);
	errs->name = strdup(name ? name : "-");
	if (!errs->name)
		return -ENOMEM;

	memset(&ps, 0, sizeof(ps));
	ps.buf = buf;
	ps.len = len;
	ps.errs = errs;
	ps.conf = conf_new();
	if (!ps.conf)
		return -ENOMEM;
	conf_load(&ps);
	if (ps.nomem) {
		rc = -ENOMEM;
	} else if (errs->count) {
		struct conf_error *ce;

		qsort(errs->v, errs->count, sizeof(errs->v[0]), conf_err_cmp);
		if (ps.dropped && (ce = conf_err_push(&ps, 0, 0)))
			snprintf(ce->msg, sizeof(ce->msg), "%zu more errors not shown", ps.dropped);
		rc = ps.nomem ? -ENOMEM : -EINVAL;
	} else {
		*out = ps.conf;
		ps.conf = NULL;
		rc = 0;
	}
	conf_free(ps.conf);
	conf_errors_free(&local);
	return rc;
}

int
conf_parse_file(const char *path, struct conf **out, struct conf_errors *errs)
{
	struct conf_errors local = { 0 };
	struct conf_parse ps = { 0 };
	char *buf = NULL;
	size_t len = 0;
	int fd, rc = 0;

	if (!errs)
		errs = &local;
	conf_errors_free(errs);
	errs->name = strdup(path);
	if (!errs->name)
		return -ENOMEM;
	ps.errs = errs;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	buf = malloc(CONF_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, CONF_FILE_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > CONF_FILE_MAX) {
			rc = -EFBIG;
			break;
		}
	}
	close(fd);
	if (rc == 0) {
		rc = conf_parse_buf(buf, len, path, out, errs);
		free(buf);
		conf_errors_free(&local);
		return rc;
	}
	free(buf);
fail:
	if (rc == -EFBIG)
		conf_err(&ps, 0, 0, "file is larger than %u bytes", CONF_FILE_MAX);
	else
		conf_err(&ps, 0, 0, "cannot read: %s", strerror(-rc));
	if (ps.nomem)
		rc = -ENOMEM;
	conf_errors_free(&local);
	return rc;
}

int
conf_error_format(const struct conf_errors *errs, size_t i, char *buf, size_t len)
{
	const struct conf_error *e = &errs->v[i];
	const char *name = errs->name ? errs->name : "-";

	if (e->line == 0)
		return snprintf(buf, len, "%s: %s", name, e->msg);
	return snprintf(buf, len, "%s:%u:%u: %s", name, e->line, e->column, e->msg);
}

int
conf_errors_print(const struct conf_errors *errs, FILE *fp)
{
	char line[1280];
	size_t i;

	for (i = 0; i < errs->count; i++) {
		conf_error_format(errs, i, line, sizeof(line));
		if (fprintf(fp, "%s\n", line) < 0)
			return -EIO;
	}
	return 0;
}

int
conf_print(const struct conf *conf, FILE *fp)
{
	unsigned sec, i;

	for (sec = 0; sec < NSECTIONS; sec++) {
		fprintf(fp, "%s:\n", conf_sections[sec]);
		for (i = 0; i < F_COUNT; i++) {
			const struct conf_field *f = &conf_fields[i];

			if (f->section != sec)
				continue;
			fprintf(fp, "  %s: ", f->key);
			conf_types[f->type].print(fp, f, (const char *)conf + f->off);
			fputc('\n', fp);
		}
	}
	return ferror(fp) ? -EIO : 0;
}

int
conf_format(const struct conf *conf, char **out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	int rc;

	if (!fp)
		return -ENOMEM;
	rc = conf_print(conf, fp);
	if (fclose(fp) != 0 || rc) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

static bool
conf_field_equal(const struct conf *a, const struct conf *b, const struct conf_field *f)
{
	const void *pa = (const char *)a + f->off, *pb = (const char *)b + f->off;
	const struct conf_netlink *na = pa, *nb = pb;

	switch (conf_types[f->type].store) {
	case ST_UINT:
		return *(const unsigned *)pa == *(const unsigned *)pb;
	case ST_BOOL:
		return *(const bool *)pa == *(const bool *)pb;
	case ST_U64:
		return *(const uint64_t *)pa == *(const uint64_t *)pb;
	case ST_INT:
		return *(const int *)pa == *(const int *)pb;
	case ST_STR:
		return !strcmp(pa, pb);
	case ST_TABLES:
		return na->all_tables == nb->all_tables && na->ntables == nb->ntables &&
		       !memcmp(na->tables, nb->tables, na->ntables * sizeof(na->tables[0]));
	}
	return false;
}

unsigned
conf_diff(const struct conf *a, const struct conf *b)
{
	unsigned mask = 0, i;

	for (i = 0; i < F_COUNT; i++)
		if (!conf_field_equal(a, b, &conf_fields[i]))
			mask |= 1u << conf_fields[i].section;
	return mask;
}

const char *
conf_section_name(unsigned bit)
{
	unsigned i;

	for (i = 0; i < NSECTIONS; i++)
		if (bit == 1u << i)
			return conf_sections[i];
	return NULL;
}
