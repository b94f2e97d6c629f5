/* SPDX-License-Identifier: BSD-2-Clause */
/* DOC: the IPv6 instance of the LC-trie: 128-bit keys (see trie_impl.h). */
#include "config.h"

#define TRIE_PREFIX trie6
#define TRIE_KEY trie6_key
#define TRIE_KEYBITS 128
#include "fib/trie_impl.h"
#include "fib/accel6_impl.h"
#include "fib/accel_set.h"
