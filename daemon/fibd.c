/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fibd, the routing daemon's main
 *
 * A minimal main until the daemon issue adds YAML config, the control
 * socket and sd_notify: parse a few flags into struct fibd_opts (which a
 * struct conf replaces later), create the FIB, run the netlink ingest on a
 * libevent loop, log "ready: N v4 / M v6 routes in S seconds" after the
 * first complete dump, exit cleanly on SIGTERM or SIGINT.
 *
 * Test-only query path (the control socket is a later issue):
 * --dump FILE writes every route (fib_walk) and --lookup IN OUT answers
 * the addresses listed in IN from the FIB, once ready and again on each
 * SIGUSR1; SIGUSR1 first applies every event already queued, so a test
 * that changed the kernel and then signals sees the FIB that follows from
 * its changes. Files are written to FILE.tmp and renamed. --once exits
 * after the first write.
 *
 * Signals reach the loop as libevent signal events (STYLE.md item 5).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <event2/event.h>
#include <linux/rtnetlink.h>

#include "fib/fib.h"
#include "daemon/ingest.h"
#include "daemon/log.h"

struct fibd_opts {
	struct ingest_conf ingest;
	const char *dump_file;
	const char *lookup_in, *lookup_out;
	int once;
	int verbose;
};

struct fibd {
	struct fibd_opts opts;
	struct event_base *base;
	struct fib *fib;
	struct ingest *ing;
	struct event *sig_term, *sig_int, *sig_usr1;
	struct event *probe; /* 1 ms tick until ready: the loop's longest stall */
	double probe_last, probe_max;
	int writing;
};

static void
fibd_usage(void)
{
	fprintf(stderr,
		"usage: fibd [-v] [-f 4|6|46] [-t TABLE[,TABLE...]|all] [-b RCVBUF] [-B BUDGET_MS]\n"
		"            [--dump FILE] [--lookup IN OUT] [--once]\n");
	exit(2);
}

static unsigned long
fibd_num(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max)
		fatalx("bad number: %s", s);
	return v;
}

static void
fibd_parse_tables(struct ingest_conf *c, char *arg)
{
	char *tok, *save = NULL;

	c->ntables = 0;
	if (!strcmp(arg, "all"))
		return;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (c->ntables == INGEST_TABLES_MAX)
			fatalx("at most %d tables", INGEST_TABLES_MAX);
		if (!strcmp(tok, "main"))
			c->tables[c->ntables++] = RT_TABLE_MAIN;
		else if (!strcmp(tok, "local"))
			c->tables[c->ntables++] = RT_TABLE_LOCAL;
		else
			c->tables[c->ntables++] = (uint32_t)fibd_num(tok, UINT32_MAX);
	}
}

static void
fibd_parse_args(struct fibd_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dump", required_argument, NULL, 'D' },
		{ "lookup", required_argument, NULL, 'L' },
		{ "once", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(o, 0, sizeof(*o));
	ingest_conf_default(&o->ingest);
	while ((ch = getopt_long(argc, argv, "vf:t:b:B:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'v':
			o->verbose++;
			break;
		case 'f':
			o->ingest.families = 0;
			if (strchr(optarg, '4'))
				o->ingest.families |= INGEST_V4;
			if (strchr(optarg, '6'))
				o->ingest.families |= INGEST_V6;
			if (!o->ingest.families)
				fibd_usage();
			break;
		case 't':
			fibd_parse_tables(&o->ingest, optarg);
			break;
		case 'b':
			o->ingest.rcvbuf = (unsigned)fibd_num(optarg, 1u << 30);
			break;
		case 'B':
			o->ingest.budget_us = (unsigned)fibd_num(optarg, 10000) * 1000;
			break;
		case 'D':
			o->dump_file = optarg;
			break;
		case 'L':
			if (optind >= argc)
				fibd_usage();
			o->lookup_in = optarg;
			o->lookup_out = argv[optind++];
			break;
		case 'O':
			o->once = 1;
			break;
		default:
			fibd_usage();
		}
	}
	if (optind != argc)
		fibd_usage();
}

/* Test-only output. */

static const char *
fibd_type_name(unsigned type)
{
	switch (type) {
	case FIB_UNICAST: return "unicast";
	case FIB_LOCAL: return "local";
	case FIB_BROADCAST: return "broadcast";
	case FIB_BLACKHOLE: return "blackhole";
	case FIB_UNREACHABLE: return "unreachable";
	case FIB_PROHIBIT: return "prohibit";
	case FIB_THROW: return "throw";
	}
	return "unknown";
}

static void
fibd_print_nh(struct fibd *d, FILE *f, const struct fib_info *info, int multipath_words)
{
	char buf[INET6_ADDRSTRLEN];

	for (unsigned i = 0; i < info->nh_count; i++) {
		const struct fib_nh *nh = &info->nh[i];
		const char *name = ingest_ifname(d->ing, nh->ifindex);

		if (multipath_words)
			fputs(" nexthop", f);
		else
			fputs(" nh", f);
		if (nh->gw_family) {
			inet_ntop(nh->gw_family, nh->gw.b, buf, sizeof(buf));
			fprintf(f, " via %s", buf);
		}
		if (nh->ifindex) {
			if (name)
				fprintf(f, " dev %s", name);
			else
				fprintf(f, " dev if%u", nh->ifindex);
		}
		fprintf(f, multipath_words ? " weight %u" : " w %u", nh->weight);
	}
}

static int
fibd_dump_cb(const struct fib_match *m, void *arg)
{
	void **a = arg;
	struct fibd *d = a[0];
	FILE *f = a[1];
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(m->family, m->prefix.b, buf, sizeof(buf));
	fprintf(f, "%s %s/%u", fibd_type_name(m->type), buf, m->plen);
	if (m->table != RT_TABLE_MAIN)
		fprintf(f, " table %u", m->table);
	if (m->tos)
		fprintf(f, " tos %u", m->tos);
	fprintf(f, " metric %u", m->info->priority);
	if (m->info->nh_id)
		fprintf(f, " nhid %u", m->info->nh_id);
	fibd_print_nh(d, f, m->info, 0);
	fputc('\n', f);
	return 0;
}

static int
fibd_write_dump(struct fibd *d, const char *path)
{
	char tmp[4096];
	void *arg[2];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		log_warn("%s", tmp);
		return -1;
	}
	arg[0] = d;
	arg[1] = f;
	fib_walk(d->fib, AF_INET, fibd_dump_cb, arg);
	fib_walk(d->fib, AF_INET6, fibd_dump_cb, arg);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		log_warn("%s", path);
		return -1;
	}
	return 0;
}

/* Answer one address as `fibctl lookup` prints it (DESIGN.md). */
static void
fibd_lookup_one(struct fibd *d, FILE *out, const char *addr)
{
	union fib_addr a;
	struct fib_result res;
	struct fib_match m;
	char buf[INET6_ADDRSTRLEN];
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	uint32_t table = d->opts.ingest.ntables ? d->opts.ingest.tables[0] : RT_TABLE_MAIN;

	memset(&a, 0, sizeof(a));
	if (inet_pton(family, addr, a.b) != 1) {
		fprintf(out, "%s error\n", addr);
		return;
	}
	fib_read_lock();
	res = fib_lookup_rcu(d->fib, family, a.b, table, 0);
	if (fib_result_get(&res, &m) != 0) {
		fib_read_unlock();
		fprintf(out, "%s -\n", addr);
		return;
	}
	inet_ntop(m.family, m.prefix.b, buf, sizeof(buf));
	fprintf(out, "%s %s/%u %s", addr, buf, m.plen, fibd_type_name(m.type));
	if (m.info->nh_count == 1) {
		const struct fib_nh *nh = &m.info->nh[0];
		const char *name = ingest_ifname(d->ing, nh->ifindex);

		if (nh->gw_family) {
			inet_ntop(nh->gw_family, nh->gw.b, buf, sizeof(buf));
			fprintf(out, " via %s", buf);
		}
		if (nh->ifindex && name)
			fprintf(out, " dev %s", name);
		else if (nh->ifindex)
			fprintf(out, " dev if%u", nh->ifindex);
	} else if (m.info->nh_count > 1) {
		fibd_print_nh(d, out, m.info, 1);
	}
	fib_read_unlock();
	fputc('\n', out);
}

static int
fibd_write_lookups(struct fibd *d, const char *in, const char *path)
{
	char tmp[4096], line[256];
	FILE *fi, *fo;

	fi = fopen(in, "r");
	if (!fi) {
		log_warn("%s", in);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fo = fopen(tmp, "w");
	if (!fo) {
		log_warn("%s", tmp);
		fclose(fi);
		return -1;
	}
	while (fgets(line, sizeof(line), fi)) {
		line[strcspn(line, " \t\r\n")] = 0;
		if (line[0])
			fibd_lookup_one(d, fo, line);
	}
	fclose(fi);
	if (fclose(fo) != 0 || rename(tmp, path) != 0) {
		log_warn("%s", path);
		return -1;
	}
	return 0;
}

static void
fibd_log_stats(struct fibd *d)
{
	struct ingest_stats st;
	char errs[512];
	size_t n = 0;

	ingest_stats(d->ing, &st);
	errs[0] = 0;
	for (unsigned i = 0; i < NL_ERR_COUNT; i++)
		if (st.parse_errors[i] && n < sizeof(errs))
			n += (size_t)snprintf(errs + n, sizeof(errs) - n, " %s=%llu", nl_err_name(i),
					      (unsigned long long)st.parse_errors[i]);
	log_info("stats: msgs=%llu loaded=%llu added=%llu deleted=%llu exists=%llu missing=%llu "
		 "fib_errors=%llu skipped=%llu unknown_attrs=%llu drops=%llu resyncs=%llu "
		 "dump_intr=%llu slices=%llu nh_objects=%llu parse_errors:%s",
		 (unsigned long long)st.msgs, (unsigned long long)st.routes_loaded,
		 (unsigned long long)st.routes_added, (unsigned long long)st.routes_deleted,
		 (unsigned long long)st.add_exists, (unsigned long long)st.del_missing,
		 (unsigned long long)st.fib_errors, (unsigned long long)st.skipped,
		 (unsigned long long)st.unknown_attrs, (unsigned long long)st.drops,
		 (unsigned long long)st.resyncs, (unsigned long long)st.dump_intr,
		 (unsigned long long)st.slices, (unsigned long long)st.nh_objects,
		 errs[0] ? errs : " none");
}

static void
fibd_write_outputs(struct ingest *ing, void *arg)
{
	struct fibd *d = arg;

	d->writing = 0;
	if (d->opts.dump_file)
		fibd_write_dump(d, d->opts.dump_file);
	if (d->opts.lookup_in)
		fibd_write_lookups(d, d->opts.lookup_in, d->opts.lookup_out);
	fibd_log_stats(d);
	log_info("outputs written: %zu v4 / %zu v6 routes", fib_count(d->fib, AF_INET),
		 fib_count(d->fib, AF_INET6));
	if (d->opts.once)
		event_base_loopbreak(d->base);
}

static double
fibd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
fibd_probe(evutil_socket_t fd, short what, void *arg)
{
	struct fibd *d = arg;
	double now = fibd_now();

	if (now - d->probe_last > d->probe_max)
		d->probe_max = now - d->probe_last;
	d->probe_last = now;
}

static void
fibd_ready(struct ingest *ing, void *arg)
{
	struct fibd *d = arg;
	struct ingest_stats st;

	fibd_probe(-1, 0, d);
	event_del(d->probe);
	ingest_stats(ing, &st);
	log_info("ready: %zu v4 / %zu v6 routes in %.3f seconds", fib_count(d->fib, AF_INET),
		 fib_count(d->fib, AF_INET6), st.ingest_seconds);
	log_info("ingest: dump and parse %.3f s, then %.3f s to finish loading; longest "
		 "event-loop stall %.1f ms", st.dump_seconds, st.ingest_seconds - st.dump_seconds,
		 d->probe_max * 1e3);
	if (d->opts.dump_file || d->opts.lookup_in || d->opts.once) {
		d->writing = 1;
		ingest_sync(ing, fibd_write_outputs, d);
	}
}

static void
fibd_signal(evutil_socket_t sig, short what, void *arg)
{
	struct fibd *d = arg;

	if (sig == SIGUSR1) {
		if (!d->writing) {
			d->writing = 1;
			ingest_sync(d->ing, fibd_write_outputs, d);
		}
		return;
	}
	log_info("signal %d: exiting", (int)sig);
	event_base_loopbreak(d->base);
}

int
main(int argc, char **argv)
{
	struct fibd d;

	memset(&d, 0, sizeof(d));
	fibd_parse_args(&d.opts, argc, argv);
	log_init("fibd", d.opts.verbose);
	signal(SIGPIPE, SIG_IGN);

	d.base = event_base_new();
	if (!d.base)
		fatalx("event_base_new failed");
	fib_thread_online();
	d.fib = fib_new(NULL);
	if (!d.fib)
		fatal("fib_new");
	d.ing = ingest_new(d.base, d.fib, &d.opts.ingest);
	if (!d.ing)
		fatal("netlink");
	d.sig_term = evsignal_new(d.base, SIGTERM, fibd_signal, &d);
	d.sig_int = evsignal_new(d.base, SIGINT, fibd_signal, &d);
	d.sig_usr1 = evsignal_new(d.base, SIGUSR1, fibd_signal, &d);
	if (!d.sig_term || !d.sig_int || !d.sig_usr1 || evsignal_add(d.sig_term, NULL) ||
	    evsignal_add(d.sig_int, NULL) || evsignal_add(d.sig_usr1, NULL))
		fatalx("signal events");
	d.probe = event_new(d.base, -1, EV_PERSIST, fibd_probe, &d);
	if (!d.probe || event_add(d.probe, &(struct timeval){ 0, 1000 }) < 0)
		fatalx("probe timer");
	d.probe_last = fibd_now();
	if (ingest_start(d.ing, fibd_ready, &d) < 0)
		fatal("ingest_start");

	event_base_dispatch(d.base);

	fibd_log_stats(&d);
	event_free(d.sig_term);
	event_free(d.sig_int);
	event_free(d.sig_usr1);
	event_free(d.probe);
	ingest_free(d.ing);
	fib_free(d.fib);
	fib_thread_offline();
	event_base_free(d.base);
	return 0;
}
