/*
 * pool.c: persistent workers waiting on a condition variable for the next
 * batch (pool.h).
 *
 * A batch's tasks are handed out and counted done with atomics, not under
 * the lock: Pollux's search runs millions of tasks of a few microseconds,
 * where taking the lock twice per task cost a tenth of their time.  The
 * lock guards the batch's description (fn, ctx, n), the background queue,
 * and who is inside a batch: a thread joins a batch under the lock
 * (inside + 1, taking fn, ctx and n), drains it without, and leaves under
 * the lock; the caller resets the batch only when every task is done and
 * nobody is inside, so a late fetch_add past n touches nothing of the next
 * batch.  A task's results reach the caller through the done counter (a
 * sequentially consistent add after the task, a load before the caller
 * reads them).
 *
 * Between batches a worker spins a short while before it sleeps, and the
 * caller spins a short while for the batch's last tasks before it sleeps:
 * a search posts thousands of batches a second, a few dozen microseconds
 * apart, and a futex wake costs about that much, so a sleeping worker
 * joined each batch late and its caller ran most of the tasks.  The spin is
 * bounded (POOL_SPIN polls), so an idle pool sleeps.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "pool.h"

/* Polls of a spin before sleeping: with a pause each, tens of
 * microseconds, about a futex wake-up's latency. */
#define POOL_SPIN 4096

struct hb_pool {
	pthread_mutex_t mu;
	pthread_cond_t wake;     /* workers: a batch was posted, a background task queued, or quit */
	pthread_cond_t finished; /* the caller: the batch's last task is done, or its last helper left */
	pthread_t *th;
	int nworkers;            /* threads created (the caller is not one) */
	/* the batch in progress (fn, ctx, n under mu) */
	hb_pool_fn *fn;
	void *ctx;
	int n;                   /* tasks (0: no batch) */
	atomic_int next;         /* next task to hand out (may run past n) */
	atomic_int done;         /* tasks finished */
	atomic_int inside;       /* threads draining the batch besides its caller */
	atomic_uint posts;       /* batches and background tasks posted: what a spinning worker watches */
	int busy;                /* a batch is running: hb_pool_run goes serial */
	struct hb_pool_bg *bg_head, *bg_tail; /* background tasks not started, in posting order (mu) */
	pthread_cond_t bg_done;  /* a background task finished (hb_pool_claim waits on it) */
	atomic_int quit;         /* hb_pool_destroy: workers return */
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

struct worker_arg {
	struct hb_pool *pool;
	int id;
};

/* Run the batch's tasks until none is left to hand out, without the lock. */
static void drain_batch(struct hb_pool *p, hb_pool_fn *fn, void *ctx, int n, int worker)
{
	for (;;) {
		const int i = atomic_fetch_add(&p->next, 1);

		if (i >= n)
			return;
		fn(ctx, i, worker);
		if (atomic_fetch_add(&p->done, 1) + 1 == n) {
			/* under mu: the caller checks done under mu before it waits */
			pthread_mutex_lock(&p->mu);
			pthread_cond_signal(&p->finished);
			pthread_mutex_unlock(&p->mu);
		}
	}
}

/* Under mu: a batch has tasks left to hand out. */
static int batch_open(struct hb_pool *p)
{
	return p->n > 0 && atomic_load(&p->next) < p->n;
}

/* Under mu, with batch_open: help drain it as `worker`; mu is released
 * meanwhile and held again on return. */
static void join_batch(struct hb_pool *p, int worker)
{
	hb_pool_fn *fn = p->fn;
	void *ctx = p->ctx;
	const int n = p->n;

	atomic_fetch_add(&p->inside, 1);
	pthread_mutex_unlock(&p->mu);
	drain_batch(p, fn, ctx, n, worker);
	pthread_mutex_lock(&p->mu);
	if (atomic_fetch_sub(&p->inside, 1) == 1)
		pthread_cond_signal(&p->finished); /* its caller may wait for the last helper */
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

/* Outside mu: spin until something is posted (posts moves past seen) or
 * POOL_SPIN polls pass; the caller then looks again under mu. */
static void spin_for_post(struct hb_pool *p, unsigned seen)
{
	for (int k = 0; k < POOL_SPIN; k++) {
		if (atomic_load_explicit(&p->posts, memory_order_relaxed) != seen ||
		    atomic_load_explicit(&p->quit, memory_order_relaxed))
			return;
		cpu_relax();
	}
}

static void *worker_main(void *arg)
{
	struct hb_pool *p = ((struct worker_arg *)arg)->pool;
	const int id = ((struct worker_arg *)arg)->id;
	int spun = 0; /* spun since the last work: sleep next */

	free(arg);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (atomic_load(&p->quit))
			break;
		if (batch_open(p)) {
			join_batch(p, id); /* a batch's tasks first: its caller waits for them */
			spun = 0;
		} else if (p->bg_head) {
			run_bg(p, id);
			spun = 0;
		} else if (!spun) {
			const unsigned seen = atomic_load(&p->posts);

			pthread_mutex_unlock(&p->mu);
			spin_for_post(p, seen);
			pthread_mutex_lock(&p->mu);
			spun = 1;
		} else {
			pthread_cond_wait(&p->wake, &p->mu);
			spun = 0;
		}
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

/* The batch is over: every task done and no helper inside. */
static int batch_over(struct hb_pool *p)
{
	return atomic_load(&p->done) == p->n && atomic_load(&p->inside) == 0;
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
	atomic_store(&p->next, 0);
	atomic_store(&p->done, 0);
	atomic_fetch_add(&p->posts, 1);
	pthread_cond_broadcast(&p->wake);
	pthread_cond_broadcast(&p->bg_done); /* a claimer waiting for a background task helps */
	pthread_mutex_unlock(&p->mu);
	drain_batch(p, fn, ctx, n, 0);
	/* The last tasks run on other threads: a short spin, then sleep
	 * (p->n is this batch's until the reset below). */
	for (int k = 0; k < POOL_SPIN && !batch_over(p); k++)
		cpu_relax();
	pthread_mutex_lock(&p->mu);
	while (!batch_over(p))
		pthread_cond_wait(&p->finished, &p->mu);
	/* no batch: threads that come late find nothing to hand out, and
	 * nothing of ctx is read once the count reached n and nobody is
	 * inside */
	p->n = 0;
	atomic_store(&p->next, 0);
	atomic_store(&p->done, 0);
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
	atomic_fetch_add(&p->posts, 1);
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
			if (batch_open(p))
				join_batch(p, t->worker);
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
	atomic_store(&p->quit, 1);
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
