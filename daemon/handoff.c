/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: handoff.c, lend the FIB to a thread and take it back on the loop
 *
 * See handoff.h. The thread's end reaches the loop through an eventfd (one
 * write per job, so it cannot overflow) watched by a persistent event, as
 * doc/style.md, item 5 asks: threads never touch the loop's state.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <event2/event.h>

#include "fib/fib.h"
#include "daemon/handoff.h"

struct handoff {
	pthread_t thread;
	int running;
	int efd;
	struct event *ev;
	handoff_cb work, done;
	void *arg;
};

static void *
handoff_main(void *arg)
{
	struct handoff *h = arg;
	uint64_t one = 1;

	fib_thread_online();
	h->work(h->arg);
	fib_thread_offline();
	if (write(h->efd, &one, sizeof(one)) < 0) {
		/* the eventfd cannot overflow with one write per job */
	}
	return NULL;
}

static void
handoff_done(evutil_socket_t fd, short what, void *arg)
{
	struct handoff *h = arg;
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 || !h->running)
		return;
	pthread_join(h->thread, NULL);
	h->running = 0;
	h->done(h->arg);
}

struct handoff *
handoff_new(struct event_base *base, handoff_cb work, handoff_cb done, void *arg)
{
	struct handoff *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return NULL;
	h->work = work;
	h->done = done;
	h->arg = arg;
	h->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->efd < 0)
		goto fail;
	h->ev = event_new(base, h->efd, EV_READ | EV_PERSIST, handoff_done, h);
	if (!h->ev || event_add(h->ev, NULL) < 0)
		goto fail;
	return h;
fail:
	err = errno ? errno : ENOMEM;
	handoff_free(h);
	errno = err;
	return NULL;
}

int
handoff_run(struct handoff *h)
{
	int err;

	h->running = 1;
	err = pthread_create(&h->thread, NULL, handoff_main, h);
	if (err) {
		h->running = 0;
		return -err;
	}
	return 0;
}

void
handoff_run_here(struct handoff *h)
{
	h->work(h->arg);
	h->done(h->arg);
}

int
handoff_running(const struct handoff *h)
{
	return h->running;
}

int
handoff_join(struct handoff *h)
{
	uint64_t v;

	if (!h->running)
		return 0;
	pthread_join(h->thread, NULL);
	/* the thread's eventfd write: consumed here, so that handoff_done
	 * does not join the next job's thread on the loop for it */
	if (read(h->efd, &v, sizeof(v)) < 0) {
		/* nothing written: the job ran on the calling thread */
	}
	h->running = 0;
	return 1;
}

void
handoff_free(struct handoff *h)
{
	if (!h)
		return;
	handoff_join(h);
	if (h->ev)
		event_free(h->ev);
	if (h->efd >= 0)
		close(h->efd);
	free(h);
}
