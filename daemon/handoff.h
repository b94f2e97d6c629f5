/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: handoff, lend the FIB to a thread and take it back on the loop
 *
 * The FIB has one writer at a time: the main loop, or a thread it lends
 * the FIB to for a long job (the first load, a compaction pass) so that
 * the loop keeps answering. A handoff runs work(arg) on a new thread,
 * registered as an RCU thread and the FIB's writer meanwhile, then
 * done(arg) back on the main loop once the thread is joined:
 *
 *   main loop: handoff_run --pthread_create--> thread: work(arg)
 *                                               eventfd write
 *   main loop: eventfd readable -> pthread_join -> done(arg)
 *
 * The caller sets work's inputs before handoff_run and reads its results
 * in done, nothing in between: the thread and the join order them. One
 * job at a time per handoff.
 */
#ifndef FIBD_HANDOFF_H
#define FIBD_HANDOFF_H

struct event_base;
struct handoff;

typedef void (*handoff_cb)(void *arg);

/* A handoff whose jobs run work and then done, or NULL (errno).
 * Context: main loop. */
struct handoff *handoff_new(struct event_base *base, handoff_cb work, handoff_cb done, void *arg);

/*
 * Start work on a new thread; done follows on the main loop. Returns 0,
 * or -errno when no thread could be created (nothing ran: the caller may
 * handoff_run_here). Context: main loop, the FIB's writer, no job running.
 */
int handoff_run(struct handoff *h);

/* Run work, then done, on the calling thread. Context: main loop, the
 * FIB's writer, no job running. */
void handoff_run_here(struct handoff *h);

/* 1 while a thread runs work (until its done is called). Context: main loop. */
int handoff_running(const struct handoff *h);

/* Wait for a running work without calling done (shutdown). Returns 1 if
 * one ran. Context: main loop. */
int handoff_join(struct handoff *h);

/* Join a running work, free. Context: main loop. */
void handoff_free(struct handoff *h);

#endif
