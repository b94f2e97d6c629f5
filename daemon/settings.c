/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: settings.c, the config mapped onto the modules' own settings
 *
 * See settings.h. conf durations are microseconds, flow_config's
 * nanoseconds; ingest_conf's receive buffer is capped at 1 GiB.
 */
#include "config.h"

#include <stddef.h>

#include "fib/fib.h"
#include "cache/flow.h"
#include "conf/conf.h"
#include "daemon/ingest.h"
#include "daemon/settings.h"

void
settings_fib(const struct conf *c, struct fib_params *p)
{
	fib_params_default(p);
	p->inflate_threshold = c->fib.inflate_threshold;
	p->halve_threshold = c->fib.halve_threshold;
	p->inflate_threshold_root = c->fib.inflate_threshold_root;
	p->halve_threshold_root = c->fib.halve_threshold_root;
	p->sync_pages = c->fib.sync_pages;
	p->accel_min_routes = c->fib.accel_min_routes;
	/* a VRF's compiled table is built on the compaction thread (settle.c),
	 * not in the netlink event or reload that made it due */
	p->accel_defer = 1;
	p->reclaim_mode =
	    c->fib.reclaim == CONF_RECLAIM_SYNC ? FIB_RECLAIM_SYNC : FIB_RECLAIM_CALL_RCU;
}

void
settings_flow(const struct conf *c, const uint64_t secret[2], struct flow_config *f)
{
	flow_config_default(f);
	f->enabled = c->cache.enabled;
	f->buckets = c->cache.buckets;
	f->max_entries = c->cache.max_entries;
	f->gc_interval = c->cache.gc_interval_us * 1000;
	f->gc_timeout = c->cache.gc_timeout_us * 1000;
	f->gc_min_interval = c->cache.gc_min_interval_us * 1000;
	f->gc_elasticity = c->cache.gc_elasticity;
	f->scan_budget = c->cache.scan_budget_us * 1000;
	f->yield_check = c->cache.yield_every;
	f->chain_cap = c->cache.chain_cap;
	f->secret[0] = secret[0];
	f->secret[1] = secret[1];
}

void
settings_ingest(const struct conf *c, struct ingest_conf *ic)
{
	ingest_conf_default(ic);
	ic->families = 0;
	if (c->netlink.families & CONF_FAMILY_IPV4)
		ic->families |= INGEST_V4;
	if (c->netlink.families & CONF_FAMILY_IPV6)
		ic->families |= INGEST_V6;
	ic->ntables = 0;
	if (!c->netlink.all_tables) {
		for (size_t i = 0; i < c->netlink.ntables && i < INGEST_TABLES_MAX; i++)
			ic->tables[ic->ntables++] = c->netlink.tables[i];
	}
	ic->rcvbuf = c->netlink.rcvbuf > (1u << 30) ? 1u << 30 : (unsigned)c->netlink.rcvbuf;
	ic->budget_us = (unsigned)c->netlink.slice_budget_us;
}
