/*
 * sim_harness.h: what a policy's test needs, so that it is about the
 * policy: a catalog and the default (analytic) profile database, one run
 * of a registry policy (its agent and shared arbiter, its options at their
 * defaults or set by knob name), jobs added by model name, the run, and
 * its records.  Header-only; cmocka's fail_msg reports any failure of the
 * harness itself.  tests/harness/test_harness.c is the template:
 *
 *     struct hb_harness h;
 *     hb_harness_open(&h, "jabas-quickstart", "fifo");
 *     int a = hb_harness_job(&h, "resnet50", 0.0, 4, 256);
 *     hb_harness_run(&h);
 *     assert_int_equal(hb_harness_count(&h, a, "start"), 1);
 *     hb_harness_close(&h);
 *
 * Jobs train for HB_HARNESS_EPOCHS epochs (short runs) unless the test
 * sets job->target itself.  Records stay in memory (sim.events,
 * sim.samples), as a run without hb_sim_stream keeps them.
 */
#ifndef HB_SIM_HARNESS_H
#define HB_SIM_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "default_db.h"
#include "policy.h"
#include "profdb.h"
#include "sim.h"

#define HB_HARNESS_EPOCHS 2

struct hb_harness {
	struct hb_catalog cat;        /* the built-in catalog, owned */
	struct hb_profdb *db;         /* the default analytic database, owned */
	const struct hb_cluster *cl;  /* the run's cluster, in cat */
	const struct hb_policy *policy; /* from the registry */
	void *opts;                   /* the policy's options (hb_policy_opts_new), owned; NULL: none */
	struct hb_sim sim;            /* the run */
	struct hb_sim_opts so;        /* its engine options (defaults, quiet, restart 60 s) */
	struct hb_error err;          /* the last failure */
	int ready;                    /* 1 once sim is initialised */
};

/* Catalog, database and the engine options; the sim is made by the first
 * hb_harness_job (so a test may change h->so and set the policy's options
 * with hb_harness_knob first). */
static inline void hb_harness_open(struct hb_harness *h, const char *cluster, const char *policy)
{
	memset(h, 0, sizeof(*h));
	if (hb_catalog_load_builtin(&h->cat, &h->err) < 0 || hb_default_profdb(&h->cat, NULL, &h->db, &h->err) < 0)
		fail_msg("harness: %s", h->err.msg);
	if (!(h->cl = hb_catalog_cluster(&h->cat, cluster)))
		fail_msg("harness: no cluster %s", cluster);
	if (!(h->policy = hb_policy_find(policy)))
		fail_msg("harness: no policy %s", policy);
	hb_sim_opts_default(&h->so);
	h->so.quiet = 1;
	h->so.restart_const_s = 60.0;
}

/* Set one of the policy's options by its command-line name and text, as
 * `sim --yarn-head-only` (value NULL: a flag) or `--elastic-interval 300`
 * would (before the first job). */
static inline void hb_harness_knob(struct hb_harness *h, const char *name, const char *value)
{
	const struct hb_pknob_table *owner = NULL;
	const struct hb_pknob *k = hb_policy_knob_find(name, &owner);
	double v;

	if (!k || !h->policy->options || owner != h->policy->options)
		fail_msg("harness: policy %s has no option %s", h->policy->name, name);
	if (hb_pknob_parse(k, value, &v, &h->err) < 0 || hb_pknob_set(&h->so.knobs, k, v, &h->err) < 0)
		fail_msg("harness: %s", h->err.msg);
}

static inline void hb_harness_ready(struct hb_harness *h)
{
	if (h->ready)
		return;
	if (hb_sim_init(&h->sim, &h->cat, h->cl, h->db, h->policy->name, &h->so, &h->err) < 0)
		fail_msg("harness: %s", h->err.msg);
	if (hb_policy_opts_new(h->policy, &h->so.knobs, &h->opts, &h->err) < 0)
		fail_msg("harness: %s", h->err.msg);
	h->sim.policy_opts = h->opts;
	if (h->policy->shared)
		hb_sim_set_arbiter(&h->sim, h->policy->shared);
	h->ready = 1;
}

/* Add a job of model at arrival_s asking for gpus GPUs and global batch
 * batch (0: the model's own); returns its id.  (Not a pointer: adding a
 * job may move sim.jobs; hb_harness_at reads one after the run.) */
static inline int hb_harness_job(struct hb_harness *h, const char *model, double arrival_s,
						int gpus, long batch)
{
	const struct hb_model *m = hb_catalog_model(&h->cat, model);
	struct hb_sim_job *job;
	int id;

	if (!m)
		fail_msg("harness: no model %s", model);
	hb_harness_ready(h);
	if (hb_sim_add_job(&h->sim, m, h->policy->agent, arrival_s, &id, &h->err) < 0)
		fail_msg("harness: %s", h->err.msg);
	job = &h->sim.jobs[id];
	hb_sim_job_request(job, gpus, batch);
	if (hb_sim_job_epochs(job, HB_HARNESS_EPOCHS, &h->err) < 0)
		fail_msg("harness: %s", h->err.msg);
	return id;
}

/* Job id of the run. */
static inline const struct hb_sim_job *hb_harness_at(const struct hb_harness *h, int id)
{
	if (id < 0 || id >= h->sim.njobs)
		fail_msg("harness: no job %d", id);
	return &h->sim.jobs[id];
}

/* Run to the end; a failing run fails the test with its message. */
static inline void hb_harness_run(struct hb_harness *h)
{
	hb_harness_ready(h);
	if (hb_sim_run(&h->sim, &h->err) < 0)
		fail_msg("harness: run failed: %s", h->err.msg);
}

/* Events of kind ("start", "restart", "done", ...; NULL: any) of job (-1: any). */
static inline int hb_harness_count(const struct hb_harness *h, int job, const char *kind)
{
	int n = 0;

	for (size_t i = 0; i < h->sim.nevents; i++) {
		const struct hb_sim_event_rec *e = &h->sim.events[i];

		if ((job < 0 || e->job == job) && (!kind || strcmp(e->kind, kind) == 0))
			n++;
	}
	return n;
}

/* The i-th event of job (-1: any) of kind (NULL: any), or NULL. */
static inline const struct hb_sim_event_rec *hb_harness_event(const struct hb_harness *h, int job,
							      const char *kind, int i)
{
	for (size_t k = 0; k < h->sim.nevents; k++) {
		const struct hb_sim_event_rec *e = &h->sim.events[k];

		if ((job < 0 || e->job == job) && (!kind || strcmp(e->kind, kind) == 0) && i-- == 0)
			return e;
	}
	return NULL;
}

static inline void hb_harness_close(struct hb_harness *h)
{
	if (h->ready)
		hb_sim_free(&h->sim);
	free(h->opts);
	hb_profdb_close(h->db);
	hb_catalog_free(&h->cat);
}

#endif
