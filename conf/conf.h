/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: conf, the YAML configuration of fibd
 *
 * conf_parse_file() and conf_parse_buf() turn a YAML file (libyaml) into a
 * new, fully validated struct conf: every key has a default, every value is
 * checked for type and range, and contradictory pairs (halve >= inflate,
 * gc_min_interval > gc_interval, ...) are refused. Errors do not stop the
 * walk: all of them are collected in a struct conf_errors, each with
 * file:line:column (1-based) and a plain message, sorted by position. Only
 * a YAML syntax error ends the parse early, since libyaml cannot go on.
 *
 * Reload follows bgpd: parse the whole new file into a new struct conf; on
 * error keep the old one and show the errors; on success swap in one step,
 * then let each module apply its _reconfigure(old, new). conf_diff() tells
 * which sections changed so untouched modules skip the work.
 *
 *   file --read--> buffer --libyaml--> node tree --fields[]--> struct conf
 *                                           |                      |
 *                                           +--> struct conf_errors |
 *                                   conf_print() <-----------------+
 *
 * conf_print() writes the effective config (every key, defaults included)
 * as YAML that parses back to an equal struct conf: the golden tests rely
 * on it. Durations are kept in microseconds, sizes in bytes.
 *
 * No globals, no logging; the only I/O is reading the file the caller
 * names and writing to the FILE the caller hands to conf_print().
 */
#ifndef FIBD_CONF_H
#define FIBD_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONF_PATH_MAX 108  /* sizeof(sun_path), NUL included */
#define CONF_GROUP_MAX 33  /* 32 characters, as useradd allows */
#define CONF_ADDR_MAX 64   /* "[v6 address]:port" */
#define CONF_TABLES_MAX 16 /* as INGEST_TABLES_MAX */

/* Section bits, as returned by conf_diff(). */
#define CONF_FIB (1u << 0)
#define CONF_CACHE (1u << 1)
#define CONF_NETLINK (1u << 2)
#define CONF_LOOKUP (1u << 3)
#define CONF_CONTROL (1u << 4)
#define CONF_METRICS (1u << 5)
#define CONF_LOG (1u << 6)
#define CONF_ALL 0x7fu

/* netlink.families bits */
#define CONF_FAMILY_IPV4 (1u << 0)
#define CONF_FAMILY_IPV6 (1u << 1)

/* Same values as enum fib_reclaim_mode in fib/fib.h. */
enum conf_reclaim {
	CONF_RECLAIM_CALL_RCU = 0,
	CONF_RECLAIM_SYNC = 1,
};

/* Same values as the syslog priorities LOG_ERR..LOG_DEBUG. */
enum conf_log_level {
	CONF_LOG_ERR = 3,
	CONF_LOG_WARNING = 4,
	CONF_LOG_NOTICE = 5,
	CONF_LOG_INFO = 6,
	CONF_LOG_DEBUG = 7,
};

/* Trie tunables: map one to one onto struct fib_params. */
struct conf_fib {
	unsigned inflate_threshold;      /* 50 (%), 1..100 */
	unsigned halve_threshold;        /* 25, below inflate_threshold */
	unsigned inflate_threshold_root; /* 30 */
	unsigned halve_threshold_root;   /* 15, below inflate_threshold_root */
	unsigned sync_pages;             /* 128 pages of 4 KiB per reclaim batch */
	enum conf_reclaim reclaim;       /* call_rcu */
	uint64_t compact_quiet_us;       /* 10 s of quiet after churn before a
					  * compaction is considered; 0: never */
	unsigned compact_margin;         /* 10 (%): compact when the FIB holds
					  * this much more than a fresh build */
	unsigned accel_min_routes;       /* 100000: a table other than main
					  * with this many routes of a family
					  * gets a compiled table; 0: main only */
};

/* Flow cache and its expiry worker. */
struct conf_cache {
	bool enabled;                /* true */
	unsigned buckets;            /* 131072, a power of two */
	unsigned max_entries;        /* 524288: hard limit, pressure GC below */
	uint64_t gc_interval_us;     /* 60 s between expiry runs */
	uint64_t gc_timeout_us;      /* 300 s idle before expiry; the rover covers
				      * the table once per gc_timeout */
	uint64_t gc_min_interval_us; /* 500 ms between two pressure GCs */
	unsigned gc_elasticity;      /* 8: pressure GC target entries a bucket */
	uint64_t scan_budget_us;     /* 2 ms of scan before a yield */
	unsigned yield_every;        /* 64 buckets between two clock reads */
	unsigned chain_cap;          /* 16 entries a chain at most */
};

struct conf_netlink {
	unsigned families;        /* CONF_FAMILY_* bits; ipv4 and ipv6 */
	bool all_tables;          /* "all" (the default): tables[] is empty */
	size_t ntables;           /* 0 with all_tables */
	uint32_t tables[CONF_TABLES_MAX]; /* 1..2^32-1, in file order */
	uint64_t rcvbuf;          /* 64 MiB, bytes */
	uint64_t slice_budget_us; /* 2 ms of ingest per event loop turn */
};

struct conf_lookup {
	unsigned threads;           /* 2; 0 turns the lookup service off */
	char socket[CONF_PATH_MAX]; /* /run/fibd/lookup.sock */
	uint64_t idle_timeout_us;   /* 300 s without a request and a client
				     * is disconnected; 0: never */
};

struct conf_control {
	char socket[CONF_PATH_MAX]; /* /run/fibd/fibd.sock */
	unsigned mode;              /* 0660 */
	char group[CONF_GROUP_MAX]; /* "": the daemon's own group */
	uint64_t idle_timeout_us;   /* 60 s without a complete request line
				     * (or reading of an answer) and a client
				     * is disconnected; 0: never */
};

struct conf_metrics {
	bool enabled;               /* false */
	char address[CONF_ADDR_MAX]; /* 127.0.0.1:9342 */
};

struct conf_log {
	enum conf_log_level level; /* info */
};

/* A plain value: no pointers inside, so struct assignment copies it. */
struct conf {
	struct conf_fib fib;
	struct conf_cache cache;
	struct conf_netlink netlink;
	struct conf_lookup lookup;
	struct conf_control control;
	struct conf_metrics metrics;
	struct conf_log log;
};

struct conf_error {
	unsigned line;   /* 1-based; 0 when the error has no position */
	unsigned column; /* 1-based */
	char msg[192];
};

/* Zero-initialise before the first use; conf_errors_free() after. */
struct conf_errors {
	char *name; /* the file name errors are reported against */
	size_t count;
	size_t cap;
	struct conf_error *v;
};

/* A new conf holding the defaults, or NULL (ENOMEM). Context: any. */
struct conf *conf_new(void);
/* Context: any; conf may be NULL. */
void conf_free(struct conf *conf);

/*
 * Parse the YAML in buf[0..len) (no NUL needed); name is used in error
 * positions. On success *out is a new conf and 0 is returned; otherwise
 * *out is left untouched and the result is -EINVAL (errs holds every error)
 * or -ENOMEM. errs is reset first and may be NULL. Context: any.
 */
int conf_parse_buf(const char *buf, size_t len, const char *name,
		   struct conf **out, struct conf_errors *errs);

/*
 * Read and parse the file at path, as conf_parse_buf(); a file that cannot
 * be read gives its -errno with one positionless error. Context: any.
 */
int conf_parse_file(const char *path, struct conf **out,
		    struct conf_errors *errs);

/* Release the error list; errs stays usable. Context: any. */
void conf_errors_free(struct conf_errors *errs);

/* Format error i as "name:line:column: message" into buf (snprintf
 * semantics). Context: any. */
int conf_error_format(const struct conf_errors *errs, size_t i, char *buf,
		      size_t len);

/* Write every error, one a line, formatted as above. Returns 0 or -EIO.
 * Context: any. */
int conf_errors_print(const struct conf_errors *errs, FILE *fp);

/* Write the effective config as YAML, every key included. Returns 0 or
 * -EIO. Context: any. */
int conf_print(const struct conf *conf, FILE *fp);

/* The same into a new NUL-terminated string the caller frees. Returns 0 or
 * -ENOMEM. Context: any. */
int conf_format(const struct conf *conf, char **out);

/* The CONF_* bits of the sections whose values differ; 0 when a and b are
 * equal. Context: any. */
unsigned conf_diff(const struct conf *a, const struct conf *b);

/* The section name of one CONF_* bit ("fib", "cache", ...), or NULL.
 * Context: any. */
const char *conf_section_name(unsigned bit);

#endif /* FIBD_CONF_H */
