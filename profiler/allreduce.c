/*
 * allreduce.c: the all-reduce sweep (allreduce.h): the MPI team, the size
 * list, the cpu backend (MPI_Allreduce), the catalog's link classes and the
 * database write with the JABAS Eq. 3 fit; the gradient reducer of live runs
 * (its FIFO and its cpu half, MPI_Iallreduce).  The NCCL backend and the
 * reducer's cuda half are in allreduce_nccl.c; this file holds their
 * stand-ins for builds without the CUDA toolkit.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hb_config.h"
#if HB_HAVE_MPI
#include <mpi.h>
#endif

#include "allreduce.h"
#include "device.h"
#include "progress.h"
#include "strutil.h"

/* ---- the team ---------------------------------------------------------------- */

int hb_ar_launched_by_mpirun(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

int hb_ar_team_start(struct hb_ar_team *t, int *argc, char ***argv, struct hb_error *err)
{
	memset(t, 0, sizeof(*t));
	t->size = t->local_size = t->nhosts = 1;
#if HB_HAVE_MPI
	if (hb_ar_launched_by_mpirun()) {
		int initialized = 0, provided, leader;
		MPI_Comm node;

		MPI_Initialized(&initialized);
		if (!initialized) {
			/* only the main thread calls MPI */
			if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
				return hb_runtime_error(err, "MPI_Init_thread failed");
			t->owns_mpi = 1;
		}
		t->mpi = 1;
		MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
		MPI_Comm_size(MPI_COMM_WORLD, &t->size);
		/* The ranks sharing memory with this one: its host. */
		if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t->rank, MPI_INFO_NULL, &node) !=
		    MPI_SUCCESS) {
			hb_ar_team_end(t);
			return hb_runtime_error(err, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
		}
		MPI_Comm_rank(node, &t->local_rank);
		MPI_Comm_size(node, &t->local_size);
		MPI_Comm_free(&node);
		leader = t->local_rank == 0;
		MPI_Allreduce(&leader, &t->nhosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	}
#else
	(void)argc;
	(void)argv;
	(void)err;
#endif
	return 0;
}

/* ---- the watch (allreduce.h) --------------------------------------------------- */

#define WATCH_HOST 64
#define WATCH_TAG 7

struct hb_ar_watch {
	struct hb_ar_watch_opts o;
	int rank, size;
	char *hosts;             /* size x WATCH_HOST: every rank's host name */
	double *seen;            /* hb_now() of each peer's last heartbeat; -1: none yet */
#if HB_HAVE_MPI
	MPI_Comm comm;           /* the heartbeats' own communicator (a duplicate of MPI_COMM_WORLD) */
	MPI_Request recv;        /* the posted receive of the next heartbeat, from any peer */
	int inbox;               /* its buffer */
	MPI_Request *send;       /* per peer: the last heartbeat sent, MPI_REQUEST_NULL once done */
	int outbox;              /* the heartbeats' payload (this rank), never changed while sends are out */
#endif
};

#if HB_HAVE_MPI
/* Take every heartbeat that has arrived. */
static void watch_drain(struct hb_ar_watch *w)
{
	for (;;) {
		MPI_Status st;
		int got = 0;

		if (MPI_Test(&w->recv, &got, &st) != MPI_SUCCESS || !got)
			return;
		if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < w->size)
			w->seen[st.MPI_SOURCE] = hb_now();
		MPI_Irecv(&w->inbox, 1, MPI_INT, MPI_ANY_SOURCE, WATCH_TAG, w->comm, &w->recv);
	}
}

/* "I am waiting" to every peer whose previous heartbeat has left. */
static void watch_beat(struct hb_ar_watch *w)
{
	for (int k = 0; k < w->size; k++) {
		int done = 1;

		if (k == w->rank)
			continue;
		if (w->send[k] != MPI_REQUEST_NULL)
			MPI_Test(&w->send[k], &done, MPI_STATUS_IGNORE);
		if (done)
			MPI_Isend(&w->outbox, 1, MPI_INT, k, WATCH_TAG, w->comm, &w->send[k]);
	}
}

/* The wait has lasted past the timeout and the grace: name the ranks that
 * sent no heartbeat lately; the lowest waiting rank says it.  Never
 * returns. */
static void watch_expire(struct hb_ar_watch *w, double waited, int last_resort)
{
	char absent[1024], waiting[512], doing[256] = "";
	size_t la = 0, lw = 0;
	int lowest = w->rank, nabsent = 0, nwaiting = 0;
	double now = hb_now();

	absent[0] = waiting[0] = '\0';
	for (int k = 0; k < w->size; k++) {
		int here = k == w->rank || (w->seen[k] >= 0 && now - w->seen[k] < HB_AR_GRACE_S);

		if (here) {
			if (k < lowest)
				lowest = k;
			nwaiting++;
			if (lw < sizeof(waiting))
				lw += (size_t)snprintf(waiting + lw, sizeof(waiting) - lw, "%s%d", lw ? ", " : "", k);
		} else {
			if (la < sizeof(absent))
				la += (size_t)snprintf(absent + la, sizeof(absent) - la, "%s%d on %s", la ? ", rank " : "", k,
						       w->hosts + (size_t)k * WATCH_HOST);
			nabsent++;
		}
	}
	if (lowest == w->rank || last_resort) {
		if (w->o.describe)
			w->o.describe(w->o.ctx, doing, sizeof(doing));
		if (nabsent > 0)
			fprintf(stderr, "hetbatch: error: %s: rank %s made no progress for %.0f s: rank%s %s waited for "
				"%s%s%s (%s stopped, hung, dead or slower than --timeout); stopping the run\n",
				w->o.what, absent, waited, nwaiting > 1 ? "s" : "", waiting, nabsent > 1 ? "them" : "it",
				doing[0] ? " at " : "", doing, nabsent > 1 ? "they are" : "it is");
		else
			fprintf(stderr, "hetbatch: error: %s: every rank has waited %.0f s in a collective%s%s and none "
				"is missing: the ranks disagree on what comes next; stopping the run\n", w->o.what, waited,
				doing[0] ? " at " : "", doing);
		fflush(stderr);
	}
	_exit(1);
}

/* One poll of a wait that began at since (hb_now()). */
static void watch_poll(struct hb_ar_watch *w, double since)
{
	double now = hb_now(), waited = now - since;

	if (w->o.poll)
		w->o.poll(w->o.ctx);
	watch_drain(w);
	if (waited >= HB_AR_BEAT_S) {
		double *last = &w->seen[w->rank]; /* this rank's own slot: when it last beat */

		if (*last < since || now - *last >= HB_AR_BEAT_S) {
			watch_beat(w);
			*last = now;
		}
	}
	if (waited >= w->o.timeout_s + HB_AR_GRACE_S) {
		int lowest_waiting = 1;

		for (int k = 0; k < w->rank; k++)
			if (w->seen[k] >= 0 && now - w->seen[k] < HB_AR_GRACE_S)
				lowest_waiting = 0;
		/* a rank below this one waits too and says it; this one goes
		 * only when that one is gone too */
		if (lowest_waiting || waited >= 2 * w->o.timeout_s + HB_AR_GRACE_S)
			watch_expire(w, waited - HB_AR_GRACE_S, !lowest_waiting);
	}
}

/* 1: the team's waits poll (a watch over two or more ranks). */
static int watched(const struct hb_ar_team *t)
{
	return t->watch && t->watch->size > 1;
}

/* Wait for req, polled, with the watch's heartbeats (see allreduce.h). */
static void team_wait(const struct hb_ar_team *t, MPI_Request *req)
{
	const struct timespec pause = { 0, 1000000 }; /* 1 ms */
	struct hb_ar_watch *w = t->watch;
	double since;
	int done = 0;

	since = hb_now();
	/* the caller's poll comes before each test: a rank stopping on a
	 * signal makes no MPI call after it, so its peers' progress never
	 * reads from a process that has gone */
	while ((!w->o.poll || (w->o.poll(w->o.ctx), 1)) && MPI_Test(req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
	       !done) {
		if (hb_now() - since > 0.002)
			nanosleep(&pause, NULL);
		watch_poll(w, since);
	}
}
#endif

int hb_ar_team_watch(struct hb_ar_team *t, const struct hb_ar_watch_opts *o, struct hb_error *err)
{
	struct hb_ar_watch *w = calloc(1, sizeof(*w));
	int rc = 0;

	if (!w || !(o->timeout_s > 0)) {
		free(w);
		return w ? hb_input_error(err, "watch: timeout %g s (> 0)", o->timeout_s)
			 : hb_runtime_error(err, "watch: out of memory");
	}
	w->o = *o;
	w->rank = t->rank;
	w->size = t->size;
	if (!t->mpi || t->size < 2) {
		w->size = 1;
		t->watch = w;
		return 0;
	}
#if HB_HAVE_MPI
	w->hosts = calloc((size_t)t->size, WATCH_HOST);
	w->seen = malloc((size_t)t->size * sizeof(double));
	w->send = malloc((size_t)t->size * sizeof(MPI_Request));
	if (!w->hosts || !w->seen || !w->send)
		rc = hb_runtime_error(err, "watch: out of memory");
	if (hb_ar_team_agree(t, rc, err) < 0) {
		free(w->hosts);
		free(w->seen);
		free(w->send);
		free(w);
		return -1;
	}
	{
		char mine[WATCH_HOST] = "";

		if (gethostname(mine, sizeof(mine) - 1) != 0)
			hb_strlcpy(mine, "unknown", sizeof(mine));
		MPI_Allgather(mine, WATCH_HOST, MPI_CHAR, w->hosts, WATCH_HOST, MPI_CHAR, MPI_COMM_WORLD);
	}
	for (int k = 0; k < t->size; k++) {
		w->seen[k] = -1;
		w->send[k] = MPI_REQUEST_NULL;
	}
	w->outbox = t->rank;
	MPI_Comm_dup(MPI_COMM_WORLD, &w->comm);
	MPI_Irecv(&w->inbox, 1, MPI_INT, MPI_ANY_SOURCE, WATCH_TAG, w->comm, &w->recv);
	t->watch = w;
#else
	(void)err;
	(void)rc;
#endif
	return 0;
}

void hb_ar_team_watch_callbacks(const struct hb_ar_team *t, void (*poll)(void *), void (*describe)(void *, char *, size_t),
				void *ctx)
{
	if (!t->watch)
		return;
	t->watch->o.poll = poll;
	t->watch->o.describe = describe;
	t->watch->o.ctx = ctx;
}

void hb_ar_team_unwatch(struct hb_ar_team *t)
{
	struct hb_ar_watch *w = t->watch;

	if (!w)
		return;
	t->watch = NULL;
#if HB_HAVE_MPI
	if (w->size > 1) {
		/* Heartbeats still in flight land in the peers' unexpected
		 * queues: small messages, sent eagerly; the receive is
		 * cancelled and the sends let go. */
		MPI_Cancel(&w->recv);
		MPI_Wait(&w->recv, MPI_STATUS_IGNORE);
		for (int k = 0; k < w->size; k++)
			if (w->send[k] != MPI_REQUEST_NULL)
				MPI_Request_free(&w->send[k]);
		MPI_Comm_free(&w->comm);
	}
#endif
	free(w->hosts);
	free(w->seen);
#if HB_HAVE_MPI
	free(w->send);
#endif
	free(w);
}

void hb_ar_team_end(struct hb_ar_team *t)
{
	hb_ar_team_unwatch(t);
#if HB_HAVE_MPI
	if (t->owns_mpi)
		MPI_Finalize();
#endif
	t->owns_mpi = 0;
	t->mpi = 0;
}

const char *hb_ar_team_scope(const struct hb_ar_team *t)
{
	return t->size == t->local_size ? "intra" : "inter";
}

void hb_ar_team_barrier(const struct hb_ar_team *t)
{
#if HB_HAVE_MPI
	if (t->mpi) {
		MPI_Request req;

		if (watched(t)) {
			MPI_Ibarrier(MPI_COMM_WORLD, &req);
			team_wait(t, &req);
		} else {
			MPI_Barrier(MPI_COMM_WORLD);
		}
	}
#else
	(void)t;
#endif
}

void hb_ar_team_bcast(const struct hb_ar_team *t, void *buf, int len)
{
#if HB_HAVE_MPI
	if (t->mpi) {
		MPI_Request req;

		if (watched(t)) {
			MPI_Ibcast(buf, len, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
			team_wait(t, &req);
		} else {
			MPI_Bcast(buf, len, MPI_BYTE, 0, MPI_COMM_WORLD);
		}
	}
#else
	(void)t;
	(void)buf;
	(void)len;
#endif
}

void hb_ar_team_max(const struct hb_ar_team *t, double *v, int n)
{
#if HB_HAVE_MPI
	if (t->mpi) {
		MPI_Request req;

		if (watched(t)) {
			MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req);
			team_wait(t, &req);
		} else {
			MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		}
	}
#else
	(void)t;
	(void)v;
	(void)n;
#endif
}

void hb_ar_team_sum_floats(const struct hb_ar_team *t, float *buf, long n)
{
#if HB_HAVE_MPI
	if (t->mpi && t->size > 1)
		for (long off = 0; off < n;) {
			int chunk = n - off > (1L << 30) ? 1 << 30 : (int)(n - off); /* MPI counts are ints */
			MPI_Request req;

			if (watched(t)) {
				MPI_Iallreduce(MPI_IN_PLACE, buf + off, chunk, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
				team_wait(t, &req);
			} else {
				MPI_Allreduce(MPI_IN_PLACE, buf + off, chunk, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
			}
			off += chunk;
		}
#else
	(void)t;
	(void)buf;
	(void)n;
#endif
}

void hb_ar_team_allgather(const struct hb_ar_team *t, const void *mine, int len, void *all)
{
#if HB_HAVE_MPI
	if (t->mpi && t->size > 1) {
		MPI_Request req;

		if (watched(t)) {
			MPI_Iallgather(mine, len, MPI_BYTE, all, len, MPI_BYTE, MPI_COMM_WORLD, &req);
			team_wait(t, &req);
		} else {
			MPI_Allgather(mine, len, MPI_BYTE, all, len, MPI_BYTE, MPI_COMM_WORLD);
		}
		return;
	}
#else
	(void)t;
#endif
	memcpy(all, mine, (size_t)len);
}

void hb_ar_team_gather(const struct hb_ar_team *t, const double *v, int n, double *out)
{
#if HB_HAVE_MPI
	if (t->mpi && t->size > 1) {
		MPI_Request req;

		if (watched(t)) {
			MPI_Igather(v, n, MPI_DOUBLE, out, n, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req);
			team_wait(t, &req);
		} else {
			MPI_Gather(v, n, MPI_DOUBLE, out, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		}
		return;
	}
#else
	(void)t;
#endif
	memcpy(out, v, (size_t)n * sizeof(double));
}

int hb_ar_team_agree(const struct hb_ar_team *t, int rc, struct hb_error *err)
{
#if HB_HAVE_MPI
	if (t->mpi && t->size > 1) {
		struct hb_error first_err;
		int mine = rc < 0 ? t->rank : t->size, first = t->size;
		MPI_Request req;

		if (watched(t)) {
			MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
			team_wait(t, &req);
		} else {
			MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		}
		if (first == t->size)
			return 0;
		memset(&first_err, 0, sizeof(first_err));
		if (t->rank == first)
			first_err = *err;
		if (watched(t)) {
			MPI_Ibcast(&first_err, (int)sizeof(first_err), MPI_BYTE, first, MPI_COMM_WORLD, &req);
			team_wait(t, &req);
		} else {
			MPI_Bcast(&first_err, (int)sizeof(first_err), MPI_BYTE, first, MPI_COMM_WORLD);
		}
		if (t->rank != first)
			hb_fail(err, first_err.code == HB_EINPUT ? HB_EINPUT : HB_ERUNTIME, "rank %d: %s", first,
				first_err.msg);
		return -1;
	}
#else
	(void)t;
	(void)err;
#endif
	return rc < 0 ? -1 : 0;
}

/* ---- gradient reduction (live runs) -------------------------------------------- */

/* The sums in flight are ring slots head, head + 1, ..., head + count - 1
 * (mod HB_AR_REDUCER_MAX_INFLIGHT); the slot indexes the backend's state:
 * req[] here, the NCCL half's events there. */
struct hb_ar_reducer {
	struct hb_ar_team team;          /* a copy of the team it was opened over */
	struct hb_ar_nccl_reducer *nccl; /* cuda: the NCCL half (allreduce_nccl.c); NULL: cpu */
	int head;                        /* ring slot of the oldest sum in flight */
	int count;                       /* sums in flight */
	struct hb_error dead;            /* the failure that left it unusable; code HB_OK while it works */
	double waiting_since;            /* hb_now() when a test first found the oldest sum unfinished; -1 */
#if HB_HAVE_MPI
	MPI_Comm comm;                   /* cpu over 2+ ranks: a duplicate of MPI_COMM_WORLD, else MPI_COMM_NULL */
	MPI_Request req[HB_AR_REDUCER_MAX_INFLIGHT]; /* cpu: each slot's MPI_Iallreduce */
#endif
};

int hb_ar_reducer_open(const struct hb_ar_team *t, const char *backend, int device, struct hb_ar_reducer **out,
		       struct hb_error *err)
{
	struct hb_ar_reducer *r = NULL;
	int cuda = backend && strcmp(backend, "cuda") == 0, rc = 0;

	*out = NULL;
	if (!cuda && (!backend || strcmp(backend, "cpu") != 0))
		rc = hb_input_error(err, "gradient reducer backend '%s': expected cpu or cuda", backend ? backend : "");
	else if (!(r = calloc(1, sizeof(*r))))
		rc = hb_runtime_error(err, "gradient reducer: out of memory");
	if (r) {
		r->team = *t;
		r->waiting_since = -1;
#if HB_HAVE_MPI
		r->comm = MPI_COMM_NULL;
#endif
	}
	if (hb_ar_team_agree(t, rc, err) < 0)
		goto fail;
	if (cuda) {
		/* agreed inside */
		if (hb_ar_nccl_reducer_open(t, device, &r->nccl, err) < 0)
			goto fail;
	} else {
#if HB_HAVE_MPI
		/* its own communicator: its sums never pair with the caller's
		 * other collectives on the world */
		if (t->mpi && t->size > 1) {
			if (MPI_Comm_dup(MPI_COMM_WORLD, &r->comm) != MPI_SUCCESS) {
				r->comm = MPI_COMM_NULL;
				rc = hb_runtime_error(err, "gradient reducer: MPI_Comm_dup(MPI_COMM_WORLD) failed");
			}
			if (hb_ar_team_agree(t, rc, err) < 0)
				goto fail;
		}
#endif
	}
	*out = r;
	return 0;
fail:
	hb_ar_reducer_close(r);
	return -1;
}

void hb_ar_reducer_close(struct hb_ar_reducer *r)
{
	struct hb_error e = { 0 };

	if (!r)
		return;
	while (r->count > 0 && hb_ar_reducer_wait(r, &e) == 0)
		;
	hb_ar_nccl_reducer_close(r->nccl);
#if HB_HAVE_MPI
	if (r->comm != MPI_COMM_NULL) {
		int finalized = 0;

		MPI_Finalized(&finalized);
		if (!finalized)
			MPI_Comm_free(&r->comm);
	}
#endif
	free(r);
}

int hb_ar_reducer_inflight(const struct hb_ar_reducer *r)
{
	return r->count;
}

/* A backend's failure: the reducer is unusable from now on. */
static int reducer_died(struct hb_ar_reducer *r, const struct hb_error *why, struct hb_error *err)
{
	r->dead = *why;
	if (err)
		*err = *why;
	return -1;
}

static int reducer_dead(const struct hb_ar_reducer *r, struct hb_error *err)
{
	return hb_runtime_error(err, "gradient reducer unusable after an earlier failure: %s", r->dead.msg);
}

int hb_ar_reducer_start(struct hb_ar_reducer *r, float *buf, long n, struct hb_error *err)
{
	struct hb_error e = { 0 };
	int slot = (r->head + r->count) % HB_AR_REDUCER_MAX_INFLIGHT;

	if (r->dead.code != HB_OK)
		return reducer_dead(r, err);
	if (n < 1 || n > INT_MAX)
		return hb_runtime_error(err, "gradient reducer: a sum of %ld floats (expected 1 to %d)", n, INT_MAX);
	if (r->count == HB_AR_REDUCER_MAX_INFLIGHT)
		return hb_runtime_error(err, "gradient reducer: %d sums are in flight already, the most it holds; "
					"finish the oldest first", r->count);
	if (r->team.size > 1) {
		if (r->nccl) {
			if (hb_ar_nccl_reducer_start(r->nccl, slot, buf, n, &e) < 0)
				return reducer_died(r, &e, err);
		} else {
#if HB_HAVE_MPI
			if (MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, r->comm, &r->req[slot]) !=
			    MPI_SUCCESS) {
				hb_runtime_error(&e, "gradient reducer: MPI_Iallreduce of %ld floats failed", n);
				return reducer_died(r, &e, err);
			}
#endif
		}
	}
	r->count++;
	return 0;
}

int hb_ar_reducer_test(struct hb_ar_reducer *r, int *done, struct hb_error *err)
{
	struct hb_error e = { 0 };

	*done = 0;
	if (r->dead.code != HB_OK)
		return reducer_dead(r, err);
	if (r->count == 0)
		return hb_runtime_error(err, "gradient reducer: test with no sum in flight");
	if (r->team.size == 1) {
		*done = 1;  /* a team of one: nothing to move */
	} else if (r->nccl) {
		if (hb_ar_nccl_reducer_test(r->nccl, r->head, done, &e) < 0)
			return reducer_died(r, &e, err);
	} else {
#if HB_HAVE_MPI
		if (r->team.watch && r->team.watch->o.poll)
			r->team.watch->o.poll(r->team.watch->o.ctx); /* before the test, as in team_wait */
		if (MPI_Test(&r->req[r->head], done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
			*done = 0;
			hb_runtime_error(&e, "gradient reducer: MPI_Test failed");
			return reducer_died(r, &e, err);
		}
#endif
	}
	if (*done) {
		r->head = (r->head + 1) % HB_AR_REDUCER_MAX_INFLIGHT;
		r->count--;
		r->waiting_since = -1;
	} else {
#if HB_HAVE_MPI
		/* the oldest sum waits for the peers: the watch's polls, timed
		 * from the first test that found it unfinished */
		if (r->waiting_since < 0)
			r->waiting_since = hb_now();
		if (r->team.watch && r->team.watch->size > 1)
			watch_poll(r->team.watch, r->waiting_since);
#endif
	}
	return 0;
}

int hb_ar_reducer_wait(struct hb_ar_reducer *r, struct hb_error *err)
{
	const struct timespec pause = { 0, 50000 };  /* 50 us */
	int done = 0;

	while (hb_ar_reducer_test(r, &done, err) == 0) {
		if (done)
			return 0;
		nanosleep(&pause, NULL);
	}
	return -1;
}

/* ---- sizes ------------------------------------------------------------------- */

int hb_allreduce_jabas_sizes(double *bytes, int max)
{
	/* notes/jabas.md 2.3 item 4: the artifact's bucket caps, MB = 2^20 bytes */
	static const int mib[] = { 1, 5, 10, 15, 20, 25, 50, 100, 150 };
	int n = (int)(sizeof(mib) / sizeof(mib[0]));

	for (int i = 0; i < n && i < max; i++)
		bytes[i] = mib[i] * HB_AR_MIB;
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One item: a number of MiB, or a number with a unit suffix. */
static int parse_size(char *item, double *out, struct hb_error *err)
{
	char num[64];
	size_t len = strlen(item);
	double mult = HB_AR_MIB, v, bytes;

	if (len == 0 || len >= sizeof(num))
		return hb_input_error(err, "value '%.64s' is not a size (MiB, or a number with suffix B, K, M or G)",
				      item);
	memcpy(num, item, len + 1);
	switch (num[len - 1]) {
	case 'B': case 'b': mult = 1; break;
	case 'K': case 'k': mult = 1024; break;
	case 'M': case 'm': mult = HB_AR_MIB; break;
	case 'G': case 'g': mult = 1024 * HB_AR_MIB; break;
	default: len++; break; /* no suffix: MiB */
	}
	num[len - 1] = '\0';
	if (hb_parse_double(num, &v) < 0)
		return hb_input_error(err, "value '%s' is not a size (MiB, or a number with suffix B, K, M or G)",
				      item);
	bytes = v * mult;
	if (!(v > 0))
		return hb_input_error(err, "value '%s' must be > 0", item);
	if (bytes > HB_AR_MAX_BYTES)
		return hb_input_error(err, "value '%s' is %.0f bytes, above the largest tensor, %.0f bytes "
				      "(MPI counts float32 elements in an int)", item, bytes, HB_AR_MAX_BYTES);
	if (fabs(bytes - round(bytes)) > 1e-6 || fmod(round(bytes), 4.0) != 0)
		return hb_input_error(err, "value '%s' is %.10g bytes, not a whole number of float32 elements (a "
				      "multiple of 4 bytes)", item, bytes);
	*out = round(bytes);
	return 0;
}

int hb_allreduce_parse_sizes(const char *list, double *bytes, int max, int *n, struct hb_error *err)
{
	char *copy, *items[HB_AR_MAX_SIZES + 1];
	int k;

	*n = 0;
	if (max > HB_AR_MAX_SIZES)
		max = HB_AR_MAX_SIZES;
	if (!(copy = strdup(list)))
		return hb_runtime_error(err, "out of memory");
	k = hb_split_list(copy, items, max);
	if (k <= 0) {
		hb_input_error(err, "value '%.200s': %s", list,
			       k == 0 ? "no size given" : "an empty item, or more sizes than the sweep takes");
		free(copy);
		return -1;
	}
	for (int i = 0; i < k; i++)
		if (parse_size(items[i], &bytes[i], err) < 0) {
			free(copy);
			return -1;
		}
	qsort(bytes, (size_t)k, sizeof(*bytes), cmp_double);
	for (int i = 1; i < k; i++)
		if (bytes[i] == bytes[i - 1]) {
			hb_input_error(err, "value '%.200s': %.0f bytes given twice", list, bytes[i]);
			free(copy);
			return -1;
		}
	free(copy);
	*n = k;
	return 0;
}

void hb_allreduce_point(double bytes, double time_s, int n_gpus, struct hb_ar_point *p)
{
	p->bytes = bytes;
	p->count = (long)(bytes / 4);
	p->time_s = time_s;
	p->algbw = time_s > 0 ? bytes / time_s : 0;
	p->busbw = n_gpus > 0 ? p->algbw * 2.0 * (n_gpus - 1) / n_gpus : 0;
}

/* ---- the cpu backend ----------------------------------------------------------- */

/* One launch: in-place float32 sum over the world; one rank has nothing to
 * reduce (MPI returns at once too). */
static int cpu_launch(const struct hb_ar_team *t, float *buf, long count, struct hb_error *err)
{
#if HB_HAVE_MPI
	if (t->mpi && MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) !=
			      MPI_SUCCESS)
		return hb_runtime_error(err, "MPI_Allreduce of %ld floats failed", count);
#else
	(void)t;
	(void)buf;
	(void)count;
	(void)err;
#endif
	return 0;
}

static int cpu_sweep(const struct hb_ar_team *t, const struct hb_ar_config *cfg, struct hb_ar_result *res,
		     struct hb_error *err)
{
	double maxb = cfg->bytes[cfg->nsizes - 1];
	float *buf = NULL;
	int rc = 0, failed = 0;

	/* zeros: a sum of zeros stays finite over any number of launches, and
	 * memset touches every page before the clock runs */
	if (!(buf = malloc((size_t)maxb)))
		rc = hb_runtime_error(err, "cpu all-reduce: cannot allocate %.0f bytes", maxb);
	else
		memset(buf, 0, (size_t)maxb);
	if ((failed = hb_ar_team_agree(t, rc, err) < 0))
		goto out;
	for (int i = 0; i < cfg->nsizes; i++) {
		long count = (long)(cfg->bytes[i] / 4);
		double t0, dt;

		for (int w = 0; w < cfg->warmup && rc == 0; w++)
			rc = cpu_launch(t, buf, count, err);
		hb_ar_team_barrier(t);
		t0 = hb_now();
		for (int k = 0; k < cfg->iters && rc == 0; k++)
			rc = cpu_launch(t, buf, count, err);
		dt = (hb_now() - t0) / cfg->iters;
		if ((failed = hb_ar_team_agree(t, rc, err) < 0))
			goto out;
		hb_ar_team_max(t, &dt, 1);
		res->points[i].time_s = dt;
		if (t->rank == 0 && cfg->progress)
			cfg->progress(cfg->progress_ctx, i + 1, cfg->nsizes);
	}
out:
	free(buf);
	return failed ? -1 : 0;
}

/* The host's CPU model, through the cpu device backend. */
static void cpu_device_name(char *out, size_t size)
{
	const struct hb_device_config dc = { .index = 0, .mem_limit_bytes = 1 };
	struct hb_device *dev = NULL;
	struct hb_device_info info;
	struct hb_error e = { 0 };

	hb_strlcpy(out, "cpu", size);
	if (hb_device_cpu.open(&dc, &dev, &e) < 0)
		return;
	if (hb_device_cpu.info(dev, &info, &e) == 0)
		hb_strlcpy(out, info.name, size);
	hb_device_cpu.close(dev);
}

#if !HB_HAVE_GPU
#define NO_TOOLKIT "no CUDA device: this hetbatch was built without the CUDA toolkit (NCCL); use --backend " \
	"cpu, or rebuild with the toolkit (meson -Dgpu=enabled)"

int hb_allreduce_cuda_devices(char *why, size_t size)
{
	hb_strlcpy(why, NO_TOOLKIT, size);
	return 0;
}

int hb_allreduce_nccl_sweep(const struct hb_ar_team *t, const struct hb_ar_config *cfg, struct hb_ar_result *res,
			    struct hb_error *err)
{
	(void)cfg;
	(void)res;
	hb_runtime_error(err, "%s", NO_TOOLKIT);
	return hb_ar_team_agree(t, -1, err);
}

#define REDUCER_NO_TOOLKIT "this hetbatch was built without CUDA/NCCL: use the cpu backend, or rebuild with " \
	"the toolkit (meson -Dgpu=enabled)"

int hb_ar_nccl_reducer_open(const struct hb_ar_team *t, int device, struct hb_ar_nccl_reducer **out,
			    struct hb_error *err)
{
	(void)device;
	*out = NULL;
	hb_runtime_error(err, "%s", REDUCER_NO_TOOLKIT);
	return hb_ar_team_agree(t, -1, err);
}

void hb_ar_nccl_reducer_close(struct hb_ar_nccl_reducer *nr)
{
	(void)nr;
}

int hb_ar_nccl_reducer_start(struct hb_ar_nccl_reducer *nr, int slot, float *buf, long n, struct hb_error *err)
{
	(void)nr;
	(void)slot;
	(void)buf;
	(void)n;
	return hb_runtime_error(err, "%s", REDUCER_NO_TOOLKIT);
}

int hb_ar_nccl_reducer_test(struct hb_ar_nccl_reducer *nr, int slot, int *done, struct hb_error *err)
{
	(void)nr;
	(void)slot;
	*done = 0;
	return hb_runtime_error(err, "%s", REDUCER_NO_TOOLKIT);
}
#endif

/* ---- the sweep ------------------------------------------------------------------- */

static int check_config(const struct hb_ar_config *cfg, struct hb_error *err)
{
	if (!cfg->backend || (strcmp(cfg->backend, "cpu") != 0 && strcmp(cfg->backend, "cuda") != 0))
		return hb_input_error(err, "all-reduce backend '%s': expected cpu or cuda",
				      cfg->backend ? cfg->backend : "");
	if (cfg->nsizes < 1 || cfg->nsizes > HB_AR_MAX_SIZES)
		return hb_input_error(err, "all-reduce sweep: %d sizes, expected 1 to %d", cfg->nsizes,
				      HB_AR_MAX_SIZES);
	if (cfg->warmup < 0 || cfg->iters < 1)
		return hb_input_error(err, "all-reduce sweep: warm-up %d and iterations %d must be >= 0 and >= 1",
				      cfg->warmup, cfg->iters);
	for (int i = 0; i < cfg->nsizes; i++) {
		double b = cfg->bytes[i];

		if (!(b >= 4) || b > HB_AR_MAX_BYTES || fmod(b, 4.0) != 0 || (i > 0 && !(b > cfg->bytes[i - 1])))
			return hb_input_error(err, "all-reduce sweep: size %d (%.0f bytes) must be a multiple of 4 "
					      "bytes in [4, %.0f], sizes ascending", i + 1, b, HB_AR_MAX_BYTES);
	}
	return 0;
}

int hb_allreduce_sweep(const struct hb_ar_team *t, const struct hb_ar_config *cfg, struct hb_ar_result *res,
		       struct hb_error *err)
{
	int rc;

	memset(res, 0, sizeof(*res));
	if (check_config(cfg, err) < 0)
		return -1;
	hb_strlcpy(res->scope, hb_ar_team_scope(t), sizeof(res->scope));
	res->nhosts = t->nhosts;
	res->npoints = cfg->nsizes;
	res->warmup = cfg->warmup;
	res->iters = cfg->iters;
	for (int i = 0; i < cfg->nsizes; i++)
		res->points[i].bytes = cfg->bytes[i];
	hb_strlcpy(res->run.kind, "profile", sizeof(res->run.kind));
	hb_strlcpy(res->run.backend, cfg->backend, sizeof(res->run.backend));
	if (gethostname(res->run.host, sizeof(res->run.host)) != 0)
		hb_strlcpy(res->run.host, "unknown", sizeof(res->run.host));
	res->run.host[sizeof(res->run.host) - 1] = '\0';
	hb_utc_iso_now(res->run.started_at, sizeof(res->run.started_at));
	if (strcmp(cfg->backend, "cpu") == 0) {
		hb_strlcpy(res->source, "cpu", sizeof(res->source));
		res->n_gpus = t->size;
		hb_strlcpy(res->method, t->mpi ? "MPI_Allreduce" : "one rank, nothing to reduce",
			   sizeof(res->method));
		cpu_device_name(res->run.device, sizeof(res->run.device));
		rc = cpu_sweep(t, cfg, res, err);
	} else {
		hb_strlcpy(res->source, "events", sizeof(res->source));
		rc = hb_allreduce_nccl_sweep(t, cfg, res, err);
	}
	if (rc < 0)
		return -1;
	for (int i = 0; i < res->npoints; i++) {
		/* A one-rank all-reduce moves nothing and may take less than the
		 * clock resolves: 1 ns stands for "too small to see", as the
		 * database needs time > 0. */
		if (!(res->points[i].time_s > 0))
			res->points[i].time_s = 1e-9;
		hb_allreduce_point(res->points[i].bytes, res->points[i].time_s, res->n_gpus, &res->points[i]);
	}
	return 0;
}

/* ---- links ------------------------------------------------------------------------- */

int hb_allreduce_catalog_link(const struct hb_catalog *cat, const char *link, double *bandwidth, int *as_intra,
			      int *as_inter, struct hb_error *err)
{
	const char *where = NULL;
	double bw = 0;
	int intra = 0, inter = 0;

	for (int c = 0; c < cat->nclusters; c++) {
		const struct hb_cluster *cl = &cat->clusters[c];

		for (int j = 0; j < cl->nnodes; j++) {
			const struct hb_node *nd = &cl->nodes[j];
			const double bws[2] = { nd->intra_bw, nd->inter_bw };
			const char *names[2] = { nd->intra_link, nd->inter_link };

			for (int r = 0; r < 2; r++) {
				if (strcmp(names[r], link) != 0)
					continue;
				if (where && bws[r] != bw)
					return hb_input_error(err, "link class '%s' has bandwidth %.4g B/s in cluster %s "
							      "and %.4g B/s in cluster %s", link, bw, where, bws[r],
							      cl->name);
				bw = bws[r];
				where = cl->name;
				intra |= r == 0;
				inter |= r == 1;
			}
		}
	}
	if (as_intra)
		*as_intra = intra;
	if (as_inter)
		*as_inter = inter;
	if (!where)
		return 0;
	*bandwidth = bw;
	return 1;
}

void hb_allreduce_catalog_links(const struct hb_catalog *cat, char *out, size_t size)
{
	const char *seen[128];
	int nseen = 0;
	size_t len = 0;

	if (size == 0)
		return;
	out[0] = '\0';
	for (int c = 0; c < cat->nclusters; c++)
		for (int j = 0; j < cat->clusters[c].nnodes; j++)
			for (int r = 0; r < 2; r++) {
				const struct hb_node *nd = &cat->clusters[c].nodes[j];
				const char *name = r == 0 ? nd->intra_link : nd->inter_link;
				int dup = !*name;

				for (int k = 0; k < nseen && !dup; k++)
					dup = strcmp(seen[k], name) == 0;
				if (dup || nseen == (int)(sizeof(seen) / sizeof(seen[0])))
					continue;
				seen[nseen++] = name;
				if (len < size)
					len += (size_t)snprintf(out + len, size - len, "%s%s", len ? ", " : "", name);
			}
}

int hb_allreduce_cluster_link(const struct hb_cluster *cl, const char *scope, char *link, size_t size,
			      double *bandwidth, struct hb_error *err)
{
	int intra = strcmp(scope, "intra") == 0;

	if (cl->nnodes < 1)
		return hb_input_error(err, "cluster %s has no nodes", cl->name);
	for (int j = 1; j < cl->nnodes; j++) {
		const struct hb_node *a = &cl->nodes[0], *b = &cl->nodes[j];
		const char *la = intra ? a->intra_link : a->inter_link, *lb = intra ? b->intra_link : b->inter_link;
		double ba = intra ? a->intra_bw : a->inter_bw, bb = intra ? b->intra_bw : b->inter_bw;

		if (strcmp(la, lb) != 0 || ba != bb)
			return hb_input_error(err, "cluster %s: its nodes use different %s-node links (%s %.4g B/s on %s, "
					      "%s %.4g B/s on %s); name the one measured with --link", cl->name, scope,
					      la, ba, a->name, lb, bb, b->name);
	}
	hb_strlcpy(link, intra ? cl->nodes[0].intra_link : cl->nodes[0].inter_link, size);
	*bandwidth = intra ? cl->nodes[0].intra_bw : cl->nodes[0].inter_bw;
	return 0;
}

/* ---- the database ------------------------------------------------------------------- */

int hb_allreduce_store(struct hb_profdb *db, const struct hb_ar_result *res, const char *link, double bandwidth,
		       struct hb_allreduce_fit *fit, int *fitted, int64_t *run_id, struct hb_error *err)
{
	struct hb_run_info run = res->run;
	int64_t id = 0;
	int want_fit = res->n_gpus >= 2 && res->npoints >= 2 && bandwidth > 0;

	if (fitted)
		*fitted = 0;
	if (!link || !*link)
		return hb_input_error(err, "all-reduce rows need a link class name");
	if (hb_profdb_begin(db, err) < 0)
		return -1;
	snprintf(run.notes, sizeof(run.notes), "all-reduce sweep: %s, %d participant%s on %d host%s, scope %s, link "
		 "%.64s, K %.4g B/s, %d warm-up + %d timed launches per size", res->method, res->n_gpus,
		 res->n_gpus == 1 ? "" : "s", res->nhosts, res->nhosts == 1 ? "" : "s", res->scope, link, bandwidth,
		 res->warmup, res->iters);
	if (hb_profdb_add_run(db, &run, &id, err) < 0 ||
	    hb_profdb_clear_allreduce(db, res->scope, link, res->source, err) < 0)
		goto fail;
	for (int i = 0; i < res->npoints; i++) {
		struct hb_allreduce_row r;

		memset(&r, 0, sizeof(r));
		hb_strlcpy(r.scope, res->scope, sizeof(r.scope));
		hb_strlcpy(r.link, link, sizeof(r.link));
		hb_strlcpy(r.source, res->source, sizeof(r.source));
		r.n_gpus = res->n_gpus;
		r.bytes = res->points[i].bytes;
		r.time_s = res->points[i].time_s;
		r.run_id = id;
		if (hb_profdb_put_allreduce(db, &r, err) < 0)
			goto fail;
	}
	if (want_fit && hb_profdb_fit_allreduce(db, res->scope, link, bandwidth, res->source, fit, err) < 0)
		goto fail;
	if (hb_profdb_commit(db, err) < 0)
		goto fail;
	if (fitted)
		*fitted = want_fit;
	if (run_id)
		*run_id = id;
	return 0;
fail:
	hb_profdb_rollback(db);
	return -1;
}
