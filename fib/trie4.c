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
