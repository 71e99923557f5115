/*
 * analytic.h: the analytic profile model, hetbatch's embedded default when
 * no GPU has been measured.
 *
 * A roofline-style model (assumptions and calibration at the top of
 * analytic.c) turns a catalog GPU and DNN model into the same numbers the
 * JABAS/IIDP profilers measure: per-iteration forward, backward, data,
 * optimizer and weight-copy times for n virtual stream workers (VSWs) at a
 * local batch, the memory feasibility table n_max(local batch), and the
 * JABAS Eq. 3 all-reduce fit per link class.  profiler/analytic_gen.h's
 * hb_analytic_generate writes all of it into a profile database with
 * source "analytic".
 *
 * Everything here is a pure function of its arguments.
 */
#ifndef HB_ANALYTIC_H
#define HB_ANALYTIC_H

#include <stdint.h>

#include "catalog.h"
#include "error.h"
#include "profile_rows.h"

/* Bump whenever a constant or formula changes: cached default databases
 * built by an older generator are then rebuilt (profiler/default_db.c). */
#define HB_ANALYTIC_VERSION 4

/* The artifact's memory profiler caps n_max at min(cores/GPUs, 10); 10 is
 * PyTorch's autograd thread-pool limit (notes/jabas.md 2.3).  The catalog
 * has no CPU core counts, so the cap is 10. */
#define HB_ANALYTIC_MAX_VSW 10

/* At most this many local batches (multiples of min_lbs) per GPU x model;
 * see hb_analytic_lbs_grid. */
#define HB_ANALYTIC_MAX_LBS_STEPS 128

/* Constants of one GPU architecture (calibrated or assumed; analytic.c says
 * which).  Tables of these are static const data inside analytic.c. */
struct hb_analytic_arch {
	const char *name;        /* "volta", "pascal", "turing", "turing-tu102", "ampere", "ga10x", "hopper",
	                            "ada", "cpu", "generic" */
	double eff_fp32;         /* large-batch fraction of FP32 peak reached by fwd+bwd */
	double eff_tensor;       /* same for 16-bit models on tensor cores */
	double eff_tf32;         /* same for FP32 CNNs whose convolutions run as TF32 (0: none) */
	double vsw_k;            /* multi-VSW gain scale: a = vsw_k * sqrt(1 - u1) */
	double workspace_bytes;  /* per-VSW library workspace (cuDNN/cuBLAS), bytes */
	double act_scale;        /* activation bytes kept per sample relative to the catalog's figure */
	const char *source;      /* where the numbers come from */
};

/* The link-class family used for an all-reduce fit. */
struct hb_analytic_link {
	const char *prefix;      /* matched against the start of the class name: "pcie", "ib", ... */
	double efficiency;       /* achieved fraction of the nominal link bandwidth by ring all-reduce */
	double latency_ms;       /* per-call fixed time (launch, framework, wire), ms */
	const char *source;
};

/* The architecture the model uses for a GPU (by catalog name or its base,
 * then its display name); never NULL: unknown GPUs get "generic". */
const struct hb_analytic_arch *hb_analytic_arch_of(const struct hb_gpu *g);

/* Link family for a class name; never NULL ("default" if none matches). */
const struct hb_analytic_link *hb_analytic_link_of(const char *link);

/* Where the time of one training step goes, for diagnostics and tests. */
struct hb_analytic_breakdown {
	double rate_flops;       /* peak x efficiency used for compute, FLOP/s */
	double fb_flops;         /* fwd+bwd FLOPs per sample: flops_per_sample / fwd_fraction */
	double t_fixed_s;        /* per-step parameter-traffic floor of fwd+bwd, s */
	double b_half;           /* local batch at which one VSW reaches half of rate_flops */
	double util1;            /* compute share of one VSW's fwd+bwd at this batch (u1) */
	double vsw_a;            /* thp(n)/thp(1) = vsw_a * ln(n) + 1 */
	double fb1_s;            /* fwd+bwd of one VSW at this batch, s */
};

/* One compute row: all times of an iteration with n_vsw VSWs, each running
 * one mini-batch of local_bs (n_GA = 0, SWS), in the units of profdb.h.
 * total_s = data + fwd + bwd + update + copy (bn_s is the model's per-VSW
 * BN-sync constant, stored as the JABAS profiler stores it, not in total).
 * gpu/model names, mem_bytes and source "analytic" are filled in; run_id 0.
 * bd may be NULL.  Fails on a non-positive batch or VSW count, or a model or
 * GPU whose numbers cannot give a time. */
int hb_analytic_compute(const struct hb_gpu *g, const struct hb_model *m, int local_bs, int n_vsw,
			struct hb_compute_row *row, struct hb_analytic_breakdown *bd, struct hb_error *err);

/* Peak device memory of n_vsw VSWs at local_bs, bytes. */
double hb_analytic_mem_bytes(const struct hb_gpu *g, const struct hb_model *m, int local_bs, int n_vsw);

/* The same with the GPU's architecture given (a = hb_analytic_arch_of(g)),
 * for a caller that asks about many batches on one GPU: finding the
 * architecture matches the GPU's names against patterns, which cost more
 * than the sum. */
double hb_analytic_mem_bytes_on(const struct hb_analytic_arch *a, const struct hb_model *m, int local_bs, int n_vsw);

/* Largest n_vsw in [0, min(cap, HB_ANALYTIC_MAX_VSW)] that fits in memory
 * (0: not even one VSW fits).  cap <= 0 means no cap beyond 10; pass the
 * previous, smaller batch's result to keep n_max non-increasing in the
 * batch as the artifact's profiler does. */
int hb_analytic_max_vsw(const struct hb_gpu *g, const struct hb_model *m, int local_bs, int cap);

/* The local batches profiled for a model, ascending, into out (at most max):
 * every multiple of min_lbs up to max_gbs, or, when there are more than
 * HB_ANALYTIC_MAX_LBS_STEPS of them, that many multiples on a geometric
 * grid from min_lbs to max_gbs.  Returns the count. */
int hb_analytic_lbs_grid(const struct hb_model *m, int *out, int max);

/* Largest local batch of the grid above that fits with one VSW (0 if
 * min_lbs itself does not fit). */
int hb_analytic_max_local_bs(const struct hb_gpu *g, const struct hb_model *m);

/* JABAS Eq. 3 fit for a link class at bandwidth K (bytes/s):
 * t_ms = alpha * x_ms + beta with x_ms = d * 4(N-1)/N / K * 1000.  A ring
 * all-reduce moves 2(N-1)/N * d at efficiency e of K, so alpha = 1/(2e) and
 * beta is the family's latency; r2 is 1 (exact by construction). */
int hb_analytic_allreduce_fit(const char *scope, const char *link, double bandwidth,
			      struct hb_allreduce_fit *out, struct hb_error *err);

/* The fit of every (scope, link class) used by the catalog's clusters, in
 * order of first appearance; the first bandwidth seen for a class is its K.
 * *fits is malloc'd (free() it); *nfits may be 0. */
int hb_analytic_catalog_fits(const struct hb_catalog *cat, struct hb_allreduce_fit **fits, int *nfits,
			     struct hb_error *err);

/* Inputs the model needs: positive peak, bandwidth and memory (GPU);
 * positive parameters and FLOPs, non-negative per-sample terms (model).
 * 0, or -1 with an input error naming the field. */
int hb_analytic_check_gpu(const struct hb_gpu *g, struct hb_error *err);
int hb_analytic_check_model(const struct hb_model *m, struct hb_error *err);

#endif
