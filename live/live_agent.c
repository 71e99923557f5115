/*
 * live_agent.c: the engine's agents in live runs (live_agent.h).
 *
 * Every call of an agent callback (struct hb_agent_ops) is in the section
 * "the agent's callbacks" below, one function per callback; the rest is
 * the driven simulation around them and the read-back of what they
 * applied: the job's last configuration event, whose text apply_note
 * writes to be read back (schedule.h), so a live run executes exactly the
 * configuration the agent applied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live_agent.h"
#include "profdb.h"
#include "schedule.h"   /* hb_live_schedule_config: a configuration's text as a plan */
#include "strutil.h"

const char *hb_live_agent_refusal(const struct hb_policy *p, char *buf, size_t size)
{
	const struct hb_agent_ops *a = p->agent;
	const struct hb_policy *same;

	if (!a || !a->start) {
		snprintf(buf, size, "it has no job agent");
		return buf;
	}
	if (a->round_s || a->on_round) {
		snprintf(buf, size, "its agent (%s) decides in periodic rounds of simulated time, which a live run does "
			 "not fire", a->name);
		return buf;
	}
	/* On one dedicated cluster a policy is its agent: one that lends
	 * another policy's agent differs from it only in its arbiter. */
	if (!hb_strcaseeq(a->name, p->name) && (same = hb_policy_find(a->name)) && same != p) {
		snprintf(buf, size, "alone on a cluster it is policy '%s' (the same agent; its own arbiter only decides "
			 "when jobs share a cluster): use --policy %s", same->name, same->name);
		return buf;
	}
	return NULL;
}

/* ---- the agent's callbacks ------------------------------------------------- */

/* After a callback: an agent that read what a driven job does not have
 * (hb_sim_drive_missing) cannot run live. */
static int check_missing(const struct hb_live_agent *la, const char *when, struct hb_error *err)
{
	const char *what = hb_sim_drive_missing(&la->sim);

	if (!what)
		return 0;
	return hb_input_error(err, "policy %s cannot run live: its agent read %s (at its %s after iteration %.0f)",
			      la->policy->name, what, when, la->job->iters);
}

static int call_start(struct hb_live_agent *la, struct hb_error *err)
{
	if (la->job->agent->start(&la->sim, hb_sim_agent_state(&la->sim, la->job), la->job, err) < 0)
		return -1;
	if (la->job->state == HB_JOB_PENDING)
		return hb_runtime_error(err, "policy %s: its agent did not start the job", la->policy->name);
	return check_missing(la, "start", err);
}

static int call_on_epoch_end(struct hb_live_agent *la, struct hb_error *err)
{
	if (!la->job->agent->on_epoch_end)
		return 0;
	if (la->job->agent->on_epoch_end(&la->sim, hb_sim_agent_state(&la->sim, la->job), la->job, err) < 0)
		return -1;
	return check_missing(la, "epoch end", err);
}

static int call_on_adapt(struct hb_live_agent *la, struct hb_error *err)
{
	if (!la->job->agent->on_adapt)
		return 0;
	if (la->job->agent->on_adapt(&la->sim, hb_sim_agent_state(&la->sim, la->job), la->job, err) < 0)
		return -1;
	return check_missing(la, "adaptation point", err);
}

/* ---- the driven simulation ------------------------------------------------- */

int hb_live_agent_open(struct hb_live_agent *la, struct hb_catalog *cat, const struct hb_cluster *cl,
		       const struct hb_model *m, const char *dbpath, const struct hb_policy *p, uint64_t seed,
		       long p_iters, long req_gbs, struct hb_error *err)
{
	const struct hb_model *entry = hb_catalog_model(cat, m->name);
	struct hb_sim_opts so;
	char why[256];
	int id;

	memset(la, 0, sizeof(*la));
	la->policy = p;
	la->cat = cat;
	la->cl = cl;
	if (hb_live_agent_refusal(p, why, sizeof(why)))
		return hb_input_error(err, "policy %s cannot run live: %s", p->name, why);
	if (!entry)
		return hb_runtime_error(err, "live: model %s is not in the catalog", m->name);
	/* The simulator indexes its models by catalog entry: the entry
	 * becomes the run's model, its values for every cluster. */
	{
		struct hb_model *e = &cat->models[entry - cat->models];

		if (e != m)
			*e = *m;
		e->noverrides = 0;
	}
	if (hb_profdb_open(dbpath, 1, &la->db, err) < 0)
		return -1;
	hb_sim_opts_default(&so);
	so.seed = seed;
	so.interval = p_iters;
	so.quiet = 1;
	if (hb_sim_init(&la->sim, cat, cl, la->db, p->name, &so, err) < 0)
		return -1;
	la->inited = 1;
	if (hb_sim_drive(&la->sim, err) < 0 || hb_sim_add_job(&la->sim, entry, p->agent, 0.0, &id, err) < 0)
		return -1;
	la->job = &la->sim.jobs[id];
	if (req_gbs > 0)
		hb_sim_job_request(la->job, 0, req_gbs);
	return 0;
}

void hb_live_agent_close(struct hb_live_agent *la)
{
	if (la->inited)
		hb_sim_free(&la->sim);
	hb_profdb_close(la->db);
	memset(la, 0, sizeof(*la));
}

const struct hb_sim_job *hb_live_agent_job(const struct hb_live_agent *la)
{
	return la->job;
}

static int is_config(const char *kind)
{
	return strcmp(kind, "start") == 0 || strcmp(kind, "reconfig") == 0 || strcmp(kind, "restart") == 0;
}

/* The agent's words since the last call: its notes, and the reason of
 * each configuration it applied (the text before "; B_G "); the engine's
 * own epoch notes left out. */
static void words(struct hb_live_agent *la, char *why, size_t whylen)
{
	size_t len = 0;

	if (why && whylen)
		why[0] = '\0';
	for (; la->seen < la->sim.nevents; la->seen++) {
		const struct hb_sim_event_rec *e = &la->sim.events[la->seen];
		const char *cut = NULL;
		int n;

		if (!why || e->job != la->job->id || strcmp(e->kind, "epoch") == 0 || strcmp(e->kind, "arrival") == 0)
			continue;
		if (is_config(e->kind))
			for (const char *q = strstr(e->detail, "; B_G "); q; q = strstr(q + 1, "; B_G "))
				cut = q;
		n = cut ? (int)(cut - e->detail) : (int)strlen(e->detail);
		if (n == 0 || len + 3 >= whylen)
			continue;
		len += (size_t)snprintf(why + len, whylen - len, "%s%.*s", len ? "; " : "", n, e->detail);
		if (len >= whylen)
			len = whylen - 1;
	}
}

int hb_live_agent_start(struct hb_live_agent *la, char *why, size_t whylen, struct hb_error *err)
{
	if (hb_sim_drive_start(&la->sim, la->job, err) < 0 || call_start(la, err) < 0) {
		hb_error_prefix(err, "policy %s, model %s on %s", la->policy->name, la->job->model->name, la->cl->name);
		return -1;
	}
	words(la, why, whylen);
	return 0;
}

long hb_live_agent_next(const struct hb_live_agent *la, int *adapt)
{
	const struct hb_sim_job *job = la->job;
	long n = hb_sim_drive_next(&la->sim, job);

	*adapt = job->next_adapt_iter > 0 && job->iters + (double)n >= job->next_adapt_iter - 1e-6;
	return n;
}

int hb_live_agent_block(struct hb_live_agent *la, long n, double elapsed_s, double similarity, long stop_epochs,
			struct hb_live_step *step, struct hb_error *err)
{
	struct hb_sim_job *job = la->job;
	uint64_t gen;
	int reached, rc = 0;

	memset(step, 0, sizeof(*step));
	if (hb_sim_drive_iters(&la->sim, job, n, elapsed_s, &reached, err) < 0)
		return -1;
	step->epoch_end = (reached & HB_DRIVE_EPOCH) != 0;
	step->adapt = (reached & HB_DRIVE_ADAPT) != 0;
	if (step->epoch_end && stop_epochs > 0 && job->epoch >= stop_epochs) {
		words(la, NULL, 0);
		return 0;
	}
	gen = job->gen;
	/* the event loop's order (sim.h hb_sim_drive): the epoch end, then the
	 * adaptation point unless the epoch end applied a configuration */
	if (step->epoch_end)
		rc = call_on_epoch_end(la, err);
	if (rc == 0 && step->adapt && job->gen == gen) {
		hb_sim_drive_similarity(job, similarity);
		rc = call_on_adapt(la, err);
	}
	if (rc < 0) {
		if (err->code != HB_EINPUT) /* a refusal says where itself */
			hb_error_prefix(err, "policy %s after iteration %.0f", la->policy->name, job->iters);
		return -1;
	}
	step->changed = job->gen != gen;
	words(la, step->why, sizeof(step->why));
	return 0;
}

int hb_live_agent_plan(struct hb_live_agent *la, struct hb_live_plan *out, struct hb_error *err)
{
	struct hb_live_sched_cfg c;
	char src[64];
	size_t i = la->sim.nevents;

	memset(out, 0, sizeof(*out));
	while (i > 0 && !(la->sim.events[i - 1].job == la->job->id && is_config(la->sim.events[i - 1].kind)))
		i--;
	if (i == 0)
		return hb_runtime_error(err, "policy %s: no configuration applied yet", la->policy->name);
	snprintf(src, sizeof(src), "policy %s", la->policy->name);
	if (hb_live_schedule_config(src, (long)(i - 1), la->cat, la->cl, la->sim.events[i - 1].detail,
				    la->job->perf->sync == HB_SYNC_OWS, &c, err) < 0) {
		hb_live_plan_free(&c.plan);
		hb_error_prefix(err, "policy %s cannot run live: its configuration is not one a live rank executes",
				la->policy->name);
		err->code = HB_EINPUT;
		return -1;
	}
	*out = c.plan;
	hb_strlcpy(out->path, src, sizeof(out->path));
	hb_strlcpy(out->model, la->job->model->name, sizeof(out->model));
	hb_strlcpy(out->cluster, la->cl->name, sizeof(out->cluster));
	return 0;
}
