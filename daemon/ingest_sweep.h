/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: ingest_sweep, the resync's merge of a dump with the FIB
 *
 * After a resync dump, the routes the kernel has (the dump) and the routes
 * the FIB holds (a walk) are merged key by key, a key being (family,
 * table, prefix, length, tos, priority). What the merge decides:
 *
 *   dump only      append each route of the key, in dump order
 *   FIB only       delete each route of the key
 *   both, equal    nothing (same routes, same attributes, same order)
 *   both, differ   delete the FIB's routes but its first, replace the
 *                  one left with the dump's first, append the dump's
 *                  others (deletes first: fib_del's wildcards could take
 *                  a new route; see ingest_sweep.c)
 *
 * so a key the kernel kept is never missing from the FIB for a reader,
 * and afterwards the FIB holds exactly the dump. The decisions go to a
 * callback; this module does no I/O and never touches the FIB, so a unit
 * test drives it against a model (tests/unit/sweep_test.c).
 *
 * Both sides are sorted once by key, then position (index order: the
 * kernel's order among routes of one key), through index arrays; the
 * merge then runs one key per step, so the caller can slice it.
 */
#ifndef DAEMON_INGEST_SWEEP_H
#define DAEMON_INGEST_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "fib/fib.h"

enum ingest_sweep_op {
	INGEST_SWEEP_REPLACE, /* fib_add(FIB_ADD_REPLACE): the first route of the key */
	INGEST_SWEEP_APPEND,  /* fib_add(FIB_ADD_APPEND): after the routes of the key */
	INGEST_SWEEP_DEL,     /* fib_del */
};

typedef void (*ingest_sweep_cb)(void *arg, enum ingest_sweep_op op, const struct fib_route *r);

/* Merge state; the caller embeds it. Fields are the module's. */
struct ingest_sweep {
	const struct fib_route *dump, *cur;
	size_t ndump, ncur;
	uint32_t *idump, *icur; /* sort orders */
	size_t di, ci;          /* merge positions */
	ingest_sweep_cb cb;
	void *arg;
};

/*
 * Sort both sides and start a merge. dump and cur (with their next hops)
 * must stay unchanged until ingest_sweep_fini. On -ENOMEM the merge is
 * empty (ingest_sweep_done is true at once). Context: any.
 */
int ingest_sweep_init(struct ingest_sweep *sw, const struct fib_route *dump, size_t ndump,
		      const struct fib_route *cur, size_t ncur, ingest_sweep_cb cb, void *arg);
/* Is every key merged? Context: any. */
int ingest_sweep_done(const struct ingest_sweep *sw);
/* Merge the next key: zero or more callbacks. Context: any. */
void ingest_sweep_step(struct ingest_sweep *sw);
/* Free the sort orders; sw may be zeroed or finished. Context: any. */
void ingest_sweep_fini(struct ingest_sweep *sw);

/* Order of the merge keys (0 for the same key). Context: any. */
int ingest_sweep_key_cmp(const struct fib_route *a, const struct fib_route *b);
/* Same attributes and paths, in the same order? Context: any. */
int ingest_sweep_route_equal(const struct fib_route *a, const struct fib_route *b);

#endif
