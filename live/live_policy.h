/*
 * live_policy.h: the decisions of an adaptive live run (`hetbatch live
 * --policy jabas|simigrad|static`), made from measured gradients.
 *
 * The rules are the simulator's agents' (sim/agent_jabas.c,
 * sim/policies/simigrad/agent_simigrad.c, agent_static.c) on a dedicated cluster; what differs is
 * where the similarity comes from (measured by the ranks, live.h
 * hb_live_metric) and what carries the state between decisions (struct
 * hb_live_pstate, which a relaunch passes on through a state file).
 *
 *   static    DDP on every GPU of the cluster at one global batch, no change.
 *   simigrad  DDP on every GPU; every p iterations SimiGrad's rule on an
 *             unrounded target (agent_util.h hb_simigrad_decide), applied in
 *             place when the realised batch moves the way Phi asked.
 *   jabas     start: the candidate allocation Q (GPU pairs, identical nodes
 *             merged) with the least predicted epoch time at B_G^init;
 *             every p iterations SimiGrad's rule on the realised B_G and the
 *             IIDP solver with the run-time parity rule, applied in place;
 *             at every epoch end the forecast of the next epoch's B_G (0.5
 *             GPR on the epoch's points + 0.5 SES on all, SES alone below 3
 *             points) and the argmin over Q of the predicted epoch time; a
 *             new allocation is a checkpoint and relaunch.
 * Configurations are hb_live_plan values (slots in cluster node order,
 * IIDP pairs as two consecutive slots), with the perf model's prediction
 * per GPU and for the configuration.
 */
#ifndef HB_LIVE_POLICY_H
#define HB_LIVE_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "catalog.h"
#include "error.h"
#include "iidp.h"
#include "live.h"
#include "perfmodel.h"

#define HB_LIVE_MAX_NODES 64

enum hb_live_policy_kind {
	HB_LIVE_STATIC = 0,
	HB_LIVE_SIMIGRAD = 1,
	HB_LIVE_JABAS = 2,
};

/* The policy's knobs; the model's values unless the command line says. */
struct hb_live_policy_params {
	enum hb_live_policy_kind kind;
	long p;                  /* adaptation interval, iterations */
	double gamma, alpha;     /* similarity threshold, adaptive rate */
	long min_gbs, max_gbs;   /* global batch bounds */
	long init_gbs;           /* the first B_G (static: the only one) */
	double dataset;          /* samples per epoch */
	long epochs;             /* epochs to train */
	uint64_t seed;           /* the forecaster's restarts derive from it */
};

/* What the decisions carry from one to the next (and across relaunches). */
struct hb_live_pstate {
	int nnodes;
	int alloc[HB_LIVE_MAX_NODES]; /* GPUs per cluster node */
	long global_bs;          /* realised B_G now */
	double target;           /* simigrad: the unrounded target */
	long iteration;          /* iterations done */
	long epoch;              /* epochs done */
	double epoch_samples;    /* samples into the current epoch */
	double *hist_step;       /* jabas: (iteration, B_G) at every adaptation point, all epochs */
	double *hist_bs;
	size_t nhist, cap_hist;
	size_t epoch_start;      /* the first point of the current epoch (the GPR trains on those) */
};

void hb_live_pstate_free(struct hb_live_pstate *s);
int hb_live_pstate_add_point(struct hb_live_pstate *s, double step, double bs, struct hb_error *err);

struct hb_live_policy {
	struct hb_live_policy_params par;
	const struct hb_catalog *cat;
	const struct hb_cluster *cl;
	struct hb_model model;   /* the catalog model with the run's dataset and batch bounds */
	char profiles[512];
	struct hb_perf perf;
	int perf_loaded;
	struct hb_iidp_solver *solver;
	struct hb_alloc_set q;   /* jabas: candidate allocations */
	int *cand_alloc;         /* [ncand x nnodes] */
	size_t ncand;
};

const char *hb_live_policy_name(enum hb_live_policy_kind k);
int hb_live_policy_parse(const char *name, enum hb_live_policy_kind *k, struct hb_error *err);

/* Load the perf model of model m on cluster cl from the profile database
 * dbpath (and for jabas the solver and Q).  par's zero fields take the
 * model's values (p, gamma, alpha, bounds; init_gbs: min_gbs; dataset). */
int hb_live_policy_open(struct hb_live_policy *pol, const struct hb_catalog *cat, const struct hb_cluster *cl,
			const struct hb_model *m, const char *dbpath, const struct hb_live_policy_params *par,
			struct hb_error *err);
void hb_live_policy_close(struct hb_live_policy *pol);

/* The start: st (zeroed by the caller) gets the allocation and B_G; why
 * says how they were chosen. */
int hb_live_policy_start(struct hb_live_policy *pol, struct hb_live_pstate *st, char *why, size_t whylen,
			 struct hb_error *err);
/* The configuration of st's allocation at st->global_bs (start, relaunch):
 * jabas Algorithm 1's M rule, DDP for the others.  st->global_bs becomes
 * the realised batch. */
int hb_live_policy_config(struct hb_live_policy *pol, struct hb_live_pstate *st, struct hb_live_plan *out,
			  struct hb_error *err);
/* An adaptation point with measured similarity phi (NAN: not measured,
 * the batch holds).  *changed = 1 and *out filled (caller frees) when the
 * configuration changes in place; st follows. */
int hb_live_policy_adapt(struct hb_live_policy *pol, struct hb_live_pstate *st, double phi,
			 struct hb_live_plan *out, int *changed, char *why, size_t whylen, struct hb_error *err);
/* The end of an epoch (st->epoch already counts it): *move = 1 and
 * st->alloc, st->global_bs set when the run should continue on another
 * allocation (jabas); why says what was decided. */
int hb_live_policy_epoch_end(struct hb_live_policy *pol, struct hb_live_pstate *st, int *move, char *why,
			     size_t whylen, struct hb_error *err);

#endif
