/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the kernel's multipath hash (see mphash.h)
 *
 * Step 1 fills a struct that has the byte layout of the kernel's struct
 * flow_keys (the asserts below pin every offset the hash reads), step 2
 * sorts it as __flow_hash_consistentify does, step 3 runs SipHash-2-4
 * over it as lib/siphash.c does (little-endian 64-bit words, the length
 * in the top byte of the last block), step 4 applies what the caller of
 * flow_hash_from_keys_seed adds (0 -> 1, jhash_2words for IPv4 policy 3,
 * >> 1).
 *
 * The struct is filled in host order as the kernel fills its own: the
 * comparisons of step 2 are on the raw (network-order) bytes read as
 * host-order integers, as the kernel's `(__force u32)` casts do, so the
 * result matches the kernel running on the same host.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "fib/mphash.h"

/* include/net/flow_dissector.h, struct flow_keys */
struct mp_flow_keys {
	/* control: not hashed */
	uint16_t thoff;
	uint16_t addr_type;
	uint32_t flags;
	/* basic: FLOW_KEYS_HASH_START_FIELD, __aligned(SIPHASH_ALIGNMENT) */
	uint16_t n_proto __attribute__((aligned(8)));
	uint8_t ip_proto;
	uint8_t basic_pad;
	uint32_t flow_label; /* tags */
	uint8_t vlan[8];
	uint8_t cvlan[8];
	uint32_t keyid;
	uint16_t sport, dport; /* ports, network order */
	uint8_t icmp[4];       /* type, code, id */
	union {
		struct {
			uint32_t src, dst;
		} v4;
		struct {
			uint32_t src[4], dst[4]; /* struct in6_addr: 4-byte aligned */
		} v6;
	} addrs; /* must be last */
};

#define MP_KEYS_START offsetof(struct mp_flow_keys, n_proto)
_Static_assert(MP_KEYS_START == 8, "flow_keys: basic at 8");
_Static_assert(offsetof(struct mp_flow_keys, ip_proto) == 10, "flow_keys: ip_proto at 10");
_Static_assert(offsetof(struct mp_flow_keys, flow_label) == 12, "flow_keys: tags at 12");
_Static_assert(offsetof(struct mp_flow_keys, sport) == 36, "flow_keys: ports at 36");
_Static_assert(offsetof(struct mp_flow_keys, addrs) == 44, "flow_keys: addrs at 44");
_Static_assert(sizeof(struct mp_flow_keys) == 80, "flow_keys: 80 bytes");

/* flow_keys_hash_length(): from `basic` to the end, less the unused part
 * of the address union */
static size_t
mp_keys_len(int family)
{
	size_t addrs = sizeof(((struct mp_flow_keys *)0)->addrs);
	size_t used = family == AF_INET ? 8 : 32;

	return sizeof(struct mp_flow_keys) - (MP_KEYS_START + addrs - used);
}

static inline uint64_t
rol64(uint64_t w, unsigned s)
{
	return (w << s) | (w >> (64 - s));
}

static inline uint32_t
rol32(uint32_t w, unsigned s)
{
	return (w << s) | (w >> (32 - s));
}

static inline uint64_t
le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

#define SIPROUND                                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = rol64(v1, 13);                                                                \
		v1 ^= v0;                                                                          \
		v0 = rol64(v0, 32);                                                                \
		v2 += v3;                                                                          \
		v3 = rol64(v3, 16);                                                                \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = rol64(v3, 21);                                                                \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = rol64(v1, 17);                                                                \
		v1 ^= v2;                                                                          \
		v2 = rol64(v2, 32);                                                                \
	} while (0)

/* lib/siphash.c, siphash(): SipHash-2-4 with a 128-bit key k0, k1 */
static uint64_t
mp_siphash(const uint8_t *data, size_t len, uint64_t k0, uint64_t k1)
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
	uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
	uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
	uint64_t v3 = 0x7465646279746573ULL ^ k1;
	uint64_t b = (uint64_t)len << 56;
	size_t i, left = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t m = le64(data + i);

		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	while (left--)
		b |= (uint64_t)data[i + left] << (8 * left);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return (v0 ^ v1) ^ (v2 ^ v3);
}

/* include/linux/jhash.h, jhash_2words(a, b, initval) */
static uint32_t
mp_jhash_2words(uint32_t a, uint32_t b, uint32_t initval)
{
	uint32_t c;

	a += 0xdeadbeef + (2 << 2) + initval;
	b += 0xdeadbeef + (2 << 2) + initval;
	c = 0xdeadbeef + (2 << 2) + initval;
	c ^= b;
	c -= rol32(b, 14);
	a ^= c;
	a -= rol32(c, 11);
	b ^= a;
	b -= rol32(a, 25);
	c ^= b;
	c -= rol32(b, 16);
	a ^= c;
	a -= rol32(c, 4);
	b ^= a;
	b -= rol32(a, 14);
	c ^= b;
	c -= rol32(b, 24);
	return c;
}

/* net/core/flow_dissector.c, __flow_hash_consistentify */
static void
mp_consistentify(struct mp_flow_keys *k, int family)
{
	uint16_t p;
	int i;

	if (family == AF_INET) {
		if (k->addrs.v4.dst < k->addrs.v4.src) {
			uint32_t t = k->addrs.v4.src;

			k->addrs.v4.src = k->addrs.v4.dst;
			k->addrs.v4.dst = t;
		}
	} else if (memcmp(k->addrs.v6.dst, k->addrs.v6.src, 16) < 0) {
		for (i = 0; i < 4; i++) {
			uint32_t t = k->addrs.v6.src[i];

			k->addrs.v6.src[i] = k->addrs.v6.dst[i];
			k->addrs.v6.dst[i] = t;
		}
	}
	if (k->dport < k->sport) {
		p = k->sport;
		k->sport = k->dport;
		k->dport = p;
	}
}

/* __flow_hash_from_keys with the key of fib_multipath_hash_construct_key */
static uint32_t
mp_hash_keys(struct mp_flow_keys *k, int family, uint32_t seed)
{
	uint64_t key = (uint64_t)seed << 32 | seed;
	uint32_t hash;

	mp_consistentify(k, family);
	hash =
	    (uint32_t)mp_siphash((const uint8_t *)k + MP_KEYS_START, mp_keys_len(family), key, key);
	return hash ? hash : 1;
}

static void
mp_set_addrs(struct mp_flow_keys *k, int family, const union fib_addr *src,
	     const union fib_addr *dst)
{
	if (family == AF_INET) {
		if (src)
			memcpy(&k->addrs.v4.src, src->b, 4);
		if (dst)
			memcpy(&k->addrs.v4.dst, dst->b, 4);
	} else {
		if (src)
			memcpy(k->addrs.v6.src, src->b, 16);
		if (dst)
			memcpy(k->addrs.v6.dst, dst->b, 16);
	}
}

/*
 * IPv4, as inet_rtm_getroute's packet is hashed: fib_multipath_hash with
 * an skb (policies 0 and 2 through ip_multipath_l3_keys, 1 and 3 through
 * the flow dissector: ports of TCP and UDP only).
 */
static uint32_t
mp_hash4(const struct fib_mp_hash *h, const struct fib_flow *fl, const union fib_addr *saddr)
{
	struct mp_flow_keys k;
	uint8_t proto = fl->ipproto ? fl->ipproto : IPPROTO_UDP;
	int l4 = proto == IPPROTO_TCP || proto == IPPROTO_UDP;
	uint16_t sport = l4 ? htons(fl->sport) : 0;
	uint16_t dport = l4 ? htons(fl->dport) : 0;
	uint32_t f = h->fields4, mhash;

	memset(&k, 0, sizeof(k));
	switch (h->policy4) {
	case 0:
	case 2:
		mp_set_addrs(&k, AF_INET, saddr, &fl->dst);
		mhash = mp_hash_keys(&k, AF_INET, h->seed);
		break;
	case 1:
		mp_set_addrs(&k, AF_INET, saddr, &fl->dst);
		k.ip_proto = proto;
		k.sport = sport;
		k.dport = dport;
		mhash = mp_hash_keys(&k, AF_INET, h->seed);
		break;
	case 3:
		/* fib_multipath_custom_hash_skb: jhash_2words(outer, inner, 0);
		 * inner is 0 without an encapsulation */
		mhash = 0;
		if (f & FIB_MPHASH_F_OUTER_MASK) {
			mp_set_addrs(&k, AF_INET, f & FIB_MPHASH_F_SRC_IP ? saddr : NULL,
				     f & FIB_MPHASH_F_DST_IP ? &fl->dst : NULL);
			if (f & FIB_MPHASH_F_IP_PROTO)
				k.ip_proto = proto;
			if (f & FIB_MPHASH_F_SRC_PORT)
				k.sport = sport;
			if (f & FIB_MPHASH_F_DST_PORT)
				k.dport = dport;
			mhash = mp_hash_keys(&k, AF_INET, h->seed);
		}
		mhash = mp_jhash_2words(mhash, 0, 0);
		break;
	default:
		return 0;
	}
	return mhash >> 1;
}

/* IPv6, as inet6_rtm_getroute's flowi6 is hashed: rt6_multipath_hash
 * without an skb */
static uint32_t
mp_hash6(const struct fib_mp_hash *h, const struct fib_flow *fl, const union fib_addr *saddr)
{
	struct mp_flow_keys k;
	uint32_t label = htonl(fl->flowlabel & 0xfffff);
	uint32_t f = h->fields6, mhash;

	memset(&k, 0, sizeof(k));
	switch (h->policy6) {
	case 0:
	case 2:
		mp_set_addrs(&k, AF_INET6, saddr, &fl->dst);
		k.flow_label = label;
		k.ip_proto = fl->ipproto;
		break;
	case 1:
		mp_set_addrs(&k, AF_INET6, saddr, &fl->dst);
		k.sport = htons(fl->sport);
		k.dport = htons(fl->dport);
		k.ip_proto = fl->ipproto;
		break;
	case 3:
		/* rt6_multipath_custom_hash_fl6 */
		if (!(f & FIB_MPHASH_F_OUTER_MASK))
			return 0;
		mp_set_addrs(&k, AF_INET6, f & FIB_MPHASH_F_SRC_IP ? saddr : NULL,
			     f & FIB_MPHASH_F_DST_IP ? &fl->dst : NULL);
		if (f & FIB_MPHASH_F_IP_PROTO)
			k.ip_proto = fl->ipproto;
		if (f & FIB_MPHASH_F_FLOWLABEL)
			k.flow_label = label;
		if (f & FIB_MPHASH_F_SRC_PORT)
			k.sport = htons(fl->sport);
		if (f & FIB_MPHASH_F_DST_PORT)
			k.dport = htons(fl->dport);
		break;
	default:
		return 0;
	}
	mhash = mp_hash_keys(&k, AF_INET6, h->seed);
	return mhash >> 1;
}

uint32_t
fib_mphash(const struct fib_mp_hash *h, const struct fib_flow *fl, const union fib_addr *saddr)
{
	union fib_addr any;

	if (!saddr) {
		memset(&any, 0, sizeof(any));
		saddr = &any;
	}
	if (fl->family == AF_INET)
		return mp_hash4(h, fl, saddr);
	if (fl->family == AF_INET6)
		return mp_hash6(h, fl, saddr);
	return 0;
}

unsigned
fib_mphash_select(uint32_t hash, const uint16_t *weight, unsigned n)
{
	uint64_t total = 0, w = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		total += weight[i];
	for (i = 0; i < n; i++) {
		int64_t ub;

		w += weight[i];
		/* fib_rebalance: DIV_ROUND_CLOSEST_ULL((u64)w << 31, total) - 1 */
		ub = (int64_t)(((w << 31) + total / 2) / total) - 1;
		if ((int64_t)hash <= ub)
			return i;
	}
	return n ? n - 1 : 0;
}
