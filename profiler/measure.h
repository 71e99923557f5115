/*
 * measure.h: a measuring profile run (`hetbatch profile --backend ...`).
 *
 * For each selected catalog model, on one device of one backend, it takes
 * the measurements of JABAS's profilers (notes/jabas.md 2.3) with the
 * synthetic workload of that model (workload.h) and writes them into the
 * profile database under the catalog GPU the device maps to:
 *   memory   for each local batch (multiples of min_lbs), the largest
 *            number of VSWs that fits, capped as the artifact caps it
 *            (min(host cores / devices, 10), or --max-vsw), never growing
 *            with the batch; the first batch where none fits ends it;
 *   compute  per local batch, n_vsw in {1, floor(n_max/2) if n_max > 3,
 *            n_max}: warm-up then measured iterations, the phases data,
 *            fwd, bwd, update, copy per iteration (source "cupti" when
 *            CUPTI timed them, "events" when only events did, "cpu");
 *   bucket   the workload's gradient buckets, reduction order.
 * One run row says what measured them (host, device, driver, CUDA and
 * CUPTI versions, backend, scale, dropped CUPTI records).  Each model's
 * memory and bucket rows are one transaction and each compute point is
 * one, so an interrupted run leaves a consistent database, and resume
 * continues the newest matching run, skipping what it already has.
 */
#ifndef HB_MEASURE_H
#define HB_MEASURE_H

#include <stdint.h>

#include "catalog.h"
#include "device.h"
#include "error.h"
#include "profdb.h"
#include "runner.h"
#include "workload.h"

#define HB_MEASURE_MAX_LBS 256
#define HB_MEASURE_MAX_SHARE 64

/* Called as the run goes; any may be NULL. */
struct hb_measure_hooks {
	void *ctx;
	/* once the device is open and mapped to a catalog GPU */
	void (*on_device)(void *ctx, const struct hb_device_info *info, const char *gpu, int vsw_cap, int64_t run_id);
	/* after a model's memory search: local batches and their n_max */
	void (*on_memory)(void *ctx, const struct hb_workload *w, const int *lbs, const int *n_max, int n);
	/* after each compute point (stored == 0: skipped by resume) */
	void (*on_point)(void *ctx, const struct hb_compute_row *row, const struct hb_runner_result *res, int stored);
	/* progress: points done of points planned for this model */
	void (*on_progress)(void *ctx, const char *model, int done, int total);
};

struct hb_measure_req {
	const char *backend;          /* "cpu" or "cuda" */
	int device;                   /* device ordinal (cuda) */
	const char *gpu_name;         /* catalog GPU to store rows under; NULL: the device's name through the
				       * catalog's aliases (cpu: "cpu") */
	const char *const *models;    /* catalog model names; NULL/0: every model */
	int nmodels;
	const int *lbs;               /* local batches for memory and compute; NULL/0: defaults (measure.c) */
	int nlbs;
	int max_vsw;                  /* VSW cap; 0: min(host cores / devices, 10) as the artifact */
	int warmup, iters;            /* < 0: the backend's defaults (cuda 10 + 90, cpu 1 + 5) */
	double scale;                 /* workload width scale, (0, 1] */
	double mem_limit;             /* bytes; cpu: the budget (0: the catalog GPU's memory); cuda: a cap
				       * below the device (0: none) */
	int trace;                    /* cuda: 1 CUPTI timing (default), 0 events only */
	int resume;                   /* continue the newest matching run */
	int share;                    /* cpu: measure the device while share - 1 other copies of the same
				       * work run beside it (each on its own device, the same local batch
				       * and VSWs, until the measurement ends), as share ranks of a live
				       * run on this host share its cores; 0 or 1: alone.  The run's
				       * device name says "(1 of K sharing)", so resume never mixes them */
	uint64_t seed;
	struct hb_measure_hooks hooks;
};

struct hb_measure_stats {
	int64_t run_id;
	int resumed;                  /* 1 when run_id is an earlier run continued */
	int models;                   /* models measured */
	int infeasible;               /* models where min_lbs x 1 VSW does not fit */
	long compute_rows, memory_rows, bucket_rows;
	long skipped;                 /* compute points already in the resumed run */
	long dropped;                 /* CUPTI records dropped */
	double max_gap;               /* largest CUPTI vs events disagreement (fraction), traced runs */
	char gpu[64];                 /* catalog GPU the rows went under */
	char device[128];
	char source[16];              /* "cupti", "events", "cpu" */
};

/* The measuring run.  Errors: an unknown backend, model or GPU name, or a
 * device name the catalog does not know without gpu_name: input errors
 * (nothing written); `no CUDA device`: a runtime error. */
int hb_measure_run(const struct hb_catalog *cat, const struct hb_measure_req *req, struct hb_profdb *db,
		   struct hb_measure_stats *stats, struct hb_error *err);

/* The n_vsw values the computation profiler measures for a given n_max:
 * {1, floor(n_max/2) when n_max > 3, n_max}, deduplicated, ascending.
 * Returns the count (0 when n_max < 1). */
int hb_measure_vsw_set(int n_max, int out[3]);

/* The model copy the analytic model should see for a workload at a scale:
 * the catalog entry with the workload's parameters, FLOPs per sample,
 * buckets and optimizer bytes (activation bytes scaled by the width). */
void hb_measure_scaled_model(const struct hb_model *m, const struct hb_workload *w, struct hb_model *out);

#endif
