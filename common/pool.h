/*
 * pool.h: a fixed set of threads that runs batches of independent tasks,
 * made once and used for many small batches.
 *
 * hb_parallel_for (parallel.h) creates and joins its threads at every
 * call, which is right for a sweep's few long runs but not for the
 * forecaster's fits: one JABAS epoch end is a batch of ten GPR starts of
 * a millisecond or less, thousands of times per trace replay.  A pool's
 * workers sleep on a condition variable between batches instead.
 *
 * Tasks of a batch are handed out in index order from a counter under the
 * pool's lock; which thread runs which task, and when, is not fixed, so a
 * caller that wants the same output for any thread count keeps each task's
 * results in a slot of its own and combines them afterwards in index
 * order.  The calling thread works too.
 *
 * A pool is owned by whoever made it (a simulation: struct hb_sim), never
 * global.  One batch runs at a time: hb_pool_run called while the pool is
 * busy (from inside a task, or from a second thread) runs its batch on the
 * calling thread alone, in index order, so nesting is safe, only not
 * parallel.
 */
#ifndef HB_POOL_H
#define HB_POOL_H

#include "error.h"

struct hb_pool;

/* Run task `task` (0 <= task < n) on the thread numbered `worker`
 * (0 <= worker < hb_pool_threads(pool)): no two tasks run at the same time
 * with the same worker number, so per-worker scratch indexed by it needs
 * no lock.  The calling thread is worker 0. */
typedef void hb_pool_fn(void *ctx, int task, int worker);

/* A pool of nthreads threads, the caller of hb_pool_run counted (so
 * nthreads - 1 are created).  nthreads <= 1 gives *pool = NULL, which
 * every function here accepts as "serial, on the calling thread".  A
 * thread that cannot be created only means fewer workers; fails only
 * without memory. */
int hb_pool_create(struct hb_pool **pool, int nthreads, struct hb_error *err);

/* Threads a batch may use: 1 for NULL. */
int hb_pool_threads(const struct hb_pool *pool);

/* Run tasks 0..n-1 and return when all have finished (n <= 0: none). */
void hb_pool_run(struct hb_pool *pool, int n, hb_pool_fn *fn, void *ctx);

/* A background task: posted now, run by a worker that has no batch task to
 * run, claimed later by the thread that posted it.  The caller owns the
 * struct and everything ctx points to; between hb_pool_post and
 * hb_pool_claim it touches neither.  Background tasks run in posting
 * order; a batch's tasks go first, so a worker running one joins the
 * current batch only when the task is over (the batch still ends: its
 * caller drains it).  A speculative caller (JABAS's forecast fits, which
 * depend only on a history that is final before the epoch ends) posts
 * work that the calling thread would otherwise do later, and claims it
 * when it needs the result. */
struct hb_pool_bg {
	hb_pool_fn *fn;              /* run as fn(ctx, 0, worker) */
	void *ctx;
	int state;                   /* HB_POOL_BG_*, under the pool's lock */
	struct hb_pool_bg *next;     /* the pool's queue */
	int worker;                  /* the worker running it */
};

enum { HB_POOL_BG_IDLE = 0, HB_POOL_BG_QUEUED, HB_POOL_BG_RUNNING, HB_POOL_BG_DONE };

/* Queue t (idle, or claimed since its last post) to run fn(ctx, 0, worker)
 * on a worker; returns 1, or 0 when the pool has no worker (NULL or
 * nthreads 1: nothing is queued and t stays idle). */
int hb_pool_post(struct hb_pool *pool, struct hb_pool_bg *t, hb_pool_fn *fn, void *ctx);

/* Take t back: 1 when it ran (its results are visible to the caller), 0
 * when it had not started (it is withdrawn and never runs) or was never
 * posted.  t is idle afterwards.  While t runs, the caller works on any
 * batch in progress, which is t's own when t runs one: a task's batch
 * started on a worker has that worker draining as number 0 (its caller),
 * and the claimer takes the worker's own number.  So a claimed task that
 * splits its work into a batch (JABAS's fits: the GPR's starts) ends as
 * soon as it would have on the claimer's own batch. */
int hb_pool_claim(struct hb_pool *pool, struct hb_pool_bg *t);

/* Stop and join the workers (waits for none: no batch may be running, and
 * every background task must have been claimed). */
void hb_pool_destroy(struct hb_pool *pool);

/* Online CPUs (sysconf), at least 1: the default thread count of a
 * simulation run alone. */
int hb_pool_online_cpus(void);

#endif
