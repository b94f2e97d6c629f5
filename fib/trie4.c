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
 * wrapper call between.
 */
A_CLONES struct fib_result
fib_lookup4_rcu(const struct fib *fib, uint32_t table, uint32_t addr)
{
	return trie4_lookup_in(fib->t4, addr, table, 0);
}
