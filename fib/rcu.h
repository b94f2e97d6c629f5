/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: the one place liburcu is included
 *
 * Flavour: urcu-memb. Its read-side lock is a thread-local counter update
 * with no memory barrier (the writer pays with sys_membarrier), it needs no
 * signal (unlike urcu-signal, which would steal a signal from programs that
 * embed libfib) and no periodic quiescent-state calls (unlike urcu-qsbr,
 * whose readers must announce quiescence: a burden on every embedding
 * program and on blocking lookup threads). Readers register once per
 * thread with fib_thread_online().
 */
#ifndef FIB_RCU_H
#define FIB_RCU_H

/* Inline the read-side fast path (BSD code may use the LGPL inlines). */
#ifndef _LGPL_SOURCE
#define _LGPL_SOURCE
#endif
#include <urcu/urcu-memb.h>
#include <urcu/call-rcu.h>
#include <urcu/pointer.h>
#include <urcu/uatomic.h>
#include <urcu/compiler.h>

#endif
