/*
 * pool.c: persistent workers waiting on a condition variable for the next
 * batch (pool.h).  Every field below is read and written under mu; a task's
 * own results are published to the caller by the lock too (the worker takes
 * mu to count the task done, the caller takes it to see the count).
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "pool.h"

struct hb_pool {
	pthread_mutex_t mu;
	pthread_cond_t wake;     /* workers: a batch was posted, or quit */
	pthread_cond_t finished; /* the caller: the batch's last task is done */
	pthread_t *th;
	int nworkers;            /* threads created (the caller is not one) */
	/* the batch in progress */
	hb_pool_fn *fn;
	void *ctx;
	int n;                   /* tasks (0: no batch) */
	int next;                /* next task to hand out */
	int done;                /* tasks finished */
	int busy;                /* a batch is running: hb_pool_run goes serial */
	struct hb_pool_bg *bg_head, *bg_tail; /* background tasks not started, in posting order */
	pthread_cond_t bg_done;  /* a background task finished (hb_pool_claim waits on it) */
	int quit;                /* hb_pool_destroy: workers return */
};

struct worker_arg {
	struct hb_pool *pool;
	int id;
};

/* Under mu: run the batch's tasks until none is left to hand out. */
static void drain(struct hb_pool *p, int worker)
{
	while (p->next < p->n) {
		const int i = p->next++;
		hb_pool_fn *fn = p->fn;
		void *ctx = p->ctx;

		pthread_mutex_unlock(&p->mu);
		fn(ctx, i, worker);
		pthread_mutex_lock(&p->mu);
		if (++p->done == p->n)
			pthread_cond_signal(&p->finished);
	}
}

/* Under mu: run the oldest background task, the lock released meanwhile. */
static void run_bg(struct hb_pool *p, int worker)
{
	struct hb_pool_bg *t = p->bg_head;

	p->bg_head = t->next;
	if (!p->bg_head)
		p->bg_tail = NULL;
	t->next = NULL;
	t->state = HB_POOL_BG_RUNNING;
	t->worker = worker;
	pthread_mutex_unlock(&p->mu);
	t->fn(t->ctx, 0, worker);
	pthread_mutex_lock(&p->mu);
	t->state = HB_POOL_BG_DONE;
	pthread_cond_broadcast(&p->bg_done);
}

static void *worker_main(void *arg)
{
	struct hb_pool *p = ((struct worker_arg *)arg)->pool;
	const int id = ((struct worker_arg *)arg)->id;

	free(arg);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->quit && p->next >= p->n && !p->bg_head)
			pthread_cond_wait(&p->wake, &p->mu);
		if (p->quit)
			break;
		if (p->next < p->n)
			drain(p, id); /* a batch's tasks first: its caller waits for them */
		else
			run_bg(p, id);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int hb_pool_create(struct hb_pool **pool, int nthreads, struct hb_error *err)
{
	struct hb_pool *p;

	*pool = NULL;
	if (nthreads <= 1)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->th = calloc((size_t)(nthreads - 1), sizeof(*p->th)))) {
		free(p);
		return hb_runtime_error(err, "thread pool: out of memory for %d threads", nthreads);
	}
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p->th);
		free(p);
		return hb_runtime_error(err, "thread pool: cannot create a mutex");
	}
	if (pthread_cond_init(&p->wake, NULL) != 0) {
		pthread_mutex_destroy(&p->mu);
		free(p->th);
		free(p);
		return hb_runtime_error(err, "thread pool: cannot create a condition variable");
	}
	if (pthread_cond_init(&p->bg_done, NULL) != 0) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->mu);
		free(p->th);
		free(p);
		return hb_runtime_error(err, "thread pool: cannot create a condition variable");
	}
	if (pthread_cond_init(&p->finished, NULL) != 0) {
		pthread_cond_destroy(&p->bg_done);
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->mu);
		free(p->th);
		free(p);
		return hb_runtime_error(err, "thread pool: cannot create a condition variable");
	}
	/* fewer workers than asked, when the system refuses some, still work */
	while (p->nworkers < nthreads - 1) {
		struct worker_arg *a = malloc(sizeof(*a));

		if (!a)
			break;
		a->pool = p;
		a->id = p->nworkers + 1;
		if (pthread_create(&p->th[p->nworkers], NULL, worker_main, a) != 0) {
			free(a);
			break;
		}
		p->nworkers++;
	}
	*pool = p;
	return 0;
}

int hb_pool_threads(const struct hb_pool *pool)
{
	return pool ? pool->nworkers + 1 : 1;
}

static void run_serial(int n, hb_pool_fn *fn, void *ctx)
{
	for (int i = 0; i < n; i++)
		fn(ctx, i, 0);
}

void hb_pool_run(struct hb_pool *p, int n, hb_pool_fn *fn, void *ctx)
{
	if (n <= 0)
		return;
	if (!p || p->nworkers == 0 || n == 1) {
		run_serial(n, fn, ctx);
		return;
	}
	pthread_mutex_lock(&p->mu);
	if (p->busy) {
		/* nested, or a second caller: this batch on this thread alone
		 * (worker 0 of its own ctx, whose scratch no one else uses) */
		pthread_mutex_unlock(&p->mu);
		run_serial(n, fn, ctx);
		return;
	}
	p->busy = 1;
	p->fn = fn;
	p->ctx = ctx;
	p->n = n;
	p->next = 0;
	p->done = 0;
	pthread_cond_broadcast(&p->wake);
	pthread_cond_broadcast(&p->bg_done); /* a claimer waiting for a background task helps */
	drain(p, 0);
	while (p->done < p->n)
		pthread_cond_wait(&p->finished, &p->mu);
	/* no batch: workers that wake late find nothing to hand out, and
	 * nothing of ctx is read once the count reached n */
	p->n = p->next = p->done = 0;
	p->fn = NULL;
	p->ctx = NULL;
	p->busy = 0;
	pthread_mutex_unlock(&p->mu);
}

int hb_pool_post(struct hb_pool *p, struct hb_pool_bg *t, hb_pool_fn *fn, void *ctx)
{
	if (!p || p->nworkers == 0)
		return 0;
	t->fn = fn;
	t->ctx = ctx;
	t->next = NULL;
	pthread_mutex_lock(&p->mu);
	t->state = HB_POOL_BG_QUEUED;
	if (p->bg_tail)
		p->bg_tail->next = t;
	else
		p->bg_head = t;
	p->bg_tail = t;
	/* one worker is enough; a batch's broadcast wakes the rest */
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->mu);
	return 1;
}

int hb_pool_claim(struct hb_pool *p, struct hb_pool_bg *t)
{
	int ran = 0;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->mu);
	if (t->state == HB_POOL_BG_IDLE) {
		pthread_mutex_unlock(&p->mu);
		return 0; /* never posted, or claimed already */
	}
	if (t->state == HB_POOL_BG_QUEUED) {
		struct hb_pool_bg **at = &p->bg_head, *prev = NULL;

		while (*at != t) {
			prev = *at;
			at = &(*at)->next;
		}
		*at = t->next;
		if (p->bg_tail == t)
			p->bg_tail = prev;
		t->next = NULL;
	} else {
		/* While it runs, help with any batch in progress (the task's
		 * own, when it runs one: its thread drains as worker 0, the
		 * batch's caller, so its own number is free for this one). */
		while (t->state == HB_POOL_BG_RUNNING) {
			if (p->next < p->n)
				drain(p, t->worker);
			else
				pthread_cond_wait(&p->bg_done, &p->mu);
		}
		ran = 1;
	}
	t->state = HB_POOL_BG_IDLE;
	pthread_mutex_unlock(&p->mu);
	return ran;
}

void hb_pool_destroy(struct hb_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->nworkers; i++)
		pthread_join(p->th[i], NULL);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->finished);
	pthread_cond_destroy(&p->bg_done);
	pthread_mutex_destroy(&p->mu);
	free(p->th);
	free(p);
}

int hb_pool_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n >= 1 ? (n > 1024 ? 1024 : (int)n) : 1;
}
