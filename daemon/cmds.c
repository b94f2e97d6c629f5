/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: cmds.c, the control commands and every show
 *
 * The control socket's commands (daemon/ctl parses the line) as a table
 * {command, needs_ready, handler}; the `show` outputs as "key value"
 * lines that fibctl turns into tables or JSON; one next-hop formatter
 * (fibd_nh_format) for `show routes`, `lookup` and the test-only files
 * (--dump, --lookup), which print the same lines as the socket.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <event2/buffer.h>
#include <linux/rtnetlink.h>

#include "cache/flow.h"
#include "daemon/decisions.h"
#include "daemon/fibd.h"
#include "daemon/lookup.h"
#include "fib/policy.h"

/* How a next hop is printed: in `show routes` and --dump (" nh ... w W"),
 * as one path of a multipath lookup answer (" nexthop ... weight W"), or
 * as a lookup answer's only path (no word, no weight). */
enum fibd_nh_style {
	FIBD_NH_ROUTE,
	FIBD_NH_PATH,
	FIBD_NH_SINGLE,
};

/*
 * One next hop, as the style says, into buf (len bytes, as snprintf:
 * returns the length it wanted). The only next-hop formatter of the
 * daemon: the control socket and the test-only files print the same.
 * Context: main loop (ingest_ifname).
 */
static size_t
fibd_nh_format(const struct fibd *d, char *buf, size_t len, const struct fib_nh *nh,
	       enum fibd_nh_style style)
{
	static const char *const word[] = {" nh", " nexthop", ""};
	static const char *const weight[] = {" w", " weight", NULL};
	const char *name = ingest_ifname(d->ing, nh->ifindex);
	char gw[INET6_ADDRSTRLEN];
	size_t n;

	n = (size_t)snprintf(buf, len, "%s", word[style]);
	if (nh->gw_family) {
		inet_ntop(nh->gw_family, nh->gw.b, gw, sizeof(gw));
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " via %s", gw);
	}
	if (nh->ifindex && name)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " dev %s", name);
	else if (nh->ifindex)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, " dev if%u", nh->ifindex);
	if (weight[style])
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s %u", weight[style],
				      nh->weight);
	return n;
}

/* fibd_nh_format into an evbuffer. */
static void
fibd_nh_add(const struct fibd *d, struct evbuffer *out, const struct fib_nh *nh,
	    enum fibd_nh_style style)
{
	char buf[128];
	size_t n = fibd_nh_format(d, buf, sizeof(buf), nh, style);

	evbuffer_add(out, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
}

struct fibd_walk {
	struct fibd *d;
	struct evbuffer *out;
	int filter;
	uint8_t plen;
	union fib_addr prefix;
	uint64_t n;
};

static int
fibd_prefix_covers(const union fib_addr *p, unsigned plen, const union fib_addr *a)
{
	unsigned bytes = plen / 8, bits = plen % 8;

	if (memcmp(p->b, a->b, bytes))
		return 0;
	if (bits && ((p->b[bytes] ^ a->b[bytes]) & (0xff00 >> bits) & 0xff))
		return 0;
	return 1;
}

/* One route as `show routes` and --dump print it, built in one buffer:
 * the control socket formats a full table with it, a slice at a time. */
static int
fibd_route_line(const struct fib_match *m, void *arg)
{
	struct fibd_walk *w = arg;
	char line[2048], buf[INET6_ADDRSTRLEN];
	size_t n;

	if (w->filter &&
	    (m->plen < w->plen || !fibd_prefix_covers(&w->prefix, w->plen, &m->prefix)))
		return 0;
	inet_ntop(m->family, m->prefix.b, buf, sizeof(buf));
	n = (size_t)snprintf(line, sizeof(line), "%s %s/%u", fib_type_name(m->type), buf, m->plen);
	if (m->table != RT_TABLE_MAIN)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " table %u", m->table);
	if (m->tos)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " tos %u", m->tos);
	n += (size_t)snprintf(line + n, sizeof(line) - n, " metric %u", m->info->priority);
	if (m->info->nh_id)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " nhid %u", m->info->nh_id);
	for (unsigned i = 0; i < m->info->nh_count && n < sizeof(line) - 128; i++)
		n += fibd_nh_format(w->d, line + n, sizeof(line) - n, &m->info->nh[i],
				    FIBD_NH_ROUTE);
	if (n > sizeof(line) - 1)
		n = sizeof(line) - 1;
	line[n++] = '\n';
	evbuffer_add(w->out, line, n);
	w->n++;
	return 0;
}

/*
 * One answer as `fibctl lookup` prints it (doc/architecture.md,
 * "fibctl lookup"): today's fields, then what the kernel's answer adds,
 * each only when the decision has it:
 *
 *   ADDR PREFIX/LEN TYPE [via GW] [dev IF] [src S] [table T] [rule P] [error E]
 *   ADDR PREFIX/LEN TYPE nexthop [via GW] dev IF weight W ... [src S]
 *        [table T] [rule P] [path I] [error E]      (I: the chosen path, 0-based)
 *   ADDR - [rule P] error E                         (no route)
 *   ADDR - unicast dev IF [src S] table T           (IPv4 oif, on link)
 *
 * The device is the one `ip route get` prints: a local route's (and a
 * broadcast route's for an input flow: delivered locally) is the
 * loopback (the kernel's dst for local traffic; the VRF device's own
 * loopback role is not shown: fibd prints lo there too), an on-link
 * answer's is the flow's oif (the decision holds no device: it fills a
 * cache line, fib/policy.h).
 * Context: main loop, inside a read section (d's info pointer).
 */
static void
fibd_decision_line(struct fibd *d, struct evbuffer *out, const char *addr,
		   const struct fib_decision *dec, const struct fib_flow *fl)
{
	int fibmatch = !!(fl->flags & FIB_FLOW_FIBMATCH);
	char buf[INET6_ADDRSTRLEN];
	const char *e;

	if (!(dec->flags & FIB_D_ROUTE) || !dec->info) {
		evbuffer_add_printf(out, "%s -", addr);
		if (!dec->error && dec->type && (fl->flags & FIB_FLOW_OIF)) {
			struct fib_nh nh;

			memset(&nh, 0, sizeof(nh));
			nh.ifindex = fl->oif;
			evbuffer_add_printf(out, " %s", fib_type_name(dec->type));
			fibd_nh_add(d, out, &nh, FIBD_NH_SINGLE);
		}
	} else {
		inet_ntop(dec->family, dec->prefix.b, buf, sizeof(buf));
		evbuffer_add_printf(out, "%s %s/%u %s", addr, buf, dec->plen,
				    fib_type_name(dec->type));
		if (dec->info->nh_count == 1 && !fibmatch &&
		    (dec->type == FIB_LOCAL ||
		     (dec->type == FIB_BROADCAST && (fl->flags & FIB_FLOW_IIF)))) {
			struct fib_nh nh = dec->info->nh[0];

			nh.ifindex = 1; /* LOOPBACK_IFINDEX */
			fibd_nh_add(d, out, &nh, FIBD_NH_SINGLE);
		} else if (dec->info->nh_count == 1)
			fibd_nh_add(d, out, &dec->info->nh[0], FIBD_NH_SINGLE);
		else
			for (unsigned i = 0; i < dec->info->nh_count; i++)
				fibd_nh_add(d, out, &dec->info->nh[i], FIBD_NH_PATH);
	}
	if (dec->flags & FIB_D_SRC) {
		inet_ntop(dec->family, dec->src.b, buf, sizeof(buf));
		evbuffer_add_printf(out, " src %s", buf);
	}
	if ((dec->flags & FIB_D_ROUTE) || (!dec->error && dec->type))
		evbuffer_add_printf(out, " table %u", dec->table);
	if (dec->flags & FIB_D_RULE)
		evbuffer_add_printf(out, " rule %u", dec->rule);
	if ((dec->flags & FIB_D_ROUTE) && dec->info && dec->info->nh_count > 1 && !fibmatch &&
	    !dec->error)
		evbuffer_add_printf(out, " path %u", dec->path);
	if (dec->error) {
		e = fib_errno_name(dec->error);
		if (e)
			evbuffer_add_printf(out, " error %s", e);
		else
			evbuffer_add_printf(out, " error E%u", dec->error);
	}
	evbuffer_add(out, "\n", 1);
}

/*
 * Resolve the flow fl toward a and print the answer: through the decision
 * cache when it is enabled (flow_resolve_rcu: it bypasses itself when a
 * resolution costs no more than a hit), else fib_resolve_rcu.
 * Context: main loop.
 */
static void
fibd_lookup_line(struct fibd *d, struct evbuffer *out, const struct ctl_addr *a,
		 const struct fib_flow *base)
{
	struct fib_flow fl = *base;
	struct fib_decision dec;
	char abuf[INET6_ADDRSTRLEN];

	inet_ntop(a->family, a->a.b, abuf, sizeof(abuf));
	fl.family = a->family;
	fl.dst = a->a;
	memset(&dec, 0, sizeof(dec));
	fib_read_lock();
	if (d->cache)
		flow_resolve_rcu(d->cache, d->fib, &fl, &dec);
	else
		fib_resolve_rcu(d->fib, &fl, &dec);
	decisions_count(&d->decisions, &dec, 1);
	fibd_decision_line(d, out, abuf, &dec, &fl);
	fib_read_unlock();
}

/*
 * An interface name of a lookup -> ifindex: the FIB's links (the
 * policy's, what rules match iif and oif against), else the links
 * netlink reported to the ingest, else fibd's namespace. 0: none.
 * Context: main loop.
 */
static uint32_t
fibd_link_index(struct fibd *d, const char *name)
{
	struct fib_link buf[64], *l = buf;
	size_t n, max = sizeof(buf) / sizeof(buf[0]);
	uint32_t idx = 0;

	fib_read_lock();
	n = fib_links_get(d->fib, l, max);
	if (n > max) {
		struct fib_link *big = malloc(n * sizeof(*big));

		if (big) {
			l = big;
			max = n;
			n = fib_links_get(d->fib, l, max);
		}
		if (n > max)
			n = max;
	}
	for (size_t i = 0; i < n && !idx; i++)
		if (!strcmp(l[i].name, name))
			idx = l[i].ifindex;
	fib_read_unlock();
	if (l != buf)
		free(l);
	if (!idx)
		idx = ingest_ifindex(d->ing, name);
	if (!idx)
		idx = if_nametoindex(name);
	return idx;
}

/* The flow of a lookup command but its destination; 0 or 400 (r set). */
static int
fibd_lookup_flow(struct fibd *d, const struct ctl_cmd *cmd, struct fib_flow *fl,
		 struct ctl_reply *r)
{
	memset(fl, 0, sizeof(*fl));
	if (cmd->iif[0] && !(fl->iif = fibd_link_index(d, cmd->iif))) {
		r->code = 400;
		snprintf(r->msg, sizeof(r->msg), "iif: no such interface: %s", cmd->iif);
		return -1;
	}
	if (cmd->oif[0] && !(fl->oif = fibd_link_index(d, cmd->oif))) {
		r->code = 400;
		snprintf(r->msg, sizeof(r->msg), "oif: no such interface: %s", cmd->oif);
		return -1;
	}
	if (cmd->iif[0])
		fl->flags |= FIB_FLOW_IIF;
	if (cmd->oif[0])
		fl->flags |= FIB_FLOW_OIF;
	if (cmd->has_src) {
		fl->src = cmd->src.a;
		fl->flags |= FIB_FLOW_SRC;
	}
	if (cmd->seen & CTL_K_UID) {
		fl->uid = cmd->uid;
		fl->flags |= FIB_FLOW_UID;
	}
	if (cmd->seen & CTL_K_DSCP)
		fl->flags |= FIB_FLOW_DSCP;
	if (cmd->seen & CTL_K_FIBMATCH)
		fl->flags |= FIB_FLOW_FIBMATCH;
	fl->tos = cmd->tos;
	fl->mark = cmd->mark;
	fl->ipproto = cmd->ipproto;
	fl->sport = cmd->sport;
	fl->dport = cmd->dport;
	return 0;
}

/* Write buf to path through path.tmp and a rename. */
static int
fibd_write_file(const char *path, struct evbuffer *buf)
{
	char tmp[4096];
	FILE *f;
	size_t len = evbuffer_get_length(buf);

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		log_warn("%s", tmp);
		return -1;
	}
	if (len && fwrite(evbuffer_pullup(buf, -1), 1, len, f) != len) {
		fclose(f);
		log_warn("%s", tmp);
		return -1;
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		log_warn("%s", path);
		return -1;
	}
	return 0;
}

int
fibd_write_dump(struct fibd *d, const char *path)
{
	struct fibd_walk w = {.d = d};
	int rc;

	w.out = evbuffer_new();
	if (!w.out)
		return -1;
	fib_walk(d->fib, AF_INET, fibd_route_line, &w);
	fib_walk(d->fib, AF_INET6, fibd_route_line, &w);
	rc = fibd_write_file(path, w.out);
	evbuffer_free(w.out);
	return rc;
}

int
fibd_write_lookups(struct fibd *d, const char *in, const char *path)
{
	char line[256];
	struct evbuffer *out;
	struct fib_flow fl;
	struct ctl_addr a;
	FILE *fi;
	int rc;

	fi = fopen(in, "r");
	if (!fi) {
		log_warn("%s", in);
		return -1;
	}
	out = evbuffer_new();
	if (!out) {
		fclose(fi);
		return -1;
	}
	memset(&fl, 0, sizeof(fl));
	while (fgets(line, sizeof(line), fi)) {
		line[strcspn(line, " \t\r\n")] = 0;
		if (!line[0])
			continue;
		memset(&a, 0, sizeof(a));
		a.family = strchr(line, ':') ? AF_INET6 : AF_INET;
		if (inet_pton(a.family, line, a.a.b) != 1)
			evbuffer_add_printf(out, "%s error\n", line);
		else
			fibd_lookup_line(d, out, &a, &fl);
	}
	fclose(fi);
	rc = fibd_write_file(path, out);
	evbuffer_free(out);
	return rc;
}

void
fibd_log_stats(struct fibd *d)
{
	struct ingest_stats st;
	char errs[512];
	size_t n = 0;

	ingest_stats(d->ing, &st);
	errs[0] = 0;
	for (unsigned i = 0; i < NL_ERR_COUNT; i++)
		if (st.parse_errors[i] && n < sizeof(errs))
			n +=
			    (size_t)snprintf(errs + n, sizeof(errs) - n, " %s=%llu", nl_err_name(i),
					     (unsigned long long)st.parse_errors[i]);
	log_info("stats: msgs=%llu loaded=%llu added=%llu deleted=%llu exists=%llu missing=%llu "
		 "fib_errors=%llu skipped=%llu unknown_attrs=%llu drops=%llu resyncs=%llu "
		 "dump_intr=%llu slices=%llu nh_objects=%llu nh_bucket_dumps=%llu/%llu "
		 "rules=%llu/%llu addrs=%llu/%llu "
		 "links=%llu/%llu policy_stale=%llu policy_errors=%llu publishes=%llu "
		 "parse_errors:%s",
		 (unsigned long long)st.msgs, (unsigned long long)st.routes_loaded,
		 (unsigned long long)st.routes_added, (unsigned long long)st.routes_deleted,
		 (unsigned long long)st.add_exists, (unsigned long long)st.del_missing,
		 (unsigned long long)st.fib_errors, (unsigned long long)st.skipped,
		 (unsigned long long)st.unknown_attrs, (unsigned long long)st.drops,
		 (unsigned long long)st.resyncs, (unsigned long long)st.dump_intr,
		 (unsigned long long)st.slices, (unsigned long long)st.nh_objects,
		 (unsigned long long)st.nh_bucket_dumps, (unsigned long long)st.nh_bucket_changes,
		 (unsigned long long)st.rules_applied, (unsigned long long)st.rules_rejected,
		 (unsigned long long)st.addrs_applied, (unsigned long long)st.addrs_rejected,
		 (unsigned long long)st.links_applied, (unsigned long long)st.links_rejected,
		 (unsigned long long)st.policy_stale, (unsigned long long)st.policy_errors,
		 (unsigned long long)st.policy_publishes, errs[0] ? errs : " none");
	if (d->cache) {
		struct flow_stats fs;

		flow_cache_stats(d->cache, &fs);
		log_info("cache: entries=%llu lookups=%llu hits=%llu misses=%llu inserts=%llu "
			 "evict_chain=%llu evict_size=%llu expired_idle=%llu expired_stale=%llu "
			 "gc_runs=%llu gc_ms_max=%.3f bytes=%llu",
			 (unsigned long long)fs.entries, (unsigned long long)fs.lookups,
			 (unsigned long long)fs.hits, (unsigned long long)fs.misses,
			 (unsigned long long)fs.inserts, (unsigned long long)fs.evict_chain,
			 (unsigned long long)fs.evict_size, (unsigned long long)fs.expired_idle,
			 (unsigned long long)fs.expired_stale, (unsigned long long)fs.gc_runs,
			 (double)fs.gc_ns_max * 1e-6, (unsigned long long)fs.bytes);
	}
}

size_t
fibd_rules_count(struct fibd *d, int family)
{
	struct fib_rule one;
	size_t n;

	fib_read_lock();
	n = fib_rules_get(d->fib, family, &one, 0);
	fib_read_unlock();
	return n;
}

/* Names `ip rule` prints without reading /etc/iproute2 (fibd reads no
 * files there: other numbers are printed as numbers). */
static const char *
fibd_table_name(uint32_t table, char *buf, size_t len)
{
	switch (table) {
	case RT_TABLE_LOCAL:
		return "local";
	case RT_TABLE_MAIN:
		return "main";
	case RT_TABLE_DEFAULT:
		return "default";
	}
	snprintf(buf, len, "%u", table);
	return buf;
}

static const char *
fibd_proto_name(unsigned proto, char *buf, size_t len)
{
	static const struct {
		unsigned n;
		const char *name;
	} names[] = {
	    {RTPROT_REDIRECT, "redirect"}, {RTPROT_KERNEL, "kernel"},
	    {RTPROT_BOOT, "boot"},	   {RTPROT_STATIC, "static"},
	    {RTPROT_ZEBRA, "zebra"},	   {RTPROT_BIRD, "bird"},
	    {RTPROT_DHCP, "dhcp"},	   {RTPROT_BABEL, "babel"},
	    {RTPROT_BGP, "bgp"},	   {RTPROT_ISIS, "isis"},
	    {RTPROT_OSPF, "ospf"},	   {RTPROT_RIP, "rip"},
	    {RTPROT_EIGRP, "eigrp"},	   {RTPROT_KEEPALIVED, "keepalived"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].n == proto)
			return names[i].name;
	snprintf(buf, len, "%u", proto);
	return buf;
}

static const char *
fibd_ipproto_name(unsigned p, char *buf, size_t len)
{
	switch (p) {
	case 1:
		return "icmp";
	case 6:
		return "tcp";
	case 17:
		return "udp";
	case 58:
		return "ipv6-icmp";
	case 132:
		return "sctp";
	}
	snprintf(buf, len, "%u", p);
	return buf;
}

/* " from A[/L]", " to A[/L]": the length only when not a host's. */
static size_t
fibd_rule_addr(char *buf, size_t len, const char *word, int family, const union fib_addr *a,
	       unsigned plen)
{
	char s[INET6_ADDRSTRLEN];
	unsigned host = family == AF_INET6 ? 128 : 32;

	inet_ntop(family, a->b, s, sizeof(s));
	if (plen == host)
		return (size_t)snprintf(buf, len, "%s %s", word, s);
	return (size_t)snprintf(buf, len, "%s %s/%u", word, s, plen);
}

/*
 * One rule as `ip rule show` prints it (iproute2's print_rule, in its
 * order): "PRIO:\tfrom all lookup local". Returns the length wanted.
 * Context: any.
 */
static size_t
fibd_rule_format(char *buf, size_t len, const struct fib_rule *r)
{
	char t[32];
	size_t n;

#define ADD(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	n = (size_t)snprintf(buf, len, "%u:\t", r->priority);
	if (r->flags & FIB_RULE_INVERT)
		ADD("not ");
	if (r->src_len)
		n += fibd_rule_addr(buf + n, n < len ? len - n : 0, "from", r->family, &r->src,
				    r->src_len);
	else
		ADD("from all");
	if (r->dst_len)
		n += fibd_rule_addr(buf + n, n < len ? len - n : 0, " to", r->family, &r->dst,
				    r->dst_len);
	if (r->tos && (r->flags & FIB_RULE_DSCP))
		ADD(" dscp %u", r->tos);
	else if (r->tos)
		ADD(" tos 0x%02x", r->tos);
	if (r->mark_mask == 0xffffffffu)
		ADD(" fwmark %#x", r->mark);
	else if (r->mark_mask)
		ADD(" fwmark %#x/%#x", r->mark, r->mark_mask);
	if (r->iifname[0])
		ADD(" iif %.*s", IF_NAMESIZE, r->iifname);
	if (r->oifname[0])
		ADD(" oif %.*s", IF_NAMESIZE, r->oifname);
	if (r->l3mdev)
		ADD(" lookup [l3mdev-table]");
	if (r->uid_lo <= r->uid_hi)
		ADD(" uidrange %u-%u", r->uid_lo, r->uid_hi);
	if (r->ipproto)
		ADD(" ipproto %s", fibd_ipproto_name(r->ipproto, t, sizeof(t)));
	if (r->sport_hi && r->sport_lo == r->sport_hi)
		ADD(" sport %u", r->sport_lo);
	else if (r->sport_hi)
		ADD(" sport %u-%u", r->sport_lo, r->sport_hi);
	if (r->dport_hi && r->dport_lo == r->dport_hi)
		ADD(" dport %u", r->dport_lo);
	else if (r->dport_hi)
		ADD(" dport %u-%u", r->dport_lo, r->dport_hi);
	if (r->action == FIB_RULE_TO_TBL && !r->l3mdev) {
		ADD(" lookup %s", fibd_table_name(r->table, t, sizeof(t)));
		if (r->suppress_prefixlen >= 0)
			ADD(" suppress_prefixlength %d", r->suppress_prefixlen);
		if (r->suppress_ifgroup >= 0)
			ADD(" suppress_ifgroup %d", r->suppress_ifgroup);
	}
	switch (r->action) {
	case FIB_RULE_TO_TBL:
		break;
	case FIB_RULE_GOTO:
		ADD(" goto %u", r->goto_prio);
		break;
	case FIB_RULE_NOP:
		ADD(" nop");
		break;
	default:
		ADD(" %s", fib_type_name(r->action)); /* blackhole, unreachable, prohibit */
		break;
	}
	if (r->protocol && r->protocol != RTPROT_KERNEL)
		ADD(" proto %s", fibd_proto_name(r->protocol, t, sizeof(t)));
#undef ADD
	return n;
}

/* show rules [4|6]: IPv4's then IPv6's, each as `ip -4/-6 rule show`. */
static void
fibd_show_rules(struct fibd *d, struct evbuffer *out, int family)
{
	static const int fams[] = {AF_INET, AF_INET6};
	struct fib_rule *rules = NULL;
	char line[512];
	size_t n, cap = 0, len;

	for (size_t f = 0; f < 2; f++) {
		if (family && family != fams[f])
			continue;
		fib_read_lock();
		n = fib_rules_get(d->fib, fams[f], rules, cap);
		if (n > cap) {
			struct fib_rule *more = realloc(rules, n * sizeof(*rules));

			if (more) {
				rules = more;
				cap = n;
				n = fib_rules_get(d->fib, fams[f], rules, cap);
			}
			if (n > cap)
				n = cap;
		}
		for (size_t i = 0; i < n; i++) {
			len = fibd_rule_format(line, sizeof(line) - 1, &rules[i]);
			if (len > sizeof(line) - 2)
				len = sizeof(line) - 2;
			line[len++] = '\n';
			evbuffer_add(out, line, len);
		}
		fib_read_unlock();
	}
	free(rules);
}

/* The loop's lateness per phase (health.c's 1 ms probe, lag.h), in ms. */
static void
fibd_show_lag(struct fibd *d, struct evbuffer *out)
{
	for (unsigned p = 0; p < LAG_PHASES; p++) {
		const struct lag_hist *h = &d->health.lag[p];
		const char *name = lag_phase_name(p);

		evbuffer_add_printf(out, "loop_lag_%s_ticks %llu\n", name,
				    (unsigned long long)h->count);
		evbuffer_add_printf(out, "loop_lag_%s_p50_ms %.3f\n", name,
				    lag_hist_quantile(h, 0.5) / 1e3);
		evbuffer_add_printf(out, "loop_lag_%s_p99_ms %.3f\n", name,
				    lag_hist_quantile(h, 0.99) / 1e3);
		evbuffer_add_printf(out, "loop_lag_%s_max_ms %.3f\n", name, h->max_us / 1e3);
	}
	for (unsigned p = 0; p < LAG_PHASES; p++) {
		const struct lag_hist *h = &d->health.busy[p];
		const char *name = lag_phase_name(p);

		evbuffer_add_printf(out, "loop_busy_%s_p99_ms %.3f\n", name,
				    lag_hist_quantile(h, 0.99) / 1e3);
		evbuffer_add_printf(out, "loop_busy_%s_max_ms %.3f\n", name, h->max_us / 1e3);
	}
}

static void
fibd_show_summary(struct fibd *d, struct evbuffer *out)
{
	struct ingest_stats st;
	struct ctl_stats cs;
	struct decisions dec;

	ingest_stats(d->ing, &st);
	ctl_stats(d->ctl, &cs);
	evbuffer_add_printf(out, "ready %s\n", d->ready ? "true" : "false");
	evbuffer_add_printf(out, "ingest_seconds %.3f\n", d->ready ? st.ingest_seconds : 0.0);
	evbuffer_add_printf(out, "routes_v4 %zu\n", fib_count(d->fib, AF_INET));
	evbuffer_add_printf(out, "routes_v6 %zu\n", fib_count(d->fib, AF_INET6));
	evbuffer_add_printf(out, "rules_v4 %zu\n", fibd_rules_count(d, AF_INET));
	evbuffer_add_printf(out, "rules_v6 %zu\n", fibd_rules_count(d, AF_INET6));
	decisions_read(&d->decisions, &dec);
	evbuffer_add_printf(out, "decisions %llu\n", (unsigned long long)decisions_total(&dec));
	evbuffer_add_printf(out, "decision_errors %llu\n",
			    (unsigned long long)decisions_errors(&dec));
	evbuffer_add_printf(out, "generation %llu\n", (unsigned long long)fib_generation(d->fib));
	evbuffer_add_printf(out, "uptime_seconds %.0f\n", fibd_now() - d->t_start);
	evbuffer_add_printf(out, "config %s\n", d->opts.conf_path);
	evbuffer_add_printf(out, "reloads %llu\n", (unsigned long long)d->reloads);
	evbuffer_add_printf(out, "reload_failures %llu\n", (unsigned long long)d->reload_failures);
	evbuffer_add_printf(out, "netlink_messages %llu\n", (unsigned long long)st.msgs);
	evbuffer_add_printf(out, "netlink_drops %llu\n", (unsigned long long)st.drops);
	evbuffer_add_printf(out, "netlink_resyncs %llu\n", (unsigned long long)st.resyncs);
	evbuffer_add_printf(out, "netlink_rules_applied %llu\n", (unsigned long long)st.rules_applied);
	evbuffer_add_printf(out, "netlink_rules_rejected %llu\n",
			    (unsigned long long)st.rules_rejected);
	evbuffer_add_printf(out, "netlink_addrs_applied %llu\n", (unsigned long long)st.addrs_applied);
	evbuffer_add_printf(out, "netlink_addrs_rejected %llu\n",
			    (unsigned long long)st.addrs_rejected);
	evbuffer_add_printf(out, "netlink_links_applied %llu\n", (unsigned long long)st.links_applied);
	evbuffer_add_printf(out, "netlink_links_rejected %llu\n",
			    (unsigned long long)st.links_rejected);
	fib_read_lock(); /* the published policy, as readers see it */
	evbuffer_add_printf(out, "policy_rules_v4 %zu\n", fib_rules_get(d->fib, AF_INET, NULL, 0));
	evbuffer_add_printf(out, "policy_rules_v6 %zu\n", fib_rules_get(d->fib, AF_INET6, NULL, 0));
	evbuffer_add_printf(out, "policy_links %zu\n", fib_links_get(d->fib, NULL, 0));
	evbuffer_add_printf(out, "policy_addrs %zu\n", fib_ifaddrs_get(d->fib, NULL, 0));
	fib_read_unlock();
	evbuffer_add_printf(out, "compacting %s\n", d->comp.cw.running ? "true" : "false");
	evbuffer_add_printf(out, "control_clients %u\n", cs.clients);
	evbuffer_add_printf(out, "control_refused %llu\n", (unsigned long long)cs.refused);
	evbuffer_add_printf(out, "control_refused_fds %llu\n", (unsigned long long)cs.refused_fds);
	evbuffer_add_printf(out, "control_idle_closed %llu\n", (unsigned long long)cs.idle_closed);
	if (d->lookup) {
		struct lookup_stats ls;

		lookup_stats(d->lookup, &ls);
		evbuffer_add_printf(out, "lookup_requests %llu\n", (unsigned long long)ls.requests);
		evbuffer_add_printf(out, "lookup_addresses %llu\n",
				    (unsigned long long)ls.addresses);
		evbuffer_add_printf(out, "lookup_refused_fds %llu\n",
				    (unsigned long long)ls.refused_fds);
		evbuffer_add_printf(out, "lookup_idle_closed %llu\n",
				    (unsigned long long)ls.idle_closed);
	}
	fibd_show_lag(d, out);
	if (d->cache) {
		struct flow_stats fs;

		flow_cache_stats(d->cache, &fs);
		evbuffer_add_printf(out, "cache enabled\n");
		evbuffer_add_printf(out, "cache_entries %llu\n", (unsigned long long)fs.entries);
	} else {
		evbuffer_add_printf(out, "cache disabled\n");
	}
}

/* flow_cache_stats as "key value" lines (fibctl makes a table or JSON). */
static void
fibd_show_cache(struct fibd *d, struct evbuffer *out)
{
	struct flow_stats st;
	const struct conf_cache *c = &d->conf->cache;

	if (!d->cache) {
		evbuffer_add_printf(out, "enabled false\n");
		return;
	}
	flow_cache_stats(d->cache, &st);
#define P(name, v) evbuffer_add_printf(out, "%s %llu\n", name, (unsigned long long)(v))
	evbuffer_add_printf(out, "enabled true\n");
	P("buckets", c->buckets);
	P("max_entries", c->max_entries);
	P("entries", st.entries);
	P("lookups", st.lookups);
	P("hits", st.hits);
	P("misses", st.misses);
	P("stale_hits", st.stale_hits);
	P("inserts", st.inserts);
	P("admit_deferred", st.admit_deferred);
	P("insert_full", st.insert_full);
	P("insert_odd", st.insert_odd);
	P("evict_chain", st.evict_chain);
	P("evict_size", st.evict_size);
	P("expired_idle", st.expired_idle);
	P("expired_stale", st.expired_stale);
	P("flushed", st.flushed);
	P("gc_runs", st.gc_runs);
	P("gc_pressure_runs", st.gc_pressure_runs);
	P("buckets_scanned", st.buckets_scanned);
	evbuffer_add_printf(out, "gc_ms_last %.3f\n", (double)st.gc_ns_last * 1e-6);
	evbuffer_add_printf(out, "gc_ms_max %.3f\n", (double)st.gc_ns_max * 1e-6);
	P("yields", st.yields);
	P("bypass", st.bypass);
	P("bypassed", st.bypassed);
	P("bypass_default", st.bypass_default);
	P("evict_lru", st.evict_lru);
	P("invalid_route", st.invalid_route);
	P("invalid_policy", st.invalid_policy);
	P("insert_norec", st.insert_norec);
	P("records", st.records);
	P("records_pending", st.records_pending);
	P("admit_n", st.admit_n);
	P("hit_ns", st.hit_ns);
	P("resolve_ns", st.resolve_ns);
	P("samples", st.samples);
	P("chain_max", flow_cache_chain_max(d->cache));
	P("rebuilds", d->cache_rebuilds);
	P("bytes", st.bytes);
#undef P
}

/*
 * fib_stats, or while the compaction thread is the writer the last
 * figures taken (before its pass, or after the previous one). Context:
 * main loop.
 */
#define FIBD_STATS_AGE 1.0 /* s */

/* Context: the stats thread, the FIB's writer (the ingest paused). */
static void
fibd_stats_work(void *arg)
{
	struct fibd *d = arg;

	fib_stats(d->fib, &d->comp.stats_new);
}

/* The stats thread is joined: its figures, then the FIB back to the
 * ingest. Context: main loop. */
static void
fibd_stats_done(void *arg)
{
	struct fibd *d = arg;

	d->comp.stats_running = 0;
	d->comp.stats = d->comp.stats_new;
	d->comp.stats_valid = 1;
	d->comp.stats_at = fibd_now();
	if (d->params_pending)
		fibd_fib_params_apply(d, d->conf, NULL);
	ingest_resume(d->ing);
}

void
fibd_stats_join(struct fibd *d)
{
	if (d->comp.stats_running && handoff_join(d->comp.stats_ho))
		fibd_stats_done(d);
}

void
fibd_stats_open(struct fibd *d)
{
	d->comp.stats_ho = handoff_new(d->base, fibd_stats_work, fibd_stats_done, d);
	if (!d->comp.stats_ho)
		fatal("stats hand-off");
}

void
fibd_stats_close(struct fibd *d)
{
	handoff_free(d->comp.stats_ho); /* joins */
	d->comp.stats_ho = NULL;
	d->comp.stats_running = 0;
}

void
fibd_fib_stats(struct fibd *d, struct fib_stats *st)
{
	int fresh = d->comp.stats_valid && fibd_now() - d->comp.stats_at < FIBD_STATS_AGE;

	if (d->comp.cw.running || d->comp.stats_running || fresh) {
		/* the last figures */
	} else if (d->comp.stats_valid && ingest_pause(d->ing) == 0) {
		d->comp.stats_running = 1;
		if (handoff_run(d->comp.stats_ho) < 0)
			handoff_run_here(d->comp.stats_ho);
	} else if (!d->comp.stats_valid) {
		fib_stats(d->fib, &d->comp.stats); /* none yet: here */
		d->comp.stats_valid = 1;
		d->comp.stats_at = fibd_now();
	}
	*st = d->comp.stats;
}

static void
fibd_show_trie(struct fibd *d, struct evbuffer *out, int family)
{
	struct fib_stats st;

	fibd_fib_stats(d, &st);
	for (int f = 0; f < 2; f++) {
		const struct fib_trie_stats *t = f ? &st.v6 : &st.v4;
		const char *k = f ? "v6" : "v4";

		if (family && family != (f ? AF_INET6 : AF_INET))
			continue;
		evbuffer_add_printf(out, "%s.routes %zu\n", k,
				    fib_count(d->fib, f ? AF_INET6 : AF_INET));
		evbuffer_add_printf(out, "%s.depth_avg %.2f\n", k,
				    t->leaves ? (double)t->depth_total / (double)t->leaves : 0.0);
		evbuffer_add_printf(out, "%s.depth_max %u\n", k, t->depth_max);
		evbuffer_add_printf(out, "%s.leaves %llu\n", k, (unsigned long long)t->leaves);
		evbuffer_add_printf(out, "%s.prefixes %llu\n", k, (unsigned long long)t->prefixes);
		evbuffer_add_printf(out, "%s.nodes %llu\n", k, (unsigned long long)t->nodes);
		for (unsigned b = 1; b <= FIB_STATS_MAX_BITS; b++)
			if (t->nodes_by_bits[b])
				evbuffer_add_printf(out, "%s.nodes_bits_%u %llu\n", k, b,
						    (unsigned long long)t->nodes_by_bits[b]);
		evbuffer_add_printf(out, "%s.pointers %llu\n", k, (unsigned long long)t->pointers);
		evbuffer_add_printf(out, "%s.null_pointers %llu\n", k,
				    (unsigned long long)t->null_pointers);
		evbuffer_add_printf(out, "%s.bytes %llu\n", k, (unsigned long long)t->bytes);
		evbuffer_add_printf(out, "%s.compiled_tables %u\n", k, t->accel_tables);
		evbuffer_add_printf(out, "%s.compiled_table_ids ", k);
		for (unsigned i = 0; i < t->accel_tables; i++)
			evbuffer_add_printf(out, "%s%u", i ? "," : "", t->accel_table_ids[i]);
		evbuffer_add_printf(out, "%s\n", t->accel_tables ? "" : "-");
		evbuffer_add_printf(out, "%s.resizes %llu\n", k, (unsigned long long)t->resizes);
		evbuffer_add_printf(out, "%s.inflates %llu\n", k, (unsigned long long)t->inflates);
		evbuffer_add_printf(out, "%s.halves %llu\n", k, (unsigned long long)t->halves);
	}
	if (!family) {
		evbuffer_add_printf(out, "fib.bytes %llu\n", (unsigned long long)st.bytes);
		evbuffer_add_printf(out, "fib.infos %llu\n", (unsigned long long)st.infos);
		evbuffer_add_printf(out, "reclaim.batches %llu\n",
				    (unsigned long long)st.reclaim.batches);
		evbuffer_add_printf(out, "reclaim.bytes_pending %llu\n",
				    (unsigned long long)st.reclaim.bytes_pending);
		evbuffer_add_printf(out, "reclaim.grace_periods %llu\n",
				    (unsigned long long)st.reclaim.grace_periods);
		evbuffer_add_printf(out, "reclaim.gp_ms_max %.3f\n",
				    (double)st.reclaim.gp_ns_max * 1e-6);
	}
}

static void
fibd_cmd_summary(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out,
		 struct ctl_reply *r)
{
	fibd_show_summary(d, out);
}

static void
fibd_cmd_trie(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r)
{
	fibd_show_trie(d, out, cmd->family);
}

static void
fibd_cmd_cache(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r)
{
	fibd_show_cache(d, out);
}

/*
 * show routes, streamed (daemon/ctl.h, struct ctl_reply's more): each
 * slice walks on from where the last one stopped (fib_walk_from, in its
 * own read section, so no grace period waits for a slow reader) until
 * FIBD_ROUTES_SLICE_US or FIBD_ROUTES_SLICE_BYTES, checked every
 * FIBD_ROUTES_CHECK routes. With a prefix the walk starts at the
 * prefix's key and ends at the first key outside it: only the covered
 * part of the trie is read.
 */
#define FIBD_ROUTES_SLICE_US 1000
#define FIBD_ROUTES_SLICE_BYTES (64u << 10)
#define FIBD_ROUTES_CHECK 16

struct fibd_routes {
	struct fibd_walk w;
	int fam[2];
	unsigned nfam, f;
	struct fib_walk_pos pos;
	size_t until_bytes;
	double until;
	unsigned check;
};

enum { FIBD_ROUTES_PAUSE = 1, FIBD_ROUTES_END = 2 };

static int
fibd_routes_step(const struct fib_match *m, void *arg)
{
	struct fibd_routes *st = arg;

	if (st->w.filter && !fibd_prefix_covers(&st->w.prefix, st->w.plen, &m->prefix))
		return FIBD_ROUTES_END; /* keys from here on are past the prefix */
	fibd_route_line(m, &st->w);
	if (++st->check < FIBD_ROUTES_CHECK)
		return 0;
	st->check = 0;
	if (evbuffer_get_length(st->w.out) >= st->until_bytes || fibd_now() >= st->until)
		return FIBD_ROUTES_PAUSE;
	return 0;
}

/* The next slice; 0 when done (r's message set). Context: main loop. */
static int
fibd_routes_more(void *arg, struct evbuffer *out, struct ctl_reply *r)
{
	struct fibd_routes *st = arg;
	int ret = 0;

	st->w.out = out;
	st->until_bytes = evbuffer_get_length(out) + FIBD_ROUTES_SLICE_BYTES;
	st->until = fibd_now() + FIBD_ROUTES_SLICE_US * 1e-6;
	st->check = 0;
	while (st->f < st->nfam) {
		fib_read_lock();
		ret = fib_walk_from(st->w.d->fib, st->fam[st->f], &st->pos, fibd_routes_step, st);
		fib_read_unlock();
		if (ret == FIBD_ROUTES_PAUSE)
			return 1;
		st->f++;
		memset(&st->pos, 0, sizeof(st->pos));
		if (st->w.filter)
			st->pos.key = st->w.prefix;
		if (fibd_now() >= st->until && st->f < st->nfam)
			return 1;
	}
	snprintf(r->msg, sizeof(r->msg), "%llu routes", (unsigned long long)st->w.n);
	return 0;
}

static void
fibd_cmd_routes(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out,
		struct ctl_reply *r)
{
	struct fibd_routes *st = calloc(1, sizeof(*st));

	if (!st) {
		r->code = 500;
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return;
	}
	st->w.d = d;
	st->w.filter = cmd->has_prefix;
	st->w.plen = cmd->plen;
	st->w.prefix = cmd->prefix;
	if (!cmd->family || cmd->family == AF_INET)
		st->fam[st->nfam++] = AF_INET;
	if (!cmd->family || cmd->family == AF_INET6)
		st->fam[st->nfam++] = AF_INET6;
	if (st->w.filter) {
		/* start at the prefix's first key: its host bits cleared */
		for (unsigned i = 0; i < sizeof(st->w.prefix.b); i++)
			if (i * 8 >= cmd->plen)
				st->w.prefix.b[i] = 0;
			else if (i * 8 + 8 > cmd->plen)
				st->w.prefix.b[i] &= (uint8_t)(0xff00 >> (cmd->plen - i * 8));
		st->pos.key = st->w.prefix;
	}
	r->more = fibd_routes_more;
	r->release = free;
	r->state = st;
}

static void
fibd_cmd_rules(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r)
{
	fibd_show_rules(d, out, cmd->family);
}

static void
fibd_cmd_config(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out,
		struct ctl_reply *r)
{
	char *s;

	if (conf_format(d->conf, &s) < 0) {
		r->code = 500;
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return;
	}
	evbuffer_add(out, s, strlen(s));
	free(s);
}

static void
fibd_cmd_lookup(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out,
		struct ctl_reply *r)
{
	struct fib_flow fl;

	if (fibd_lookup_flow(d, cmd, &fl, r) < 0)
		return;
	for (unsigned i = 0; cmd->has_src && i < cmd->naddr; i++)
		if (cmd->addr[i].family != cmd->src.family) {
			r->code = 400;
			snprintf(r->msg, sizeof(r->msg),
				 "from: source and destination families differ");
			return;
		}
	for (unsigned i = 0; i < cmd->naddr; i++)
		fibd_lookup_line(d, out, &cmd->addr[i], &fl);
}

static void
fibd_cmd_flush(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r)
{
	if (!d->cache) {
		r->code = 503;
		snprintf(r->msg, sizeof(r->msg), "not available: the flow cache is disabled");
		return;
	}
	flow_cache_flush(d->cache);
	snprintf(r->msg, sizeof(r->msg), "flushed");
}

static void
fibd_cmd_reload(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out,
		struct ctl_reply *r)
{
	if (fibd_reload(d, out) < 0) {
		r->code = 500;
		snprintf(r->msg, sizeof(r->msg), "reload failed, old configuration kept");
	} else {
		snprintf(r->msg, sizeof(r->msg), "reloaded");
	}
}

static void
fibd_cmd_metrics(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out,
		 struct ctl_reply *r)
{
	fibd_metrics(d, out);
}

static void
fibd_cmd_compact(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out,
		 struct ctl_reply *r)
{
	if (d->comp.cw.running) {
		r->code = 503;
		snprintf(r->msg, sizeof(r->msg), "compaction running, try again");
		return;
	}
	if (!ingest_idle(d->ing)) {
		r->code = 503;
		snprintf(r->msg, sizeof(r->msg), "busy: a dump or resync is running");
		return;
	}
	if (fibd_settle(d, 1, r->msg, sizeof(r->msg)) < 0)
		r->code = 500;
}

static void
fibd_cmd_help(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r)
{
	evbuffer_add_printf(out,
			    "show summary\nshow trie [4|6]\nshow cache\n"
			    "show routes [PREFIX]\nshow rules [4|6]\nshow config\n"
			    "lookup ADDR... [from A] [iif NAME] [oif NAME] [mark N] "
			    "[tos N|dscp N] [ipproto P] [sport N] [dport N] [uid N] [fibmatch]\n"
			    "flush cache\ncompact\nreload\nmetrics\nhelp\n");
}

typedef void (*fibd_cmd_fn)(struct fibd *d, const struct ctl_cmd *cmd, struct evbuffer *out,
			    struct ctl_reply *r);

/* The commands daemon/ctl parses, and whether they wait for ready (the
 * FIB is the loader thread's until then). */
static const struct {
	int needs_ready;
	fibd_cmd_fn handler;
} fibd_cmds[] = {
    [CTL_SHOW_SUMMARY] = {0, fibd_cmd_summary}, [CTL_SHOW_TRIE] = {1, fibd_cmd_trie},
    [CTL_SHOW_CACHE] = {0, fibd_cmd_cache},	[CTL_SHOW_ROUTES] = {1, fibd_cmd_routes},
    [CTL_SHOW_CONFIG] = {0, fibd_cmd_config},	[CTL_LOOKUP] = {1, fibd_cmd_lookup},
    [CTL_FLUSH_CACHE] = {0, fibd_cmd_flush},	[CTL_RELOAD] = {0, fibd_cmd_reload},
    [CTL_METRICS] = {0, fibd_cmd_metrics},	[CTL_HELP] = {0, fibd_cmd_help},
    [CTL_COMPACT] = {1, fibd_cmd_compact},	[CTL_SHOW_RULES] = {0, fibd_cmd_rules},
};

void
fibd_exec(const struct ctl_cmd *cmd, struct evbuffer *out, struct ctl_reply *r, void *arg)
{
	struct fibd *d = arg;

	if ((unsigned)cmd->op >= sizeof(fibd_cmds) / sizeof(fibd_cmds[0]) ||
	    !fibd_cmds[cmd->op].handler)
		return;
	if (fibd_cmds[cmd->op].needs_ready && !d->ready) {
		r->code = 503;
		snprintf(r->msg, sizeof(r->msg), "not ready: the first dump is still loading");
		return;
	}
	fibd_cmds[cmd->op].handler(d, cmd, out, r);
}
