/*
 * profile_rows.h: the records of a profile, one struct per table of the
 * profile database (profiler/profdb.h documents the tables and their
 * units).  They live with the models because the analytic model produces
 * them and the solvers read them; the database that stores them is the
 * profiler's (profdb.h includes this header).
 */
#ifndef HB_PROFILE_ROWS_H
#define HB_PROFILE_ROWS_H

#include <stdint.h>

struct hb_run_info {
	char kind[32];         /* "analytic", "import", "profile", "live" */
	char host[64];
	char device[128];
	char driver[32];
	char cuda[32];
	char backend[16];      /* "cuda", "cpu", "none" */
	char started_at[32];   /* ISO 8601 UTC */
	char gpu[64];          /* catalog GPU the rows are stored under ("" if none) */
	char cupti[32];        /* CUPTI API version, "" when not traced */
	double scale;          /* workload width scale of a measuring run, 0 = not applicable */
	long dropped;          /* CUPTI activity records dropped (a run with drops is suspect) */
	char notes[256];       /* free text: VSW cap, what was skipped, ... */
};

struct hb_compute_row {
	char gpu[64];
	char model[64];
	int local_bs;
	int n_vsw;
	double fwd_s, bwd_s, data_s, update_s, copy_s, bn_s; /* per iteration, seconds */
	double total_s;        /* as measured (may exceed the sum of parts) */
	double mem_bytes;      /* peak device memory, 0 if unknown */
	char source[32];
	int64_t run_id;        /* 0 if none */
};

struct hb_memory_row {
	char gpu[64];
	char model[64];
	int local_bs;
	int max_vsw;           /* 0 = this local batch does not fit */
	char source[32];
};

struct hb_allreduce_row {
	char scope[8];         /* "intra" or "inter" */
	char link[64];
	int n_gpus;
	double bytes;
	double time_s;
	char source[32];
	int64_t run_id;
};

struct hb_allreduce_fit {
	char scope[8];
	char link[64];
	double alpha;          /* slope: measured ms per theoretical ms */
	double beta;           /* intercept, ms */
	double bandwidth;      /* K used for the theoretical time, bytes/s */
	double r2;             /* coefficient of determination of the fit */
	char source[32];
};

struct hb_placement_row {
	char model[64];
	char gpu[64];
	char placement[64];    /* Pollux string: GPUs per node, e.g. "22" = 2 nodes x 2 */
	int local_bs;
	double step_s, sync_s;
	char source[32];
};

struct hb_scalability_row {
	char model[64];
	char gpu[64];
	int num_nodes, num_replicas, local_bs;
	double step_s, sync_s;
	char source[32];
};

struct hb_gradstats_row {
	char model[64];
	int batch;             /* global batch of the validation run */
	int epoch;             /* 0-based row index within that run */
	long iteration;
	double progress;       /* Pollux "progress": scale-invariant M0-iterations (ImageNet: 6406 per epoch = 1281167 / 200) */
	double metric;
	double grad_sqr, grad_var;
	char source[32];
};

#endif
