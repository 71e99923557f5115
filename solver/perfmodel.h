/*
 * perfmodel.h: the IIDP iteration-time model (JABAS Eqs. 1-6 in the exact
 * form the artifact's code evaluates, notes/jabas.md §2.2).
 *
 * For GPU type g, local batch B_L, n VSWs and n_GA extra accumulation steps:
 *
 *   thp_1     = round(B_L / T_fb_measured(1), 2)            samples/s, 1 VSW
 *   thp_norm  = a ln n + b   (least squares over the measured n points),
 *               or the measured normalised throughput when the largest
 *               measured n is below 3 (each measured value rounded to 0.001)
 *   T_fb(n)   = round(B_L n / (thp_norm(n) thp_1), 4)       s
 *   fwd = zeta T_fb, bwd = (1 - zeta) T_fb                  zeta from the n_max profile
 *   t_ar(b)   = (alpha x(b) + beta) / 1000,  x(b) = b 4(N_G-1)/N_G / K 1000   [ms]
 *   t = data(n) + bn n + (data(n) + fwd + bwd) n_GA + fwd
 *       + max(bwd, sum_{i<l} t_ar(b_i)) + t_ar(b_l) + tau (update + copy1 (n-1))
 *
 * where update is the profile's, one GPU's optimizer step, except under
 * ZeRO-Offload (the model's opt_offload, struct hb_perf zero_offload):
 * there it is update / N_G.  ZeRO-Offload (Ren et al., USENIX ATC '21, §4,
 * the multi-GPU schedule) partitions the gradients and optimizer states
 * over the data-parallel ranks: each rank moves only its 1/N_G of the
 * reduced gradients to host memory, its CPU Adam updates only that
 * partition, and the updated parameters come back by an all-gather.  A
 * one-GPU profile (the analytic model's, models/analytic.c assumption 6,
 * or a measured one) holds the whole model's step; on N_G GPUs each runs
 * 1/N_G of it.  The reduce-scatter and all-gather move what the
 * all-reduce they replace moves (ZeRO's stage 2 keeps data parallelism's
 * volume, Rajbhandari et al., SC '20, §7), so the communication terms
 * stay as they are.  Assumed: each rank keeps the host share (CPU cores,
 * PCIe link) the one-GPU profile had; ranks that share a node's sockets
 * would take longer (up to the node's GPUs times the CPU part).
 *
 * which we store per (node, B_L, n) as two coefficients, t = base + n_GA step,
 * so every caller (solver, DDP baseline, tests) evaluates the very same
 * floating-point expression: hb_perf_iter_s().  The intra-node regression and
 * the node's intra bandwidth apply when the allocation is one node, the
 * inter-node ones (each node its own) as soon as it spans more than one
 * (notes §10.2); N_G counts every GPU of the allocation.
 *
 * Building: fill a struct hb_perf by hand (tests) with the add functions, or
 * from the profile database with hb_perf_load(); then hb_perf_prepare() fits
 * the throughput curves and picks OWS/SWS.  A struct hb_perf is read-only
 * after prepare and may be shared by threads.
 */
#ifndef HB_PERFMODEL_H
#define HB_PERFMODEL_H

#include <stddef.h>

#include <stdint.h>

#include "catalog.h"
#include "error.h"

struct hb_profdb;
struct hb_perf_measured;

#define HB_PERF_MAX_POINTS 16   /* measured n_vsw points per (GPU type, local batch) */
#define HB_PERF_MAX_VSW 64      /* hard cap on n_vsw (the artifact's profiler caps at 10) */
#define HB_PERF_BUCKET_CAP_BYTES (25.0 * 1048576.0) /* PyTorch DDP default bucket cap */
#define HB_PERF_SWS_THRESHOLD 1.5 /* artifact's WEIGHT_SYNC_METHOD_SELECTION_THRESHOLD */

enum hb_sync {
	HB_SYNC_AUTO = 0,  /* the artifact's bucket rule picks (hb_perf_select_sync) */
	HB_SYNC_OWS = 1,   /* overlapping weight sync: tau = b_l / sum b */
	HB_SYNC_SWS = 2,   /* sequential weight sync: tau = 1 */
};

/* Which bandwidth K turns bytes into the regression's "theoretical" time. */
enum hb_perf_k {
	HB_PERF_K_FIT = 0,     /* the K the fit was measured with (notes §2.3 [D]: keep them consistent) */
	HB_PERF_K_CLUSTER = 1, /* the node's bandwidth from the cluster file (the artifact's choice) */
};

/* One profiled configuration: n_vsw VSWs, one mini-batch each, n_GA = 0. */
struct hb_perf_point {
	int n_vsw;         /* VSWs that ran concurrently on one GPU */
	double fwd_s;      /* forward of all n_vsw VSWs, s */
	double bwd_s;      /* backward of all n_vsw VSWs, s */
	double data_s;     /* data loading for the n_vsw mini-batches, s */
	double update_s;   /* optimizer step of the main VSW, s */
	double copy_s;     /* weight copies to the other n_vsw-1 VSWs, s */
	double bn_s;       /* BN-sync constant per VSW, s (0 if the model has none) */
};

/* One (GPU type, local batch): the measured points and what is derived. */
struct hb_perf_lbs {
	int local_bs;      /* B_L, samples per VSW mini-batch */
	int n_max;         /* memory profile: most VSWs that fit; 0 = B_L does not fit */
	struct hb_perf_point pts[HB_PERF_MAX_POINTS]; /* sorted by n_vsw by hb_perf_prepare */
	int npts;
	/* Derived by hb_perf_prepare(): */
	int n_cap;         /* VSWs the model may use (n_max; table mode: also <= largest measured n) */
	double thp1;       /* throughput of one VSW, samples/s */
	int table;         /* 1: largest measured n < 3, use the measured normalised throughput */
	double a, b;       /* fit mode: thp_norm(n) = a ln n + b */
	double norm[HB_PERF_MAX_POINTS + 1]; /* table mode: thp_norm by n (index 1..) */
	double zeta;       /* forward share of fwd+bwd, from the largest measured n */
	double update_s;   /* optimizer step, from the largest measured n */
	double copy1_s;    /* one weight copy: copy(n_pt) / (n_pt - 1), 0 if n_pt = 1 */
	double bn_s;       /* BN-sync constant per VSW, from the largest measured n */
};

/* One GPU type's profile for the model. */
struct hb_perf_gpu {
	char name[HB_NAME_MAX];     /* catalog GPU name */
	struct hb_perf_lbs *lbs;    /* sorted by local_bs after prepare, owned */
	int nlbs;
	int cap_lbs;                /* allocated entries */
	char source[32];            /* source of the compute rows loaded ("cupti", "cpu", "analytic", ...) */
	int64_t run_id;             /* their run (0 if none) */
};

/* One all-reduce regression (JABAS Eq. 3), in the artifact's units. */
struct hb_perf_ar {
	int have;          /* 0: no fit recorded for this (scope, link) */
	double alpha;      /* measured ms per theoretical ms */
	double beta_ms;    /* intercept, ms */
	double k_bw;       /* K used to compute x, bytes/s */
	char link[HB_NAME_MAX]; /* link class, for messages ("pcie3-x16") */
};

/* One node of the cluster, same order as hb_cluster.nodes. */
struct hb_perf_node {
	char name[HB_NAME_MAX];     /* "node0": printed in configurations */
	int gpu;                    /* index into hb_perf.gpus */
	int ngpus;                  /* GPUs in the node */
	struct hb_perf_ar intra;    /* used when the allocation is this node alone */
	struct hb_perf_ar inter;    /* used when the allocation spans several nodes */
};

/* 1 if a realised global batch bs is inside p's bounds (min_gbs, max_gbs). */
#define hb_perf_gbs_in_bounds(p, bs) \
	(((p)->max_gbs <= 0 || (bs) <= (p)->max_gbs) && ((p)->min_gbs <= 0 || (bs) >= (p)->min_gbs))

struct hb_perf {
	char model[HB_NAME_MAX];    /* model name, for messages */
	int min_lbs;                /* minB_L: candidate local batches are its multiples */
	struct hb_perf_gpu *gpus;   /* owned */
	int ngpus;
	struct hb_perf_node *nodes; /* owned */
	int nnodes;
	double *bucket_bytes;       /* gradient buckets in reduction order (b_l last), owned */
	int nbuckets;
	int sync_request;           /* enum hb_sync asked for */
	int artifact_rounding;      /* 1: round thp_1, thp_norm and T_fb as the artifact does */
	/* The model's global batch bounds [minB_G, maxB_G] on the cluster
	 * (hb_model_bounds; 0: none, as hb_perf_load leaves them, so the
	 * artifact's own requests below minB_G still solve; the simulator
	 * sets them for its jobs, live for its run): no configuration
	 * of hb_ddp_plan or the IIDP solver realises a B_G outside them.  Both
	 * round a target to a multiple of B_L (IIDP's run-time rule must also
	 * move past the current B_G), which without them left the bounds by up
	 * to a B_L step (jabas's ncf at 65,536 with maxB_G 32,768, static's
	 * cifar10 at 4,224 with 4,096: issue 16 item 8). */
	long min_gbs, max_gbs;
	int zero_offload;           /* 1: ZeRO-Offload optimizer (the model's opt_offload): each GPU's
				       step is update / N_G (header comment); hb_perf_load sets it */
	/* Derived by hb_perf_prepare(): */
	int sync;                   /* HB_SYNC_OWS or HB_SYNC_SWS */
	double tau;                 /* 1 (SWS) or b_l / sum b (OWS) */
	int prepared;               /* 1 once prepare succeeded */
	/* Measured DDP step times (perf_measured.h) per GPU type, indexed as
	 * gpus[] (ngpus entries, NULL where the database has none for the
	 * type; the array NULL when opts.no_measured): hb_ddp_iter_time's
	 * ground truth where they cover a layout whose GPUs are all of that
	 * type, as Sia's simulator reads each type's placements
	 * (applications.py Application.get_throughput, one Application per
	 * type).  Owned. */
	struct hb_perf_measured **measured_gpu;
	/* One-type cluster: measured_gpu[0] (not owned again), else NULL;
	 * kept for the one-type readers (Pollux fidelity). */
	struct hb_perf_measured *measured;
};

/* Communication of one node inside an allocation. */
struct hb_perf_comm {
	double overlap_s;  /* sum of t_ar(b_i), i < l: hidden behind backward when shorter */
	double last_s;     /* t_ar(b_l): always exposed */
	int zero_ranks;    /* ZeRO-Offload: ranks (N_G) the optimizer step is partitioned over, each
			      GPU running 1/zero_ranks of the profile's update; 0 or 1: the whole
			      step (no offload, one GPU, or a caller's { 0, 0 } "no communication") */
};

/* Iteration time of one GPU for a fixed (B_L, n_vsw) as a line in n_GA. */
struct hb_perf_coef {
	double base_s;     /* n_GA = 0 */
	double step_s;     /* each extra accumulation step: data + fwd + bwd */
};

/* The one expression every caller uses; monotone non-decreasing in n_ga. */
static inline double hb_perf_iter_s(const struct hb_perf_coef *c, long n_ga)
{
	return c->base_s + (double)n_ga * c->step_s;
}

/* Options of hb_perf_load. */
struct hb_perf_opts {
	int sync;                   /* enum hb_sync */
	int k_source;               /* enum hb_perf_k */
	int artifact_rounding;      /* 1: round as the artifact; 0: exact; -1 (default): round only when
				       every compute row was imported from the artifact ("import:jabas"),
				       since rounding T_fb to 0.1 ms distorts millisecond-scale models */
	int min_lbs;                /* 0: the model's min_lbs, else this */
	int no_measured;            /* 1: ignore measured DDP step times (placements, scalability) */
};

/* ---- building ---------------------------------------------------------- */

void hb_perf_init(struct hb_perf *p, const char *model, int min_lbs);
void hb_perf_free(struct hb_perf *p);
int hb_perf_add_gpu(struct hb_perf *p, const char *name, int *idx, struct hb_error *err);
/* Add (or extend) the entry for local_bs on GPU gpu with measured points. */
int hb_perf_add_lbs(struct hb_perf *p, int gpu, int local_bs, int n_max, const struct hb_perf_point *pts,
		    int npts, struct hb_error *err);
int hb_perf_add_node(struct hb_perf *p, const char *name, int gpu, int ngpus, const struct hb_perf_ar *intra,
		     const struct hb_perf_ar *inter, struct hb_error *err);
int hb_perf_set_buckets(struct hb_perf *p, const double *bytes, int n, struct hb_error *err);
/* Validate, fit the throughput curves and resolve the weight-sync method. */
int hb_perf_prepare(struct hb_perf *p, struct hb_error *err);

void hb_perf_opts_default(struct hb_perf_opts *o);
/* Fill p (initialised here) from the profile database for the GPU types of
 * cluster cl, then prepare it.  Buckets come from the database, else from the
 * catalog model; all-reduce fits are looked up per node by (scope, link). */
int hb_perf_load(struct hb_profdb *db, const struct hb_catalog *cat, const struct hb_cluster *cl,
		 const struct hb_model *model, const struct hb_perf_opts *opts, struct hb_perf *p,
		 struct hb_error *err);

/* ---- the model --------------------------------------------------------- */

/* The artifact's OWS/SWS rule: SWS iff int(mean(b_1..b_{l-1}) in MiB) / 25 MiB
 * > 1.5 (notes §1; with a single bucket nothing overlaps and OWS is chosen). */
int hb_perf_select_sync(const double *bucket_bytes, int n);

/* The entry of (gpu, local_bs), NULL if none was profiled. */
const struct hb_perf_lbs *hb_perf_find_lbs(const struct hb_perf *p, int gpu, int local_bs);
/* Largest local batch with n_max >= 1 on gpu, 0 if none. */
int hb_perf_max_lbs(const struct hb_perf *p, int gpu);
/* Normalised throughput and predicted fwd+bwd time of n VSWs (1 <= n <= n_cap). */
double hb_perf_norm_thp(const struct hb_perf_lbs *l, int n);
double hb_perf_fb_s(const struct hb_perf *p, const struct hb_perf_lbs *l, int n);
/* Data-loading time of n VSWs: measured at n, else data(1) n. */
double hb_perf_data_s(const struct hb_perf_lbs *l, int n);

/* alloc[i] = GPUs of node i in the allocation (p->nnodes entries, 0 = unused). */
int hb_perf_alloc_gpus(const struct hb_perf *p, const int *alloc, int *n_gpus, int *n_nodes,
		       struct hb_error *err);
/* All-reduce times of node `node` of allocation alloc. */
int hb_perf_comm_eval(const struct hb_perf *p, const int *alloc, int node, struct hb_perf_comm *out,
		      struct hb_error *err);
/* The same for an allocation already counted (hb_perf_alloc_gpus): n_gpus
 * GPUs on n_nodes nodes, node among them.  They are all the times read of
 * the allocation, so a caller evaluating several of its nodes scans it
 * once. */
int hb_perf_comm_eval_n(const struct hb_perf *p, int node, int n_gpus, int n_nodes, struct hb_perf_comm *out,
			struct hb_error *err);
/* Coefficients of one GPU at (l, n_vsw) with communication c and overlap factor tau. */
int hb_perf_coef_eval(const struct hb_perf *p, const struct hb_perf_lbs *l, const struct hb_perf_comm *c,
		      int n_vsw, double tau, struct hb_perf_coef *out, struct hb_error *err);
/* The measured steps that time allocation alloc (p->nnodes entries): the
 * set of the one GPU type its nodes are all of, NULL when it mixes types,
 * uses no GPU or its type has none.  *gpu (may be NULL) receives the type's
 * index into p->gpus (-1 with NULL). */
struct hb_perf_measured *hb_perf_measured_of(const struct hb_perf *p, const int *alloc, int *gpu);

/* Convenience: predicted per-GPU iteration time of node `node` in alloc. */
int hb_perf_iter_time(const struct hb_perf *p, const int *alloc, int node, int local_bs, int n_vsw, int n_ga,
		      double *iter_s, struct hb_error *err);
/* The same with the allocation's GPUs and nodes counted already
 * (hb_perf_alloc_gpus), for a caller that asks about each of its nodes. */
int hb_perf_iter_time_n(const struct hb_perf *p, int node, int n_gpus, int n_nodes, int local_bs, int n_vsw,
			int n_ga, double *iter_s, struct hb_error *err);

/* Candidate local batches of an allocation: multiples of min_lbs up to the
 * smallest maxB_L of the GPU types used, kept only where every used type has
 * a profile with n_max >= 1 (a gap in a profile skips that B_L).  *out is
 * malloc'd (free it); *n may be 0. */
int hb_perf_alloc_lbs(const struct hb_perf *p, const int *alloc, int **out, int *n, struct hb_error *err);

#endif
