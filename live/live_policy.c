/*
 * live_policy.c: adaptive decisions of live runs (live_policy.h).
 *
 * The rules follow the simulator's dedicated-cluster agents; the comments
 * there (sim/agent_jabas.c, sim/policies/simigrad/agent_simigrad.c) give the paper references
 * and the readings taken where the paper is ambiguous.  Only the plumbing
 * differs: no simulated job, the measured similarity as input, and
 * configurations as live plans.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_util.h"   /* hb_simigrad_step, hb_simigrad_decide, hb_agent_ddp_config, hb_agent_alloc_all */
#include "autoscale.h"    /* hb_jabas_epoch_time */
#include "forecast.h"     /* hb_fc_trajectory, hb_fc_series_add, hb_fc_epoch_seed */
#include "live_policy.h"
#include "profdb.h"
#include "strutil.h"

#define LIVE_UNIT_GPUS 2          /* JABAS allocates GPU pairs (agent_jabas.c JABAS_UNIT_GPUS) */

const char *hb_live_policy_name(enum hb_live_policy_kind k)
{
	return k == HB_LIVE_JABAS ? "jabas" : k == HB_LIVE_SIMIGRAD ? "simigrad" : "static";
}

int hb_live_policy_parse(const char *name, enum hb_live_policy_kind *k, struct hb_error *err)
{
	/* any case, as hb_policy_find */
	if (hb_strcaseeq(name, "jabas"))
		*k = HB_LIVE_JABAS;
	else if (hb_strcaseeq(name, "simigrad"))
		*k = HB_LIVE_SIMIGRAD;
	else if (hb_strcaseeq(name, "static"))
		*k = HB_LIVE_STATIC;
	else
		return hb_input_error(err, "--policy '%s': jabas, simigrad or static", name);
	return 0;
}

void hb_live_pstate_free(struct hb_live_pstate *s)
{
	free(s->hist_step);
	free(s->hist_bs);
	s->hist_step = s->hist_bs = NULL;
	s->nhist = s->cap_hist = 0;
}

/* The forecaster's series: forecast.h hb_fc_series_add's rule, as the
 * simulator's JABAS agent keeps it. */
int hb_live_pstate_add_point(struct hb_live_pstate *s, double step, double bs, struct hb_error *err)
{
	return hb_fc_series_add(&s->hist_step, &s->hist_bs, &s->nhist, &s->cap_hist, s->epoch_start, step, bs, err);
}

static void plan_header(const struct hb_live_policy *pol, const char *method, struct hb_live_plan *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->path, sizeof(out->path), "policy %s", hb_live_policy_name(pol->par.kind));
	hb_strlcpy(out->method, method, sizeof(out->method));
	hb_strlcpy(out->model, pol->model.name, sizeof(out->model));
	hb_strlcpy(out->cluster, pol->cl->name, sizeof(out->cluster));
	hb_strlcpy(out->profiles, pol->profiles, sizeof(out->profiles));
}

static int plan_from_iidp(const struct hb_live_policy *pol, const struct hb_iidp_result *r, struct hb_live_plan *out,
			  struct hb_error *err)
{
	plan_header(pol, "iidp", out);
	if (hb_iidp_format_config(&pol->perf, r, out->config, sizeof(out->config)) < 0)
		memcpy(out->config + sizeof(out->config) - 4, "...", 4);
	out->global_batch = r->global_bs;
	out->ows = r->sync == HB_SYNC_OWS;
	out->pred_iter_s = r->iter_s;
	for (int k = 0; k < r->npairs; k++) {
		const struct hb_iidp_pair_cfg *pc = &r->pairs[k];
		const struct hb_node *nd = &pol->cl->nodes[pc->node];

		for (int g = 0; g < 2; g++)
			if (hb_live_plan_add_slot(out, nd->name, pol->cat->gpus[nd->gpu].name, pc->n_vsw, pc->n_ga,
						  r->local_bs, pc->iter_s, err) < 0)
				return -1;
	}
	return 0;
}

/* Equal local batches, one VSW per GPU, every GPU of alloc. */
static int plan_from_ddp(const struct hb_live_policy *pol, const struct hb_job_config *cfg, struct hb_live_plan *out,
			 struct hb_error *err)
{
	long per_step = (long)cfg->local_bs * cfg->ngpus;
	int ga;

	if (per_step < 1 || cfg->global_bs % per_step != 0)
		return hb_runtime_error(err, "live: DDP configuration %s: B_G %ld is not a multiple of B_L x GPUs",
					cfg->layout, cfg->global_bs);
	ga = (int)(cfg->global_bs / per_step) - 1;
	plan_header(pol, "ddp", out);
	hb_strlcpy(out->config, cfg->layout, sizeof(out->config));
	out->global_batch = cfg->global_bs;
	out->pred_iter_s = cfg->iter_s;
	for (int i = 0; i < pol->cl->nnodes; i++) {
		const struct hb_node *nd = &pol->cl->nodes[i];
		double t;

		if (cfg->alloc[i] > 0 &&
		    hb_perf_iter_time(&pol->perf, cfg->alloc, i, cfg->local_bs, 1, ga, &t, err) < 0)
			return -1;
		for (int g = 0; g < cfg->alloc[i]; g++)
			if (hb_live_plan_add_slot(out, nd->name, pol->cat->gpus[nd->gpu].name, 1, ga, cfg->local_bs, t,
						  err) < 0)
				return -1;
	}
	return 0;
}

static int build_q(struct hb_live_policy *pol, struct hb_error *err)
{
	int n = pol->cl->nnodes;

	if (hb_alloc_enumerate(pol->cl, pol->cat, LIVE_UNIT_GPUS, 1, 0, &pol->q, err) < 0) {
		hb_error_prefix(err, "live jabas: candidate allocations on %s (JABAS runs on GPU pairs)", pol->cl->name);
		return -1;
	}
	pol->cand_alloc = malloc((pol->q.ncand ? pol->q.ncand : 1) * (size_t)n * sizeof(int));
	if (!pol->cand_alloc)
		return hb_runtime_error(err, "live: out of memory for %zu candidates", pol->q.ncand);
	for (size_t i = 0; i < pol->q.ncand; i++) {
		const int *u = hb_alloc_node_units(&pol->q, i);

		for (int k = 0; k < n; k++)
			pol->cand_alloc[i * (size_t)n + k] = u[k] * pol->q.unit;
	}
	pol->ncand = pol->q.ncand;
	return 0;
}

int hb_live_policy_open(struct hb_live_policy *pol, const struct hb_catalog *cat, const struct hb_cluster *cl,
			const struct hb_model *m, const char *dbpath, const struct hb_live_policy_params *par,
			struct hb_error *err)
{
	struct hb_profdb *db = NULL;
	struct hb_perf_opts po;
	struct hb_live_policy_params *x = &pol->par;
	int rc;

	memset(pol, 0, sizeof(*pol));
	pol->cat = cat;
	pol->cl = cl;
	pol->model = *m;
	pol->par = *par;
	hb_strlcpy(pol->profiles, dbpath, sizeof(pol->profiles));
	if (cl->nnodes > HB_LIVE_MAX_NODES)
		return hb_input_error(err, "cluster %s: %d nodes (live runs take at most %d)", cl->name, cl->nnodes,
				      HB_LIVE_MAX_NODES);
	if (x->p <= 0)
		x->p = m->adapt_interval;
	if (!(x->gamma > 0))
		x->gamma = m->gamma;
	if (!(x->alpha > 0))
		x->alpha = m->adapt_rate;
	if (x->min_gbs <= 0)
		x->min_gbs = m->min_gbs;
	if (x->max_gbs <= 0)
		x->max_gbs = m->max_gbs;
	if (x->init_gbs <= 0)
		x->init_gbs = x->min_gbs;
	if (!(x->dataset > 0))
		x->dataset = m->dataset_size;
	if (x->p < 1 || x->min_gbs < 1 || x->max_gbs < x->min_gbs || x->init_gbs < x->min_gbs ||
	    x->init_gbs > x->max_gbs || !(x->alpha > 0 && x->alpha < 1) || !(x->dataset >= 1) || x->epochs < 1)
		return hb_input_error(err, "live --policy %s: interval %ld (>= 1), batch bounds %ld..%ld with first "
				      "B_G %ld inside, alpha %g (0 < alpha < 1), dataset %g samples (>= 1), %ld "
				      "epochs (>= 1)", hb_live_policy_name(x->kind), x->p, x->min_gbs, x->max_gbs,
				      x->init_gbs, x->alpha, x->dataset, x->epochs);
	/* the model the simulator sees for the same job: the run's numbers */
	pol->model.adapt_interval = x->p;
	pol->model.gamma = x->gamma;
	pol->model.adapt_rate = x->alpha;
	pol->model.min_gbs = x->min_gbs;
	pol->model.max_gbs = x->max_gbs;
	pol->model.dataset_size = x->dataset;
	hb_perf_opts_default(&po);
	rc = hb_profdb_open(dbpath, 1, &db, err);
	if (rc == 0)
		rc = hb_perf_load(db, cat, cl, &pol->model, &po, &pol->perf, err);
	hb_profdb_close(db);
	if (rc < 0)
		return -1;
	pol->perf_loaded = 1;
	/* the run's bounds, not the catalog's per-cluster ones */
	pol->perf.min_gbs = x->min_gbs;
	pol->perf.max_gbs = x->max_gbs;
	if (hb_iidp_solver_new(&pol->perf, &pol->solver, err) < 0)
		return -1;
	if (x->kind == HB_LIVE_JABAS && build_q(pol, err) < 0)
		return -1;
	return 0;
}

void hb_live_policy_close(struct hb_live_policy *pol)
{
	hb_iidp_solver_free(pol->solver);
	pol->solver = NULL;
	if (pol->perf_loaded)
		hb_perf_free(&pol->perf);
	pol->perf_loaded = 0;
	hb_alloc_free(&pol->q);
	free(pol->cand_alloc);
	pol->cand_alloc = NULL;
	pol->ncand = 0;
}

/* argmin over Q of the predicted epoch time of traj, its first point run
 * exactly (autoscale.h struct hb_jabas_first: B_G^init at the start, the
 * current B_G at an epoch end), else rounded as Algorithm 1 where no
 * candidate can; ties to the later candidate (more GPUs), as agent_jabas.c
 * pick_allocation. */
static int pick_allocation(struct hb_live_policy *pol, const long *traj, size_t ntraj, long done, long *best,
			   double *best_s, struct hb_error *err)
{
	static const struct hb_jabas_first exact = { HB_IIDP_M_EXACT, 0 };
	int n = pol->cl->nnodes;

	*best = -1;
	*best_s = INFINITY;
	for (int pass = 0; pass < 2 && *best < 0; pass++)
	for (size_t i = 0; i < pol->ncand; i++) {
		struct hb_epoch_estimate est;
		struct hb_iidp_shape sh = { 0 };
		int rc = hb_iidp_shape_of(pol->solver, pol->cand_alloc + i * (size_t)n, &sh, err);

		if (rc == 0)
			rc = hb_jabas_epoch_time_shape(pol->solver, &sh, traj, (int)ntraj, pol->par.p, done,
						       pol->par.dataset, pass == 0 ? &exact : NULL, &est, err);
		hb_iidp_shape_free(&sh);
		if (rc < 0)
			return -1;
		if (est.feasible && est.epoch_s <= *best_s) {
			*best = (long)i;
			*best_s = est.epoch_s;
		}
	}
	return 0;
}

static int alloc_gpus(const int *a, int n)
{
	int g = 0;

	for (int i = 0; i < n; i++)
		g += a[i];
	return g;
}

int hb_live_policy_start(struct hb_live_policy *pol, struct hb_live_pstate *st, char *why, size_t whylen,
			 struct hb_error *err)
{
	int n = pol->cl->nnodes;

	st->nnodes = n;
	st->global_bs = pol->par.init_gbs;
	st->target = (double)pol->par.init_gbs;
	if (pol->par.kind != HB_LIVE_JABAS) {
		hb_agent_alloc_all(&pol->perf, st->alloc);
		snprintf(why, whylen, "%s: every GPU of %s, B_G %ld", hb_live_policy_name(pol->par.kind),
			 pol->cl->name, st->global_bs);
		return 0;
	} else {
		long best, init = st->global_bs;
		double best_s;

		if (pick_allocation(pol, &init, 1, 0, &best, &best_s, err) < 0)
			return -1;
		if (best < 0)
			return hb_input_error(err, "live jabas: no allocation of %s can run B_G %ld", pol->cl->name, init);
		memcpy(st->alloc, pol->cand_alloc + (size_t)best * (size_t)n, (size_t)n * sizeof(int));
		snprintf(why, whylen, "jabas initial phase: %d GPUs, least predicted epoch time (%.1f s) at B_G^init %ld "
			 "of %zu candidates", alloc_gpus(st->alloc, n), best_s, init, pol->ncand);
	}
	return 0;
}

int hb_live_policy_config(struct hb_live_policy *pol, struct hb_live_pstate *st, struct hb_live_plan *out,
			  struct hb_error *err)
{
	int rc;

	if (pol->par.kind == HB_LIVE_JABAS) {
		/* B_G itself where it can run (pick_allocation's rule), else rounded */
		struct hb_iidp_request req = { .alloc = st->alloc, .global_bs = st->global_bs,
					       .m_rule = HB_IIDP_M_EXACT };
		struct hb_iidp_result r;

		if (hb_iidp_solve(pol->solver, &req, &r, err) < 0)
			return -1;
		if (!r.found) {
			hb_iidp_result_free(&r);
			req.m_rule = HB_IIDP_M_ROUND;
			if (hb_iidp_solve(pol->solver, &req, &r, err) < 0)
				return -1;
		}
		if (!r.found) {
			rc = hb_input_error(err, "live jabas: no IIDP configuration of B_G %ld on %d GPUs of %s: %s",
					    st->global_bs, alloc_gpus(st->alloc, st->nnodes), pol->cl->name, r.why);
		} else {
			rc = plan_from_iidp(pol, &r, out, err);
			st->global_bs = r.global_bs;
		}
		hb_iidp_result_free(&r);
	} else {
		struct hb_job_config cfg;

		hb_job_config_init(&cfg, st->nnodes);
		rc = cfg.alloc ? hb_agent_ddp_config(&pol->perf, st->alloc, st->global_bs, &cfg, NULL, err)
			       : hb_runtime_error(err, "live: out of memory");
		if (rc == 0)
			rc = plan_from_ddp(pol, &cfg, out, err);
		if (rc == 0)
			st->global_bs = cfg.global_bs;
		hb_job_config_free(&cfg);
	}
	if (rc < 0)
		hb_live_plan_free(out);
	return rc;
}

int hb_live_policy_adapt(struct hb_live_policy *pol, struct hb_live_pstate *st, double phi,
			 struct hb_live_plan *out, int *changed, char *why, size_t whylen, struct hb_error *err)
{
	const struct hb_simigrad_params sp = { .gamma = pol->par.gamma, .alpha = pol->par.alpha,
					       .min_gbs = pol->par.min_gbs, .max_gbs = pol->par.max_gbs };
	const long cur = st->global_bs;
	int rc = 0;

	*changed = 0;
	why[0] = '\0';
	if (pol->par.kind == HB_LIVE_STATIC)
		return 0;
	if (pol->par.kind == HB_LIVE_SIMIGRAD) {
		struct hb_job_config cfg;
		struct hb_simigrad_decision d;

		hb_job_config_init(&cfg, st->nnodes);
		if (!cfg.alloc)
			return hb_runtime_error(err, "live: out of memory");
		rc = hb_simigrad_decide(&pol->perf, st->alloc, &sp, st->target, cur, phi, &cfg, &d, err);
		if (rc == 0) {
			st->target = d.target;
			hb_strlcpy(why, d.why, whylen);
			if (d.apply && (rc = plan_from_ddp(pol, &cfg, out, err)) == 0) {
				st->global_bs = cfg.global_bs;
				*changed = 1;
			}
		}
		hb_job_config_free(&cfg);
		return rc;
	}
	{
		long next = (long)floor(hb_simigrad_step(&sp, (double)cur, phi, NULL) + 0.5);

		if (next != cur) {
			struct hb_iidp_request req = { .alloc = st->alloc, .global_bs = next,
						       .m_rule = HB_IIDP_M_RUNTIME, .cur_global_bs = cur };
			struct hb_iidp_result r;

			if (hb_iidp_solve(pol->solver, &req, &r, err) < 0)
				return -1;
			if (r.found && r.global_bs != cur) {
				rc = plan_from_iidp(pol, &r, out, err);
				if (rc == 0) {
					snprintf(why, whylen, "similarity %.4f %s gamma %.4g: B_G %ld -> %ld (target %ld)", phi,
						 phi < sp.gamma ? "<" : ">", sp.gamma, cur, r.global_bs, next);
					st->global_bs = r.global_bs;
					*changed = 1;
				}
			} else {
				snprintf(why, whylen, "similarity %.4f: target B_G %ld has no configuration that moves the "
					 "batch (%s): keep %ld", phi, next, r.found ? "rounds back" : r.why, cur);
			}
			hb_iidp_result_free(&r);
		} else {
			snprintf(why, whylen, "similarity %.4f: B_G stays %ld", phi, cur);
		}
	}
	if (rc == 0)
		rc = hb_live_pstate_add_point(st, (double)st->iteration, (double)st->global_bs, err);
	if (rc < 0 && *changed) {
		hb_live_plan_free(out);
		*changed = 0;
	}
	return rc;
}

/* traj[0] = B_G now, then the forecast at the next epoch's adaptation
 * points, clipped to the bounds (hb_fc_trajectory, as agent_jabas.c). */
static int trajectory(const struct hb_live_policy *pol, const struct hb_live_pstate *st, long **traj, size_t *ntraj,
		      struct hb_error *err)
{
	const struct hb_fc_history h = { .step = st->hist_step, .batch = st->hist_bs, .n = st->nhist,
					 .epoch_start = st->epoch_start };
	const struct hb_fc_traj_spec spec = {
		.method = HB_FC_ENSEMBLE,
		.seed = hb_fc_epoch_seed(pol->par.seed, 0, st->epoch),
		.interval = (double)pol->par.p,
		.sync_step = (double)st->iteration,
		.dataset = pol->par.dataset,
		.cur_bs = st->global_bs,
		.min_bs = pol->par.min_gbs,
		.max_bs = pol->par.max_gbs,
	};

	return hb_fc_trajectory(&h, &spec, traj, ntraj, err);
}

int hb_live_policy_epoch_end(struct hb_live_policy *pol, struct hb_live_pstate *st, int *move, char *why,
			     size_t whylen, struct hb_error *err)
{
	long *traj = NULL, best;
	size_t ntraj = 0;
	int n = st->nnodes;
	double best_s;

	*move = 0;
	why[0] = '\0';
	if (pol->par.kind != HB_LIVE_JABAS)
		return 0;
	if (trajectory(pol, st, &traj, &ntraj, err) < 0 ||
	    pick_allocation(pol, traj, ntraj, st->iteration % pol->par.p, &best, &best_s, err) < 0) {
		free(traj);
		hb_error_prefix(err, "live jabas: auto-scaling after epoch %ld", st->epoch);
		return -1;
	}
	if (best < 0) {
		snprintf(why, whylen, "epoch %ld: no allocation runs the forecast (B_G %ld..%ld): keep", st->epoch, traj[0],
			 traj[ntraj - 1]);
	} else {
		const int *a = pol->cand_alloc + (size_t)best * (size_t)n;

		*move = memcmp(a, st->alloc, (size_t)n * sizeof(int)) != 0;
		snprintf(why, whylen,
			 "epoch %ld: trajectory of %zu points, B_G %ld..%ld, best %d GPUs (%.1f s/epoch)%s", st->epoch,
			 ntraj, traj[0], traj[ntraj - 1], alloc_gpus(a, n), best_s, *move ? ": relaunch" : ", keep");
		if (*move)
			memcpy(st->alloc, a, (size_t)n * sizeof(int));
	}
	/* the next epoch's points train the next GPR */
	st->epoch_start = st->nhist;
	free(traj);
	return 0;
}
