/*
 * parallel.h: run n independent tasks on up to k threads.
 *
 * Tasks are handed out in index order from a counter under a lock; which
 * thread runs which task, and when, is not fixed, so a caller that wants
 * the same output for any k keeps each task's results in its own slot and
 * reports them afterwards in index order.  The calling thread works too, so
 * a thread that cannot be created only means fewer workers, never a
 * failure.
 */
#ifndef HB_PARALLEL_H
#define HB_PARALLEL_H

/* Run task i (0 <= i < n), on any thread. */
typedef void hb_task_fn(void *ctx, int i);
/* After task i, with ndone tasks finished; called under the runner's lock,
 * so it may update shared progress.  May be NULL. */
typedef void hb_task_done_fn(void *ctx, int i, int ndone);
/* Nonzero: hand out no further task (an interrupt); checked before each. May be NULL. */
typedef int hb_task_stop_fn(void *ctx);

/* Runs tasks 0..n-1 on min(nthreads, n) threads (the caller's included)
 * and returns how many were started (n unless stop said so). */
int hb_parallel_for(int n, int nthreads, hb_task_fn *fn, hb_task_done_fn *done, hb_task_stop_fn *stop, void *ctx);

#endif
