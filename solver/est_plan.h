/*
 * est_plan.h: EasyScale's EST plans (notes/easyscale.md §2.3, §2.5).
 *
 * A job has maxP logical workers (EasyScaleThreads, ESTs), each running one
 * mini-batch of the job's fixed per-EST batch per global step.  A plan puts
 * n_i GPUs of type i to work and a_i ESTs on each of them (integer, time
 * sliced on the GPU, one mini-batch at a time), with sum_i n_i a_i >= maxP
 * (a slot beyond maxP stays empty).  The slowest GPU gates the synchronous
 * step:
 *
 *   step_s = max_{i: n_i > 0} ( a_i e_i + (a_i - 1) s_i + u_i )
 *   e_i    = est_s_i x d2_i when the plan mixes types, else est_s_i
 *
 * with s_i the overhead of each EST beyond the first (context switch and
 * the exposed part of its gradient copy, §3.2) and u_i what a type-i GPU
 * does once per step (the optimizer update, the exposed all-reduce).  The
 * plan's throughput is maxP / step_s mini-batches per second.  With s = u
 * = 0 and no D2 factor this is the corrected Eq. 1 (with N_i, §2.3):
 *
 *   f      = max_i a_i / C_i,  C_i = 1 / e_i
 *   waste  = sum_i n_i (C_i - a_i / f) + (nEST - maxP) / f
 *   thp    = sum_i n_i C_i - waste = maxP / f
 *
 * hb_est_eq1 evaluates that literal form, so tests can check the two agree.
 *
 * Splits: for fixed GPU counts n the best a minimises step_s.  A GPU of a
 * type need not carry the same number of ESTs as the others of its type,
 * but only the most loaded one counts, so one a_i per type loses nothing
 * (tests check this against per-GPU enumeration).  The search walks the
 * candidate step times a e_i + (a-1) s_i + u_i in increasing order and
 * takes the first at which every used type fits at least one EST and the
 * slots reach maxP: an exact integer optimum, the "ESTs proportional to
 * GPU speed" of [A]'s floor/ceil(m perf_i) candidates without their
 * rounding.
 *
 * The solver is pure: the caller (sim/policies/easyscale/agent_easyscale.c) turns
 * its perf model into est_s, s, u and d2 per GPU type.
 */
#ifndef HB_EST_PLAN_H
#define HB_EST_PLAN_H

#define HB_EST_MAX_TYPES 16     /* GPU types one plan may span */
#define HB_EST_MAX_P 4096       /* largest maxP a plan is computed for */

/* One GPU type as the planner sees it for one job. */
struct hb_est_type {
	double est_s;            /* one EST's local step (data + forward + backward of one mini-batch), s; > 0 */
	double d2;               /* factor on est_s when the plan mixes GPU types (D2 kernels), >= 1 */
	double switch_s;         /* per EST beyond the first on a GPU: context switch + exposed copy, s; >= 0 */
	double fixed_s;          /* once per step on a GPU of this type: update, exposed all-reduce, s; >= 0 */
	int avail;               /* GPUs of this type the plan may use (hb_est_best); >= 0 */
};

/* A plan: GPUs and ESTs per type, and what it achieves. */
struct hb_est_plan {
	int ntypes;              /* entries of n and a used */
	int n[HB_EST_MAX_TYPES]; /* GPUs of each type */
	int a[HB_EST_MAX_TYPES]; /* ESTs on each of them (the most loaded GPU of the type), 0 where n = 0 */
	int ngpus;               /* sum n */
	int nest;                /* EST slots, sum n a (>= maxP) */
	int maxp;                /* the job's maxP */
	int mixed;               /* 1 when more than one type is used (D2 factors applied) */
	double step_s;           /* time of one global step, s */
	double thp;              /* maxP / step_s, mini-batches per second */
	double eq1_thp;          /* corrected Eq. 1 (compute only: s = u = 0), mini-batches per second */
	double capacity;         /* sum n_i C_i with C_i = 1 / e_i, mini-batches per second */
	double waste_frac;       /* Eq. 1's waste / capacity, in [0, 1) */
};

/* Step time of one GPU of type t carrying a ESTs (mixed: with the D2
 * factor): a x EST time + (a - 1) x switch cost + fixed cost. */
double hb_est_gpu_step(const struct hb_est_type *t, int mixed, int a);

/* The best split of maxP ESTs over the GPU counts n (ntypes entries):
 * fills out and returns 1, or 0 when n holds no GPU; -1 on bad input
 * (ntypes or maxp out of range, a non-positive est_s, d2 < 1, a negative
 * overhead or count).  Ties between step times cannot occur: the first
 * feasible candidate is taken, and each type then gets the most ESTs that
 * fit under it (slots past maxP are free at that step time). */
int hb_est_split(const struct hb_est_type *t, int ntypes, const int *n, int maxp, struct hb_est_plan *out);

/* Eq. 1 literally, with N_i inside the waste sum (notes §2.3): the
 * throughput sum_i n_i C_i - waste of the split (n, a), compute only.
 * *waste and *capacity (may be NULL) receive the two terms. */
double hb_est_eq1(const struct hb_est_type *t, int ntypes, const int *n, const int *a, int maxp, double *waste,
		  double *capacity);

/* Called by hb_est_best for each count vector before its split: may set
 * the fixed_s of the types (the all-reduce depends on where the GPUs are)
 * in t, a copy the caller may change.  Returns 0, or -1 to skip n. */
typedef int hb_est_adjust_fn(void *ctx, const int *n, struct hb_est_type *t, int ntypes);

/* The best plan using at most t[i].avail GPUs of each type in allowed
 * (a bit per type; 0 means all), at most maxP GPUs in all: the highest
 * throughput, ties to fewer GPUs, then to the count vector that is
 * smaller in the types' order.  adjust may be NULL.  Returns 1 and fills
 * out, 0 when no type has a GPU, -1 on bad input. */
int hb_est_best(const struct hb_est_type *t, int ntypes, int maxp, unsigned allowed, hb_est_adjust_fn *adjust,
		void *ctx, struct hb_est_plan *out);

#endif
