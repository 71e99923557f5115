/* sim/arbiter_jabas.c (jabas-share) with the JABAS agent inside a shared
 * cluster (sim/agent_jabas.c), the offer / resize-grant services of
 * sim/sim.c, and SimiGrad and OptPerf replaying a trace under FIFO.
 *
 * Scenarios on jabas-quickstart (4 V100 + 4 P100) with short ResNet-50 jobs:
 * a lone job grows into free GPUs at an epoch end; a queued job starts at
 * the next epoch end of the job lent GPUs, which shrinks back to its
 * request; on a 4-job trace the pool is checked after every arbiter and
 * agent callback (no GPU held twice, grants in pairs, each job runs on
 * exactly its grant) and the records show allocation changes only at the
 * job's own start and epoch ends.  The dedicated-cluster JABAS is pinned to
 * the finish time it had before the shared mode existed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "default_db.h"
#include "policy.h"
#include "sim.h"

static struct hb_catalog cat;
static struct hb_profdb *db;
static const struct hb_cluster *qs;   /* jabas-quickstart: node0 4 V100, node1 4 P100 */
static struct hb_model *resnet;       /* shortened in setup (target_epochs) */
static int short_epochs;               /* the shortened target */
static int full_epochs;                /* the catalog's */
static long pool_checks;               /* callbacks the checking wrappers saw */
static long offers_queued, offers_lend; /* offers made with a job waiting / with none */
static long moves;                     /* allocation changes at epoch ends */

/* ---- pool invariant, checked from wrappers around the arbiter and agent -- */

/* Every GPU is free or held by exactly one live job; grants are whole pairs
 * on each node; a running job runs on exactly its grant. */
static void check_pool(const struct hb_sim *sim)
{
	for (int i = 0; i < sim->cl->nnodes; i++) {
		int held = 0;

		for (int j = 0; j < sim->njobs; j++) {
			const struct hb_sim_job *job = &sim->jobs[j];

			if (job->state == HB_JOB_DONE || job->state == HB_JOB_DROPPED)
				continue;
			assert_true(job->grant[i] >= 0 && job->grant[i] % 2 == 0);
			held += job->grant[i];
			if (job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING)
				assert_int_equal(job->cfg.alloc[i], job->grant[i]);
		}
		assert_true(sim->free_gpus[i] >= 0);
		assert_int_equal(held + sim->free_gpus[i], sim->cl->nodes[i].ngpus);
	}
	pool_checks++;
}

static int w_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int rc = hb_arbiter_jabas.on_arrival(sim, state, job, err);

	if (rc == 0)
		check_pool(sim);
	return rc;
}

static int w_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int rc = hb_arbiter_jabas.on_finish(sim, state, job, err);

	if (rc == 0)
		check_pool(sim);
	return rc;
}

static int w_release(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int rc = hb_arbiter_jabas.on_release(sim, state, job, err);

	if (rc == 0)
		check_pool(sim);
	return rc;
}

/* The offer lies between the grant and the grant plus the free pool, and
 * caps at most what it offers. */
static void w_offer(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job, int *offer,
		    int *max_gpus)
{
	int total = 0, queued = 0, running = 0, pairs = 0, req = hb_arbiter_job_gpus(sim, job), want;

	hb_arbiter_jabas.offer(sim, state, job, offer, max_gpus);
	for (int i = 0; i < sim->cl->nnodes; i++) {
		assert_true(offer[i] >= job->grant[i]);
		assert_true(offer[i] <= job->grant[i] + sim->free_gpus[i]);
		total += offer[i];
		pairs += sim->cl->nodes[i].ngpus / 2;
	}
	assert_true(*max_gpus >= 2 && *max_gpus <= total);
	/* The rule of arbiter_jabas.c, recomputed from the jobs' states. */
	for (int j = 0; j < sim->njobs; j++) {
		const struct hb_sim_job *o = &sim->jobs[j];

		queued += o->state == HB_JOB_PENDING && o->ngrant == 0 && o->arrival_s <= hb_sim_now(sim);
		running += o->state == HB_JOB_RUNNING || o->state == HB_JOB_RESTARTING;
	}
	req += req & 1;
	if (queued) {
		offers_queued++;
		for (int i = 0; i < sim->cl->nnodes; i++)
			assert_int_equal(offer[i], job->grant[i]);
		assert_int_equal(*max_gpus, job->ngrant < req ? job->ngrant : req);
	} else {
		int expect[64], etotal = 0, enodes = 0;

		offers_lend++;
		want = 2 * ((pairs + running - 1) / running);
		want = want > req ? want : req;
		want = want > job->ngrant ? want : job->ngrant;
		/* Own nodes with their free GPUs, then whole free nodes, most free
		 * first (ties to the lower index), until the cap or 8 nodes. */
		assert_true(sim->cl->nnodes <= 64);
		for (int i = 0; i < sim->cl->nnodes; i++) {
			expect[i] = job->grant[i] > 0 ? job->grant[i] + sim->free_gpus[i] : 0;
			etotal += expect[i];
			enodes += expect[i] > 0;
		}
		while (etotal < want && enodes < 8) {
			int best = -1;

			for (int i = 0; i < sim->cl->nnodes; i++)
				if (expect[i] == 0 && sim->free_gpus[i] >= 2 &&
				    (best < 0 || sim->free_gpus[i] > sim->free_gpus[best]))
					best = i;
			if (best < 0)
				break;
			expect[best] = sim->free_gpus[best];
			etotal += expect[best];
			enodes++;
		}
		for (int i = 0; i < sim->cl->nnodes; i++)
			assert_int_equal(offer[i], expect[i]);
		assert_int_equal(*max_gpus, want < total ? want : total);
	}
}

static const struct hb_arbiter_ops checked_arbiter = {
	.name = "jabas-share-checked",
	.summary = "test",
	.on_arrival = w_arrival,
	.on_finish = w_finish,
	.init = NULL, /* init and free set in main: hb_arbiter_jabas's */
	.offer = w_offer,
	.on_release = w_release,
};

static int a_start(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int rc = hb_agent_jabas.start(sim, state, job, err);

	if (rc == 0)
		check_pool(sim);
	return rc;
}

static int a_adapt(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int rc = hb_agent_jabas.on_adapt(sim, state, job, err);

	if (rc == 0)
		check_pool(sim);
	return rc;
}

/* Nodes JABAS may swap: same GPU type, count, links and rack (alloc.h). */
static int same_node(const struct hb_node *a, const struct hb_node *b)
{
	return a->gpu == b->gpu && a->ngpus == b->ngpus && a->intra_bw == b->intra_bw && a->inter_bw == b->inter_bw &&
	       strcmp(a->intra_link, b->intra_link) == 0 && strcmp(a->inter_link, b->inter_link) == 0 &&
	       a->rack == b->rack;
}

/* 1 when b is a only with counts permuted among identical nodes. */
static int equivalent(const struct hb_cluster *cl, const int *a, const int *b)
{
	for (int i = 0; i < cl->nnodes; i++) {
		int hist[65] = { 0 };

		for (int k = 0; k < cl->nnodes; k++)
			if (same_node(&cl->nodes[i], &cl->nodes[k]) && a[k] <= 64 && b[k] <= 64) {
				hist[a[k]]++;
				hist[b[k]]--;
			}
		for (int v = 0; v <= 64; v++)
			if (hist[v] != 0)
				return 0;
	}
	return 1;
}

/* An epoch end moves the job only to a really different allocation: never
 * to the same GPUs on an identical node (a restart for nothing). */
static int a_epoch(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int before[64], rc;

	assert_true(sim->cl->nnodes <= 64);
	memcpy(before, job->cfg.alloc, sizeof(int) * (size_t)sim->cl->nnodes);
	rc = hb_agent_jabas.on_epoch_end(sim, state, job, err);
	if (rc == 0) {
		check_pool(sim);
		if (memcmp(before, job->cfg.alloc, sizeof(int) * (size_t)sim->cl->nnodes) != 0) {
			moves++;
			assert_false(equivalent(sim->cl, before, job->cfg.alloc));
		}
	}
	return rc;
}

/* jabas-share without growth: a job may move or shrink inside grant + free. */
static void nogrow_offer(const struct hb_sim *sim, const void *state, const struct hb_sim_job *job, int *offer,
			 int *max_gpus)
{
	hb_arbiter_jabas.offer(sim, state, job, offer, max_gpus);
	if (*max_gpus > job->ngrant)
		*max_gpus = job->ngrant;
}

static struct hb_arbiter_ops arb_checked;   /* checked_arbiter + init and free */
static struct hb_arbiter_ops arb_nogrow;    /* hb_arbiter_jabas with nogrow_offer */
static struct hb_agent_ops agent_checked;   /* hb_agent_jabas with checks */

/* ---- scenarios ----------------------------------------------------------- */

struct job_spec {
	double arrival_s;
	int gpus;
};

static void run(struct hb_sim *sim, const struct hb_cluster *cl, const struct hb_arbiter_ops *arb,
		const struct hb_agent_ops *agent, const struct job_spec *jobs, int njobs, uint64_t seed)
{
	struct hb_sim_opts o;
	struct hb_error err = { 0 };

	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.seed = seed;
	if (hb_sim_init(sim, &cat, cl, db, "test", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(sim, arb);
	for (int k = 0; k < njobs; k++) {
		int id;

		if (hb_sim_add_job(sim, resnet, agent, jobs[k].arrival_s, &id, &err) < 0)
			fail_msg("%s", err.msg);
		hb_sim_job_request(&sim->jobs[id], jobs[k].gpus, 0);
	}
	if (hb_sim_run(sim, &err) < 0)
		fail_msg("%s", err.msg);
	for (int k = 0; k < njobs; k++)
		assert_int_equal(sim->jobs[k].state, HB_JOB_DONE);
	for (int i = 0; i < cl->nnodes; i++)
		assert_int_equal(sim->free_gpus[i], cl->nodes[i].ngpus);
}

/* 1 when job j has an event of kind at exactly t. */
static int has_event(const struct hb_sim *sim, int j, const char *kind, double t)
{
	for (size_t e = 0; e < sim->nevents; e++)
		if (sim->events[e].job == j && sim->events[e].t == t && strcmp(sim->events[e].kind, kind) == 0)
			return 1;
	return 0;
}

/* Times of job j's epoch ends, in order; returns how many (at most max). */
static int epoch_times(const struct hb_sim *sim, int j, double *t, int max)
{
	int n = 0;

	for (size_t e = 0; e < sim->nevents && n < max; e++)
		if (sim->events[e].job == j && strcmp(sim->events[e].kind, "epoch") == 0)
			t[n++] = sim->events[e].t;
	return n;
}

/* GPUs job j ran on just after time t (its last sample at or before t). */
static int gpus_at(const struct hb_sim *sim, int j, double t)
{
	int g = 0;

	for (size_t s = 0; s < sim->nsamples && sim->samples[s].t <= t; s++)
		if (sim->samples[s].job == j)
			g = sim->samples[s].ngpus;
	return g;
}

/* From the records alone: a job's GPU count changes only at its start or at
 * one of its epoch ends (every restart and grant resize coincides with one),
 * and the jobs never hold more GPUs together than the cluster has. */
static void check_records(const struct hb_sim *sim)
{
	int *cur = calloc((size_t)sim->njobs, sizeof(int));

	assert_non_null(cur);
	for (size_t e = 0; e < sim->nevents; e++) {
		const struct hb_sim_event_rec *r = &sim->events[e];

		if (strcmp(r->kind, "restart") == 0 || strcmp(r->kind, "resize") == 0)
			if (!has_event(sim, r->job, "epoch", r->t) && !has_event(sim, r->job, "start", r->t))
				fail_msg("job %d: %s at %.3f s is neither its start nor an epoch end", r->job, r->kind, r->t);
		assert_true(strcmp(r->kind, "preempt") != 0);
	}
	for (size_t s = 0; s < sim->nsamples; s++) {
		const struct hb_sim_sample *x = &sim->samples[s];
		const struct hb_sim_job *job = &sim->jobs[x->job];
		int sum = 0;

		if (cur[x->job] != 0 && x->ngpus != cur[x->job] && !has_event(sim, x->job, "epoch", x->t))
			fail_msg("job %d: %d -> %d GPUs at %.3f s outside an epoch end", x->job, cur[x->job], x->ngpus,
				 x->t);
		cur[x->job] = x->ngpus;
		if (job->finish_s > 0 && x->t >= job->finish_s)
			cur[x->job] = 0;
		for (int j = 0; j < sim->njobs; j++)
			sum += cur[j];
		assert_true(sum <= sim->cl->ngpus);
	}
	free(cur);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_policy_table(void **state)
{
	(void)state;
	assert_ptr_equal(hb_policy_find("jabas")->shared, &hb_arbiter_jabas);
	assert_ptr_equal(hb_policy_find("simigrad")->shared, &hb_arbiter_fifo);
	assert_ptr_equal(hb_policy_find("optperf")->shared, &hb_arbiter_fifo);
	assert_string_equal(hb_arbiter_jabas.name, "jabas-share");
}

/* A lone job asking for one pair starts on it (the initial phase chooses
 * inside its grant) and grows into the free GPUs at an epoch end; the
 * growth happens exactly at one of its epoch ends. */
static void test_lone_job_grows(void **state)
{
	struct hb_sim sim;
	const struct job_spec js[] = { { 0.0, 2 } };
	double t[64];
	int n, most = 0;

	(void)state;
	run(&sim, qs, &hb_arbiter_jabas, &hb_agent_jabas, js, 1, 1);
	n = epoch_times(&sim, 0, t, 64);
	assert_true(n >= 2);
	assert_int_equal(gpus_at(&sim, 0, 0.0), 2);
	assert_int_equal(gpus_at(&sim, 0, t[0] * (1 - 1e-12)), 2);
	for (size_t s = 0; s < sim.nsamples; s++)
		if (sim.samples[s].ngpus > most)
			most = sim.samples[s].ngpus;
	assert_true(most > 2);
	/* It grew at its first epoch end (the forecast wants more than one pair). */
	assert_true(gpus_at(&sim, 0, t[0]) > 2);
	assert_true(has_event(&sim, 0, "resize", t[0]));
	assert_int_equal(sim.jobs[0].preemptions, 0);
	check_records(&sim);
	hb_sim_free(&sim);
}

/* Job A (one pair) grows when alone; job B arrives between A's first two
 * epoch ends asking for more than is free: it waits, A shrinks back to its
 * request at its next epoch end, and B starts at that very instant. */
static void test_queued_job_starts_when_lender_shrinks(void **state)
{
	struct hb_sim sim;
	struct job_spec js[2] = { { 0.0, 2 }, { 0.0, 0 } };
	double t[64], t1, t2, tb;
	int g1, n;

	(void)state;
	run(&sim, qs, &hb_arbiter_jabas, &hb_agent_jabas, js, 1, 1);
	n = epoch_times(&sim, 0, t, 64);
	assert_true(n >= 3);
	t1 = t[0];
	t2 = t[1];
	g1 = gpus_at(&sim, 0, t1);
	hb_sim_free(&sim);
	/* B must not fit beside A's g1 GPUs, and must fit once A holds 2. */
	assert_true(g1 >= 4);
	js[1].gpus = 8 - g1 + 2;
	assert_true(js[1].gpus <= 6);
	js[1].arrival_s = tb = 0.5 * (t1 + t2);

	run(&sim, qs, &hb_arbiter_jabas, &hb_agent_jabas, js, 2, 1);
	/* A is the same run up to t2: B's arrival changes nothing before it. */
	n = epoch_times(&sim, 0, t, 64);
	assert_true(n >= 3);
	assert_true(t[0] == t1 && t[1] == t2);
	assert_int_equal(gpus_at(&sim, 0, tb), g1);
	assert_true(sim.jobs[1].start_s == t2);
	assert_true(sim.jobs[1].start_s > sim.jobs[1].arrival_s);
	assert_true(gpus_at(&sim, 0, t2) <= 2);
	assert_true(gpus_at(&sim, 1, t2) >= 2 && gpus_at(&sim, 1, t2) <= js[1].gpus);
	assert_true(has_event(&sim, 0, "resize", t2));
	check_records(&sim);
	hb_sim_free(&sim);
}

/* Four jobs (one asking for a single GPU, which JABAS runs as a pair) with
 * the pool checked after every arbiter and agent callback. */
static const struct job_spec four[] = { { 0.0, 2 }, { 600.0, 4 }, { 1500.0, 1 }, { 2400.0, 6 } };

static void test_pool_invariant_four_jobs(void **state)
{
	struct hb_sim sim;
	int lent = 0;

	(void)state;
	pool_checks = offers_queued = offers_lend = 0;
	run(&sim, qs, &arb_checked, &agent_checked, four, 4, 1);
	assert_true(pool_checks > 100);
	assert_true(offers_queued > 0 && offers_lend > 0);
	assert_int_equal(gpus_at(&sim, 2, sim.jobs[2].start_s), 2); /* 1 GPU asked, a pair given */
	for (int j = 0; j < 4; j++) {
		int most = 0;

		assert_int_equal(sim.jobs[j].preemptions, 0);
		for (size_t s = 0; s < sim.nsamples; s++)
			if (sim.samples[s].job == j && sim.samples[s].ngpus > most)
				most = sim.samples[s].ngpus;
		lent += most > (four[j].gpus < 2 ? 2 : four[j].gpus);
	}
	assert_true(lent >= 1);
	check_records(&sim);
	hb_sim_free(&sim);
}

/* On jabas-a (V100, P100, TITAN RTX, RTX 3090 nodes) a job granted the
 * whole cluster runs its initial phase on the 8 GPUs of the two fastest
 * nodes (the dedicated run chooses the same) and hands the other 8 back at
 * once: a job submitted at the same instant starts on them instead of
 * waiting behind it, as it would under FIFO. */
static void test_initial_phase_hands_back(void **state)
{
	const struct hb_cluster *a = hb_catalog_cluster(&cat, "jabas-a");
	const struct job_spec js[] = { { 0.0, 16 }, { 0.0, 8 } };
	struct hb_sim sim;

	(void)state;
	assert_non_null(a);
	pool_checks = 0;
	run(&sim, a, &arb_checked, &agent_checked, js, 2, 1);
	assert_true(pool_checks > 10);
	assert_int_equal(gpus_at(&sim, 0, 0.0), 8);
	assert_true(has_event(&sim, 0, "resize", 0.0));
	assert_true(sim.jobs[1].start_s == 0.0);
	assert_true(gpus_at(&sim, 1, 0.0) >= 2 && gpus_at(&sim, 1, 0.0) <= 8);
	check_records(&sim);
	hb_sim_free(&sim);
}

/* jabas-b pairs identical nodes (2 x RTX 2060, P4000, TITAN V, TITAN RTX):
 * six jobs come and go, and no epoch end moves a job to the same GPU
 * counts on an identical node (checked in a_epoch). */
static void test_identical_nodes_no_pointless_restart(void **state)
{
	const struct hb_cluster *b = hb_catalog_cluster(&cat, "jabas-b");
	const struct job_spec js[] = { { 0.0, 4 }, { 300.0, 8 }, { 900.0, 4 }, { 1800.0, 2 }, { 2400.0, 8 },
				       { 3000.0, 4 } };
	struct hb_sim sim;

	(void)state;
	assert_non_null(b);
	pool_checks = moves = offers_queued = offers_lend = 0;
	run(&sim, b, &arb_checked, &agent_checked, js, 6, 1);
	assert_true(moves > 0);
	assert_true(offers_lend > 0);
	check_records(&sim);
	hb_sim_free(&sim);
}

/* Two identical 4-V100 nodes: a short static job takes node0, a JABAS job
 * asking for 4 GPUs gets node1; once node0 is free the JABAS job may move
 * anywhere inside 4 GPUs.  Its best 4-GPU candidate is, in Q's packed form,
 * node0; the agent keeps it on node1 instead of restarting for nothing. */
static void test_identical_node_keeps_current(void **state)
{
	const struct hb_cluster *twin = hb_catalog_cluster(&cat, "test-twin");
	struct hb_model *cifar = &cat.models[hb_catalog_model(&cat, "cifar10") - cat.models];
	struct hb_sim sim;
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	double t[8];
	int id, n, started_node1 = 0, cifar_epochs = cifar->target_epochs;

	(void)state;
	assert_non_null(twin);
	cifar->target_epochs = cifar_epochs / 4 > 0 ? cifar_epochs / 4 : 1; /* done well before X's first epoch */
	hb_sim_opts_default(&o);
	o.quiet = 1;
	if (hb_sim_init(&sim, &cat, twin, db, "test", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(&sim, &arb_nogrow);
	if (hb_sim_add_job(&sim, cifar, &hb_agent_static, 0.0, &id, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_job_request(&sim.jobs[id], 4, 0);
	if (hb_sim_add_job(&sim, resnet, &agent_checked, 1.0, &id, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_job_request(&sim.jobs[id], 4, 0);
	moves = 0;
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	n = epoch_times(&sim, 1, t, 8);
	assert_true(n >= 1);
	assert_true(sim.jobs[0].finish_s < t[0]); /* node0 was free at the first epoch end */
	for (size_t e = 0; e < sim.nevents; e++) {
		const struct hb_sim_event_rec *r = &sim.events[e];

		if (r->job != 1)
			continue;
		if (strcmp(r->kind, "start") == 0)
			started_node1 = strstr(r->detail, "node1:4GPU") != NULL;
		if (strstr(r->detail, "node0:"))
			fail_msg("job 1 moved to node0 at %.3f s: %s", r->t, r->detail);
	}
	assert_true(started_node1);
	check_records(&sim);
	hb_sim_free(&sim);
	cifar->target_epochs = cifar_epochs;
}

static void test_deterministic(void **state)
{
	struct hb_sim a, b, c;
	int differs = 0;

	(void)state;
	run(&a, qs, &hb_arbiter_jabas, &hb_agent_jabas, four, 4, 7);
	run(&b, qs, &hb_arbiter_jabas, &hb_agent_jabas, four, 4, 7);
	assert_int_equal(a.nevents, b.nevents);
	assert_int_equal(a.nsamples, b.nsamples);
	for (size_t e = 0; e < a.nevents; e++)
		assert_true(hb_sim_event_equal(&a.events[e], &b.events[e]));
	assert_int_equal(memcmp(a.samples, b.samples, a.nsamples * sizeof(*a.samples)), 0);
	for (int j = 0; j < 4; j++)
		assert_true(a.jobs[j].finish_s == b.jobs[j].finish_s && a.jobs[j].cost_usd == b.jobs[j].cost_usd);
	/* The seed matters (the similarity draws differ). */
	run(&c, qs, &hb_arbiter_jabas, &hb_agent_jabas, four, 4, 8);
	for (int j = 0; j < 4; j++)
		differs |= c.jobs[j].finish_s != a.jobs[j].finish_s;
	assert_true(differs);
	hb_sim_free(&a);
	hb_sim_free(&b);
	hb_sim_free(&c);
}

static void test_oversize_request_is_an_input_error(void **state)
{
	struct hb_sim sim;
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	int id;

	(void)state;
	hb_sim_opts_default(&o);
	o.quiet = 1;
	if (hb_sim_init(&sim, &cat, qs, db, "test", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(&sim, &hb_arbiter_jabas);
	if (hb_sim_add_job(&sim, resnet, &hb_agent_jabas, 0.0, &id, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_job_request(&sim.jobs[id], 9, 0);  /* 10 in pairs, the cluster has 4 pairs */
	assert_int_equal(hb_sim_run(&sim, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "asks for 9 GPUs"));
	hb_sim_free(&sim);
}

/* The grant service refuses GPUs another job holds and an empty grant. */
static void test_resize_grant_refuses_held_gpus(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	struct hb_sim_opts o;
	int all[2] = { 4, 4 }, none[2] = { 0, 0 }, id;

	(void)state;
	hb_sim_opts_default(&o);
	o.quiet = 1;
	if (hb_sim_init(&sim, &cat, qs, db, "test", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(&sim, &hb_arbiter_fifo);
	for (int k = 0; k < 2; k++) {
		if (hb_sim_add_job(&sim, resnet, &hb_agent_static, 0.0, &id, &err) < 0)
			fail_msg("%s", err.msg);
		hb_sim_job_request(&sim.jobs[id], 4, 256);
	}
	/* Start both by hand, as the arbiter would. */
	if (hb_sim_start_job(&sim, &sim.jobs[0], (int[]){ 4, 0 }, &err) < 0 ||
	    hb_sim_start_job(&sim, &sim.jobs[1], (int[]){ 0, 4 }, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_sim_resize_grant(&sim, &sim.jobs[0], all, &err), -1);
	assert_non_null(strstr(err.msg, "node1"));
	assert_int_equal(hb_sim_resize_grant(&sim, &sim.jobs[0], none, &err), -1);
	/* Giving back half is fine and reaches the pool. */
	assert_int_equal(hb_sim_resize_grant(&sim, &sim.jobs[0], (int[]){ 2, 0 }, &err), 0);
	assert_int_equal(sim.free_gpus[0], 2);
	assert_int_equal(sim.jobs[0].ngrant, 2);
	assert_int_equal(sim.released, 2);
	hb_sim_free(&sim);
}

/* `hetbatch sim --cluster jabas-a --model resnet50 --policy jabas --seed 1`
 * (dedicated arbiter, full-length job) under the shared-mode engine must
 * finish where the dedicated engine did.  The numbers are those of the
 * analytic profiles and rules they ran on: 32105.0045894521 s, 16 restarts
 * and 75560 iterations until analytic v3; since issue 38 (TITAN RTX at the
 * TU102 rate; the start runs B_G^init and an epoch end the current B_G
 * exactly, autoscale.h struct hb_jabas_first) the value below. */
static void test_dedicated_unchanged(void **state)
{
	const struct hb_cluster *a = hb_catalog_cluster(&cat, "jabas-a");
	struct hb_sim sim;
	const struct job_spec js[] = { { 0.0, 0 } };

	(void)state;
	assert_non_null(a);
	resnet->target_epochs = full_epochs;
	run(&sim, a, &hb_arbiter_dedicated, &hb_agent_jabas, js, 1, 1);
	printf("jabas-a resnet50 jabas, dedicated: finish %.10f s, %d restarts, %.0f iterations\n",
	       sim.jobs[0].finish_s, sim.jobs[0].restarts, sim.jobs[0].iters);
	assert_true(fabs(sim.jobs[0].finish_s - 33896.5860667570) <= 1e-9 * 33896.0);
	assert_int_equal(sim.jobs[0].restarts, 3);
	assert_true(sim.jobs[0].iters == 74996.0);
	hb_sim_free(&sim);
	resnet->target_epochs = short_epochs;
}

/* SimiGrad and OptPerf under FIFO: each job runs on exactly its grant (its
 * request), the 8-GPU job waits for the two 4-GPU jobs, and SimiGrad's batch
 * still adapts inside the grant. */
static void fifo_trace(const char *policy)
{
	const struct hb_policy *p = hb_policy_find(policy);
	const struct job_spec js[] = { { 0.0, 4 }, { 10.0, 4 }, { 20.0, 8 } };
	struct hb_sim sim;
	long bs_min = 0, bs_max = 0;

	assert_non_null(p);
	run(&sim, qs, p->shared, p->agent, js, 3, 1);
	for (size_t s = 0; s < sim.nsamples; s++) {
		const struct hb_sim_sample *x = &sim.samples[s];

		assert_int_equal(x->ngpus, js[x->job].gpus);
		if (x->job == 0) {
			bs_min = bs_min == 0 || x->global_bs < bs_min ? x->global_bs : bs_min;
			bs_max = x->global_bs > bs_max ? x->global_bs : bs_max;
		}
	}
	assert_true(sim.jobs[0].start_s == 0.0 && sim.jobs[1].start_s == 10.0);
	assert_true(sim.jobs[2].start_s == fmax(sim.jobs[0].finish_s, sim.jobs[1].finish_s));
	assert_true(bs_max > bs_min); /* the batch adapted */
	check_records(&sim);
	hb_sim_free(&sim);
}

static void test_simigrad_under_fifo(void **state)
{
	(void)state;
	fifo_trace("simigrad");
}

static void test_optperf_under_fifo(void **state)
{
	(void)state;
	fifo_trace("optperf");
}

/* Two identical nodes of 4 V100 with jabas-a's links. */
static const char twin_json[] =
	"{\"clusters\": [{\"name\": \"test-twin\", \"display\": \"2 x 4 V100\", "
	"\"intra_link\": \"pcie3-x16\", \"intra_bw\": 15.75e9, \"inter_link\": \"ib-100g\", \"inter_bw\": 12.5e9, "
	"\"storage_bw\": 1.25e9, \"restart_latency_s\": 20, "
	"\"groups\": [{\"gpu\": \"v100\", \"nodes\": 2, \"gpus_per_node\": 4}], \"source\": \"test\"}]}";

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 ||
	    hb_catalog_load_json(&cat, twin_json, strlen(twin_json), "test-twin", &err) < 0 ||
	    hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	qs = hb_catalog_cluster(&cat, "jabas-quickstart");
	resnet = &cat.models[hb_catalog_model(&cat, "resnet50") - cat.models];
	full_epochs = resnet->target_epochs;
	short_epochs = 4;
	resnet->target_epochs = short_epochs;
	arb_nogrow = hb_arbiter_jabas;
	arb_nogrow.offer = nogrow_offer;
	arb_checked = checked_arbiter;
	arb_checked.init = hb_arbiter_jabas.init;
	arb_checked.free = hb_arbiter_jabas.free;
	agent_checked = hb_agent_jabas;
	agent_checked.start = a_start;
	agent_checked.on_adapt = a_adapt;
	agent_checked.on_epoch_end = a_epoch;
	return qs ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	hb_profdb_close(db);
	hb_catalog_free(&cat);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_table),
		cmocka_unit_test(test_lone_job_grows),
		cmocka_unit_test(test_queued_job_starts_when_lender_shrinks),
		cmocka_unit_test(test_pool_invariant_four_jobs),
		cmocka_unit_test(test_initial_phase_hands_back),
		cmocka_unit_test(test_identical_nodes_no_pointless_restart),
		cmocka_unit_test(test_identical_node_keeps_current),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_oversize_request_is_an_input_error),
		cmocka_unit_test(test_resize_grant_refuses_held_gpus),
		cmocka_unit_test(test_dedicated_unchanged),
		cmocka_unit_test(test_simigrad_under_fifo),
		cmocka_unit_test(test_optperf_under_fifo),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
