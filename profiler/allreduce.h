/*
 * allreduce.h: all-reduce sweeps into the profile database (JABAS's
 * communication profiler, notes/jabas.md 2.3 item 4), timed the way
 * nccl-tests times them, and the JABAS Eq. 3 fit of what was measured; and
 * the non-blocking gradient reducer of live runs (hb_ar_reducer_*).
 *
 * What one sweep does, per tensor size d (float32, sum, in place, as JABAS's
 * torch.distributed.all_reduce on a bucket):
 *   `warmup` launches, then barrier, start the clock, `iters` launches, wait
 *   for the last to finish, stop: time = elapsed / iters on each rank, and the
 *   reported time is the max over ranks (the synchronous step waits for the
 *   slowest rank; nccl-tests' default, -a 1, averages ranks instead, which
 *   differs by the ranks' skew only).  algbw = d / time,
 *   busbw = algbw * 2(n-1)/n (nccl-tests' all-reduce bus bandwidth).
 * Default sizes: JABAS's bucket caps {1, 5, 10, 15, 20, 25, 50, 100, 150} MiB
 * (the artifact's "MB" is 2^20 bytes); JABAS times 1 warm-up + 1000 launches.
 *
 * Backends:
 *   cpu   MPI_Allreduce(MPI_IN_PLACE, MPI_FLOAT, MPI_SUM) over MPI_COMM_WORLD,
 *         host clock (CLOCK_MONOTONIC); n = world size.  Without mpirun (or in
 *         a build without MPI) the process is one rank: a one-rank all-reduce
 *         moves nothing, so the loop times a no-op, as MPI does on one rank.
 *         Rows: source "cpu".
 *   cuda  NCCL ncclAllReduce (allreduce_nccl.c, only in builds with the CUDA
 *         toolkit), CUDA-event timing on each GPU's stream.  Under mpirun: one
 *         rank per GPU, device = the rank's index among the ranks of its host,
 *         the NCCL id broadcast from rank 0.  Without mpirun: one process
 *         drives every visible GPU through ncclCommInitAll.  Rows: "events".
 *         No GPU (or no toolkit at build time): an HB_ERUNTIME error whose
 *         text starts "no CUDA device".
 *
 * Scope: "intra" when every rank runs on one host (MPI_COMM_TYPE_SHARED holds
 * the whole world), else "inter".
 *
 * MPI stays inside this file pair: the command layer uses struct hb_ar_team
 * and never includes mpi.h (DESIGN.md).  With mpirun, every rank calls
 * hb_allreduce_sweep; every rank gets the same result and the same status
 * (a failure on one rank is reported on all, naming that rank); only rank 0
 * writes the database (hb_allreduce_store).
 */
#ifndef HB_ALLREDUCE_H
#define HB_ALLREDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "error.h"
#include "profdb.h"

#define HB_AR_MIB 1048576.0            /* JABAS's "MB" */
#define HB_AR_MAX_SIZES 64             /* sizes in one sweep */
/* Largest tensor: MPI_Allreduce counts elements in an int. */
#define HB_AR_MAX_BYTES (2147483647.0 * 4.0)

/* ---- the process group ---------------------------------------------------- */

/* The ranks of one sweep: MPI_COMM_WORLD when started by mpirun in an MPI
 * build, else this process alone (rank 0 of 1, MPI never initialised). */
struct hb_ar_team {
	int rank, size;          /* in MPI_COMM_WORLD; 0 and 1 without MPI */
	int local_rank;          /* index among the ranks on this host */
	int local_size;          /* ranks on this host */
	int nhosts;              /* hosts the ranks span */
	int mpi;                 /* 1: the ranks talk through MPI */
	int owns_mpi;            /* 1: hb_ar_team_start called MPI_Init (end finalises) */
	struct hb_ar_watch *watch; /* hb_ar_team_watch's state, shared by copies of the team; NULL: none */
};

/* 1 if a launcher (Open MPI, MPICH/PMI, PMIx) started this process. */
int hb_ar_launched_by_mpirun(void);
/* MPI_Init when launched by mpirun (builds with MPI; reused if already
 * initialised), else a team of one that never touches MPI. */
int hb_ar_team_start(struct hb_ar_team *t, int *argc, char ***argv, struct hb_error *err);
/* MPI_Finalize if hb_ar_team_start initialised MPI. */
void hb_ar_team_end(struct hb_ar_team *t);
void hb_ar_team_barrier(const struct hb_ar_team *t);
/* Rank 0's len bytes to every rank. */
void hb_ar_team_bcast(const struct hb_ar_team *t, void *buf, int len);
/* v[i] = max over ranks of v[i], on every rank. */
void hb_ar_team_max(const struct hb_ar_team *t, double *v, int n);
/* In-place float32 sum over the ranks (a live run's gradient buckets). */
void hb_ar_team_sum_floats(const struct hb_ar_team *t, float *buf, long n);
/* Rank 0 receives every rank's n doubles, rank order, in out (size x n);
 * a team of one copies v. */
void hb_ar_team_gather(const struct hb_ar_team *t, const double *v, int n, double *out);
/* Every rank receives every rank's len bytes, rank order, in all (size x len). */
void hb_ar_team_allgather(const struct hb_ar_team *t, const void *mine, int len, void *all);
/* "intra" when every rank runs on this host, else "inter". */
const char *hb_ar_team_scope(const struct hb_ar_team *t);
/* Every rank's status: 0 when rc >= 0 everywhere, else -1 on every rank with
 * err = the lowest failing rank's error ("rank R: ..." on the others).  Call
 * it before any collective a failed rank would not reach. */
int hb_ar_team_agree(const struct hb_ar_team *t, int rc, struct hb_error *err);

/* ---- the watch: naming the rank that stopped ---------------------------------
 * Without it a team collective blocks in MPI until every rank arrives: a
 * rank that is stopped (SIGSTOP), hangs or dies leaves the others waiting,
 * and none of them can tell which one is missing.  With it (MPI teams of
 * two or more) every wait of the team's collectives and of the gradient
 * reducer polls instead (MPI_Test on the nonblocking form, sleeping 1 ms
 * between tests once a wait passes 2 ms, so a waiting rank leaves its core
 * to the others), and a rank that has waited HB_AR_BEAT_S tells every peer
 * so, every HB_AR_BEAT_S, on a communicator of its own (a heartbeat: one
 * int, MPI_Isend).  A rank that has waited timeout_s polls HB_AR_GRACE_S
 * more, then knows: a peer that sent no heartbeat in the last HB_AR_GRACE_S
 * is not waiting with it, so it is the one the collective waits for
 * (stopped, hung, dead, or busy for longer than the timeout).  The lowest
 * waiting rank prints one line naming those ranks and their hosts, then
 * every waiting rank exits 1 (the others after 2 x timeout_s, should the
 * one that prints be gone); mpirun then ends the rest.
 *
 * poll(ctx), when set, is called at every poll of a wait (on the thread
 * that called the collective): a caller stops there on a signal; describe
 * (ctx, buf, n) says what this rank was doing, for the message.
 *
 * The state (struct hb_ar_watch, allreduce.c) holds the heartbeat
 * communicator, the posted receive, one send request per peer, the time
 * of each peer's last heartbeat, every rank's host name and the options;
 * struct hb_ar_team points to it, so every copy of the team (the reducer
 * keeps one) sees it.  Only the thread that opened the team calls it. */
#define HB_AR_BEAT_S 0.5
#define HB_AR_GRACE_S 2.0
struct hb_ar_watch_opts {
	double timeout_s;                               /* > 0 */
	const char *what;                               /* message prefix, e.g. "live" */
	void (*poll)(void *ctx);                        /* may be NULL */
	void (*describe)(void *ctx, char *buf, size_t n); /* may be NULL */
	void *ctx;
};
/* Collective: start watching the team's waits (a team of one, or one
 * without MPI, records the options and never waits).  o is copied; its
 * what string must outlive the watch. */
int hb_ar_team_watch(struct hb_ar_team *t, const struct hb_ar_watch_opts *o, struct hb_error *err);
/* Change poll, describe and ctx (NULL poll: signals are no longer looked at). */
void hb_ar_team_watch_callbacks(const struct hb_ar_team *t, void (*poll)(void *), void (*describe)(void *, char *, size_t),
				void *ctx);
/* Stop watching (hb_ar_team_end calls it); collective. */
void hb_ar_team_unwatch(struct hb_ar_team *t);

/* ---- gradient reduction (live runs) ---------------------------------------- */

/* A live rank's in-place float32 sums over the ranks of a team, started
 * one at a time and finished in the order started (FIFO), so a caller can
 * overlap them with other work.  cpu: MPI_Iallreduce on host memory;
 * completion by MPI_Test (never a blocking MPI wait: Open MPI's blocking
 * waits spin and would take the core from the threads still computing).
 * cuda: ncclAllReduce (sum, float, in place) on the reducer's own CUDA
 * stream, on device memory; completion by an event per sum (cudaEventQuery),
 * and every poll also checks ncclCommGetAsyncError: on an error the
 * communicator is aborted (ncclCommAbort) and the call fails with the NCCL
 * error text.  A team of one: start and test complete at once, nothing moves.
 *
 * Collective order: every rank of the team starts the same sums, of the same
 * lengths, in the same order (the caller guarantees it; when each rank starts
 * a sum may differ).  The reducer talks over its own communicator (cpu: a
 * duplicate of MPI_COMM_WORLD; cuda: its NCCL communicator), so the caller's
 * other collectives on the team (hb_ar_team_agree, barriers) may come
 * between starts and tests in any order the ranks agree on among themselves.
 * Only the thread that opened it calls it (MPI_THREAD_FUNNELED).
 *
 * Layout (private to the .c files): struct hb_ar_reducer (allreduce.c) keeps
 * the FIFO, a ring of HB_AR_REDUCER_MAX_INFLIGHT slots, and the cpu half's
 * communicator and one MPI_Request per slot; for cuda it points to the NCCL
 * half (struct hb_ar_nccl_reducer, allreduce_nccl.c: the communicator, the
 * stream and one event per ring slot, each created the first time its slot
 * is used and reused after), which is the backend tag.
 *
 * Failures: open's are agreed across ranks.  A failed start or test (MPI,
 * CUDA or NCCL error) is this rank's alone (agreeing would take a collective
 * per poll); it leaves the reducer unusable: later starts and tests fail
 * with the same text.  Caller bugs (n out of range, a full queue, a test with
 * nothing in flight) fail without harming it. */
struct hb_ar_reducer;
#define HB_AR_REDUCER_MAX_INFLIGHT 512   /* sums started and not yet finished */
/* Collective over t.  backend "cpu" or "cuda"; device: the CUDA ordinal the
 * rank's buffers live on (cuda only; ignored for cpu).  cuda: one NCCL
 * communicator over the world (rank 0 draws the ncclUniqueId, broadcast with
 * hb_ar_team_bcast), created after cudaSetDevice(device), then one 1-float
 * sum to check it works (NCCL connects its peers at the first launch); a
 * team of one (with or without MPI) has no communicator, stream or events:
 * open only checks that the device exists.  cuda's open and close make
 * `device` current (cudaSetDevice), and so does start over two or more
 * ranks.  A build without the CUDA toolkit (HB_HAVE_GPU 0) refuses "cuda"
 * with an HB_ERUNTIME error "this hetbatch was built without CUDA/NCCL".
 * An unknown backend: HB_EINPUT.  Failures are agreed across ranks
 * (hb_ar_team_agree) so every rank returns the same status. */
int hb_ar_reducer_open(const struct hb_ar_team *t, const char *backend, int device, struct hb_ar_reducer **out,
		       struct hb_error *err);
/* Collective over the team; before hb_ar_team_end.  Sums still in flight are
 * waited for first (the peers started them too); NULL is a no-op. */
void hb_ar_reducer_close(struct hb_ar_reducer *r);
/* Start the sum of buf[0, n) (n >= 1, n <= INT_MAX; the caller has
 * finished the work that produced buf: synchronised its stream).  Error when
 * HB_AR_REDUCER_MAX_INFLIGHT sums are in flight.  buf is the reducer's until
 * its sum finishes; two sums in flight must not overlap. */
int hb_ar_reducer_start(struct hb_ar_reducer *r, float *buf, long n, struct hb_error *err);
/* Has the oldest started sum finished?  *done = 1 (and it leaves the queue;
 * its buffer holds the sum, visible to the host and to work enqueued on any
 * stream afterwards) or 0.  Never blocks.  *done = 0 when none is in flight
 * is an error (a caller bug): HB_ERUNTIME. */
int hb_ar_reducer_test(struct hb_ar_reducer *r, int *done, struct hb_error *err);
/* Started sums not yet finished. */
int hb_ar_reducer_inflight(const struct hb_ar_reducer *r);
/* Wait for the oldest started sum: hb_ar_reducer_test in a loop with short
 * sleeps (50 us), so a waiting rank leaves its core to the others. */
int hb_ar_reducer_wait(struct hb_ar_reducer *r, struct hb_error *err);

/* ---- the sweep -------------------------------------------------------------- */

/* Called on rank 0 after each size: sizes done of total. */
typedef void hb_ar_progress_fn(void *ctx, int done, int total);

struct hb_ar_config {
	const char *backend;           /* "cpu" or "cuda" */
	const double *bytes;           /* sizes, bytes: ascending, whole float32 counts */
	int nsizes;                    /* 1 .. HB_AR_MAX_SIZES */
	int warmup;                    /* untimed launches per size, >= 0 */
	int iters;                     /* timed launches per size, >= 1 */
	hb_ar_progress_fn *progress;   /* may be NULL */
	void *progress_ctx;
};

struct hb_ar_point {
	double bytes;                  /* tensor size d */
	long count;                    /* float32 elements */
	double time_s;                 /* per launch: max over ranks of each rank's mean */
	double algbw;                  /* bytes / time_s, B/s */
	double busbw;                  /* algbw * 2(n-1)/n, B/s */
};

struct hb_ar_result {
	char scope[8];                 /* "intra" or "inter" */
	int n_gpus;                    /* participants N: ranks, or GPUs of one process */
	int nhosts;
	char source[32];               /* "cpu" or "events" */
	char method[64];               /* what was launched: "MPI_Allreduce", "ncclAllReduce (NCCL 2.28.3)" */
	struct hb_run_info run;        /* kind "profile": rank 0's host and device, backend, start */
	struct hb_ar_point points[HB_AR_MAX_SIZES];
	int npoints;
	int warmup, iters;
};

/* Run the sweep on every rank of t (see the top of this file). */
int hb_allreduce_sweep(const struct hb_ar_team *t, const struct hb_ar_config *cfg, struct hb_ar_result *res,
		       struct hb_error *err);

/* One measured point: count, algbw and busbw from bytes and time on n ranks. */
void hb_allreduce_point(double bytes, double time_s, int n_gpus, struct hb_ar_point *p);

/* JABAS's sizes {1,5,10,15,20,25,50,100,150} MiB in bytes; returns 9. */
int hb_allreduce_jabas_sizes(double *bytes, int max);

/* Parse "1,5,10" (MiB) or sizes with a suffix B, K, M, G (bytes, KiB, MiB,
 * GiB; "64K", "1.5M", "4096B").  Each must be > 0, a whole number of float32
 * elements and at most HB_AR_MAX_BYTES; no size twice.  Sorted ascending.
 * HB_EINPUT naming the value on failure. */
int hb_allreduce_parse_sizes(const char *list, double *bytes, int max, int *n, struct hb_error *err);

/* ---- links ------------------------------------------------------------------ */

/* K of a link class from the catalog's cluster nodes that use it (as
 * intra_link or inter_link).  Returns 1 found (*bandwidth set; *as_intra and
 * *as_inter say in which role the catalog uses it; either may be NULL), 0 not
 * found, -1 when nodes give it different bandwidths (HB_EINPUT). */
int hb_allreduce_catalog_link(const struct hb_catalog *cat, const char *link, double *bandwidth, int *as_intra,
			      int *as_inter, struct hb_error *err);
/* The catalog's link class names, distinct, ", "-separated (for messages). */
void hb_allreduce_catalog_links(const struct hb_catalog *cat, char *out, size_t size);
/* The link a cluster's nodes use in a scope ("intra": intra_link, "inter":
 * inter_link).  HB_EINPUT when its nodes disagree. */
int hb_allreduce_cluster_link(const struct hb_cluster *cl, const char *scope, char *link, size_t size,
			      double *bandwidth, struct hb_error *err);

/* ---- the database ------------------------------------------------------------ */

/* Rank 0, one transaction: a run row (res->run), res's source's earlier
 * allreduce rows of (scope, link) replaced by res's points, and, when
 * n_gpus >= 2, the Eq. 3 fit at bandwidth K stored under that source
 * (*fitted = 1, *fit filled).  With n_gpus = 1 the theoretical time
 * d 4(N-1)/N / K is 0 for every size: rows only, *fitted = 0.  *run_id may be
 * NULL.  Rolls back on failure. */
int hb_allreduce_store(struct hb_profdb *db, const struct hb_ar_result *res, const char *link, double bandwidth,
		       struct hb_allreduce_fit *fit, int *fitted, int64_t *run_id, struct hb_error *err);

/* ---- the NCCL backend (allreduce_nccl.c, builds with the CUDA toolkit) ------ */

/* CUDA devices this process sees; 0 with *why set (a sentence starting "no
 * CUDA device") when there is none or the build has no toolkit. */
int hb_allreduce_cuda_devices(char *why, size_t size);

/* Fills res->points (time_s only, max over ranks), n_gpus, run.device,
 * run.driver, run.cuda and method; the caller sets the rest.  Called on every
 * rank; the status is agreed across ranks. */
int hb_allreduce_nccl_sweep(const struct hb_ar_team *t, const struct hb_ar_config *cfg, struct hb_ar_result *res,
			    struct hb_error *err);

/* The gradient reducer's cuda half (hb_ar_reducer_*, which keeps the FIFO
 * and calls these only for a team of two or more, except open and close).
 * slot: the sum's place in the reducer's ring, [0, HB_AR_REDUCER_MAX_INFLIGHT).
 * Builds without the toolkit: open refuses (agreed), the others fail. */
struct hb_ar_nccl_reducer;
int hb_ar_nccl_reducer_open(const struct hb_ar_team *t, int device, struct hb_ar_nccl_reducer **out,
			    struct hb_error *err);
void hb_ar_nccl_reducer_close(struct hb_ar_nccl_reducer *nr);
int hb_ar_nccl_reducer_start(struct hb_ar_nccl_reducer *nr, int slot, float *buf, long n, struct hb_error *err);
int hb_ar_nccl_reducer_test(struct hb_ar_nccl_reducer *nr, int slot, int *done, struct hb_error *err);

#endif
