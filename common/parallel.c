/*
 * parallel.c: a counter under a mutex hands out task indexes (parallel.h).
 */
#include <pthread.h>
#include <stdlib.h>

#include "parallel.h"

struct pool {
	int n;                 /* tasks */
	int next;              /* next index to hand out (under mu) */
	int done;              /* tasks finished (under mu) */
	int stopped;           /* stop said so (under mu) */
	pthread_mutex_t mu;
	hb_task_fn *fn;
	hb_task_done_fn *on_done;
	hb_task_stop_fn *stop;
	void *ctx;
};

static void *work(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		int i;

		pthread_mutex_lock(&p->mu);
		if (!p->stopped && p->stop && p->stop(p->ctx))
			p->stopped = 1;
		if (p->stopped || p->next >= p->n) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		p->fn(p->ctx, i);
		pthread_mutex_lock(&p->mu);
		p->done++;
		if (p->on_done)
			p->on_done(p->ctx, i, p->done);
		pthread_mutex_unlock(&p->mu);
	}
}

int hb_parallel_for(int n, int nthreads, hb_task_fn *fn, hb_task_done_fn *done, hb_task_stop_fn *stop, void *ctx)
{
	struct pool p = { .n = n, .fn = fn, .on_done = done, .stop = stop, .ctx = ctx };
	pthread_t *th = NULL;
	int extra = 0;

	if (n <= 0)
		return 0;
	if (nthreads > n)
		nthreads = n;
	if (pthread_mutex_init(&p.mu, NULL) != 0) {
		/* no lock, no threads: the caller alone, in order */
		for (int i = 0; i < n && !(stop && stop(ctx)); i++) {
			fn(ctx, i);
			if (done)
				done(ctx, i, i + 1);
			p.next = i + 1;
		}
		return p.next;
	}
	if (nthreads > 1 && (th = calloc((size_t)(nthreads - 1), sizeof(*th))))
		while (extra < nthreads - 1 && pthread_create(&th[extra], NULL, work, &p) == 0)
			extra++;
	work(&p);
	for (int i = 0; i < extra; i++)
		pthread_join(th[i], NULL);
	free(th);
	pthread_mutex_destroy(&p.mu);
	return p.next;
}
