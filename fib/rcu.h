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

/*
 * Inline the read-side fast path (BSD code may use the LGPL inlines),
 * except under ThreadSanitizer: there the library's uninstrumented calls
 * keep liburcu's internals out of the reports, and the grace period is
 * described to TSAN instead: every read section ends with a release on
 * fib_tsan_grace, every batch is freed after an acquire on it.
 */
#ifdef __SANITIZE_THREAD__
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
extern char fib_tsan_grace;
#define FIB_TSAN_READ_END() __tsan_release(&fib_tsan_grace)
#define FIB_TSAN_GRACE_END() __tsan_acquire(&fib_tsan_grace)
/* call_rcu's queue is uninstrumented too: hand-off and pick-up */
#define FIB_TSAN_HANDOFF(p) __tsan_release(p)
#define FIB_TSAN_PICKUP(p) __tsan_acquire(p)
#else
#ifndef _LGPL_SOURCE
#define _LGPL_SOURCE
#endif
#define FIB_TSAN_READ_END() do { } while (0)
#define FIB_TSAN_GRACE_END() do { } while (0)
#define FIB_TSAN_HANDOFF(p) do { } while (0)
#define FIB_TSAN_PICKUP(p) do { } while (0)
#endif
#include <urcu/urcu-memb.h>
#include <urcu/call-rcu.h>
#include <urcu/pointer.h>
#include <urcu/uatomic.h>
#include <urcu/compiler.h>

#endif
