/* SPDX-License-Identifier: BSD-2-Clause */
/* DOC: the IPv4 instance of the LC-trie: 32-bit keys (see trie_impl.h). */
#include "config.h"

#define TRIE_PREFIX trie4
#define TRIE_KEY trie4_key
#define TRIE_KEYBITS 32
#include "fib/trie_impl.h"
#ifdef FIB_ACCEL4_POPTRIE
#include "fib/accel_impl.h"
#else
#include "fib/accel4_impl.h"
#endif
#include "fib/accel_set.h"

/*
 * The public single IPv4 lookup lives with the trie rather than in fib.c:
 * the lookup is inlined into it, and its CPU's copy is chosen once at
 * load time, so that a call is one jump into the lookup itself, with no
 * wrapper call between. Only the main table's compiled table is on the
 * inlined path; anything else (another table, an answer left to the
 * trie) is a tail call with the caller's arguments as they came, so the
 * hot path moves no argument and keeps no stack frame.
 */
/* The main table's compiled answer for addr (A: that table), or A_ASK
 * when it has none (another table, or an answer left to the trie). */
static inline __attribute__((always_inline)) aword
lookup4_word(const struct fib *fib, uint32_t table, uint32_t addr, const struct accel **A)
{
	*A = T_LOAD(fib->t4->accel[0]);
	if (__builtin_expect(!*A || !a_serves(*A, table), 0))
		return A_ASK;
	return a_lookup(*A, addr);
}

/* Every other case, as the generic lookup answers it. */
static __attribute__((noinline, cold)) struct fib_result
lookup4_other(const struct fib *fib, uint32_t table, uint32_t addr)
{
	return trie4_lookup_in(fib->t4, addr, table, 0);
}

static __attribute__((noinline, cold)) uint32_t
lookup4_ref_other(const struct fib *fib, uint32_t table, uint32_t addr)
{
	return trie4_ref_of(fib->t4, trie4_lookup_in(fib->t4, addr, table, 0));
}

A_CLONES struct fib_result
fib_lookup4_rcu(const struct fib *fib, uint32_t table, uint32_t addr)
{
	const struct accel *A;
	aword v = lookup4_word(fib, table, addr, &A);
	struct fib_result res;

	if (__builtin_expect(v == A_ASK, 0))
		return lookup4_other(fib, table, addr);
	a_result(A, v, &res);
	return res;
}

/* The same by route reference: the compiled table's word is the
 * reference (TN(ref_of)), so the answer is returned as read. */
A_CLONES uint32_t
fib_lookup4_ref_rcu(const struct fib *fib, uint32_t table, uint32_t addr)
{
	const struct accel *A;
	aword v = lookup4_word(fib, table, addr, &A);

	if (__builtin_expect(v == A_ASK, 0))
		return lookup4_ref_other(fib, table, addr);
	return v;
}
