/*
 * perf_measured.h: measured step times of equal-batch data parallelism on
 * one GPU type, Pollux's placements.csv and scalability.csv (imported by
 * `hetbatch import pollux`), used as the ground truth of the layouts they
 * cover, as Pollux's own simulator does (notes/pollux.md §4.3 [ART]).
 *
 * Lookup, for an allocation of K GPUs on N nodes and a local batch m:
 *   1. the placement (GPUs per node, order ignored: "13" = "31") measured
 *      at local batches around m: linear interpolation in m;
 *   2. else the (N, K) pair of scalability.csv, likewise;
 *   3. else nothing: the caller keeps its model's prediction.
 * m outside a set's measured range is not extrapolated (case 3).  The
 * artifact falls back to a 3-D linear interpolation over (nodes, replicas,
 * m) instead of 2 and 3; with `artifact` set (Pollux fidelity) so does this
 * lookup (interp3.h), nodes capped at 16 as there.
 * The artifact itself keys step 1 by the placement's order: GPUs per node
 * in the order of the job's allocation list, normalised to its
 * lexicographically least rotation ("31" = "13", but "2424" != "2244",
 * both measured, 6 % apart for DeepSpeech2); with `artifact` set,
 * hb_perf_measured_step_ordered looks the measured rows up that way.
 * With accumulation s, the artifact's iteration is step + s (step - sync):
 * the extra micro-steps repeat the compute, not the synchronisation.
 */
#ifndef HB_PERF_MEASURED_H
#define HB_PERF_MEASURED_H

#include <pthread.h>
#include <stdatomic.h>

#include "error.h"

struct hb_interp3;
struct hb_profdb;

struct hb_meas_point {
	int local_bs;
	double step_s;     /* one iteration, compute + synchronisation, s */
	double sync_s;     /* its synchronisation part, s */
};

/* Every measurement of one layout, ascending in local_bs (duplicates
 * averaged). */
struct hb_meas_set {
	char key[24];      /* placement digits, descending ("4444"); "" for a scalability set */
	int nodes, replicas;
	struct hb_meas_point *pts;
	int npts;
};

struct hb_perf_measured {
	struct hb_meas_set *place;   /* owned */
	int nplace;
	struct hb_meas_set *scal;    /* owned */
	int nscal;
	/* Pollux fidelity (hb_perf_measured_use_artifact): the artifact's
	 * lookup, i.e. a measured placement, else the 3-D interpolation below
	 * (no scalability step of its own, no perf-model fallback inside it). */
	int artifact;
	/* The placements keyed as the artifact reads them (each row's own
	 * digits, not merged across rotations); owned. */
	struct hb_meas_set *aplace;
	int naplace;
	/* The artifact's point set over (nodes, replicas, local batch): every
	 * placement triple's mean, ascending, then the scalability rows in the
	 * order they were imported.  Kept from the load (nd_n points, owned)
	 * and triangulated into nd by the first artifact lookup that finds no
	 * measured placement (hb_perf_measured_nd), NULL when there are fewer
	 * than 4 points or they span no volume (owned).  Only the fidelity
	 * modes pay for the triangulation, and only for the sets that need it:
	 * building one per GPU type x model up front was 43 % of a Gavel
	 * replay of Sia's workloads, whose layouts are mostly measured. */
	double *nd_xyz, *nd_val;
	int nd_n;
	struct hb_interp3 *nd;
	atomic_int nd_tried;      /* 1 once the triangulation was attempted (release/acquire) */
	pthread_mutex_t nd_lock;  /* one builder when threads share the set (a sweep's models) */
};

/* Switch m to the artifact's lookup (Pollux and Sia fidelity); its point
 * set is triangulated when a lookup first needs it. */
int hb_perf_measured_use_artifact(struct hb_perf_measured *m, struct hb_error *err);

/* m's triangulation, built on the first call (thread-safe; m is logically
 * const: the triangulation is a cache of its points); NULL when it has
 * none (fewer than 4 points, no volume, or out of memory, which the
 * artifact's lookup treats as no fallback, as a degenerate set). */
const struct hb_interp3 *hb_perf_measured_nd(const struct hb_perf_measured *m);

/* Load the rows of (model, gpu) from db; *out is NULL when there are none. */
int hb_perf_measured_load(struct hb_profdb *db, const char *model, const char *gpu, struct hb_perf_measured **out,
			  struct hb_error *err);
void hb_perf_measured_free(struct hb_perf_measured *m);

/* The measured iteration time of counts[0..n) GPUs per used node (zeros
 * ignored) at local batch local_bs with ga_steps extra micro-steps: 1 and
 * *iter_s set, or 0 when no measurement covers it. */
int hb_perf_measured_step(const struct hb_perf_measured *m, const int *counts, int n, int local_bs, int ga_steps,
			  double *iter_s);

/* The order of counts[] as the artifact's allocation list holds it. */
enum hb_place_order {
	HB_PLACE_DESCENDING, /* most GPUs first: its Tiresias and Optimus (Counter.most_common picks) */
	HB_PLACE_AS_GIVEN    /* counts[] as passed, here node order: its Pollux (_state_to_allocations) */
};

/* hb_perf_measured_step, but with `artifact` set the placement is counts'
 * nonzero entries in `order`, at their least rotation, matched against the
 * rows as the artifact reads them (applications.py get_throughput).  Without
 * `artifact` the same as hb_perf_measured_step. */
int hb_perf_measured_step_ordered(const struct hb_perf_measured *m, const int *counts, int n, enum hb_place_order order,
				  int local_bs, int ga_steps, double *iter_s);

/* The artifact's largest local batch for a placement (applications.py
 * Application.get_max_local_bsz): the largest measured at counts' nonzero
 * entries in `order`, keyed by their least rotation as the rows are read,
 * else the largest of the scalability rows of at least as many nodes and
 * replicas; 0 when neither has one. */
int hb_perf_measured_max_local(const struct hb_perf_measured *m, const int *counts, int n, enum hb_place_order order);

/* The largest local batch measured at any placement of `replicas` GPUs
 * (Job.update_local_bsz's memory correction), 0 when none has that many. */
int hb_perf_measured_max_local_replicas(const struct hb_perf_measured *m, int replicas);

/* Samples per second of one GPU as Sia's simulator rates a GPU type for
 * its throughput projection (cluster.py Cluster.compute_throughput_ratios):
 * the largest local batch over the largest step time among the one-GPU
 * placements; 0 when m has none. */
double hb_perf_measured_one_gpu_rate(const struct hb_perf_measured *m);

/* The smallest and largest local batch of m's placements
 * (applications.py Application.min_local_bsz, max_local_bsz); both 0 when
 * m has none. */
void hb_perf_measured_local_range(const struct hb_perf_measured *m, int *lo, int *hi);

/* The measured layout nearest to counts (in |ln nodes ratio| + |ln GPUs
 * ratio|, ties to placements, then to the first loaded) among those
 * measured around local_bs: its GPUs per node (descending; a scalability
 * set's replicas spread evenly over its nodes) into ref[0..*nref) (at most
 * max entries) and its measured time into *iter_s.  0 when none covers
 * local_bs. */
int hb_perf_measured_nearest(const struct hb_perf_measured *m, const int *counts, int n, int local_bs, int ga_steps,
			     int *ref, int max, int *nref, double *iter_s);

#endif
