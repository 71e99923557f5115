/* The Tiresias (2D-LAS) and Optimus+Oracle cluster arbiters
 * (sim/policies/tiresias/arbiter_tiresias.c, sim/policies/optimus/arbiter_optimus.c), notes/pollux.md §6:
 * hand-built multi-job scenarios on the jabas-quickstart cluster (node0: 4
 * V100, node1: 4 P100) and the decision each rule makes in them, a brute-force
 * check of Optimus's greedy on one 8-GPU node, determinism, and a 10-job
 * comparison with FIFO. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ddp.h"
#include "default_db.h"
#include "policy.h"
#include "sim.h"

#define ROUND_S 60.0                   /* both arbiters' scheduling interval */
#define THRESHOLD_GPU_S (16.0 * 3600.0) /* Tiresias's Q0 -> Q1 threshold */

static struct hb_catalog cat;
static struct hb_profdb *db;
static const struct hb_cluster *quick;  /* jabas-quickstart: 4 V100 + 4 P100 */
static const struct hb_cluster *dgx;    /* dgx-h100: one node, 8 H100 */
static const struct hb_model *m_long;   /* resnet50 cut to 20 epochs: hours on 8 GPUs */
static const struct hb_model *m_cifar;  /* cifar10: about 20 min on 4 GPUs */
static const struct hb_model *m_ds2;    /* deepspeech2 */
static const struct hb_model *m_bert;   /* bert */
static const struct hb_model *m_yolo;   /* yolov3 */
static const struct hb_model *m_ncf;    /* ncf */

static void init(struct hb_sim *sim, const struct hb_cluster *cl, const struct hb_arbiter_ops *arb)
{
	struct hb_sim_opts o;
	struct hb_error err = { 0 };

	hb_sim_opts_default(&o);
	o.quiet = 1;
	if (hb_sim_init(sim, &cat, cl, db, arb->name, &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(sim, arb);
}

static int add(struct hb_sim *sim, const struct hb_model *m, double t, int gpus, long batch)
{
	struct hb_error err = { 0 };
	int id;

	if (hb_sim_add_job(sim, m, &hb_agent_static, t, &id, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_job_request(&sim->jobs[id], gpus, batch);
	return id;
}

static void run(struct hb_sim *sim)
{
	struct hb_error err = { 0 };

	if (hb_sim_run(sim, &err) < 0)
		fail_msg("%s", err.msg);
}

/* Time of the first event of a kind for a job, -1 if none. */
static double event_time(const struct hb_sim *sim, int job, const char *kind)
{
	for (size_t i = 0; i < sim->nevents; i++)
		if (sim->events[i].job == job && strcmp(sim->events[i].kind, kind) == 0)
			return sim->events[i].t;
	return -1.0;
}

static const char *start_detail(const struct hb_sim *sim, int job)
{
	for (size_t i = 0; i < sim->nevents; i++)
		if (sim->events[i].job == job && strcmp(sim->events[i].kind, "start") == 0)
			return sim->events[i].detail;
	return "";
}

static int count_events(const struct hb_sim *sim, int job, const char *kind)
{
	int n = 0;

	for (size_t i = 0; i < sim->nevents; i++)
		if (sim->events[i].job == job && strcmp(sim->events[i].kind, kind) == 0)
			n++;
	return n;
}

static int on_round(double t)
{
	double r = t / ROUND_S;

	return fabs(r - floor(r + 0.5)) < 1e-9;
}

static void assert_pool_full(const struct hb_sim *sim)
{
	for (int i = 0; i < sim->cl->nnodes; i++)
		assert_int_equal(sim->free_gpus[i], sim->cl->nodes[i].ngpus);
}

static void assert_all_done(const struct hb_sim *sim)
{
	for (int j = 0; j < sim->njobs; j++) {
		assert_int_equal(sim->jobs[j].state, HB_JOB_DONE);
		assert_true(sim->jobs[j].progress >= sim->jobs[j].target * (1.0 - 1e-9));
		assert_true(sim->jobs[j].finish_s >= sim->jobs[j].start_s);
		assert_true(sim->jobs[j].start_s >= sim->jobs[j].arrival_s);
	}
}

/* A wrapper around an arbiter that checks the pool after every round: each
 * node's free GPUs plus the GPUs granted to jobs make the node, and a job
 * that runs uses exactly its grant. */
static const struct hb_arbiter_ops *inner;
static int rounds_checked;

static int checked_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	if (inner->on_round(sim, state, err) < 0)
		return -1;
	for (int i = 0; i < sim->cl->nnodes; i++) {
		int held = 0;

		for (int j = 0; j < sim->njobs; j++) {
			const struct hb_sim_job *job = &sim->jobs[j];

			if (job->state == HB_JOB_RUNNING || job->state == HB_JOB_RESTARTING) {
				held += job->grant[i];
				assert_int_equal(job->cfg.alloc[i], job->grant[i]);
			} else {
				assert_true(job->state == HB_JOB_DONE || job->ngrant == 0);
			}
		}
		assert_true(sim->free_gpus[i] >= 0);
		assert_int_equal(held + sim->free_gpus[i], sim->cl->nodes[i].ngpus);
	}
	rounds_checked++;
	return 0;
}

static void checked_ops(struct hb_arbiter_ops *ops, const struct hb_arbiter_ops *arb)
{
	inner = arb;
	rounds_checked = 0;
	*ops = *arb;
	ops->on_round = checked_round;
}

/* ---- Tiresias ------------------------------------------------------------- */

/* A long 8-GPU job reaches 16 GPU-hours and is demoted at the first round
 * after 60 + 57600 / 8 s; a short job arriving later is in Q0, so it runs and
 * the demoted job, which no longer fits beside it, is preempted; it resumes
 * when the short job is done, charged one restart, and finishes. */
static void test_tiresias_demotion_and_preemption(void **state)
{
	struct hb_sim sim;
	const struct hb_sim_job *l, *s;
	double t_demote = ROUND_S + THRESHOLD_GPU_S / 8.0, t_short = 3.0 * 3600.0, t_resume;

	(void)state;
	init(&sim, quick, &hb_arbiter_tiresias);
	add(&sim, m_long, 0.0, 8, 256);
	add(&sim, m_cifar, t_short, 4, 128);
	run(&sim);
	l = &sim.jobs[0];
	s = &sim.jobs[1];
	assert_all_done(&sim);
	/* Arrivals wait for the next round. */
	assert_true(fabs(l->start_s - ROUND_S) < 1e-9);
	/* Demotion exactly at the first round with 8 x (t - 60) >= 16 GPU-h. */
	assert_true(on_round(t_demote));
	assert_true(fabs(event_time(&sim, 0, "demote") - t_demote) < 1e-6);
	assert_int_equal(count_events(&sim, 0, "demote"), 1);
	assert_int_equal(count_events(&sim, 1, "demote"), 0);
	/* The short job arrives at a round time; the round pops before the
	 * arrival, so it starts one round later and preempts the long job then. */
	assert_true(fabs(s->start_s - (t_short + ROUND_S)) < 1e-9);
	assert_true(fabs(event_time(&sim, 0, "preempt") - s->start_s) < 1e-9);
	assert_int_equal(l->preemptions, 1);
	assert_int_equal(s->preemptions, 0);
	assert_int_equal(s->ngrant, 4);
	/* The long job resumes at the first round after the short job is done. */
	t_resume = ceil(s->finish_s / ROUND_S - 1e-9) * ROUND_S;
	assert_true(fabs(event_time(&sim, 0, "restart") - t_resume) < 1e-6);
	assert_int_equal(l->restarts, 1);
	assert_int_equal(s->restarts, 0);
	assert_true(l->finish_s > t_resume);
	/* GPU time: 8 GPUs from start to preemption and from resume to the end. */
	assert_true(fabs(l->gpu_s - 8.0 * ((s->start_s - l->start_s) + (l->finish_s - t_resume))) < 1e-6 * l->gpu_s);
	assert_pool_full(&sim);
	hb_sim_free(&sim);
}

/* Within Q0, jobs run in arrival order.  A job that does not fit is
 * skipped, not waited for, so a smaller later job runs beside an earlier
 * one (FIFO would block it); but the skipped job keeps its place: once it
 * fits, the later job, still in Q0 and behind it, is preempted for it. */
static void test_tiresias_fifo_within_queue_and_skip(void **state)
{
	struct hb_sim sim;
	const struct hb_sim_job *a, *b, *c;
	double t_b;

	(void)state;
	init(&sim, quick, &hb_arbiter_tiresias);
	add(&sim, m_cifar, 0.0, 8, 256);  /* a */
	add(&sim, m_cifar, 10.0, 8, 256); /* b: same size, arrives last */
	add(&sim, m_cifar, 5.0, 8, 256);  /* c: added after b, arrives between a and b */
	run(&sim);
	a = &sim.jobs[0];
	b = &sim.jobs[1];
	c = &sim.jobs[2];
	assert_all_done(&sim);
	assert_true(fabs(a->start_s - ROUND_S) < 1e-9);
	assert_true(fabs(c->start_s - ceil(a->finish_s / ROUND_S - 1e-9) * ROUND_S) < 1e-6);
	assert_true(fabs(b->start_s - ceil(c->finish_s / ROUND_S - 1e-9) * ROUND_S) < 1e-6);
	for (int j = 0; j < 3; j++) {
		assert_int_equal(sim.jobs[j].preemptions, 0);
		assert_int_equal(sim.jobs[j].restarts, 0);
	}
	hb_sim_free(&sim);

	init(&sim, quick, &hb_arbiter_tiresias);
	add(&sim, m_cifar, 0.0, 4, 128);  /* a: half the cluster */
	add(&sim, m_cifar, 1.0, 8, 256);  /* b: the whole cluster */
	add(&sim, m_cifar, 2.0, 4, 128);  /* c: fits beside a, skips b */
	run(&sim);
	a = &sim.jobs[0];
	b = &sim.jobs[1];
	c = &sim.jobs[2];
	assert_all_done(&sim);
	assert_true(fabs(a->start_s - ROUND_S) < 1e-9);
	assert_true(fabs(c->start_s - ROUND_S) < 1e-9);
	/* a and c are packed on one node each: a, never moved, on node0 (the
	 * V100s; ties go to the lower index), c's start on node1. */
	assert_int_equal(a->grant[0], 4);
	assert_int_equal(a->grant[1], 0);
	assert_non_null(strstr(start_detail(&sim, 2), "4 GPUs, GA 0, pace node1"));
	/* c (on the slower node) outlives a; at the round after a is done, b
	 * fits the whole cluster and comes first: c is preempted. */
	t_b = ceil(a->finish_s / ROUND_S - 1e-9) * ROUND_S;
	assert_true(t_b < c->finish_s);
	assert_true(fabs(b->start_s - t_b) < 1e-6);
	assert_int_equal(b->ngrant, 8);
	assert_true(fabs(event_time(&sim, 2, "preempt") - t_b) < 1e-6);
	assert_int_equal(c->preemptions, 1);
	assert_int_equal(c->restarts, 1);
	assert_true(fabs(event_time(&sim, 2, "restart") - ceil(b->finish_s / ROUND_S - 1e-9) * ROUND_S) < 1e-6);
	assert_int_equal(a->preemptions + b->preemptions, 0);
	assert_pool_full(&sim);
	hb_sim_free(&sim);
}

/* Gang placement: a 6-GPU job gets all 6 at once (4 + 2, fewest nodes); a
 * 4-GPU job behind it does not fit the remaining 2 and waits whole, while a
 * 2-GPU job fills them. */
static void test_tiresias_gang_placement(void **state)
{
	struct hb_sim sim;
	const struct hb_sim_job *a, *b, *c;

	(void)state;
	init(&sim, quick, &hb_arbiter_tiresias);
	add(&sim, m_cifar, 0.0, 6, 192);
	add(&sim, m_cifar, 1.0, 4, 128);
	add(&sim, m_ds2, 2.0, 2, 40);
	run(&sim);
	a = &sim.jobs[0];
	b = &sim.jobs[1];
	c = &sim.jobs[2];
	assert_all_done(&sim);
	assert_true(fabs(a->start_s - ROUND_S) < 1e-9);
	assert_int_equal(a->ngrant, 6);
	assert_int_equal(a->cfg.ngpus, 6);
	assert_true((a->grant[0] == 4 && a->grant[1] == 2) || (a->grant[0] == 2 && a->grant[1] == 4));
	assert_true(fabs(c->start_s - ROUND_S) < 1e-9);
	assert_int_equal(c->ngrant, 2);
	assert_int_equal(a->grant[0] + c->grant[0], 4);
	/* b starts whole, once enough GPUs are free: never with fewer. */
	assert_true(b->start_s > ROUND_S);
	assert_int_equal(b->ngrant, 4);
	assert_int_equal(b->cfg.ngpus, 4);
	assert_true(b->grant[0] == 4 || b->grant[1] == 4);
	assert_true(on_round(b->start_s));
	assert_pool_full(&sim);
	hb_sim_free(&sim);
}

/* Two long jobs time-share by attained service: the second runs when the
 * first is demoted, the first resumes when the second is demoted too, and
 * then FIFO by arrival in Q1 lets the first finish before the second. */
static void test_tiresias_las_time_sharing(void **state)
{
	struct hb_sim sim;
	const struct hb_sim_job *a, *b;
	double t_a = ROUND_S + THRESHOLD_GPU_S / 8.0, t_b;

	(void)state;
	init(&sim, quick, &hb_arbiter_tiresias);
	add(&sim, m_long, 0.0, 8, 256);
	add(&sim, m_long, 30.0, 8, 256);
	run(&sim);
	a = &sim.jobs[0];
	b = &sim.jobs[1];
	assert_all_done(&sim);
	assert_true(fabs(event_time(&sim, 0, "demote") - t_a) < 1e-6);
	assert_true(fabs(b->start_s - t_a) < 1e-9);
	t_b = t_a + THRESHOLD_GPU_S / 8.0;
	assert_true(fabs(event_time(&sim, 1, "demote") - t_b) < 1e-6);
	assert_true(fabs(event_time(&sim, 0, "restart") - t_b) < 1e-6);
	assert_int_equal(a->preemptions, 1);
	assert_int_equal(b->preemptions, 1);
	assert_int_equal(a->restarts, 1);
	assert_int_equal(b->restarts, 1);
	assert_true(a->finish_s < b->finish_s);
	hb_sim_free(&sim);
}

static void test_tiresias_request_larger_than_cluster(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };

	(void)state;
	init(&sim, quick, &hb_arbiter_tiresias);
	add(&sim, m_cifar, 0.0, 16, 512);
	assert_int_equal(hb_sim_run(&sim, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "asks for 16 GPUs"));
	hb_sim_free(&sim);
}

/* ---- Optimus -------------------------------------------------------------- */

/* The objective, computed here independently of the arbiter: remaining
 * iterations at the realised batch (epoch by epoch, phi frozen at each
 * epoch start) times the DDP iteration time on k GPUs of the one node. */
static double test_iters(const struct hb_sim_job *job, long batch)
{
	double b = (double)batch, D = job->model->dataset_size, p = job->progress, s = job->epoch_samples, n = 0.0;

	while (p < job->target) {
		double e = hb_stats_efficiency(job->stats, hb_stats_phi(job->stats, p / job->target, b), b);
		double left = (job->target - p) / (b * e), to_end = (D - s) / b;

		if (left <= to_end)
			return n + left;
		n += to_end;
		p += to_end * b * e;
		s = 0.0;
	}
	return n;
}

static double test_remaining(const struct hb_sim_job *job, int k)
{
	struct hb_ddp_result r;
	struct hb_error err = { 0 };
	int alloc[1] = { k };

	if (hb_ddp_plan(job->perf, alloc, job->req_batch, &r, &err) < 0)
		fail_msg("%s", err.msg);
	return r.found ? test_iters(job, r.global_bs) * r.iter_s : INFINITY;
}

/* Three jobs on one 8-GPU node, one of them half done and one whose third
 * GPU would slow it down (deepspeech2 at B 32: minB_L 10 rounds the local
 * batch of 3 GPUs down to 10, so R(3) > R(2)): Optimus's greedy must reach
 * the minimum over every allocation (k_j >= 1, sum <= 8, k_j <= B_j /
 * minB_L) of the sum of remaining times.  The curves are convex here
 * (checked), where the greedy is exact; with the local batch rounded to
 * multiples of minB_L they need not be (cifar10 at B 512: R(6) < R(7)). */
static void test_optimus_greedy_equals_brute_force(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };
	double R[3][9], best = INFINITY, got = 0.0;
	int kmax[3], bestk[3] = { 0, 0, 0 }, used = 0;

	(void)state;
	init(&sim, dgx, &hb_arbiter_optimus);
	add(&sim, m_cifar, 0.0, 0, 1024);
	add(&sim, m_ds2, 0.0, 0, 640);
	add(&sim, m_ds2, 0.0, 0, 32);
	/* The second job is half done: its oracle knows it needs less. */
	sim.jobs[1].progress = 0.5 * sim.jobs[1].target;
	if (hb_sim_arbiter_init(&sim, &err) < 0) /* the callbacks below are called without hb_sim_run */
		fail_msg("%s", err.msg);
	for (int j = 0; j < 3; j++) {
		struct hb_sim_job *job = &sim.jobs[j];

		kmax[j] = (int)(job->req_batch / job->perf->min_lbs);
		if (kmax[j] > 8)
			kmax[j] = 8;
		for (int k = 1; k <= kmax[j]; k++)
			R[j][k] = test_remaining(job, k);
		for (int k = 2; k < kmax[j]; k++)
			assert_true(R[j][k - 1] - R[j][k] >= R[j][k] - R[j][k + 1] - 1e-9 * R[j][1]);
		if (hb_arbiter_optimus.on_arrival(&sim, sim.arbiter_state, job, &err) < 0)
			fail_msg("%s", err.msg);
	}
	for (int x = 1; x <= kmax[0]; x++)
		for (int y = 1; y <= kmax[1]; y++)
			for (int z = 1; z <= kmax[2]; z++) {
				double v = R[0][x] + R[1][y] + R[2][z];

				if (x + y + z <= 8 && v < best) {
					best = v;
					bestk[0] = x;
					bestk[1] = y;
					bestk[2] = z;
				}
			}
	if (hb_arbiter_optimus.on_round(&sim, sim.arbiter_state, &err) < 0)
		fail_msg("%s", err.msg);
	for (int j = 0; j < 3; j++) {
		const struct hb_sim_job *job = &sim.jobs[j];

		print_message("optimus greedy: job %d (%s, B %ld) %d GPUs, brute force %d; R(k) = %.0f s\n", j,
			      job->model->name, job->req_batch, job->ngrant, bestk[j], R[j][job->ngrant]);
		assert_int_equal(job->state, HB_JOB_RUNNING);
		assert_int_equal(job->ngrant, job->cfg.ngpus);
		got += R[j][job->ngrant];
		used += job->ngrant;
	}
	/* The third job stops where its next GPU does not pay. */
	assert_true(R[2][3] > R[2][2]);
	assert_int_equal(sim.jobs[2].ngrant, 2);
	assert_true(used <= 8);
	assert_true(fabs(got - best) <= 1e-9 * best);
	for (int j = 0; j < 3; j++)
		assert_int_equal(sim.jobs[j].ngrant, bestk[j]);
	assert_int_equal(sim.free_gpus[0], 8 - used);
	hb_sim_free(&sim);
}

/* More jobs than GPUs: the first eight arrivals get one GPU each; nobody
 * gets a second one, and the ninth waits. */
static void test_optimus_one_gpu_each_first(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };

	(void)state;
	init(&sim, quick, &hb_arbiter_optimus);
	for (int j = 0; j < 9; j++)
		add(&sim, m_cifar, 0.0, 0, 128);
	if (hb_sim_arbiter_init(&sim, &err) < 0)
		fail_msg("%s", err.msg);
	for (int j = 0; j < 9; j++)
		if (hb_arbiter_optimus.on_arrival(&sim, sim.arbiter_state, &sim.jobs[j], &err) < 0)
			fail_msg("%s", err.msg);
	if (hb_arbiter_optimus.on_round(&sim, sim.arbiter_state, &err) < 0)
		fail_msg("%s", err.msg);
	for (int j = 0; j < 8; j++)
		assert_int_equal(sim.jobs[j].ngrant, 1);
	assert_int_equal(sim.jobs[8].ngrant, 0);
	assert_int_equal(sim.jobs[8].state, HB_JOB_PENDING);
	assert_int_equal(sim.free_gpus[0] + sim.free_gpus[1], 0);
	hb_sim_free(&sim);
}

/* A multi-job run: every allocation change happens at a round, every job
 * finishes, grants never exceed a job's B / minB_L or the cluster, and the
 * pool is whole at the end. */
static void test_optimus_rounds_only_and_all_finish(void **state)
{
	struct hb_sim sim;
	struct hb_arbiter_ops ops;
	int resizes = 0;

	(void)state;
	checked_ops(&ops, &hb_arbiter_optimus);
	init(&sim, quick, &ops);
	add(&sim, m_cifar, 0.0, 0, 512);
	add(&sim, m_ds2, 100.0, 0, 80);
	add(&sim, m_bert, 400.0, 0, 32);
	add(&sim, m_cifar, 900.0, 0, 256);
	add(&sim, m_ncf, 1000.0, 0, 256);
	run(&sim);
	assert_all_done(&sim);
	for (size_t i = 0; i < sim.nevents; i++) {
		const struct hb_sim_event_rec *e = &sim.events[i];

		if (strcmp(e->kind, "start") == 0 || strcmp(e->kind, "restart") == 0 ||
		    strcmp(e->kind, "preempt") == 0 || strcmp(e->kind, "resize") == 0)
			assert_true(on_round(e->t));
		resizes += strcmp(e->kind, "resize") == 0;
	}
	for (size_t i = 0; i < sim.nsamples; i++) {
		const struct hb_sim_job *job = &sim.jobs[sim.samples[i].job];

		assert_true(sim.samples[i].ngpus >= 1);
		assert_true(sim.samples[i].ngpus <= job->req_batch / job->perf->min_lbs);
	}
	/* Each job's first start is a resize from 0; later arrivals take GPUs
	 * from running jobs, which restart. */
	assert_true(resizes > sim.njobs);
	assert_true(sim.jobs[0].restarts >= 1);
	assert_true(rounds_checked > 10);
	assert_pool_full(&sim);
	hb_sim_free(&sim);
}

/* ---- both ----------------------------------------------------------------- */

/* The 10-job scenario: a long whole-cluster job first, then a mix of
 * TunedJobs-like requests (GPUs, batch) every 10 minutes. */
static void scenario(struct hb_sim *sim, const struct hb_arbiter_ops *arb)
{
	init(sim, quick, arb);
	add(sim, m_long, 0.0, 8, 256);
	add(sim, m_cifar, 600.0, 4, 512);
	add(sim, m_ds2, 1200.0, 4, 80);
	add(sim, m_bert, 1800.0, 2, 32);
	add(sim, m_yolo, 2400.0, 4, 32);
	add(sim, m_cifar, 3000.0, 2, 256);
	add(sim, m_ncf, 3600.0, 1, 256);
	add(sim, m_ds2, 4200.0, 2, 40);
	add(sim, m_bert, 4800.0, 4, 32);
	add(sim, m_cifar, 5400.0, 8, 1024);
}

static void same_records(const struct hb_sim *x, const struct hb_sim *y)
{
	assert_int_equal(x->nsamples, y->nsamples);
	assert_int_equal(x->nevents, y->nevents);
	assert_memory_equal(x->samples, y->samples, x->nsamples * sizeof(*x->samples));
	for (size_t e = 0; e < x->nevents; e++)
		assert_true(hb_sim_event_equal(&x->events[e], &y->events[e]));
	for (int j = 0; j < x->njobs; j++) {
		assert_true(x->jobs[j].finish_s == y->jobs[j].finish_s);
		assert_true(x->jobs[j].gpu_s == y->jobs[j].gpu_s);
		assert_int_equal(x->jobs[j].restarts, y->jobs[j].restarts);
	}
}

static void test_determinism(void **state)
{
	const struct hb_arbiter_ops *arbs[] = { &hb_arbiter_tiresias, &hb_arbiter_optimus };

	(void)state;
	for (int a = 0; a < 2; a++) {
		struct hb_sim x, y;

		scenario(&x, arbs[a]);
		run(&x);
		scenario(&y, arbs[a]);
		run(&y);
		same_records(&x, &y);
		hb_sim_free(&x);
		hb_sim_free(&y);
	}
}

/* Mean JCT of the scenario under FIFO, Tiresias and Optimus.  Behind the
 * long job, FIFO makes every short job wait for hours; Tiresias runs them
 * once the long job is demoted; Optimus shares the GPUs from the start. */
static void test_ten_job_scenario(void **state)
{
	const struct hb_arbiter_ops *arbs[] = { &hb_arbiter_fifo, &hb_arbiter_tiresias, &hb_arbiter_optimus };
	double mean[3];

	(void)state;
	for (int a = 0; a < 3; a++) {
		struct hb_sim sim;
		struct hb_arbiter_ops ops;
		double sum = 0.0, gpu_h = 0.0, makespan = 0.0;
		int restarts = 0, preempt = 0;

		checked_ops(&ops, arbs[a]);
		if (!arbs[a]->on_round)
			ops = *arbs[a];
		scenario(&sim, &ops);
		run(&sim);
		assert_true(!arbs[a]->on_round || rounds_checked > 100);
		assert_all_done(&sim);
		assert_pool_full(&sim);
		for (int j = 0; j < sim.njobs; j++) {
			sum += sim.jobs[j].finish_s - sim.jobs[j].arrival_s;
			gpu_h += sim.jobs[j].gpu_s / 3600.0;
			restarts += sim.jobs[j].restarts;
			preempt += sim.jobs[j].preemptions;
			makespan = fmax(makespan, sim.jobs[j].finish_s);
		}
		mean[a] = sum / sim.njobs;
		print_message("%-8s mean JCT %.3f h, makespan %.3f h, %.2f GPU-h, %d restarts, %d preemptions\n",
			      arbs[a]->name, mean[a] / 3600.0, makespan / 3600.0, gpu_h, restarts, preempt);
		for (int j = 0; j < sim.njobs; j++)
			print_message("    job %d %-11s %d GPUs B %-5ld arrive %5.0f start %6.0f finish %6.0f "
				      "JCT %.3f h, %d restarts\n",
				      j, sim.jobs[j].model->name, sim.jobs[j].req_gpus, sim.jobs[j].req_batch,
				      sim.jobs[j].arrival_s, sim.jobs[j].start_s, sim.jobs[j].finish_s,
				      (sim.jobs[j].finish_s - sim.jobs[j].arrival_s) / 3600.0, sim.jobs[j].restarts);
		hb_sim_free(&sim);
	}
	/* Head-of-line blocking behind a 5-hour job: both baselines must beat FIFO by far. */
	assert_true(mean[1] < 0.7 * mean[0]);
	assert_true(mean[2] < 0.7 * mean[0]);
}

static int setup(void **state)
{
	struct hb_error err = { 0 };
	int k;

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	quick = hb_catalog_cluster(&cat, "jabas-quickstart");
	dgx = hb_catalog_cluster(&cat, "dgx-h100");
	k = (int)(hb_catalog_model(&cat, "resnet50") - cat.models);
	cat.models[k].target_epochs = 20; /* about 5 h on the 8 GPUs */
	m_long = &cat.models[k];
	m_cifar = hb_catalog_model(&cat, "cifar10");
	m_ds2 = hb_catalog_model(&cat, "deepspeech2");
	m_bert = hb_catalog_model(&cat, "bert");
	m_yolo = hb_catalog_model(&cat, "yolov3");
	m_ncf = hb_catalog_model(&cat, "ncf");
	return quick && dgx && m_cifar && m_ds2 && m_bert && m_yolo && m_ncf ? 0 : -1;
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
		cmocka_unit_test(test_tiresias_demotion_and_preemption),
		cmocka_unit_test(test_tiresias_fifo_within_queue_and_skip),
		cmocka_unit_test(test_tiresias_gang_placement),
		cmocka_unit_test(test_tiresias_las_time_sharing),
		cmocka_unit_test(test_tiresias_request_larger_than_cluster),
		cmocka_unit_test(test_optimus_greedy_equals_brute_force),
		cmocka_unit_test(test_optimus_one_gpu_each_first),
		cmocka_unit_test(test_optimus_rounds_only_and_all_finish),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_ten_job_scenario),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
