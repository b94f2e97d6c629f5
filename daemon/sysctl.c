/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: sysctl implementation
 *
 * One table of files {path under the root, field, width}, read with
 * strtoul (base 0: the kernel prints decimal, a hand-made test file may
 * say 0x37). The watch is a persistent libevent timer; a check that finds
 * the FIB lent to another thread (the loader, a compaction) leaves the
 * change pending for the next tick. See daemon/sysctl.h.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "daemon/ingest.h"
#include "daemon/log.h"
#include "daemon/sysctl.h"

static const struct sysctl_file {
	const char *path; /* under the root */
	size_t off;       /* in struct fib_mp_hash */
	unsigned size;    /* 1 or 4 bytes */
} sysctl_files[] = {
#define F(p, f) { p, offsetof(struct fib_mp_hash, f), sizeof(((struct fib_mp_hash *)0)->f) }
	F("ipv4/fib_multipath_hash_policy", policy4),
	F("ipv4/fib_multipath_hash_fields", fields4),
	F("ipv4/fib_multipath_hash_seed", seed),
	F("ipv6/fib_multipath_hash_policy", policy6),
	F("ipv6/fib_multipath_hash_fields", fields6),
	F("ipv4/conf/all/forwarding", forwarding4),
	F("ipv6/conf/all/forwarding", forwarding6),
	F("ipv4/conf/all/ignore_routes_with_linkdown", ignore_linkdown4),
	F("ipv6/conf/all/ignore_routes_with_linkdown", ignore_linkdown6),
#undef F
};

/* One unsigned decimal (or 0x) number and a newline; -1 otherwise. */
static int
sysctl_read_u32(const char *path, uint32_t *v)
{
	char buf[64], *end;
	unsigned long x;
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	errno = 0;
	x = strtoul(buf, &end, 0);
	if (end == buf || errno || x > UINT32_MAX || (*end && *end != '\n'))
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int
sysctl_read(const char *root, struct fib_mp_hash *h)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(sysctl_files) / sizeof(sysctl_files[0]); i++) {
		const struct sysctl_file *sf = &sysctl_files[i];
		char path[4096];
		uint32_t v;

		snprintf(path, sizeof(path), "%s/%s", root, sf->path);
		if (sysctl_read_u32(path, &v) < 0)
			continue;
		if (sf->size == 1)
			*((uint8_t *)h + sf->off) = (uint8_t)(v > 255 ? 255 : v);
		else
			memcpy((char *)h + sf->off, &v, sizeof(v));
		n++;
	}
	h->seed_set = h->seed != 0;
	return n;
}

int
sysctl_mp_hash_equal(const struct fib_mp_hash *a, const struct fib_mp_hash *b)
{
	return a->policy4 == b->policy4 && a->policy6 == b->policy6 &&
	       a->seed_set == b->seed_set && a->fields4 == b->fields4 &&
	       a->fields6 == b->fields6 && a->seed == b->seed &&
	       a->forwarding4 == b->forwarding4 && a->forwarding6 == b->forwarding6 &&
	       a->ignore_linkdown4 == b->ignore_linkdown4 &&
	       a->ignore_linkdown6 == b->ignore_linkdown6;
}

struct sysctl_watch {
	struct fib *fib;
	struct ingest *ing;
	struct event *tick;
	char root[4096];
	struct fib_mp_hash cur; /* applied */
	int applied;            /* cur went into the FIB once */
};

int
sysctl_watch_check(struct sysctl_watch *w)
{
	struct fib_mp_hash h;
	int ret;

	fib_mp_hash_default(&h);
	sysctl_read(w->root, &h);
	if (w->applied && sysctl_mp_hash_equal(&h, &w->cur))
		return 0;
	if (w->ing && !ingest_fib_writable(w->ing))
		return -EBUSY; /* the next tick */
	ret = fib_mp_hash_set(w->fib, &h);
	if (ret == 0)
		ret = fib_policy_publish(w->fib);
	if (ret < 0) {
		log_warnx("multipath hash settings: %s", strerror(-ret));
		return ret;
	}
	log_info("sysctls: multipath hash policy %u/%u fields 0x%x/0x%x seed %s, forwarding %u/%u, "
		 "ignore_routes_with_linkdown %u/%u",
		 h.policy4, h.policy6, h.fields4, h.fields6, h.seed_set ? "pinned" : "random",
		 h.forwarding4, h.forwarding6, h.ignore_linkdown4, h.ignore_linkdown6);
	w->cur = h;
	w->applied = 1;
	return 1;
}

static void
sysctl_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sysctl_watch_check(arg);
}

struct sysctl_watch *
sysctl_watch_new(struct event_base *base, struct fib *fib, struct ingest *ing, const char *root,
		 unsigned interval_s)
{
	struct sysctl_watch *w = calloc(1, sizeof(*w));
	struct timeval tv = { interval_s ? interval_s : SYSCTL_INTERVAL_S, 0 };

	if (!w)
		return NULL;
	if (!root)
		root = getenv("FIBD_SYSCTL_ROOT");
	snprintf(w->root, sizeof(w->root), "%s", root ? root : SYSCTL_ROOT);
	w->fib = fib;
	w->ing = ing;
	fib_mp_hash_default(&w->cur);
	w->tick = event_new(base, -1, EV_PERSIST, sysctl_tick, w);
	if (!w->tick) {
		free(w);
		return NULL;
	}
	event_add(w->tick, &tv);
	sysctl_watch_check(w);
	return w;
}

void
sysctl_watch_free(struct sysctl_watch *w)
{
	if (!w)
		return;
	event_free(w->tick);
	free(w);
}

void
sysctl_watch_get(const struct sysctl_watch *w, struct fib_mp_hash *h)
{
	*h = w->cur;
}
