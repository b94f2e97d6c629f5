/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the kernel's multipath hash, as a pure function
 *
 * fib_mphash() computes the value Linux compares against the next hops'
 * upper bounds when it picks one path of an ECMP route, so that fibd
 * picks the path `ip route get` shows once the hash seed is pinned
 * (net.ipv4.fib_multipath_hash_seed, kernel >= 6.11; IPv6 reads the same
 * IPv4 sysctl: there is no IPv6 seed knob). With the seed left at 0 the
 * kernel uses a random boot-time seed and no one can reproduce its choice.
 *
 * Where it comes from (Linux 6.18):
 *   net/ipv4/route.c      fib_multipath_hash, fib_multipath_custom_hash_*
 *   net/ipv6/route.c      rt6_multipath_hash, rt6_multipath_custom_hash_fl6
 *   include/net/ip_fib.h  fib_multipath_hash_from_keys and
 *                         fib_multipath_hash_construct_key: the siphash key
 *                         is k0 = k1 = (u64)seed << 32 | seed
 *   net/core/flow_dissector.c  flow_hash_from_keys_seed ->
 *                         __flow_hash_from_keys: __flow_hash_consistentify
 *                         (addresses sorted, ports sorted, each on its own),
 *                         siphash over struct flow_keys from `basic` on,
 *                         0 becomes 1
 *   lib/siphash.c         SipHash-2-4, 64-bit output truncated to 32 bits
 *   include/linux/jhash.h jhash_2words (IPv4 policy 3, below)
 * and the result is shifted right by one: 31 bits, compared with
 * `hash <= upper_bound` where, in fib_rebalance / rt6_upper_bound_set,
 * upper_bound[i] = DIV_ROUND_CLOSEST((u64)(w_0 + ... + w_i) << 31, total) - 1.
 *
 * struct flow_keys (x86_64 and every 64-bit ABI; SIPHASH_ALIGNMENT 8):
 *
 *   0 control (thoff, addr_type, flags)    not hashed
 *   8 basic: n_proto(2) ip_proto(1) pad(1) <- hash starts here
 *  12 tags.flow_label (be32, 20 bits)
 *  16 vlan(8)  24 cvlan(8)  32 keyid(4)
 *  36 ports: src(be16) dst(be16)
 *  40 icmp(4)
 *  44 addrs: v4 src,dst (8) | v6 src,dst (32)
 *  80 end (aligned to 8)
 *
 * hashed length = sizeof - (8 + 32 - sizeof(addresses)): 48 bytes for
 * IPv4 (the tail 52..56 zero), 72 for IPv6 (76..80 zero). Every field the
 * policy does not take is zero (the kernel memsets its hash_keys).
 *
 * Per family and policy (h->policy4 / h->policy6), for a flow as `ip
 * route get` describes it (struct fib_flow):
 *
 *   0 L3:       saddr, daddr; IPv6 also the flow label and ip_proto.
 *   1 L4:       saddr, daddr, ip_proto, sport, dport.
 *   2 L3 inner: as 0 (a flow described by struct fib_flow carries no
 *               encapsulated header; for encapsulated packets the kernel
 *               hashes the inner header, which fibd never sees).
 *   3 custom:   the outer fields of h->fields4 / h->fields6
 *               (FIB_MPHASH_F_*; flow label for IPv6 only); the inner
 *               fields count for nothing (no encapsulation). No outer
 *               field: the kernel's hash is a constant, every flow takes
 *               the same path.
 *
 * What `ip route get` hands the hash, and so what fib_mphash does:
 *
 * - IPv4: inet_rtm_getroute builds a packet (struct iphdr + UDP/TCP/ICMP
 *   echo header) and the kernel hashes that packet (ip_multipath_l3_keys,
 *   the flow dissector). So: ip_proto is UDP (17) when the request names
 *   none (fl->ipproto 0 is read as 17); the ports count only for TCP and
 *   UDP (the packet has no other L4 header; the dissector reads 0); and
 *   policy 3 goes through fib_multipath_custom_hash_skb, which returns
 *   jhash_2words(outer, inner = 0, 0) instead of the outer hash itself.
 *   Forwarded packets take the same path (ip_mkroute_input hashes the
 *   skb), except that real SCTP/DCCP/UDP-Lite/ESP packets have ports the
 *   dissector reads, which `ip route get` cannot express.
 * - IPv6: inet6_rtm_getroute does not build a packet: the flowi6 is
 *   hashed (ip_proto 0 when none is named, the ports as given whatever
 *   the protocol, the flow label of RTA_FLOWLABEL, Linux >= 6.15) and
 *   policy 3 is the outer hash itself, without jhash_2words.
 *
 * tests/integration/mphash_kernel.sh checks all of the above against
 * Linux 6.18: 14,000 random flows (both families, policies 0 to 3, two
 * seeds, output flows with and without a source, input flows, IPv6 flow
 * labels), every one on the kernel's path.
 *
 * Not reproduced (no struct fib_flow input carries them): locally
 * generated IPv4 traffic with policy 3 (ip_route_output_flow passes no skb:
 * the outer hash without jhash_2words), forwarded IPv6 traffic with policy
 * 3 (ip6_route_input passes the skb: with jhash_2words), ICMP errors (the
 * kernel hashes the embedded header), sockets' FLOWI_FLAG_ANY_SPORT
 * (a random source port), flowi4_multipath_hash (set by tunnels), an skb
 * that already carries an L4 hash (policy 1 then uses skb->hash), and
 * next-hop objects (`nhid`: nexthop_select_path, hash-threshold groups
 * compare the same value against their own bounds, resilient groups use
 * buckets).
 *
 * saddr, the source address hashed: the caller decides.
 * - With `from` (fl->src), it is fl->src.
 * - Output flows without `from` (`ip route get ADDR`): 0.0.0.0 / ::.
 *   fib_select_path runs before the source is chosen (fl4->saddr and
 *   the IPv4 packet's saddr are 0; IPv6 fl6.saddr is ::), so the kernel
 *   hashes the unspecified address, not the preferred source it reports
 *   afterwards. Checked against Linux 6.18 by
 *   tests/integration/mphash_kernel.sh: hashing the preferred source
 *   instead moves 65 of 100 such flows (IPv4) and 64 of 100 (IPv6) off
 *   the kernel's path, as many as a wrong hash would. A socket's own later
 *   lookups (connect, then the chosen source) hash the chosen source:
 *   that is a different flow.
 * - Input flows (`iif`): the packet's source.
 *
 * Path selection is the caller's (fib_mphash_select is the plain rule).
 * Both families skip dead next hops, link-down ones under
 * ignore_routes_with_linkdown, and IPv4 those without a valid neighbour
 * under net.ipv4.fib_multipath_use_neigh. IPv4 output flows with a
 * source (fl4->saddr set: `from`; not input flows) go through Linux
 * 6.18's fib_select_multipath, which scores each live next hop 2 if its
 * nh_saddr (the source the kernel picked for that next hop's device and
 * gateway) equals the flow's source, plus 1 if hash <= its upper bound,
 * and takes the first of the highest score: the plain rule whenever all
 * or none of the next hops have that nh_saddr. Checked on 200 flows from
 * 10.0.0.1 over next hops on two devices, 10.0.0.1/24 and 10.2.0.1/24:
 * the score rule gave the kernel's path for all 200, the plain rule for
 * 111. IPv6 has no such preference.
 *
 * fib_mphash is internal to libfib (hidden visibility: not exported,
 * not in debian/libfib0.symbols); tests compile fib/mphash.c themselves.
 * Context: any. No I/O, no globals, no allocation.
 */
#ifndef FIB_MPHASH_H
#define FIB_MPHASH_H

#include <stdint.h>

#include "fib/fib.h"
#include "fib/policy.h"

/* fib_multipath_hash_fields bits (include/net/ip_fib.h) */
#define FIB_MPHASH_F_SRC_IP	0x0001
#define FIB_MPHASH_F_DST_IP	0x0002
#define FIB_MPHASH_F_IP_PROTO	0x0004
#define FIB_MPHASH_F_FLOWLABEL	0x0008
#define FIB_MPHASH_F_SRC_PORT	0x0010
#define FIB_MPHASH_F_DST_PORT	0x0020
#define FIB_MPHASH_F_OUTER_MASK 0x003f
#define FIB_MPHASH_F_INNER_MASK 0x0fc0
#define FIB_MPHASH_F_DEFAULT	0x0007 /* the sysctls' default */

/*
 * The kernel's multipath hash of fl (31 bits: already `>> 1`), for
 * fl->family AF_INET or AF_INET6 under h->policy4/6, h->fields4/6 and
 * h->seed; saddr is the source address hashed (see above). Returns 0 for
 * another family or an unknown policy. Context: any.
 */
__attribute__((visibility("hidden"))) uint32_t
fib_mphash(const struct fib_mp_hash *h, const struct fib_flow *fl, const union fib_addr *saddr);

/*
 * The index of the path the kernel picks among n paths of the given
 * weights (1..256, in the kernel's order) for a hash from fib_mphash:
 * the first path whose upper bound (fib_rebalance) is >= hash. Live
 * paths only; no source-address preference. Returns 0 for n 0.
 * Context: any.
 */
__attribute__((visibility("hidden"))) unsigned
fib_mphash_select(uint32_t hash, const uint16_t *weight, unsigned n);

#endif
