/*
 * allreduce_nccl.c: the cuda backend of the all-reduce sweep (allreduce.h):
 * ncclAllReduce, float32 sum, in place, timed with CUDA events on each GPU's
 * stream.  Built only with the CUDA toolkit (profiler/meson.build's GPU
 * block).
 *
 * Ranks and GPUs: under mpirun one GPU per rank, the rank's index among the
 * ranks of its host (hb_ar_team.local_rank), one communicator over the world
 * from an NCCL id that rank 0 draws and broadcasts; without mpirun this
 * process drives every visible GPU (ncclCommInitAll) and launches on all of
 * them inside one NCCL group.
 *
 * Timing per size, as nccl-tests does it but with events: `warmup` launches
 * and a stream sync, a barrier across ranks, a start event on every stream,
 * `iters` launches, a stop event, wait for the stops; per rank the slowest of
 * its GPUs' (stop - start) / iters, then the max over ranks.
 *
 * Failures before the first collective (no device, allocation, NCCL
 * initialisation) are agreed across ranks, so every rank returns the same
 * error.  A launch that fails mid-sweep on one rank leaves its peers waiting
 * on NCCL kernels that never complete, as in nccl-tests.
 *
 * Also here: the gradient reducer's cuda half (hb_ar_nccl_reducer_*, see
 * hb_ar_reducer_* in allreduce.h): a communicator over the world, one
 * stream, and an event per slot of the reducer's ring.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "allreduce.h"
#include "strutil.h"

#define MAX_LOCAL_GPUS 64

struct gpu {
	int dev;                  /* CUDA ordinal */
	cudaStream_t stream;
	cudaEvent_t start, stop;
	float *buf;               /* the largest size, zeroed */
	ncclComm_t comm;
	int ready;                /* stream, events, buffer created */
};

static int cuda_error(struct hb_error *err, const char *what, int dev, cudaError_t e)
{
	return hb_runtime_error(err, "%s on CUDA device %d: %s", what, dev, cudaGetErrorString(e));
}

static int nccl_error(struct hb_error *err, const char *what, ncclResult_t r)
{
	return hb_runtime_error(err, "%s: %s", what, ncclGetErrorString(r));
}

static int gpu_setup(struct gpu *g, size_t bytes, struct hb_error *err)
{
	cudaError_t e;

	if ((e = cudaSetDevice(g->dev)) != cudaSuccess)
		return cuda_error(err, "cudaSetDevice", g->dev, e);
	if ((e = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) != cudaSuccess)
		return cuda_error(err, "cudaStreamCreate", g->dev, e);
	g->ready = 1;
	if ((e = cudaEventCreate(&g->start)) != cudaSuccess || (e = cudaEventCreate(&g->stop)) != cudaSuccess)
		return cuda_error(err, "cudaEventCreate", g->dev, e);
	if ((e = cudaMalloc((void **)&g->buf, bytes)) != cudaSuccess)
		return hb_runtime_error(err, "cudaMalloc of %zu bytes on CUDA device %d: %s", bytes, g->dev,
					cudaGetErrorString(e));
	/* zeros: the in-place sum stays finite over any number of launches */
	if ((e = cudaMemset(g->buf, 0, bytes)) != cudaSuccess || (e = cudaDeviceSynchronize()) != cudaSuccess)
		return cuda_error(err, "cudaMemset", g->dev, e);
	return 0;
}

static void gpu_free(struct gpu *g)
{
	if (!g->ready)
		return;
	/* Teardown: the sweep's outcome is decided and gpu_free cannot report.
	 * On another device than g's the destroys would fail or act there:
	 * without cudaSetDevice they are skipped, as the reducer's close does. */
	if (cudaSetDevice(g->dev) == cudaSuccess) {
		if (g->comm)
			(void)ncclCommDestroy(g->comm);  /* teardown (above) */
		if (g->buf)
			(void)cudaFree(g->buf);  /* teardown */
		if (g->start)
			(void)cudaEventDestroy(g->start);  /* teardown */
		if (g->stop)
			(void)cudaEventDestroy(g->stop);  /* teardown */
		(void)cudaStreamDestroy(g->stream);  /* teardown */
	}
	(void)cudaGetLastError();  /* leave no teardown failure to a later launch check */
	memset(g, 0, sizeof(*g));
}

/* One all-reduce of count floats on every local GPU (one NCCL group). */
static int launch(struct gpu *g, int ng, size_t count, struct hb_error *err)
{
	ncclResult_t r;

	if ((r = ncclGroupStart()) != ncclSuccess)
		return nccl_error(err, "ncclGroupStart", r);
	for (int i = 0; i < ng; i++)
		if ((r = ncclAllReduce(g[i].buf, g[i].buf, count, ncclFloat, ncclSum, g[i].comm, g[i].stream)) !=
		    ncclSuccess) {
			(void)ncclGroupEnd();  /* closes the group; ncclAllReduce's error is the one to report */
			return nccl_error(err, "ncclAllReduce", r);
		}
	if ((r = ncclGroupEnd()) != ncclSuccess)
		return nccl_error(err, "ncclAllReduce (group end)", r);
	return 0;
}

static int record(struct gpu *g, int ng, int stop, struct hb_error *err)
{
	for (int i = 0; i < ng; i++) {
		cudaError_t e;

		if ((e = cudaSetDevice(g[i].dev)) != cudaSuccess)
			return cuda_error(err, "cudaSetDevice", g[i].dev, e);
		if ((e = cudaEventRecord(stop ? g[i].stop : g[i].start, g[i].stream)) != cudaSuccess)
			return cuda_error(err, "cudaEventRecord", g[i].dev, e);
	}
	return 0;
}

static int sync_all(struct gpu *g, int ng, struct hb_error *err)
{
	for (int i = 0; i < ng; i++) {
		cudaError_t e;

		if ((e = cudaSetDevice(g[i].dev)) != cudaSuccess)
			return cuda_error(err, "cudaSetDevice", g[i].dev, e);
		if ((e = cudaStreamSynchronize(g[i].stream)) != cudaSuccess)
			return cuda_error(err, "cudaStreamSynchronize", g[i].dev, e);
	}
	return 0;
}

/* Per-launch seconds of one size: the slowest local GPU's event time / iters. */
static int time_size(struct gpu *g, int ng, const struct hb_ar_team *t, size_t count, int warmup, int iters,
		     double *seconds, struct hb_error *err)
{
	float ms;

	*seconds = 0;
	for (int w = 0; w < warmup; w++)
		if (launch(g, ng, count, err) < 0)
			return -1;
	if (sync_all(g, ng, err) < 0)
		return -1;
	hb_ar_team_barrier(t);
	if (record(g, ng, 0, err) < 0)
		return -1;
	for (int k = 0; k < iters; k++)
		if (launch(g, ng, count, err) < 0)
			return -1;
	if (record(g, ng, 1, err) < 0 || sync_all(g, ng, err) < 0)
		return -1;
	for (int i = 0; i < ng; i++) {
		cudaError_t e = cudaEventElapsedTime(&ms, g[i].start, g[i].stop);

		if (e != cudaSuccess)
			return cuda_error(err, "cudaEventElapsedTime", g[i].dev, e);
		if (ms / 1e3 / iters > *seconds)
			*seconds = ms / 1e3 / iters;
	}
	return 0;
}

/* Rank 0's device for the run row: name, driver and runtime versions. */
static void describe(const struct gpu *g, int ng, struct hb_ar_result *res)
{
	struct cudaDeviceProp prop;
	int drv = 0, rt = 0, nv = 0;

	if (cudaGetDeviceProperties(&prop, g[0].dev) == cudaSuccess) {
		if (ng > 1)
			snprintf(res->run.device, sizeof(res->run.device), "%.100s x%d", prop.name, ng);
		else
			hb_strlcpy(res->run.device, prop.name, sizeof(res->run.device));
	}
	/* no NVML here: the driver field holds the CUDA version the driver supports */
	if (cudaDriverGetVersion(&drv) == cudaSuccess)
		snprintf(res->run.driver, sizeof(res->run.driver), "cuda %d.%d", drv / 1000, drv % 1000 / 10);
	if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
		snprintf(res->run.cuda, sizeof(res->run.cuda), "%d.%d", rt / 1000, rt % 1000 / 10);
	if (ncclGetVersion(&nv) == ncclSuccess)
		snprintf(res->method, sizeof(res->method), "ncclAllReduce (NCCL %d.%d.%d)", nv / 10000,
			 nv % 10000 / 100, nv % 100);
	else
		hb_strlcpy(res->method, "ncclAllReduce", sizeof(res->method));
}

int hb_allreduce_cuda_devices(char *why, size_t size)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	/* Without a driver or a GPU this fails (35, insufficient driver) or
	 * finds 0 devices: the one gate for every GPU path (DESIGN.md). */
	if (e != cudaSuccess) {
		snprintf(why, size, "no CUDA device (cudaGetDeviceCount: %s)", cudaGetErrorString(e));
		return 0;
	}
	if (n < 1)
		snprintf(why, size, "no CUDA device (cudaGetDeviceCount found none)");
	return n > 0 ? n : 0;
}

int hb_allreduce_nccl_sweep(const struct hb_ar_team *t, const struct hb_ar_config *cfg, struct hb_ar_result *res,
			    struct hb_error *err)
{
	struct gpu g[MAX_LOCAL_GPUS];
	size_t maxb = (size_t)cfg->bytes[cfg->nsizes - 1];
	int ndev = 0, ng = 0, rc = 0, failed = 1;
	char why[256];
	ncclResult_t r;

	memset(g, 0, sizeof(g));
	ndev = hb_allreduce_cuda_devices(why, sizeof(why));
	if (ndev < 1)
		rc = hb_runtime_error(err, "%s", why);
	else if (t->mpi && t->local_rank >= ndev)
		rc = hb_runtime_error(err, "no CUDA device for local rank %d: this host has %d CUDA device%s and %d "
				      "ranks; start at most one rank per GPU", t->local_rank, ndev,
				      ndev == 1 ? "" : "s", t->local_size);
	if (rc == 0 && t->mpi) {
		g[0].dev = t->local_rank;
		ng = 1;
	} else if (rc == 0) {
		ng = ndev < MAX_LOCAL_GPUS ? ndev : MAX_LOCAL_GPUS;
		for (int i = 0; i < ng; i++)
			g[i].dev = i;
	}
	for (int i = 0; i < ng && rc == 0; i++)
		rc = gpu_setup(&g[i], maxb, err);
	if (hb_ar_team_agree(t, rc, err) < 0)
		goto out;

	/* the communicator */
	if (t->mpi) {
		ncclUniqueId id;
		cudaError_t e;

		memset(&id, 0, sizeof(id));
		if (t->rank == 0 && (r = ncclGetUniqueId(&id)) != ncclSuccess)
			rc = nccl_error(err, "ncclGetUniqueId", r);
		if (hb_ar_team_agree(t, rc, err) < 0)
			goto out;
		hb_ar_team_bcast(t, &id, (int)sizeof(id));
		/* the communicator belongs to the device current at its creation */
		if ((e = cudaSetDevice(g[0].dev)) != cudaSuccess)
			rc = cuda_error(err, "cudaSetDevice", g[0].dev, e);
		else if ((r = ncclCommInitRank(&g[0].comm, t->size, id, t->rank)) != ncclSuccess)
			rc = nccl_error(err, "ncclCommInitRank", r);
		res->n_gpus = t->size;
	} else {
		ncclComm_t comms[MAX_LOCAL_GPUS];
		int devs[MAX_LOCAL_GPUS];

		for (int i = 0; i < ng; i++)
			devs[i] = g[i].dev;
		if ((r = ncclCommInitAll(comms, ng, devs)) != ncclSuccess)
			rc = nccl_error(err, "ncclCommInitAll", r);
		else
			for (int i = 0; i < ng; i++)
				g[i].comm = comms[i];
		res->n_gpus = ng;
	}
	if (hb_ar_team_agree(t, rc, err) < 0)
		goto out;
	describe(g, ng, res);

	for (int i = 0; i < cfg->nsizes; i++) {
		double dt;

		rc = time_size(g, ng, t, (size_t)(cfg->bytes[i] / 4), cfg->warmup, cfg->iters, &dt, err);
		if (hb_ar_team_agree(t, rc, err) < 0)
			goto out;
		hb_ar_team_max(t, &dt, 1);
		res->points[i].time_s = dt;
		if (t->rank == 0 && cfg->progress)
			cfg->progress(cfg->progress_ctx, i + 1, cfg->nsizes);
	}
	failed = 0;
out:
	for (int i = 0; i < ng; i++)
		gpu_free(&g[i]);
	return failed ? -1 : 0;
}

/* ---- the gradient reducer's cuda half ----------------------------------------- */

/* Events: one per ring slot of struct hb_ar_reducer, each created the first
 * time its slot is used (a run with k buckets creates about k) and reused
 * when the ring comes round again, so a start never creates more than one.
 * A team of one has none of comm, stream, events or probe. */
struct hb_ar_nccl_reducer {
	int dev;                                         /* CUDA ordinal of the rank's buffers */
	ncclComm_t comm;                                 /* over the world; NULL once aborted */
	cudaStream_t stream;                             /* the sums' stream (non-blocking) */
	float *probe;                                    /* open's check: one float on dev */
	cudaEvent_t done[HB_AR_REDUCER_MAX_INFLIGHT];    /* slot's sum finished; NULL until first used */
};

static const struct timespec poll_pause = { 0, 50000 };  /* 50 us between polls of open's check */

/* Give the communicator up (a failed reducer): ncclCommAbort, never waiting
 * for peers. */
static void reducer_abort(struct hb_ar_nccl_reducer *nr)
{
	if (nr->comm)
		(void)ncclCommAbort(nr->comm);  /* giving up already: the failure that led here is reported */
	nr->comm = NULL;
}

/* An NCCL failure: its text with NCCL's last message, then abort. */
static int reducer_nccl_fail(struct hb_ar_nccl_reducer *nr, struct hb_error *err, const char *what, ncclResult_t r)
{
	const char *last = ncclGetLastError(nr->comm);
	int detail = last && *last;

	hb_runtime_error(err, "gradient reducer on CUDA device %d: %s: %s%s%s%s", nr->dev, what, ncclGetErrorString(r),
			 detail ? " (" : "", detail ? last : "", detail ? ")" : "");
	reducer_abort(nr);
	return -1;
}

static int reducer_cuda_fail(struct hb_ar_nccl_reducer *nr, struct hb_error *err, const char *what, cudaError_t e)
{
	hb_runtime_error(err, "gradient reducer on CUDA device %d: %s: %s", nr->dev, what, cudaGetErrorString(e));
	reducer_abort(nr);
	return -1;
}

/* ncclCommGetAsyncError: 0 while the communicator is healthy. */
static int reducer_check(struct hb_ar_nccl_reducer *nr, struct hb_error *err)
{
	ncclResult_t r, state = ncclSuccess;

	if (!nr->comm)
		return hb_runtime_error(err, "gradient reducer on CUDA device %d: the NCCL communicator was aborted",
					nr->dev);
	if ((r = ncclCommGetAsyncError(nr->comm, &state)) != ncclSuccess)
		state = r;
	if (state == ncclSuccess || state == ncclInProgress)
		return 0;
	return reducer_nccl_fail(nr, err, "NCCL communicator error", state);
}

/* A CUDA query (cudaEventQuery, cudaStreamQuery): 1 finished, 0 not yet,
 * -1 failed.  "Not ready" is also recorded as the thread's last error, which
 * a later kernel launch on this thread would report: cleared here. */
static int reducer_query(struct hb_ar_nccl_reducer *nr, cudaError_t e, const char *what, struct hb_error *err)
{
	if (e == cudaSuccess)
		return 1;
	if (e == cudaErrorNotReady) {
		(void)cudaGetLastError();  /* "not ready" as the last error (above) */
		return 0;
	}
	return reducer_cuda_fail(nr, err, what, e);
}

/* Open's check of the new communicator: every rank contributes 1.0 to one
 * float; it must come back as the world size.  NCCL connects ranks at their
 * first launch: the connections small sums use are made here, not in the
 * caller's first sum (larger sums may still add some of their own). */
static int reducer_probe(struct hb_ar_nccl_reducer *nr, int size, struct hb_error *err)
{
	float one = 1.0f, got = 0.0f;
	cudaError_t e;
	ncclResult_t r;
	int fin = 0;

	if ((e = cudaMalloc((void **)&nr->probe, sizeof(float))) != cudaSuccess) {
		nr->probe = NULL;
		return reducer_cuda_fail(nr, err, "cudaMalloc", e);
	}
	if ((e = cudaMemcpyAsync(nr->probe, &one, sizeof(float), cudaMemcpyHostToDevice, nr->stream)) != cudaSuccess)
		return reducer_cuda_fail(nr, err, "cudaMemcpyAsync", e);
	if ((r = ncclAllReduce(nr->probe, nr->probe, 1, ncclFloat, ncclSum, nr->comm, nr->stream)) != ncclSuccess)
		return reducer_nccl_fail(nr, err, "ncclAllReduce", r);
	/* polled as hb_ar_reducer_wait does, not waited for: a copy to pageable
	 * memory would block until the sum is done, error or not */
	while ((fin = reducer_check(nr, err)) == 0 &&
	       (fin = reducer_query(nr, cudaStreamQuery(nr->stream), "cudaStreamQuery", err)) == 0)
		nanosleep(&poll_pause, NULL);
	if (fin < 0)
		return -1;
	if ((e = cudaMemcpyAsync(&got, nr->probe, sizeof(float), cudaMemcpyDeviceToHost, nr->stream)) != cudaSuccess ||
	    (e = cudaStreamSynchronize(nr->stream)) != cudaSuccess)
		return reducer_cuda_fail(nr, err, "cudaMemcpyAsync", e);
	if (got != (float)size) {
		hb_runtime_error(err, "gradient reducer on CUDA device %d: the check sum of 1 over %d ranks gave %g",
				 nr->dev, size, got);
		reducer_abort(nr);
		return -1;
	}
	return 0;
}

int hb_ar_nccl_reducer_open(const struct hb_ar_team *t, int device, struct hb_ar_nccl_reducer **out,
			    struct hb_error *err)
{
	struct hb_ar_nccl_reducer *nr = NULL;
	ncclUniqueId id;
	ncclResult_t r;
	cudaError_t e;
	char why[256];
	int ndev, rc = 0;

	*out = NULL;
	ndev = hb_allreduce_cuda_devices(why, sizeof(why));
	if (ndev < 1)
		rc = hb_runtime_error(err, "gradient reducer: %s", why);
	else if (device < 0 || device >= ndev)
		rc = hb_runtime_error(err, "gradient reducer: no CUDA device %d (this process sees %d)", device, ndev);
	else if (!(nr = calloc(1, sizeof(*nr))))
		rc = hb_runtime_error(err, "gradient reducer: out of memory");
	if (nr)
		nr->dev = device;
	if (rc == 0 && (e = cudaSetDevice(device)) != cudaSuccess) {
		rc = cuda_error(err, "gradient reducer: cudaSetDevice", device, e);
	} else if (rc == 0 && t->size > 1) {
		if ((e = cudaStreamCreateWithFlags(&nr->stream, cudaStreamNonBlocking)) != cudaSuccess) {
			nr->stream = NULL;
			rc = cuda_error(err, "gradient reducer: cudaStreamCreate", device, e);
		}
	}
	if (hb_ar_team_agree(t, rc, err) < 0)
		goto fail;
	if (t->size == 1) {
		*out = nr;  /* nothing moves: no communicator */
		return 0;
	}

	memset(&id, 0, sizeof(id));
	if (t->rank == 0 && (r = ncclGetUniqueId(&id)) != ncclSuccess)
		rc = nccl_error(err, "gradient reducer: ncclGetUniqueId", r);
	if (hb_ar_team_agree(t, rc, err) < 0)
		goto fail;
	hb_ar_team_bcast(t, &id, (int)sizeof(id));
	if ((r = ncclCommInitRank(&nr->comm, t->size, id, t->rank)) != ncclSuccess) {
		nr->comm = NULL;
		rc = nccl_error(err, "gradient reducer: ncclCommInitRank", r);
	} else {
		rc = reducer_probe(nr, t->size, err);
	}
	if (hb_ar_team_agree(t, rc, err) < 0)
		goto fail;
	*out = nr;
	return 0;
fail:
	if (nr)
		reducer_abort(nr);
	hb_ar_nccl_reducer_close(nr);
	return -1;
}

void hb_ar_nccl_reducer_close(struct hb_ar_nccl_reducer *nr)
{
	if (!nr)
		return;
	if (cudaSetDevice(nr->dev) == cudaSuccess) {
		/* hb_ar_reducer_close waited for every sum: nothing in flight */
		/* teardown: close cannot report, and nothing is left to undo */
		if (nr->comm)
			(void)ncclCommDestroy(nr->comm);  /* teardown (above) */
		for (int i = 0; i < HB_AR_REDUCER_MAX_INFLIGHT; i++)
			if (nr->done[i])
				(void)cudaEventDestroy(nr->done[i]);  /* teardown */
		if (nr->probe)
			(void)cudaFree(nr->probe);  /* teardown */
		if (nr->stream)
			(void)cudaStreamDestroy(nr->stream);  /* teardown */
	}
	(void)cudaGetLastError();  /* leave no teardown failure to a later launch check */
	free(nr);
}

int hb_ar_nccl_reducer_start(struct hb_ar_nccl_reducer *nr, int slot, float *buf, long n, struct hb_error *err)
{
	cudaError_t e;
	ncclResult_t r;

	if (reducer_check(nr, err) < 0)
		return -1;
	if ((e = cudaSetDevice(nr->dev)) != cudaSuccess)
		return reducer_cuda_fail(nr, err, "cudaSetDevice", e);
	if (!nr->done[slot] && (e = cudaEventCreateWithFlags(&nr->done[slot], cudaEventDisableTiming)) != cudaSuccess) {
		nr->done[slot] = NULL;
		return reducer_cuda_fail(nr, err, "cudaEventCreate", e);
	}
	if ((r = ncclAllReduce(buf, buf, (size_t)n, ncclFloat, ncclSum, nr->comm, nr->stream)) != ncclSuccess)
		return reducer_nccl_fail(nr, err, "ncclAllReduce", r);
	if ((e = cudaEventRecord(nr->done[slot], nr->stream)) != cudaSuccess)
		return reducer_cuda_fail(nr, err, "cudaEventRecord", e);
	return 0;
}

int hb_ar_nccl_reducer_test(struct hb_ar_nccl_reducer *nr, int slot, int *done, struct hb_error *err)
{
	int fin;

	*done = 0;
	if (reducer_check(nr, err) < 0)
		return -1;
	if ((fin = reducer_query(nr, cudaEventQuery(nr->done[slot]), "cudaEventQuery", err)) < 0)
		return -1;
	*done = fin;
	return 0;
}
