/*
 * ddp.h: equal-local-batch data parallelism on a heterogeneous allocation,
 * the layout of the SimiGrad, Pollux and static baselines (notes/jabas.md
 * §5 "Porting baselines" and §10.17).
 *
 * Every GPU runs one worker with the same local batch B_L and the same
 * number of micro-steps s = n_GA + 1, so B_G = B_L N_G s.  B_L is limited by
 * the GPU type with the least memory (the smallest maxB_L of the types used),
 * and the slowest GPU sets the pace: t = max_g t_g(B_L, 1 VSW, n_GA).  Each
 * t_g is the IIDP model of perfmodel.h with n_vsw = 1 and tau = 1: plain
 * DDP has no shard optimizer, so the optimizer step is fully exposed after
 * the last bucket, and there are no weight copies.  The all-reduce model is
 * the same (intra for one node, inter as soon as the allocation spans more).
 */
#ifndef HB_DDP_H
#define HB_DDP_H

#include "error.h"
#include "perfmodel.h"

struct hb_ddp_result {
	int found;          /* 0: no local batch fits every GPU type used (why says so) */
	char why[256];
	int local_bs;       /* B_L, equal on every GPU */
	int ga_steps;       /* extra accumulation steps; micro-steps per iteration = ga_steps + 1 */
	long global_bs;     /* realised B_G = local_bs n_gpus (ga_steps + 1) */
	int n_gpus;         /* N_G */
	double iter_s;      /* the slowest GPU's iteration time, s */
	double throughput;  /* global_bs / iter_s, samples/s */
	int slowest_node;   /* perf node index that sets the pace */
};

/* Iteration time for a given (B_L, n_GA) on allocation alloc (GPUs per perf
 * node; any count).  B_L must be profiled with n_max >= 1 on every type used. */
int hb_ddp_iter_time(const struct hb_perf *p, const int *alloc, int local_bs, int ga_steps, double *iter_s,
		     int *slowest_node, struct hb_error *err);

/* Plan a target global batch: the fewest micro-steps s that let B_L <= maxB_L
 * carry it (s = ceil(B_G / (N_G maxB_L))), then the candidate B_L nearest
 * to B_G / (N_G s) (ties to the larger), so the realised B_G may differ from
 * the target by the rounding of B_L to a multiple of minB_L.  With bounds
 * in p (min_gbs, max_gbs) a target outside them plans the bound, and only
 * B_L whose realised B_G stays inside are candidates (none: found = 0). */
int hb_ddp_plan(const struct hb_perf *p, const int *alloc, long target_global_bs, struct hb_ddp_result *out,
		struct hb_error *err);

#endif
