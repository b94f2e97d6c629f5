/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: tablegen, the BGP-like table generator (see tablegen.h)
 *
 * Keys are unsigned __int128 holding the address in the low `width` bits
 * (32 or 128), so one code path serves both families. Steps:
 *
 * 1. Short prefixes (shorter than a block: IPv4 /8-/15, IPv6 /16-/31) are
 *    spread over the regions, avoiding special-purpose space.
 * 2. Blocks (/16, /32) are drawn without replacement: mostly a random
 *    block of a random region (regions weighted log-normally so some /8s
 *    are dense), sometimes one under a short prefix (aggregates with
 *    more-specifics). Each block gets a log-normal number of prefixes
 *    (IPv4: median 6, capped at 341, as the tier-1 table).
 * 3. Inside a block, lengths are drawn from the table's mix and placed
 *    shortest first, either top-level (uncovered space) or nested in a
 *    random shorter prefix of the block; sibling-length prefixes (/24,
 *    /48) come in pairs and runs of pairs, as allocations do.
 * 4. Sort, then one walk with a stack of enclosing prefixes assigns next
 *    hops: top-level routes draw from a skewed law (one next hop carries
 *    major_share), covered routes keep their parent's 86 % of the time.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/util/rng.h"
#include "tests/util/tablegen.h"

typedef unsigned __int128 tg_key;

struct tg_pfx {
	tg_key a;
	uint8_t plen;
	uint8_t depth; /* inside the block, while it is built */
	uint16_t nh;   /* 0: none, else next hop number + 1 */
};

struct tg_len {
	uint8_t len;
	double w; /* per mille of the tier-1 table */
};

struct tg_region {
	tg_key a;
	uint8_t len;
	double w;
};

/* IPv4 lengths, as in a real tier-1 view */
static const struct tg_len tg_lens4[] = {
	{ 8, 0.018 }, { 9, 0.014 }, { 10, 0.042 }, { 11, 0.114 }, { 12, 0.33 },
	{ 13, 0.64 }, { 14, 1.33 }, { 15, 2.33 },  { 16, 15 },   { 17, 9 },
	{ 18, 15 },   { 19, 28 },   { 20, 47 },   { 21, 56 },   { 22, 120 },
	{ 23, 107 },  { 24, 596 },  { 25, 0.04 }, { 26, 0.02 }, { 27, 0.02 },
	{ 28, 0.01 }, { 29, 0.01 }, { 32, 1 },
};

/*
 * Lengths inside a block depend on how full it is: big blocks are mostly
 * /24s (/48s) with few short prefixes that would cover them (tier-1
 * table, by prefixes a block: 1, 2-5, 6-20, 21-100, more). Lengths past
 * the sibling length come from the overall mix at their overall rate.
 */
struct tg_mix {
	size_t kmax;
	double w[16]; /* block_len + 1 onwards, percent */
};

static const struct tg_mix tg_mix4[] = {
	{ 1, { 2.2, 1.2, 0.9, 0.8, 0.7, 0.7, 1.2, 6.5 } },
	{ 5, { 19.0, 21.0, 6.8, 4.4, 3.2, 3.6, 4.3, 25.4 } },
	{ 20, { 2.6, 5.9, 11.7, 19.9, 8.1, 7.6, 7.4, 34.4 } },
	{ 100, { 0.4, 1.0, 2.9, 5.2, 8.3, 14.2, 11.3, 56.4 } },
	{ SIZE_MAX, { 0.1, 0.1, 0.4, 0.9, 2.1, 11.3, 11.5, 73.4 } },
};

static const struct tg_mix tg_mix6[] = {
	{ 5, { 15.3, 9.1, 2.1, 11.9, 0.9, 1.3, 0.4, 8.6, 0.5, 0.7, 0.4, 3.7, 0.3, 0.5, 0.7, 43.5 } },
	{ 20, { 2.8, 5.2, 2.3, 14.5, 1.7, 2.3, 1.0, 13.6, 0.7, 0.9, 0.4, 5.1, 0.4, 0.8, 0.8, 47.1 } },
	{ 100, { 0.3, 0.6, 0.8, 3.5, 1.3, 2.9, 3.0, 11.4, 0.8, 1.0, 0.5, 9.4, 0.9, 2.6, 1.7, 59.2 } },
	{ SIZE_MAX, { 0, 0, 0, 0.2, 0, 0.3, 0.5, 8.9, 0.6, 2.5, 1.1, 14.8, 1.7, 3.1, 3.5, 62.5 } },
};

/* IPv6 lengths; "other /16-/47" spread over the lengths in between */
static const struct tg_len tg_lens6[] = {
	{ 16, 0.1 }, { 19, 0.1 }, { 20, 0.2 },  { 21, 0.1 },  { 22, 0.1 },  { 23, 0.1 },
	{ 24, 0.3 }, { 25, 0.1 }, { 26, 0.1 },  { 27, 0.2 },  { 28, 1 },    { 29, 27 },
	{ 30, 4 },   { 31, 2 },   { 32, 141 },  { 33, 18 },   { 34, 16 },   { 35, 7 },
	{ 36, 37 },  { 37, 5 },   { 38, 10 },   { 39, 9 },    { 40, 84 },   { 41, 6 },
	{ 42, 14 },  { 43, 6 },   { 44, 90 },   { 45, 10 },   { 46, 19 },   { 47, 20 },
	{ 48, 471 }, { 56, 1 },   { 64, 1 },    { 128, 0.2 },
};

#define TG_NLENS(a) (sizeof(a) / sizeof((a)[0]))

struct tg {
	struct rng r;
	const struct tablegen_params *p;
	unsigned width, block_len, sib_len;
	tg_key full;
	const struct tg_len *lens;
	size_t nlens;
	double w_short, w_block; /* total weights below / from block_len */
	double w_block_own;      /* weight of block_len itself */
	struct tg_region reg[256];
	size_t nreg;
	double reg_total;
	struct tg_region excl[16];
	size_t nexcl;
	double block_mu, block_sigma;
	size_t block_cap;
	double depth_w[5]; /* target nesting depth 0..4 */
	size_t depth_n[5], depth_total; /* placed so far, for feedback */
	double p_pair, p_run, p_under_short;
	double scale; /* IPv4 tables past 1.1M routes: denser /16s */
	struct tg_pfx *v; /* every prefix so far */
	size_t n, cap;
	size_t nshort;
	uint64_t *used; /* open-addressed set of blocks, key + 1 */
	size_t used_mask;
	double *nh_cdf;
	uint8_t units[256]; /* IPv4 block: /24s covered by a prefix */
};

static tg_key
tg_mask(const struct tg *g, unsigned len)
{
	if (len == 0)
		return 0;
	return (g->full << (g->width - len)) & g->full;
}

static int
tg_covers(const struct tg *g, tg_key a, unsigned alen, tg_key b, unsigned blen)
{
	return alen <= blen && (b & tg_mask(g, alen)) == a;
}

static int
tg_overlaps(const struct tg *g, tg_key a, unsigned alen, tg_key b, unsigned blen)
{
	unsigned l = alen < blen ? alen : blen;

	return (a & tg_mask(g, l)) == (b & tg_mask(g, l));
}

/* Random bits for positions from..len-1 of a key, in place. */
static tg_key
tg_bits(struct tg *g, unsigned from, unsigned len)
{
	tg_key x;

	if (len <= from)
		return 0;
	x = ((tg_key)rng_next(&g->r) << 64) | rng_next(&g->r);
	x >>= 128 - (len - from);
	return x << (g->width - len);
}

static double
tg_normal(struct tg *g)
{
	double u = rng_double(&g->r), v = rng_double(&g->r);

	return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
}

/* A length drawn from the mix, restricted to [lo, hi]. */
static unsigned
tg_draw_len(struct tg *g, unsigned lo, unsigned hi, double total)
{
	double u = rng_double(&g->r) * total;

	for (size_t i = 0; i < g->nlens; i++) {
		if (g->lens[i].len < lo || g->lens[i].len > hi)
			continue;
		if (u < g->lens[i].w)
			return g->lens[i].len;
		u -= g->lens[i].w;
	}
	for (size_t i = g->nlens; i-- > 0;)
		if (g->lens[i].len >= lo && g->lens[i].len <= hi)
			return g->lens[i].len;
	return hi;
}

/* A length for a prefix inside a block of k prefixes, below the block's own. */
static unsigned
tg_draw_block_len(struct tg *g, size_t k)
{
	const struct tg_mix *mix = g->width == 32 ? tg_mix4 : tg_mix6;
	double total = 0, tail = 0, u;
	unsigned nw = g->sib_len - g->block_len;

	while (mix->kmax < k)
		mix++;
	for (unsigned i = 0; i < nw; i++)
		total += mix->w[i];
	for (size_t i = 0; i < g->nlens; i++)
		if (g->lens[i].len > g->sib_len)
			tail += g->lens[i].w / 10.0; /* per mille -> percent */
	u = rng_double(&g->r) * (total + tail);
	if (u >= total)
		return tg_draw_len(g, g->sib_len + 1, g->width, tail * 10.0);
	for (unsigned i = 0; i < nw; i++) {
		if (u < mix->w[i])
			return g->block_len + 1 + i;
		u -= mix->w[i];
	}
	return g->sib_len;
}

static const struct tg_region *
tg_draw_region(struct tg *g)
{
	double u = rng_double(&g->r) * g->reg_total;

	for (size_t i = 0; i < g->nreg; i++) {
		if (u < g->reg[i].w)
			return &g->reg[i];
		u -= g->reg[i].w;
	}
	return &g->reg[g->nreg - 1];
}

static int
tg_excluded(const struct tg *g, tg_key a, unsigned len)
{
	for (size_t i = 0; i < g->nexcl; i++)
		if (tg_overlaps(g, a, len, g->excl[i].a, g->excl[i].len))
			return 1;
	return 0;
}

static int
tg_push(struct tg *g, tg_key a, unsigned len)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 4096;
		struct tg_pfx *v = realloc(g->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n].a = a;
	g->v[g->n].plen = len;
	g->v[g->n].nh = 0;
	g->n++;
	return 0;
}

static tg_key
tg_key4(unsigned a, unsigned b)
{
	return (tg_key)((a << 24) | (b << 16));
}

static tg_key
tg_key6(unsigned w0, unsigned w1)
{
	return ((tg_key)w0 << 112) | ((tg_key)w1 << 96);
}

static void
tg_region_add(struct tg *g, tg_key a, unsigned len, double w)
{
	g->reg[g->nreg].a = a;
	g->reg[g->nreg].len = len;
	g->reg[g->nreg].w = w;
	g->reg_total += w;
	g->nreg++;
}

static void
tg_excl_add(struct tg *g, tg_key a, unsigned len)
{
	g->excl[g->nexcl].a = a;
	g->excl[g->nexcl].len = len;
	g->nexcl++;
}

static void
tg_setup(struct tg *g)
{
	if (g->p->family == AF_INET) {
		g->width = 32;
		g->block_len = 16;
		g->sib_len = 24;
		g->lens = tg_lens4;
		g->nlens = TG_NLENS(tg_lens4);
		g->full = 0xffffffffu;
		/* 1/8-223/8 without 10/8 and 127/8: 221 /8s, some much denser */
		for (unsigned o = 1; o < 224; o++)
			if (o != 10 && o != 127)
				tg_region_add(g, tg_key4(o, 0), 8, exp(0.7 * tg_normal(g)));
		tg_excl_add(g, tg_key4(100, 64), 10);
		tg_excl_add(g, tg_key4(169, 254), 16);
		tg_excl_add(g, tg_key4(172, 16), 12);
		tg_excl_add(g, tg_key4(192, 168), 16);
		g->block_cap = 341; /* see tg_block_size */
		/* inside the block; short prefixes add the rest */
		g->depth_w[0] = 0.59;
		g->depth_w[1] = 0.32;
		g->depth_w[2] = 0.069;
		g->depth_w[3] = 0.015;
		g->depth_w[4] = 0.006;
		g->p_pair = 0.5;
		g->p_run = 0.45;
		g->p_under_short = 0.15;
	} else {
		g->width = 128;
		g->block_len = 32;
		g->sib_len = 48;
		g->lens = tg_lens6;
		g->nlens = TG_NLENS(tg_lens6);
		g->full = ~(tg_key)0;
		tg_region_add(g, tg_key6(0x2001, 0), 16, 1.5);
		tg_region_add(g, tg_key6(0x2400, 0), 12, 3);
		tg_region_add(g, tg_key6(0x2600, 0), 12, 3);
		tg_region_add(g, tg_key6(0x2800, 0), 12, 1);
		tg_region_add(g, tg_key6(0x2a00, 0), 12, 4);
		tg_region_add(g, tg_key6(0x2c00, 0), 12, 0.5);
		tg_excl_add(g, tg_key6(0x2001, 0), 23);      /* IETF protocol assignments */
		tg_excl_add(g, tg_key6(0x2001, 0x0db8), 32); /* documentation */
		/* 72 % of occupied /32s hold one prefix; a few hold thousands */
		g->block_mu = 0;
		g->block_sigma = 1.85;
		g->block_cap = 4096;
		g->depth_w[0] = 0.545;
		g->depth_w[1] = 0.357;
		g->depth_w[2] = 0.066;
		g->depth_w[3] = 0.026;
		g->depth_w[4] = 0.006;
		g->p_pair = 0.55;
		g->p_run = 0.35;
		g->p_under_short = 0.10;
	}
	for (size_t i = 0; i < g->nlens; i++) {
		if (g->lens[i].len < g->block_len)
			g->w_short += g->lens[i].w;
		else
			g->w_block += g->lens[i].w;
		if (g->lens[i].len == g->block_len)
			g->w_block_own = g->lens[i].w;
	}
}

/* Claim a block; returns 1 if it was free. */
static int
tg_claim(struct tg *g, tg_key base)
{
	uint64_t key = (uint64_t)(base >> (g->width - g->block_len)) + 1;
	size_t h = (key * 0x9e3779b97f4a7c15ULL) >> 20;

	for (h &= g->used_mask; g->used[h]; h = (h + 1) & g->used_mask)
		if (g->used[h] == key)
			return 0;
	g->used[h] = key;
	return 1;
}

static int
tg_pfx_cmp(const void *x, const void *y)
{
	const struct tg_pfx *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return (int)a->plen - (int)b->plen;
}

static int
tg_shorts(struct tg *g, size_t count)
{
	size_t j = 0;
	int err;

	for (size_t i = 0; i < count; i++) {
		for (int t = 0; t < 100; t++) {
			unsigned len = tg_draw_len(g, 0, g->block_len - 1, g->w_short);
			const struct tg_region *rg = tg_draw_region(g);
			tg_key a;

			if (len < rg->len)
				continue;
			a = rg->a | tg_bits(g, rg->len, len);
			if (tg_excluded(g, a, len))
				continue;
			if ((err = tg_push(g, a, len)) < 0)
				return err;
			break;
		}
	}
	if (g->n)
		qsort(g->v, g->n, sizeof(*g->v), tg_pfx_cmp);
	for (size_t i = 0; i < g->n; i++)
		if (!j || tg_pfx_cmp(&g->v[j - 1], &g->v[i]))
			g->v[j++] = g->v[i];
	g->n = j;
	g->nshort = j;
	return 0;
}

static int
tg_exists(const struct tg_pfx *cur, size_t nc, tg_key a, unsigned len)
{
	/* cur is in ascending length order: equal lengths sit at the end */
	for (size_t i = nc; i-- > 0 && cur[i].plen >= len;)
		if (cur[i].plen == len && cur[i].a == a)
			return 1;
	return 0;
}

/* Shorter prefixes of the block around a. */
static unsigned
tg_depth(const struct tg *g, const struct tg_pfx *cur, size_t nc, tg_key a, unsigned len)
{
	unsigned d = 0;

	for (size_t i = 0; i < nc && cur[i].plen < len; i++)
		d += tg_covers(g, cur[i].a, cur[i].plen, a, len);
	return d;
}

static void
tg_cur_add(struct tg *g, struct tg_pfx *cur, size_t *nc, tg_key a, unsigned len, unsigned depth)
{
	if (g->width == 32 && len <= 24) {
		unsigned first = (unsigned)(a >> 8) & 0xff;

		memset(&g->units[first], 1, 1u << (24 - len));
	}
	cur[*nc].a = a;
	cur[*nc].plen = len;
	cur[*nc].depth = depth;
	(*nc)++;
	g->depth_n[depth < 4 ? depth : 4]++;
	g->depth_total++;
}

/* Try to place a prefix of length len at nesting depth d. */
static int
tg_place_at(struct tg *g, tg_key base, struct tg_pfx *cur, size_t *nc, unsigned len, unsigned d,
	    tg_key *out)
{
	for (int t = 0; t < 24; t++) {
		const struct tg_pfx *par = NULL;
		size_t seen = 0;
		tg_key a;

		if (d) {
			/* a random parent one level up (reservoir sampling) */
			for (size_t i = 0; i < *nc && cur[i].plen < len; i++)
				if (cur[i].depth == d - 1 && rng_below(&g->r, ++seen) == 0)
					par = &cur[i];
			if (!par)
				return 0;
			a = par->a | tg_bits(g, par->plen, len);
		} else {
			a = base | tg_bits(g, g->block_len, len);
		}
		if (tg_depth(g, cur, *nc, a, len) != d || tg_exists(cur, *nc, a, len))
			continue;
		tg_cur_add(g, cur, nc, a, len, d);
		*out = a;
		return 1;
	}
	if (d == 0 && g->width == 32 && len <= 24) {
		/* dense IPv4 block: pick among the free aligned places */
		unsigned step = 1u << (24 - len), seen = 0, pick = 256;

		for (unsigned u = 0; u < 256; u += step)
			if (!memchr(&g->units[u], 1, step) && rng_below(&g->r, ++seen) == 0)
				pick = u;
		if (pick < 256) {
			tg_key a = base | ((tg_key)pick << 8);

			tg_cur_add(g, cur, nc, a, len, 0);
			*out = a;
			return 1;
		}
	}
	return 0;
}

/* Place one prefix of length len in the block; returns 1 and its key. */
static int
tg_place(struct tg *g, tg_key base, struct tg_pfx *cur, size_t *nc, unsigned len, tg_key *out)
{
	double w[5], total = 0, u;
	unsigned want = 0;

	/* draw the depth by how far each lags its target: placement falls
	 * back to deeper levels in dense blocks, and this makes up for it */
	for (unsigned d = 0; d < 5; d++) {
		w[d] = g->depth_w[d] * (double)(g->depth_total + 1) - (double)g->depth_n[d];
		if (w[d] < 0)
			w[d] = 0;
		total += w[d];
	}
	u = rng_double(&g->r) * total;
	for (want = 0; want < 4; want++) {
		if (u < w[want])
			break;
		u -= w[want];
	}
	/* the wanted depth, then shallower, then deeper ones */
	for (unsigned d = want + 1; d-- > 0;)
		if (tg_place_at(g, base, cur, nc, len, d, out))
			return 1;
	for (unsigned d = want + 1; d < 8; d++)
		if (tg_place_at(g, base, cur, nc, len, d, out))
			return 1;
	return 0;
}

static int
tg_block(struct tg *g, tg_key base, size_t k, struct tg_pfx *cur, uint8_t *lens)
{
	size_t cnt[129] = { 0 }, nc = 0, i = 0, k0 = 0;
	int err;

	memset(g->units, 0, sizeof(g->units));
	/* the block's own /16 (/32): mostly alone, rarer in big blocks */
	if (g->width == 32 ? rng_double(&g->r) < (k == 1 ? 0.86 : k <= 5 ? 0.39 : k <= 20 ? 0.26 : k <= 100 ? 0.16 : 0.09)
			   : rng_double(&g->r) < (k == 1 ? 0.88 : 0.48)) {
		cnt[g->block_len]++;
		k0 = 1;
	}
	for (size_t j = k0; j < k; j++)
		cnt[tg_draw_block_len(g, k)]++;
	for (unsigned l = 0; l <= g->width; l++)
		while (cnt[l]--)
			lens[i++] = l;
	for (i = 0; i < k;) {
		unsigned len = lens[i++], depth;
		tg_key a, step;

		if (!tg_place(g, base, cur, &nc, len, &a) || len != g->sib_len)
			continue;
		/* sibling pairs, and runs of pairs */
		step = (tg_key)1 << (g->width - len);
		while (i < k && lens[i] == len && rng_double(&g->r) < g->p_pair) {
			if (!tg_exists(cur, nc, a ^ step, len)) {
				tg_cur_add(g, cur, &nc, a ^ step, len, tg_depth(g, cur, nc, a ^ step, len));
				i++;
			}
			if (i >= k || lens[i] != len || rng_double(&g->r) >= g->p_run)
				break;
			/* a run is one allocation: it stays at its depth */
			depth = tg_depth(g, cur, nc, a, len);
			a = (a | step) + step;
			if ((a & tg_mask(g, g->block_len)) != base || tg_exists(cur, nc, a, len) ||
			    tg_depth(g, cur, nc, a, len) != depth)
				break;
			tg_cur_add(g, cur, &nc, a, len, depth);
			i++;
		}
	}
	for (i = 0; i < nc; i++)
		if ((err = tg_push(g, cur[i].a, cur[i].plen)) < 0)
			return err;
	return 0;
}

/*
 * Prefixes a block. IPv4 follows the tier-1 histogram of /16s (27 % hold
 * one prefix, 20 % 2-5, 20 % 6-20, 26 % 21-100, 7 % more), log-uniform
 * inside a class and a k^-3 tail above 100 (mean 146 there, as the
 * table). IPv6 is log-normal, truncated (drawn again) above the cap.
 */
static size_t
tg_block_size(struct tg *g)
{
	static const struct {
		double p, lo, hi;
	} cls[] = { { 0.27, 1, 1 }, { 0.197, 2, 5 }, { 0.203, 6, 20 }, { 0.259, 21, 100 } };

	if (g->width == 32) {
		double u = rng_double(&g->r), v = rng_double(&g->r), a, b;

		for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++) {
			if (u < cls[i].p)
				return (size_t)(g->scale * cls[i].lo * pow(cls[i].hi / cls[i].lo, v) + 0.5);
			u -= cls[i].p;
		}
		a = 1.0 / (101.0 * 101.0);
		b = 1.0 / (341.0 * 341.0);
		return (size_t)(g->scale / sqrt(a - v * (a - b)) + 0.5);
	}
	for (;;) {
		double x = exp(g->block_mu + g->block_sigma * tg_normal(g));
		size_t k = (size_t)(x + 0.5);

		if (k <= g->block_cap)
			return k < 1 ? 1 : k;
	}
}

static int
tg_short_find(const struct tg *g, tg_key a, unsigned len)
{
	size_t lo = 0, hi = g->nshort;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tg_pfx *m = &g->v[mid];

		if (m->a == a && m->plen == len)
			return 1;
		if (m->a < a || (m->a == a && m->plen < len))
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Is the block under one of the short prefixes? */
static int
tg_under_short(const struct tg *g, tg_key base)
{
	for (unsigned len = 1; len < g->block_len; len++)
		if (tg_short_find(g, base & tg_mask(g, len), len))
			return 1;
	return 0;
}

static int
tg_blocks(struct tg *g)
{
	struct tg_pfx *cur = malloc(g->block_cap * sizeof(*cur));
	uint8_t *lens = malloc(g->block_cap);
	unsigned fails = 0;
	int err = 0;

	if (!cur || !lens) {
		err = -ENOMEM;
		goto out;
	}
	while (g->n < g->p->n) {
		int under = g->nshort && rng_double(&g->r) < g->p_under_short;
		tg_key base;

		if (under) {
			const struct tg_pfx *s = &g->v[rng_below(&g->r, g->nshort)];

			base = s->a | tg_bits(g, s->plen, g->block_len);
		} else {
			/* aggregates mostly sit where few more-specifics are */
			for (int t = 0; t < 50; t++) {
				const struct tg_region *rg = tg_draw_region(g);

				base = rg->a | tg_bits(g, rg->len, g->block_len);
				if (!tg_under_short(g, base))
					break;
			}
		}
		if (tg_excluded(g, base, g->block_len) || !tg_claim(g, base)) {
			if (++fails > 20000) {
				err = -ENOSPC;
				goto out;
			}
			continue;
		}
		fails = 0;
		size_t k = tg_block_size(g);

		if (under) /* blocks under aggregates are smaller */
			k = (k + 1) / 2;
		if (k > g->block_cap)
			k = g->block_cap;
		if (k > g->p->n - g->n)
			k = g->p->n - g->n;
		if ((err = tg_block(g, base, k, cur, lens)) < 0)
			goto out;
	}
out:
	free(cur);
	free(lens);
	return err;
}

static unsigned
tg_draw_nh(struct tg *g)
{
	double u;
	unsigned n = g->p->nexthops;

	if (!n)
		return 0;
	if (n == 1 || rng_double(&g->r) < g->p->major_share)
		return 1;
	u = rng_double(&g->r) * g->nh_cdf[n - 2];
	for (unsigned i = 0; i < n - 1; i++)
		if (u < g->nh_cdf[i])
			return i + 2;
	return n;
}

static void
tg_nexthops(struct tg *g)
{
	size_t stack[130], depth = 0;

	for (size_t i = 0; i < g->n; i++) {
		struct tg_pfx *p = &g->v[i];

		while (depth && !tg_covers(g, g->v[stack[depth - 1]].a, g->v[stack[depth - 1]].plen,
					   p->a, p->plen))
			depth--;
		/* with chance draws that land on the same hop, about 86 % */
		if (depth && rng_double(&g->r) < 0.74)
			p->nh = g->v[stack[depth - 1]].nh;
		else
			p->nh = tg_draw_nh(g);
		stack[depth++] = i;
	}
}

static void
tg_addr(const struct tg *g, tg_key a, union fib_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (g->width == 32) {
		out->v4.s_addr = htonl((uint32_t)a);
	} else {
		for (int i = 15; i >= 0; i--, a >>= 8)
			out->b[i] = (uint8_t)a;
	}
}

static int
tg_output(struct tg *g, struct routes *out)
{
	int family = g->p->family, err;

	for (size_t i = 0; i < g->n; i++) {
		union fib_addr dst, gw;

		tg_addr(g, g->v[i].a, &dst);
		memset(&gw, 0, sizeof(gw));
		if (g->v[i].nh) {
			/*
			 * Peers 10.0.0.2, 10.0.0.3, ... (IPv4) or 2001:db8::2, ...
			 * (IPv6): never .1 / ::1, the namespace tests' own address,
			 * which the kernel refuses as a gateway.
			 */
			if (family == AF_INET)
				gw.v4.s_addr = htonl(0x0a000001u + g->v[i].nh);
			else
				tg_addr(g, tg_key6(0x2001, 0x0db8) | (g->v[i].nh + 1u), &gw);
		}
		err = routes_add(out, family, &dst, g->v[i].plen, g->v[i].nh ? family : 0, &gw,
				 (uint32_t)(i + 1));
		if (err < 0)
			return err;
	}
	return 0;
}

void
tablegen_params_default(struct tablegen_params *p, int family)
{
	memset(p, 0, sizeof(*p));
	p->family = family;
	p->n = family == AF_INET6 ? 200000 : 1000000;
	p->seed = 1;
	p->nexthops = 24;
	p->major_share = 0.7;
}

int
tablegen_make(const struct tablegen_params *p, struct routes *out)
{
	struct tg g;
	size_t size = 1024;
	int err = -ENOMEM;

	if ((p->family != AF_INET && p->family != AF_INET6) || p->nexthops > 65534 ||
	    p->major_share < 0 || p->major_share > 1)
		return -EINVAL;
	memset(&g, 0, sizeof(g));
	g.p = p;
	rng_seed(&g.r, p->seed);
	tg_setup(&g);
	g.scale = 1;
	if (g.width == 32 && p->n > 1100000) {
		/* about 56,000 usable /16s: beyond 1.1M routes fill them more */
		g.scale = (double)p->n / 1100000.0;
		g.block_cap = (size_t)(341 * g.scale) < 511 ? (size_t)(341 * g.scale) : 511;
	}
	while (size < p->n * 2)
		size *= 2;
	g.used = calloc(size, sizeof(*g.used));
	g.used_mask = size - 1;
	g.nh_cdf = calloc(p->nexthops + 1, sizeof(*g.nh_cdf));
	if (!g.used || !g.nh_cdf)
		goto out;
	for (unsigned i = 0; i + 1 < p->nexthops; i++)
		g.nh_cdf[i] = (i ? g.nh_cdf[i - 1] : 0) + 1.0 / (i + 1);
	err = tg_shorts(&g, (size_t)(p->n * g.w_short / (g.w_short + g.w_block) + 0.5));
	if (!err)
		err = tg_blocks(&g);
	if (err)
		goto out;
	while (g.n > p->n) /* only when n is below the short prefixes' count */
		g.n--;
	if (g.n)
		qsort(g.v, g.n, sizeof(*g.v), tg_pfx_cmp);
	tg_nexthops(&g);
	err = tg_output(&g, out);
out:
	free(g.v);
	free(g.used);
	free(g.nh_cdf);
	return err;
}

static int
tablegen_covers(const struct fib_route *a, const struct fib_route *b)
{
	if (a->plen > b->plen)
		return 0;
	for (unsigned bit = 0; bit < a->plen; bit++)
		if ((a->dst.b[bit / 8] ^ b->dst.b[bit / 8]) & (0x80 >> (bit % 8)))
			return 0;
	return 1;
}

int
tablegen_stats(const struct routes *rt, struct tablegen_stats *st)
{
	size_t stack[130], depth = 0, block_n = 0, *nhc;
	unsigned alen = rt->family == AF_INET ? 4 : 16, bl = alen == 4 ? 16 : 32;
	unsigned rl = alen == 4 ? 8 : 12;
	struct fib_route pblk, preg;
	int have_blk = 0, have_reg = 0;
	struct routes_index ix;

	memset(st, 0, sizeof(*st));
	st->n = rt->n;
	st->sib_len = alen == 4 ? 24 : 48;
	nhc = calloc(65536, sizeof(*nhc));
	if (!nhc || routes_index_build(&ix, rt) < 0) {
		free(nhc);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rt->n; i++) {
		const struct fib_route *r = &rt->r[i];
		union fib_addr sib;
		size_t d;

		st->by_len[r->plen]++;
		if (i && routes_cmp(&rt->r[i - 1], r) >= 0)
			st->unsorted++;
		while (depth && !tablegen_covers(&rt->r[stack[depth - 1]], r))
			depth--;
		d = depth < 4 ? depth : 4;
		st->depth[d]++;
		if (depth) {
			const struct fib_route *par = &rt->r[stack[depth - 1]];

			if (par->nh_count == r->nh_count &&
			    (!r->nh_count || !memcmp(par->nh[0].gw.b, r->nh[0].gw.b, 16)))
				st->covered_same++;
		}
		stack[depth++] = i;
		if (r->nh_count)
			nhc[(r->nh[0].gw.b[alen - 2] << 8 | r->nh[0].gw.b[alen - 1]) & 0xffff]++;
		else
			nhc[0]++;
		if (r->plen >= bl) {
			struct fib_route blk = *r;

			blk.plen = bl;
			if (!have_blk || !tablegen_covers(&pblk, &blk)) {
				st->blocks++;
				block_n = 0;
				pblk = blk;
				have_blk = 1;
			}
			if (++block_n > st->block_max)
				st->block_max = block_n;
		}
		if (r->plen >= rl) {
			struct fib_route reg = *r;

			reg.plen = rl;
			if (!have_reg || !tablegen_covers(&preg, &reg)) {
				st->regions++;
				preg = reg;
				have_reg = 1;
			}
		}
		if (r->plen == st->sib_len) {
			unsigned bit = r->plen - 1;

			st->sib_total++;
			sib = r->dst;
			sib.b[bit / 8] ^= 0x80 >> (bit % 8);
			if (routes_index_find(&ix, &sib, r->plen) >= 0)
				st->sib_paired++;
		}
	}
	for (size_t i = 0; i < 65536; i++)
		if (nhc[i] > st->nh_major)
			st->nh_major = nhc[i];
	routes_index_free(&ix);
	free(nhc);
	return 0;
}
