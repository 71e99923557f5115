/*
 * analytic_gen.h: fill a profile database from the analytic model
 * (models/analytic.h), the embedded default when nothing was measured.
 */
#ifndef HB_ANALYTIC_GEN_H
#define HB_ANALYTIC_GEN_H

#include <stdint.h>

#include "analytic.h"
#include "catalog.h"
#include "error.h"
#include "profdb.h"

/* Called after each GPU x model pair (done of total). */
typedef void hb_analytic_progress_fn(void *ctx, int done, int total);

struct hb_analytic_request {
	const char *const *gpus;   /* catalog GPU names; NULL or ngpus = 0: every GPU */
	int ngpus;
	const char *const *models; /* catalog model names; NULL or nmodels = 0: every model */
	int nmodels;
	hb_analytic_progress_fn *progress; /* may be NULL */
	void *progress_ctx;
};

struct hb_analytic_stats {
	int gpus;                /* GPU types generated */
	int models;              /* models generated */
	int infeasible;          /* GPU x model pairs where min_lbs x 1 VSW does not fit */
	long compute_rows;
	long memory_rows;
	long bucket_rows;
	long fit_rows;           /* allreduce_fit rows (one per scope x link class) */
	int64_t run_id;          /* the run row written for this generation */
};

/* Fill compute, memory, bucket and allreduce_fit for the selected GPUs x
 * models (and every link class of the catalog's clusters) in one
 * transaction, with one run row of kind "analytic".  Local batches are those
 * of hb_analytic_lbs_grid up to the largest that fits (the first that does
 * not fit gets a memory row with max_vsw 0), n_vsw = 1..n_max.  An unknown name
 * in the request is an input error and nothing is written. */
int hb_analytic_generate(const struct hb_catalog *cat, const struct hb_analytic_request *req,
			 struct hb_profdb *db, struct hb_analytic_stats *stats, struct hb_error *err);

#endif
