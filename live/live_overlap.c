/*
 * live_overlap.c: the last micro-step of a live iteration, bucket
 * all-reduces overlapped with backward (live_overlap.h).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "live.h"          /* defines: HB_LIVE_MAX_VSW */
#include "live_overlap.h"
#include "progress.h"      /* defines: hb_now */

/* What the VSW threads tell the calling thread.  lo and failed are guarded
 * by mu; next[i] is VSW i's own. */
struct ready_state {
	const struct hb_live_step *s;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	long lo[HB_LIVE_MAX_VSW];   /* VSW i's gradients at offsets >= lo[i] are final (LONG_MAX: none yet) */
	int next[HB_LIVE_MAX_VSW];  /* VSW i: the first bucket its backward has not passed */
	int failed;                 /* a VSW thread failed (its error in that thread's vsw_arg) */
};

struct vsw_arg {
	struct ready_state *rs;
	int vsw;
	int rc;
	struct hb_error err;
};

/* The backward hook: publish lo when it completes a bucket.  On cuda the
 * stream is synchronised first, so a published bucket is on the device. */
static int on_ready(void *arg, int vsw, long lo, struct hb_error *err)
{
	struct ready_state *rs = arg;
	const struct hb_live_step *s = rs->s;
	int k = rs->next[vsw];

	if (k >= s->nbuckets || lo > s->boff[k])
		return 0;
	if (s->ops->stream_sync(s->streams[vsw], err) < 0)
		return -1;
	while (k < s->nbuckets && lo <= s->boff[k])
		k++;
	rs->next[vsw] = k;
	pthread_mutex_lock(&rs->mu);
	rs->lo[vsw] = lo;
	pthread_cond_broadcast(&rs->cv);
	pthread_mutex_unlock(&rs->mu);
	return 0;
}

static void *vsw_last(void *arg)
{
	struct vsw_arg *a = arg;
	const struct hb_live_step *s = a->rs->s;

	a->rc = hb_wl_data(s->st, a->vsw, s->batch, &a->err);
	if (a->rc == 0)
		a->rc = hb_wl_forward(s->st, a->vsw, &a->err);
	if (a->rc == 0)
		a->rc = hb_wl_backward_hooked(s->st, a->vsw, s->accumulate, on_ready, a->rs, &a->err);
	if (a->rc == 0)
		a->rc = s->ops->stream_sync(s->streams[a->vsw], &a->err);
	if (a->rc < 0) {
		pthread_mutex_lock(&a->rs->mu);
		a->rs->failed = 1;
		pthread_cond_broadcast(&a->rs->cv);
		pthread_mutex_unlock(&a->rs->mu);
	}
	return NULL;
}

/* Bucket k is ready on every VSW (mu held). */
static int bucket_ready(const struct ready_state *rs, int k)
{
	for (int i = 0; i < rs->s->n_vsw; i++)
		if (rs->lo[i] > rs->s->boff[k])
			return 0;
	return 1;
}

/* The calling thread's work on bucket k before its sum. */
static int bucket_prepare(const struct hb_live_step *s, int k, float *g, struct hb_live_step_times *tm,
			  struct hb_error *err)
{
	long off = s->boff[k], n = s->blen[k];

	if (s->snap) {
		double t = hb_now();

		if (s->ops->memcpy_d2h(s->comm, s->snap + off, g + off, (size_t)n * sizeof(float), err) < 0 ||
		    s->ops->stream_sync(s->comm, err) < 0)
			return -1;
		tm->snap_s += hb_now() - t;
	}
	if (hb_wl_aggregate_range(s->st, s->comm, off, n, err) < 0 ||
	    s->ops->kernel(s->comm, &(struct hb_kernel){ .op = HB_K_SCALE, .y = g + off, .n = n, .a = s->share },
			   err) < 0)
		return -1;
	return s->ops->stream_sync(s->comm, err);
}

/* Wait on the condition for at most us microseconds (mu held). */
static void wait_us(struct ready_state *rs, long us)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += us * 1000;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_cond_timedwait(&rs->cv, &rs->mu, &ts);
}

int hb_live_last_step(const struct hb_live_step *s, struct hb_live_step_times *tm, struct hb_error *err)
{
	struct ready_state rs = { .s = s };
	struct vsw_arg args[HB_LIVE_MAX_VSW];
	pthread_t th[HB_LIVE_MAX_VSW];
	struct hb_error mine = { 0 };   /* this rank's first failure, reported after the sums */
	float *g = hb_wl_grads_device(s->st, 0);
	int started = 0, joined = 0, next = 0, done = 0, bad = s->failed, rc = 0;

	memset(tm, 0, sizeof(*tm));
	if (s->n_vsw < 1 || s->n_vsw > HB_LIVE_MAX_VSW || s->nbuckets < 1)
		return hb_runtime_error(err, "live: %d VSWs, %d buckets", s->n_vsw, s->nbuckets);
	pthread_mutex_init(&rs.mu, NULL);
	pthread_cond_init(&rs.cv, NULL);
	for (int i = 0; i < s->n_vsw; i++)
		rs.lo[i] = LONG_MAX;
	for (int i = 0; i < s->n_vsw && !bad; i++) {
		args[i] = (struct vsw_arg){ .rs = &rs, .vsw = i };
		if (pthread_create(&th[i], NULL, vsw_last, &args[i]) != 0) {
			hb_runtime_error(&mine, "live: cannot start VSW thread %d", i);
			bad = 1;
			break;
		}
		started = i + 1;
	}
	while (done < s->nbuckets) {
		int progressed = 0, ready = 0;

		pthread_mutex_lock(&rs.mu);
		if (rs.failed)
			bad = 1;
		if (next < s->nbuckets)
			ready = bad || bucket_ready(&rs, next);
		pthread_mutex_unlock(&rs.mu);
		/* A failure: let every VSW thread end before the buffers are
		 * summed as they are (the peers' sums need this rank's part). */
		if (bad && !joined) {
			for (int i = 0; i < started; i++)
				pthread_join(th[i], NULL);
			joined = 1;
		}
		if (ready) {
			if (!bad && bucket_prepare(s, next, g, tm, &mine) < 0)
				bad = 1;
			if (next == s->nbuckets - 1)
				tm->backward_done_s = hb_now();
			if (hb_ar_reducer_start(s->red, g + s->boff[next], s->blen[next], err) < 0) {
				rc = -1;
				break;
			}
			next++;
			progressed = 1;
		}
		if (done < next) {
			int d = 0;

			if (hb_ar_reducer_test(s->red, &d, err) < 0) {
				rc = -1;
				break;
			}
			if (d) {
				if (s->ows && !bad &&
				    hb_wl_update_range_on(s->st, s->comm, s->boff[done], s->blen[done], 1.0f, s->step,
							  &mine) < 0)
					bad = 1;
				done++;
				progressed = 1;
			}
		}
		if (!progressed) {
			/* Sums in flight: poll them every 50 us (MPI progresses
			 * only inside MPI calls); else sleep until a VSW posts. */
			pthread_mutex_lock(&rs.mu);
			if (!rs.failed && (next >= s->nbuckets || !bucket_ready(&rs, next)))
				wait_us(&rs, done < next ? 50 : 20000);
			pthread_mutex_unlock(&rs.mu);
		}
	}
	if (!joined)
		for (int i = 0; i < started; i++)
			pthread_join(th[i], NULL);
	for (int i = 0; i < started; i++)
		if (args[i].rc < 0 && mine.code == 0)
			mine = args[i].err;
	pthread_cond_destroy(&rs.cv);
	pthread_mutex_destroy(&rs.mu);
	if (rc < 0)
		return -1;
	if (!bad && !s->ows && hb_wl_update_range_on(s->st, s->comm, 0, hb_wl_param_floats(s->st), 1.0f, s->step,
						      &mine) < 0)
		bad = 1;
	if (!bad && s->ops->stream_sync(s->comm, &mine) < 0)
		bad = 1;
	if (bad) {
		if (mine.code)
			*err = mine;
		else if (!s->failed) /* with s->failed the caller holds its own error */
			hb_runtime_error(err, "live: the iteration failed on this rank");
		return -1;
	}
	return 0;
}
