/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: sysctl, the kernel settings that change routing answers without
 * netlink events
 *
 * The multipath hash (net.ipv4.fib_multipath_hash_policy, _fields,
 * net.ipv4.fib_multipath_hash_seed, net.ipv6.fib_multipath_hash_policy,
 * _fields), forwarding (net.ipv{4,6}.conf.all.forwarding) and
 * net.ipv{4,6}.conf.all.ignore_routes_with_linkdown decide which path or
 * error the kernel answers, and no netlink group announces their changes.
 * fibd reads them from /proc/sys into a struct fib_mp_hash
 * (fib/policy.h) at start, on every reload and every 30 seconds, and
 * calls fib_mp_hash_set and fib_policy_publish only when a value
 * changed. A changed sysctl is therefore seen within 30 seconds, or at
 * once with `fibctl reload` (or SIGHUP).
 *
 * Formats, as a 6.18 kernel prints them: decimal integers; the seed
 * prints 0 until pinned (`sysctl -w net.ipv4.fib_multipath_hash_seed=N`,
 * N != 0), then N, so seed_set is seed != 0. A file that does not exist
 * (older kernels have no seed, IPv6 may be disabled) keeps the default
 * of fib_mp_hash_default().
 *
 * The root, /proc/sys/net by default, may be moved with the environment
 * variable FIBD_SYSCTL_ROOT (tests: a directory of fake files).
 */
#ifndef DAEMON_SYSCTL_H
#define DAEMON_SYSCTL_H

#include "fib/policy.h"

struct event_base;
struct ingest;
struct sysctl_watch;

#define SYSCTL_ROOT "/proc/sys/net"
#define SYSCTL_INTERVAL_S 30

/*
 * Read the settings under root (a /proc/sys/net) into h, starting from
 * defaults (the caller's h, usually fib_mp_hash_default). Returns the
 * number of files read. Context: any.
 */
int sysctl_read(const char *root, struct fib_mp_hash *h);

/* Same settings? Context: any. */
int sysctl_mp_hash_equal(const struct fib_mp_hash *a, const struct fib_mp_hash *b);

/*
 * Read now and every interval_s seconds; apply to fib when changed, while
 * ingest lets the main loop write the FIB (ingest_fib_writable), else at
 * the next check. root NULL: FIBD_SYSCTL_ROOT or SYSCTL_ROOT. NULL on
 * ENOMEM. Context: main loop, the FIB's writer.
 */
struct sysctl_watch *sysctl_watch_new(struct event_base *base, struct fib *fib,
				      struct ingest *ing, const char *root, unsigned interval_s);
void sysctl_watch_free(struct sysctl_watch *w);
/* Read and apply now (a reload). Returns 1 when something changed and
 * was published, 0 if not, -EBUSY when the FIB is lent out (retried at
 * the next tick). Context: main loop. */
int sysctl_watch_check(struct sysctl_watch *w);
/* The settings last applied. Context: main loop. */
void sysctl_watch_get(const struct sysctl_watch *w, struct fib_mp_hash *h);

#endif
