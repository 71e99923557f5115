/*
 * live_policy.c: the plumbing of adaptive live runs (live_policy.h): the
 * knobs, the state a relaunch carries and its replay, and the registry's
 * policies that run live.  The decisions are the agents' (live_agent.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live_policy.h"
#include "policy.h"      /* hb_policy_at, hb_policy_find, hb_policy_suggest */
#include "strutil.h"

const char *hb_live_policy_name(const struct hb_live_policy *pol)
{
	return pol->par.policy ? pol->par.policy->name : "?";
}

/* "jabas, simigrad, ..." : the policies that run live, for messages. */
static void live_names(char *buf, size_t size)
{
	size_t len = 0;
	char why[256];

	buf[0] = '\0';
	for (const struct hb_policy *p = hb_policy_at(0); p && len < size; p = hb_policy_next(p))
		if (!hb_live_agent_refusal(p, why, sizeof(why)))
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", p->name);
}

int hb_live_policy_parse(const char *name, const struct hb_policy **out, struct hb_error *err)
{
	const struct hb_policy *p = hb_policy_find(name); /* any case */
	char why[256], names[512], hint[128];

	*out = NULL;
	if (!p) {
		live_names(names, sizeof(names));
		return hb_input_error(err, "--policy '%s': no such policy%s (those that run live: %s)", name,
				      hb_policy_suggest(name, hint, sizeof(hint)), names);
	}
	if (hb_live_agent_refusal(p, why, sizeof(why)))
		return hb_input_error(err, "--policy %s cannot run live: %s", p->name, why);
	*out = p;
	return 0;
}

void hb_live_policy_list(FILE *out)
{
	char why[256];

	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p))
		if (!hb_live_agent_refusal(p, why, sizeof(why)))
			fprintf(out, "    %-20s %s\n", p->name, p->agent->summary ? p->agent->summary : p->summary);
	fprintf(out, "  refused:\n");
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p))
		if (hb_live_agent_refusal(p, why, sizeof(why)))
			fprintf(out, "    %-20s %s\n", p->name, why);
}

void hb_live_pstate_free(struct hb_live_pstate *s)
{
	free(s->blocks);
	s->blocks = NULL;
	s->nblocks = s->cap_blocks = 0;
}

int hb_live_pstate_add_block(struct hb_live_pstate *s, const struct hb_live_block *b, struct hb_error *err)
{
	if (s->nblocks == s->cap_blocks) {
		size_t cap = s->cap_blocks ? 2 * s->cap_blocks : 64;
		struct hb_live_block *n = realloc(s->blocks, cap * sizeof(*n));

		if (!n)
			return hb_runtime_error(err, "live: out of memory for %zu measured blocks", cap);
		s->blocks = n;
		s->cap_blocks = cap;
	}
	s->blocks[s->nblocks++] = *b;
	return 0;
}

int hb_live_policy_open(struct hb_live_policy *pol, struct hb_catalog *cat, const struct hb_cluster *cl,
			const struct hb_model *m, const char *dbpath, const struct hb_live_policy_params *par,
			struct hb_error *err)
{
	struct hb_live_policy_params *x = &pol->par;
	double gamma;
	long lo, hi;

	memset(pol, 0, sizeof(*pol));
	pol->cat = cat;
	pol->cl = cl;
	pol->model = *m;
	pol->par = *par;
	hb_strlcpy(pol->profiles, dbpath, sizeof(pol->profiles));
	if (!x->policy)
		return hb_runtime_error(err, "live: no policy");
	if (cl->nnodes > HB_LIVE_MAX_NODES)
		return hb_input_error(err, "cluster %s: %d nodes (live runs take at most %d)", cl->name, cl->nnodes,
				      HB_LIVE_MAX_NODES);
	/* the simulator's values for this model on this cluster (its
	 * per-cluster threshold and bounds), unless given */
	hb_model_bounds(m, cl->name, &gamma, &lo, &hi);
	if (x->p <= 0)
		x->p = m->adapt_interval;
	if (!(x->gamma > 0))
		x->gamma = gamma;
	if (!(x->alpha > 0))
		x->alpha = m->adapt_rate;
	if (x->min_gbs <= 0)
		x->min_gbs = lo;
	if (x->max_gbs <= 0)
		x->max_gbs = hi;
	if (!(x->dataset > 0))
		x->dataset = m->dataset_size;
	if (x->p < 1 || x->min_gbs < 1 || x->max_gbs < x->min_gbs || x->init_gbs < 0 ||
	    (x->init_gbs > 0 && (x->init_gbs < x->min_gbs || x->init_gbs > x->max_gbs)) ||
	    !(x->alpha > 0 && x->alpha < 1) || !(x->dataset >= 1) || x->epochs < 1)
		return hb_input_error(err, "live --policy %s: interval %ld (>= 1), batch bounds %ld..%ld with --gbs %ld "
				      "inside, alpha %g (0 < alpha < 1), dataset %g samples (>= 1), %ld epochs (>= 1)",
				      x->policy->name, x->p, x->min_gbs, x->max_gbs, x->init_gbs, x->alpha, x->dataset,
				      x->epochs);
	/* the model the agent sees for the job: the run's numbers */
	pol->model.adapt_interval = x->p;
	pol->model.gamma = x->gamma;
	pol->model.adapt_rate = x->alpha;
	pol->model.min_gbs = x->min_gbs;
	pol->model.max_gbs = x->max_gbs;
	pol->model.dataset_size = x->dataset;
	pol->model.noverrides = 0;
	return hb_live_agent_open(&pol->agent, cat, cl, &pol->model, dbpath, x->policy, x->seed, x->p, x->init_gbs,
				  err);
}

void hb_live_policy_close(struct hb_live_policy *pol)
{
	hb_live_agent_close(&pol->agent);
	pol->started = 0;
}

/* st's counters and configuration from the agent's job. */
static void sync_state(const struct hb_live_policy *pol, struct hb_live_pstate *st)
{
	const struct hb_sim_job *job = hb_live_agent_job(&pol->agent);

	st->nnodes = pol->cl->nnodes;
	for (int i = 0; i < st->nnodes; i++)
		st->alloc[i] = job->cfg.alloc[i];
	st->global_bs = job->cfg.global_bs;
	st->iteration = (long)floor(job->iters + 0.5);
	st->epoch = job->epoch;
	st->epoch_samples = job->epoch_samples;
}

/* The dry run of hb_live_policy_start (live_policy.h), through every
 * epoch of the run: an agent may read the simulated noise scale only from
 * its second epoch on (Cannikin learns its model first). */
static int probe(struct hb_live_policy *pol, struct hb_error *err)
{
	const struct hb_live_policy_params *x = &pol->par;
	struct hb_live_agent la;
	int rc;

	rc = hb_live_agent_open(&la, pol->cat, pol->cl, &pol->model, pol->profiles, x->policy, x->seed, x->p,
				x->init_gbs, err);
	if (rc == 0)
		rc = hb_live_agent_start(&la, NULL, 0, err);
	if (rc == 0) {
		struct hb_live_plan plan;

		rc = hb_live_agent_plan(&la, &plan, err);
		hb_live_plan_free(&plan);
	}
	while (rc == 0) {
		const struct hb_sim_job *job = hb_live_agent_job(&la);
		struct hb_live_step step;
		struct hb_live_plan plan;
		int adapt;
		long n = hb_live_agent_next(&la, &adapt);

		if (job->epoch >= x->epochs)
			break;
		rc = hb_live_agent_block(&la, n, (double)n * job->cfg.iter_s, NAN, x->epochs, &step, err);
		if (rc == 0 && step.changed) {
			rc = hb_live_agent_plan(&la, &plan, err);
			hb_live_plan_free(&plan);
		}
	}
	hb_live_agent_close(&la);
	return rc;
}

int hb_live_policy_start(struct hb_live_policy *pol, struct hb_live_pstate *st, char *why, size_t whylen,
			 struct hb_error *err)
{
	char words[256];
	int n;

	if (probe(pol, err) < 0)
		return -1;
	if (hb_live_agent_start(&pol->agent, words, sizeof(words), err) < 0)
		return -1;
	pol->started = 1;
	sync_state(pol, st);
	n = 0;
	for (int i = 0; i < st->nnodes; i++)
		n += st->alloc[i];
	snprintf(why, whylen, "%s: %d GPUs, B_G %ld: %s", hb_live_policy_name(pol), n, st->global_bs, words);
	/* the driver runs it: a configuration a rank cannot execute is
	 * refused here, before any launch */
	{
		struct hb_live_plan plan;
		int rc = hb_live_agent_plan(&pol->agent, &plan, err);

		hb_live_plan_free(&plan);
		return rc;
	}
}

static void format_alloc(const struct hb_live_policy *pol, const int *alloc, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < pol->cl->nnodes && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%d", i ? "," : "", alloc[i]);
}

/* Rebuild the agent: start it and replay st's blocks; it must arrive where
 * st says. */
static int replay(struct hb_live_policy *pol, const struct hb_live_pstate *st, struct hb_error *err)
{
	struct hb_live_pstate now = { 0 };
	char a[256], b[256];

	if (hb_live_agent_start(&pol->agent, NULL, 0, err) < 0)
		return -1;
	pol->started = 1;
	for (size_t i = 0; i < st->nblocks; i++) {
		const struct hb_live_block *bl = &st->blocks[i];
		struct hb_live_step step;
		int adapt;

		if (bl->iters > hb_live_agent_next(&pol->agent, &adapt))
			return hb_runtime_error(err, "live: replaying block %zu of %zu: %ld iterations, past the agent's "
						"next decision point", i + 1, st->nblocks, bl->iters);
		if (hb_live_agent_block(&pol->agent, bl->iters, bl->elapsed_s, bl->similarity, pol->par.epochs, &step,
					err) < 0) {
			hb_error_prefix(err, "live: replaying block %zu of %zu", i + 1, st->nblocks);
			return -1;
		}
	}
	sync_state(pol, &now);
	if (now.iteration != st->iteration || now.epoch != st->epoch || now.global_bs != st->global_bs ||
	    memcmp(now.alloc, st->alloc, (size_t)st->nnodes * sizeof(int)) != 0) {
		format_alloc(pol, now.alloc, a, sizeof(a));
		format_alloc(pol, st->alloc, b, sizeof(b));
		return hb_runtime_error(err, "live: %s replayed from %zu measured blocks is at iteration %ld, epoch %ld, "
					"B_G %ld on GPUs %s; the state file says iteration %ld, epoch %ld, B_G %ld on "
					"GPUs %s", hb_live_policy_name(pol), st->nblocks, now.iteration, now.epoch,
					now.global_bs, a, st->iteration, st->epoch, st->global_bs, b);
	}
	return 0;
}

int hb_live_policy_config(struct hb_live_policy *pol, struct hb_live_pstate *st, struct hb_live_plan *out,
			  struct hb_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!pol->started && replay(pol, st, err) < 0)
		return -1;
	if (hb_live_agent_plan(&pol->agent, out, err) < 0)
		return -1;
	hb_strlcpy(out->profiles, pol->profiles, sizeof(out->profiles));
	return 0;
}

long hb_live_policy_next(const struct hb_live_policy *pol, int *adapt)
{
	return hb_live_agent_next(&pol->agent, adapt);
}

int hb_live_policy_block(struct hb_live_policy *pol, struct hb_live_pstate *st, const struct hb_live_block *b,
			 int *action, struct hb_live_plan *next, char *why, size_t whylen, struct hb_error *err)
{
	struct hb_live_step step;
	int before[HB_LIVE_MAX_NODES];

	*action = HB_LIVE_CONTINUE;
	memset(next, 0, sizeof(*next));
	memcpy(before, st->alloc, sizeof(before));
	if (hb_live_pstate_add_block(st, b, err) < 0 ||
	    hb_live_agent_block(&pol->agent, b->iters, b->elapsed_s, b->similarity, pol->par.epochs, &step, err) < 0)
		return -1;
	sync_state(pol, st);
	hb_strlcpy(why, step.why, whylen);
	if (step.epoch_end && st->epoch >= pol->par.epochs)
		*action = HB_LIVE_DONE;
	else if (step.changed && memcmp(before, st->alloc, (size_t)st->nnodes * sizeof(int)) != 0)
		*action = HB_LIVE_MOVE;
	else if (step.changed) {
		if (hb_live_policy_config(pol, st, next, err) < 0)
			return -1;
		*action = HB_LIVE_INPLACE;
	}
	return 0;
}
