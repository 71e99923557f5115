/* The IBM elastic autoscaler as a cluster arbiter (sim/policies/elastic/arbiter_elastic.c)
 * and its agent (sim/policies/elastic/agent_elastic.c): FIFO trial admission with head-of-line
 * blocking, queue and drop modes, re-spread after a departure at the next
 * tick only, no restart of a job whose GPU count did not change, the applied
 * counts against hb_elastic_optimize and brute-force enumeration at every
 * round, idle rounds that change nothing, determinism, the JSA input built
 * from the perf model (slowest GPU type, Eq. 2 over runnable batches), and
 * the agent alone on a dedicated cluster.
 *
 * Cluster "elastic-test" (added here): 2 nodes x 4 P100, PCIe inside a node,
 * 10 GbE between nodes (the link classes of ibm-p100), K = 8.  Its JSA
 * tables make the scenarios below: resnet50-cifar100 and vgg11bn-cifar100
 * scale well up to 4 GPUs (one node) and poorly across nodes; ImageNet
 * resnet50 needs at least 2 GPUs (minB_G 256 > c_j 160) and scales across
 * nodes up to 8; alexnet-food101 (IBM category 4) has a fixed batch. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "analytic.h"
#include "capacity.h"
#include "ddp.h"
#include "default_db.h"
#include "elastic_opts.h"
#include "elastic_share.h"
#include "policy.h"
#include "sim.h"

#define DELTA_S 300.0      /* Δ of the scenarios */
#define MAXJ 16

/* The arbiter's options (elastic_opts.h) of the scenarios, by drop mode: Δ
 * DELTA_S, or 0 (the event-driven variant). */
static const struct hb_elastic_opts ticks[2] = { { DELTA_S, 0 }, { DELTA_S, 1 } };
static const struct hb_elastic_opts events[2] = { { 0.0, 0 }, { 0.0, 1 } };

static struct hb_catalog cat;
static struct hb_profdb *db;
static const struct hb_cluster *cl;                    /* elastic-test, K = 8 */
static const struct hb_cluster *cl_one;                /* elastic-one, K = 1 */
static const struct hb_model *m_r, *m_i, *m_v, *m_f;   /* resnet50-cifar100, resnet50, vgg11bn-cifar100, alexnet-food101 */

/* ---- scenario helpers ------------------------------------------------------ */

static void init(struct hb_sim *sim, const struct hb_arbiter_ops *arb, const struct hb_cluster *c, int drop)
{
	struct hb_sim_opts o;
	struct hb_error err = { 0 };

	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.restart_const_s = 30.0;
	if (hb_sim_init(sim, &cat, c, db, "elastic", &o, &err) < 0)
		fail_msg("%s", err.msg);
	sim->policy_opts = &ticks[drop != 0];
	hb_sim_set_arbiter(sim, arb);
}

static int add(struct hb_sim *sim, const struct hb_model *m, double t, int gpus)
{
	struct hb_error err = { 0 };
	int id;

	if (hb_sim_add_job(sim, m, &hb_agent_elastic, t, &id, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_job_request(&sim->jobs[id], gpus, 0);
	return id;
}

static void run(struct hb_sim *sim)
{
	struct hb_error err = { 0 };

	if (hb_sim_run(sim, &err) < 0)
		fail_msg("%s", err.msg);
}

/* Events of one kind for one job. */
static int count_events(const struct hb_sim *sim, int job, const char *kind)
{
	int n = 0;

	for (size_t i = 0; i < sim->nevents; i++)
		n += sim->events[i].job == job && strcmp(sim->events[i].kind, kind) == 0;
	return n;
}

/* Time of the first event of a kind for a job after t0, -1 if none. */
static double first_event_after(const struct hb_sim *sim, int job, const char *kind, double t0)
{
	for (size_t i = 0; i < sim->nevents; i++)
		if (sim->events[i].job == job && strcmp(sim->events[i].kind, kind) == 0 && sim->events[i].t > t0)
			return sim->events[i].t;
	return -1.0;
}

/* The first tick at or after t (ticks at Δ, 2Δ, ...). */
static double tick_after(double t)
{
	double k = ceil(t / DELTA_S - 1e-12);

	return (k < 1 ? 1 : k) * DELTA_S;
}

/* ---- a checking wrapper around the elastic arbiter -------------------------- */

/* Test-only observation state (the library has none). */
static struct {
	int dirty;                      /* an arrival or a finish since the last round */
	long rounds, idle_rounds, checked;
	struct hb_elastic_entry e[MAXJ];/* oracle JSA entries, built independently per job */
	int have[MAXJ];
} chk;

static void chk_reset(void)
{
	for (int i = 0; i < MAXJ; i++)
		if (chk.have[i])
			hb_elastic_entry_free(&chk.e[i]);
	memset(&chk, 0, sizeof(chk));
}

static int wrap_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	chk.dirty = 1;
	return hb_arbiter_elastic.on_arrival(sim, state, job, err);
}

static int wrap_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	chk.dirty = 1;
	return hb_arbiter_elastic.on_finish(sim, state, job, err);
}

static double wrap_round_s(const struct hb_sim *sim, const void *state)
{
	return hb_arbiter_elastic.round_s(sim, state);
}

static int wrap_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	return hb_arbiter_elastic.init(sim, opts, state, err);
}

static void wrap_free(void *state)
{
	hb_arbiter_elastic.free(state);
}

/* Brute force: the best Σ S_j(k_j) over every vector with 1 <= k_j <= k_max_j
 * and Σ k_j <= K. */
static double brute(const struct hb_elastic_table *t, int n, int j, int left)
{
	double best = -INFINITY;

	if (j == n)
		return 0.0;
	for (int k = 1; k <= t[j].k_max && k <= left; k++) {
		double rest;

		if (t[j].speedup[k] == -INFINITY)
			continue;
		rest = brute(t, n, j + 1, left - k);
		if (rest + t[j].speedup[k] > best)
			best = rest + t[j].speedup[k];
	}
	return best;
}

/* After a round: the running jobs (admission = arrival = id order in these
 * scenarios) hold exactly hb_elastic_optimize's counts, whose value equals
 * brute force, each runs its JSA batch for its count on its grant, and the
 * pool adds up. */
static void check_allocation(struct hb_sim *sim)
{
	struct hb_elastic_table tabs[MAXJ];
	int ids[MAXJ], alloc[MAXJ], n = 0, held = 0, idle = 0, K = sim->cl->ngpus;
	double value = 0.0, sum = 0.0;
	struct hb_error err = { 0 };

	for (int j = 0; j < sim->njobs; j++) {
		struct hb_sim_job *job = &sim->jobs[j];

		if (job->state != HB_JOB_RUNNING && job->state != HB_JOB_RESTARTING)
			continue;
		assert_true(j < MAXJ);
		if (!chk.have[j]) {
			if (hb_elastic_entry_build(sim, job, &chk.e[j], &err) < 0)
				fail_msg("%s", err.msg);
			chk.have[j] = 1;
		}
		tabs[n].speedup = chk.e[j].sc.speedup;
		tabs[n].k_max = chk.e[j].sc.k_max;
		ids[n++] = j;
	}
	for (int i = 0; i < sim->cl->nnodes; i++)
		held += sim->free_gpus[i];
	for (int i = 0; i < n; i++)
		held += sim->jobs[ids[i]].ngrant;
	assert_int_equal(held, K);
	if (n == 0)
		return;
	if (hb_elastic_optimize(tabs, n, K, alloc, &value, &idle, &err) < 0)
		fail_msg("%s", err.msg);
	for (int i = 0; i < n; i++) {
		const struct hb_sim_job *job = &sim->jobs[ids[i]];
		int g = 0;

		assert_int_equal(job->ngrant, alloc[i]);
		assert_int_equal(job->cfg.ngpus, alloc[i]);
		assert_int_equal(job->cfg.global_bs, chk.e[ids[i]].sc.batch[alloc[i]]);
		for (int nd = 0; nd < sim->cl->nnodes; nd++) {
			assert_int_equal(job->cfg.alloc[nd], job->grant[nd]);
			g += job->grant[nd];
		}
		assert_int_equal(g, alloc[i]);
		sum += tabs[i].speedup[alloc[i]];
	}
	assert_true(fabs(value - brute(tabs, n, 0, K)) <= 1e-12 * fabs(value));
	assert_true(fabs(sum - value) <= 1e-12 * fabs(value));
	chk.checked++;
}

static int wrap_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	int before[MAXJ], dirty = chk.dirty;
	size_t nev = sim->nevents;

	assert_true(sim->njobs <= MAXJ);
	for (int j = 0; j < sim->njobs; j++)
		before[j] = sim->jobs[j].ngrant;
	chk.dirty = 0;
	chk.rounds++;
	if (hb_arbiter_elastic.on_round(sim, state, err) < 0)
		return -1;
	if (!dirty) {
		/* Nothing arrived or finished: no event, no change. */
		assert_int_equal(sim->nevents, nev);
		for (int j = 0; j < sim->njobs; j++)
			assert_int_equal(sim->jobs[j].ngrant, before[j]);
		chk.idle_rounds++;
	}
	check_allocation(sim);
	return 0;
}

static const struct hb_arbiter_ops checked_elastic = {
	.name = "elastic-checked", .summary = "test", .init = wrap_init, .free = wrap_free,
	.on_arrival = wrap_arrival, .on_finish = wrap_finish, .round_s = wrap_round_s, .on_round = wrap_round,
};

static void print_k_over_time(const struct hb_sim *sim);

/* ---- tests ------------------------------------------------------------------ */

/* Seven 1-GPU-capable jobs, then ImageNet resnet50 (needs >= 2 GPUs), then a
 * small job: the DP admits the seven (7 GPUs), the big one does not fit in
 * the 1 GPU left, and the small one behind it is not admitted either (no
 * backfilling) although it would fit. */
static void scenario_hol(struct hb_sim *sim, int drop)
{
	init(sim, &checked_elastic, cl, drop);
	for (int i = 0; i < 7; i++)
		add(sim, m_r, 10.0 * i, 0);
	add(sim, m_i, 100.0, 0);    /* job 7 */
	add(sim, m_r, 110.0, 0);    /* job 8 */
}

static void test_admission_order_and_head_of_line_blocking(void **state)
{
	struct hb_sim sim;

	(void)state;
	chk_reset();
	scenario_hol(&sim, 0);
	run(&sim);
	for (int i = 0; i < 7; i++) {
		assert_int_equal(sim.jobs[i].state, HB_JOB_DONE);
		assert_true(sim.jobs[i].start_s == DELTA_S); /* all admitted at the first tick */
		assert_int_equal(count_events(&sim, i, "admit"), 1);
	}
	/* The head of the queue (job 7) blocks job 8 although a GPU is idle. */
	assert_true(sim.jobs[7].start_s > DELTA_S);
	assert_true(sim.jobs[8].start_s >= sim.jobs[7].start_s);
	assert_int_equal(sim.jobs[7].state, HB_JOB_DONE);
	assert_int_equal(sim.jobs[8].state, HB_JOB_DONE);
	/* Admission happens at ticks only. */
	for (int i = 0; i < sim.njobs; i++)
		assert_true(fabs(sim.jobs[i].start_s / DELTA_S - round(sim.jobs[i].start_s / DELTA_S)) < 1e-9);
	/* The first tick left one GPU idle rather than backfill job 8. */
	{
		int seen = 0;

		for (size_t i = 0; i < sim.nevents; i++)
			if (sim.events[i].job == -1 && strcmp(sim.events[i].kind, "scale") == 0) {
				assert_non_null(strstr(sim.events[i].detail, "7 running (7 admitted), 2 waiting"));
				seen = 1;
				break;
			}
		assert_true(seen);
	}
	assert_true(chk.checked > 0);
	hb_sim_free(&sim);
	chk_reset();
}

static void test_drop_mode_rejects_what_the_tick_cannot_admit(void **state)
{
	struct hb_sim sim;

	(void)state;
	chk_reset();
	scenario_hol(&sim, 1);
	run(&sim); /* the run ends although two jobs never ran */
	for (int i = 0; i < 7; i++)
		assert_int_equal(sim.jobs[i].state, HB_JOB_DONE);
	for (int i = 7; i < 9; i++) {
		assert_int_equal(sim.jobs[i].state, HB_JOB_DROPPED);
		assert_int_equal(sim.jobs[i].started, 0);
		assert_true(sim.jobs[i].gpu_s == 0.0);
		assert_int_equal(count_events(&sim, i, "drop"), 1);
		assert_true(first_event_after(&sim, i, "drop", 0.0) == DELTA_S); /* dropped at the tick */
	}
	assert_int_equal(sim.nended, sim.njobs);
	hb_sim_free(&sim);
	chk_reset();
}

/* A job with no feasible GPU count at all (ImageNet resnet50 on one GPU:
 * minB_G 256 > c_j 160): an input error in queue mode (it would block the
 * queue forever), dropped at the tick in drop mode together with the job
 * behind it. */
static void test_never_feasible_job(void **state)
{
	struct hb_sim sim;
	struct hb_error err = { 0 };

	(void)state;
	init(&sim, &hb_arbiter_elastic, cl_one, 0);
	add(&sim, m_i, 0.0, 0);
	assert_int_equal(hb_sim_run(&sim, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "no feasible GPU count"));
	hb_sim_free(&sim);

	init(&sim, &hb_arbiter_elastic, cl_one, 1);
	add(&sim, m_i, 0.0, 0);
	add(&sim, m_r, 1.0, 0);
	run(&sim);
	assert_int_equal(sim.jobs[0].state, HB_JOB_DROPPED);
	assert_int_equal(sim.jobs[1].state, HB_JOB_DROPPED);
	hb_sim_free(&sim);
}

/* Category 4 (alexnet-food101, batch fixed at 128): one fixed GPU count,
 * the fewest that run 128 (one P100 holds it), whatever the trace asks for;
 * its table has that count only. */
static void test_fixed_batch_job_runs_on_fixed_count(void **state)
{
	struct hb_sim sim;
	const struct hb_elastic_entry *e;

	(void)state;
	init(&sim, &hb_arbiter_elastic, cl, 0);
	add(&sim, m_f, 0.0, 3);
	run(&sim);
	assert_int_equal(sim.jobs[0].state, HB_JOB_DONE);
	assert_int_equal(sim.jobs[0].ngrant, 1);
	assert_int_equal(sim.jobs[0].cfg.global_bs, 128);
	e = hb_elastic_arbiter_entry(&sim, &sim.jobs[0]);
	assert_non_null(e);
	assert_int_equal(e->k_only, 1);
	assert_true(e->sc.speedup[1] == 1.0); /* b_opt(1) = c_j = 128: Eq. 1's own denominator */
	for (int k = 2; k <= e->sc.k_max; k++)
		assert_true(e->sc.speedup[k] == -INFINITY);
	hb_sim_free(&sim);
}

/* A (ImageNet resnet50, long) and B (vgg11bn-cifar100) share the cluster
 * 4 + 4 (S: 3.82 + 2.78 beats 7 + 1 and 6 + 2); C (resnet50-cifar100, short;
 * per-GPU batch at most 32, the catalog's max_lbs) arrives and takes 1 of B's
 * GPUs (A 4, B 3, C 1: its S(2) does not pay for the GPU B loses): A keeps
 * its GPUs and is not restarted, B is resized once and finishes first, and
 * C grows into B's GPUs at the next tick.  When
 * B and C are gone A grows to 8 GPUs, at the next tick after the last of
 * them finished, not before. */
static void test_respread_and_no_restart_when_unchanged(void **state)
{
	struct hb_sim sim;
	const struct hb_sim_job *a, *b, *c;
	double last_done, t_grow;

	(void)state;
	chk_reset();
	init(&sim, &checked_elastic, cl, 0);
	add(&sim, m_i, 0.0, 0);
	add(&sim, m_v, 1.0, 0);
	add(&sim, m_r, 400.0, 0);
	run(&sim);
	if (getenv("HB_ELASTIC_VERBOSE"))
		print_k_over_time(&sim);
	a = &sim.jobs[0];
	b = &sim.jobs[1];
	c = &sim.jobs[2];
	assert_int_equal(a->state, HB_JOB_DONE);
	assert_true(a->start_s == DELTA_S && b->start_s == DELTA_S);
	assert_true(c->start_s == 2 * DELTA_S);
	assert_int_equal(b->state, HB_JOB_DONE);
	assert_int_equal(c->state, HB_JOB_DONE);
	/* B was resized 4 -> 3 at C's admission and finished before C. */
	assert_true(first_event_after(&sim, 1, "resize", 0.0) == 2 * DELTA_S);
	assert_int_equal(count_events(&sim, 1, "resize"), 1);
	assert_int_equal(b->restarts, 1);
	assert_int_equal(b->ngrant, 3);
	assert_true(b->finish_s < c->finish_s);
	assert_int_equal(count_events(&sim, 2, "resize"), 1);
	assert_true(fabs(first_event_after(&sim, 2, "resize", 0.0) - tick_after(b->finish_s)) < 1e-9);
	/* A was never touched until B and C were gone: one resize, one restart,
	 * its growth to the whole cluster at the tick after the last finish. */
	assert_int_equal(count_events(&sim, 0, "resize"), 1);
	assert_int_equal(count_events(&sim, 0, "restart"), 1);
	assert_int_equal(a->restarts, 1);
	assert_int_equal(a->ngrant, 8);
	last_done = fmax(b->finish_s, c->finish_s);
	t_grow = first_event_after(&sim, 0, "resize", 0.0);
	assert_true(t_grow > last_done);
	assert_true(fabs(t_grow - tick_after(last_done)) < 1e-9);
	assert_true(chk.idle_rounds > 0);   /* ticks with nothing new changed nothing */
	assert_true(chk.checked > 2);
	hb_sim_free(&sim);
	chk_reset();
}

/* The 10-job scenario of the report: mixed models and arrivals. */
static void scenario_ten(struct hb_sim *sim, const struct hb_arbiter_ops *arb)
{
	const struct hb_model *ms[10] = { m_r, m_v, m_r, m_f, m_i, m_r, m_v, m_r, m_f, m_r };
	int req[10] = { 0, 0, 0, 2, 0, 0, 0, 0, 0, 0 }; /* job 3's request is ignored */

	init(sim, arb, cl, 0);
	for (int i = 0; i < 10; i++)
		add(sim, ms[i], 120.0 * i, req[i]);
}

/* k of every job after each tick (verbose: HB_ELASTIC_VERBOSE=1). */
static void print_k_over_time(const struct hb_sim *sim)
{
	printf("# t_s job model event detail\n");
	for (size_t i = 0; i < sim->nevents; i++) {
		const struct hb_sim_event_rec *r = &sim->events[i];

		if (strcmp(r->kind, "admit") && strcmp(r->kind, "resize") && strcmp(r->kind, "done") &&
		    strcmp(r->kind, "scale"))
			continue;
		printf("%7.0f %3d %-18s %-7s %s\n", r->t, r->job, r->job >= 0 ? sim->jobs[r->job].model->name : "-",
		       r->kind, r->detail);
	}
	for (int j = 0; j < sim->njobs; j++)
		printf("job %d %s: arrival %.0f start %.0f finish %.0f restarts %d B_G %ld k %d\n", j,
		       sim->jobs[j].model->name, sim->jobs[j].arrival_s, sim->jobs[j].start_s, sim->jobs[j].finish_s,
		       sim->jobs[j].restarts, sim->jobs[j].cfg.global_bs, sim->jobs[j].ngrant);
}

static void test_ten_jobs_match_optimizer_and_brute_force(void **state)
{
	struct hb_sim sim;

	(void)state;
	chk_reset();
	scenario_ten(&sim, &checked_elastic);
	run(&sim);
	for (int j = 0; j < sim.njobs; j++) {
		assert_int_equal(sim.jobs[j].state, HB_JOB_DONE);
		assert_true(sim.jobs[j].start_s >= sim.jobs[j].arrival_s);
		if (j > 0)
			assert_true(sim.jobs[j].start_s >= sim.jobs[j - 1].start_s); /* FIFO admission */
	}
	assert_int_equal(sim.jobs[3].cfg.ngpus, 1); /* category 4 on its fixed count, not its request */
	assert_true(chk.checked >= 5);
	assert_true(chk.idle_rounds > 0);
	if (getenv("HB_ELASTIC_VERBOSE"))
		print_k_over_time(&sim);
	hb_sim_free(&sim);
	chk_reset();
}

/* Δ = 0: the event-driven variant decides at every arrival and departure. */
static void test_event_driven(void **state)
{
	struct hb_sim sim;

	(void)state;
	init(&sim, &hb_arbiter_elastic, cl, 0);
	sim.policy_opts = &events[0];
	add(&sim, m_i, 0.0, 0);
	add(&sim, m_v, 50.0, 0);
	run(&sim);
	assert_true(sim.jobs[0].start_s == 0.0);
	assert_true(sim.jobs[1].start_s == 50.0);
	/* A alone takes all 8 (S(8) 5.68), shares 4 + 4 from B's arrival, and\n\t * takes 8 again the moment B is done. */
	assert_true(first_event_after(&sim, 0, "resize", 0.0) == 50.0);
	assert_true(first_event_after(&sim, 0, "resize", 50.0) == sim.jobs[1].finish_s);
	assert_int_equal(sim.jobs[0].ngrant, 8);
	assert_int_equal(sim.jobs[0].restarts, 2);
	hb_sim_free(&sim);

	/* Drop mode: rejected on arrival. */
	init(&sim, &hb_arbiter_elastic, cl_one, 1);
	sim.policy_opts = &events[1];
	add(&sim, m_r, 0.0, 0);
	add(&sim, m_r, 10.0, 0);
	run(&sim);
	assert_int_equal(sim.jobs[0].state, HB_JOB_DONE);
	assert_int_equal(sim.jobs[1].state, HB_JOB_DROPPED);
	assert_true(first_event_after(&sim, 1, "drop", 0.0) == 10.0);
	hb_sim_free(&sim);
}

static void test_deterministic(void **state)
{
	struct hb_sim s1, s2;

	(void)state;
	scenario_ten(&s1, &hb_arbiter_elastic);
	run(&s1);
	scenario_ten(&s2, &hb_arbiter_elastic);
	run(&s2);
	assert_int_equal(s1.nevents, s2.nevents);
	assert_int_equal(s1.nsamples, s2.nsamples);
	for (size_t e = 0; e < s1.nevents; e++)
		assert_true(hb_sim_event_equal(&s1.events[e], &s2.events[e]));
	assert_memory_equal(s1.samples, s2.samples, s1.nsamples * sizeof(*s1.samples));
	for (int j = 0; j < s1.njobs; j++)
		assert_true(s1.jobs[j].finish_s == s2.jobs[j].finish_s);
	hb_sim_free(&s1);
	hb_sim_free(&s2);
}

/* The agent alone on the whole cluster (dedicated arbiter): the DP's choice
 * for one job, k = argmax S(k) = 4 (one node) for resnet50-cifar100, the JSA
 * batch, and the perf model's iteration time for that layout. */
static void test_agent_alone_uses_best_count(void **state)
{
	struct hb_sim sim;
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	struct hb_elastic_entry e;
	double it;
	int id, kbest = 1, nodes = 0;

	(void)state;
	hb_sim_opts_default(&o);
	o.quiet = 1;
	if (hb_sim_init(&sim, &cat, cl, db, "elastic", &o, &err) < 0 ||
	    hb_sim_add_job(&sim, m_r, &hb_agent_elastic, 0.0, &id, &err) < 0)
		fail_msg("%s", err.msg);
	if (hb_elastic_entry_build(&sim, &sim.jobs[0], &e, &err) < 0)
		fail_msg("%s", err.msg);
	for (int k = 2; k <= e.sc.k_max; k++)
		if (e.sc.speedup[k] > e.sc.speedup[kbest])
			kbest = k;
	assert_int_equal(kbest, 4);
	run(&sim);
	assert_int_equal(sim.jobs[0].cfg.ngpus, 4);
	assert_int_equal(sim.jobs[0].cfg.global_bs, e.sc.batch[4]);
	for (int i = 0; i < cl->nnodes; i++)
		nodes += sim.jobs[0].cfg.alloc[i] > 0;
	assert_int_equal(nodes, 1);
	if (hb_ddp_iter_time(sim.jobs[0].perf, sim.jobs[0].cfg.alloc, sim.jobs[0].cfg.local_bs, 0, &it, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(fabs(sim.jobs[0].cfg.iter_s - it) <= 1e-12 * it);
	hb_elastic_entry_free(&e);
	hb_sim_free(&sim);
}

/* The JSA input on a mixed cluster (jabas-quickstart: 4 V100 + 4 P100): the
 * per-GPU limit is the smallest memory's, Eq. 1's denominator uses the
 * slowest type's one-GPU time, every b_opt(k) is k times a multiple of
 * minB_L inside [b_min, b_max], and no other such batch has a higher rate
 * with t_proc and t_comm recomputed here from the perf model. */
static void test_jsa_input_from_perf_model(void **state)
{
	const struct hb_cluster *mix = hb_catalog_cluster(&cat, "jabas-quickstart");
	struct hb_sim sim;
	struct hb_error err = { 0 };
	struct hb_elastic_entry e;
	int one[2], all[2], id;
	double tv, tp, tcomm[9];

	(void)state;
	assert_non_null(mix);
	assert_int_equal(mix->nnodes, 2);
	init(&sim, &hb_arbiter_elastic, mix, 0);
	id = add(&sim, m_v, 0.0, 0);
	if (hb_elastic_entry_build(&sim, &sim.jobs[id], &e, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(e.k_max, 8);
	assert_int_equal(e.k_only, 0);
	/* The smallest memory's limit, capped at the model's own (max_lbs). */
	assert_int_equal(e.per_gpu_max, (long)fmin(fmin(hb_perf_max_lbs(sim.jobs[id].perf, 0),
							hb_perf_max_lbs(sim.jobs[id].perf, 1)),
						   m_v->max_lbs > 0 ? (double)m_v->max_lbs : INFINITY));
	one[0] = 1, one[1] = 0;
	if (hb_ddp_iter_time(sim.jobs[id].perf, one, (int)e.per_gpu_max, 0, &tv, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	one[0] = 0, one[1] = 1;
	if (hb_ddp_iter_time(sim.jobs[id].perf, one, (int)e.per_gpu_max, 0, &tp, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(tp != tv);
	assert_true(fabs(e.sc.base_rate - (double)e.per_gpu_max / fmax(tv, tp)) <= 1e-12 * e.sc.base_rate);
	/* t_comm(k): canonical placement (the 4-GPU nodes tie: node0 first),
	 * all buckets summed, the slowest node; 0 on one GPU. */
	tcomm[1] = 0.0;
	for (int k = 2; k <= 8; k++) {
		tcomm[k] = 0.0;
		all[0] = k < 4 ? k : 4;
		all[1] = k - all[0];
		for (int nd = 0; nd < 2; nd++) {
			struct hb_perf_comm c;

			if (all[nd] == 0)
				continue;
			if (hb_perf_comm_eval(sim.jobs[id].perf, all, nd, &c, &err) < 0)
				fail_msg("%s", err.msg);
			tcomm[k] = fmax(tcomm[k], c.overlap_s + c.last_s);
		}
	}
	for (int k = 1; k <= 8; k++) {
		long b = e.sc.batch[k], m = b / k;
		double best = -INFINITY;

		assert_true(isfinite(e.sc.speedup[k]));
		assert_int_equal(b % k, 0);
		assert_int_equal(m % sim.jobs[id].perf->min_lbs, 0);
		assert_true(b >= e.b_min && b <= e.b_max && m <= e.per_gpu_max);
		for (long g = sim.jobs[id].perf->min_lbs; g <= e.per_gpu_max; g += sim.jobs[id].perf->min_lbs) {
			double t = 0.0, r;

			if (g * k < e.b_min || g * k > e.b_max)
				continue;
			for (int nd = 0; nd < 2; nd++) {
				double s;

				one[0] = nd == 0, one[1] = nd == 1;
				if (hb_ddp_iter_time(sim.jobs[id].perf, one, (int)g, 0, &s, NULL, &err) < 0)
					fail_msg("%s", err.msg);
				t = fmax(t, s);
			}
			r = (double)(g * k) / (t + tcomm[k]);
			best = fmax(best, r);
		}
		assert_true(fabs(e.sc.speedup[k] * e.sc.base_rate - best) <= 1e-9 * best);
	}
	hb_elastic_entry_free(&e);
	hb_sim_free(&sim);
}

/* ---- capacity that comes and goes (sim --capacity) ----------------------------- */

/* Every GPU is held by one job, free or withdrawn, and no node or the
 * cluster holds more than it has online. */
static void check_online(const struct hb_sim *sim)
{
	int held = 0;

	for (int i = 0; i < sim->cl->nnodes; i++) {
		int on = 0;

		for (int j = 0; j < sim->njobs; j++)
			if (sim->jobs[j].state == HB_JOB_RUNNING || sim->jobs[j].state == HB_JOB_RESTARTING)
				on += sim->jobs[j].grant[i];
		assert_int_equal(on + sim->free_gpus[i] + sim->capacity->offline[i], sim->cl->nodes[i].ngpus);
		assert_true(on <= hb_sim_node_online(sim, i));
		held += on;
	}
	assert_true(held <= hb_sim_online_gpus(sim));
	chk.checked++;
}

static int cap_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int rc = hb_arbiter_elastic.on_arrival(sim, state, job, err);

	check_online(sim);
	return rc;
}

static int cap_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int rc = hb_arbiter_elastic.on_finish(sim, state, job, err);

	check_online(sim);
	return rc;
}

static int cap_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	int rc = hb_arbiter_elastic.on_round(sim, state, err);

	check_online(sim);
	return rc;
}

/* Jobs holding GPUs and the GPUs they hold, now. */
static void holders(const struct hb_sim *sim, int *jobs, int *gpus)
{
	*jobs = *gpus = 0;
	for (int j = 0; j < sim->njobs; j++)
		if (sim->jobs[j].state == HB_JOB_RUNNING || sim->jobs[j].state == HB_JOB_RESTARTING) {
			(*jobs)++;
			*gpus += sim->jobs[j].ngrant;
		}
}

/* What the withdrawal saw: holders before on_revoke and after on_capacity. */
static struct {
	int revokes, jobs_before, gpus_before, captures, jobs_after, gpus_after;
} seen;

static int cap_revoke(struct hb_sim *sim, void *state, const int *need, struct hb_error *err)
{
	if (seen.revokes++ == 0)
		holders(sim, &seen.jobs_before, &seen.gpus_before);
	return hb_arbiter_elastic.on_revoke(sim, state, need, err);
}

static int cap_requeue(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	return hb_arbiter_elastic.on_requeue(sim, state, job, err);
}

static int cap_capacity(struct hb_sim *sim, void *state, struct hb_error *err)
{
	int rc = hb_arbiter_elastic.on_capacity(sim, state, err);

	check_online(sim); /* after the withdrawal: what is left fits what is online */
	if (seen.captures++ == 0)
		holders(sim, &seen.jobs_after, &seen.gpus_after);
	return rc;
}

static const struct hb_arbiter_ops cap_checked = {
	.name = "elastic-cap-checked", .summary = "test", .init = wrap_init, .free = wrap_free,
	.on_arrival = cap_arrival, .on_finish = cap_finish, .round_s = wrap_round_s, .on_round = cap_round,
	.on_revoke = cap_revoke, .on_requeue = cap_requeue, .on_capacity = cap_capacity,
};

/* Four elastic jobs spread over the 8 P100 (the fixed-batch ones over 7 or
 * 8: the DP may leave one idle); at 400 s only 3 stay online
 * (node 1 whole, one GPU of node 0): the jobs there shrink where a smaller
 * count is feasible, the engine preempts what still holds a withdrawn GPU,
 * nothing ever holds more than is online, and at 3000 s the GPUs come back
 * and every job, the preempted included, finishes (the run used to stop at
 * the next tick: "GPUs decided ... not free").  Both the elastic agent and
 * the IV-B fixed-batch one (which shrinks its count at its fixed batch). */
static void test_capacity_withdrawal(void **state)
{
	const struct hb_agent_ops *agents[] = { &hb_agent_elastic, &hb_agent_elastic_fixed };
	char path[256];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/hb-elastic-cap-%d.csv", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("time_s,gpu,available\n400,p100,3\n3000,p100,8\n", f);
	fclose(f);
	for (int a = 0; a < 2; a++) {
		for (int drop = 0; drop < 2; drop++) {
			struct hb_sim sim;
			struct hb_sim_opts o;
			struct hb_error err = { 0 };
			int preempted = 0, resumed = 0;

			chk_reset();
			memset(&seen, 0, sizeof(seen));
			hb_sim_opts_default(&o);
			o.quiet = 1;
			o.restart_const_s = 30.0;
			o.capacity = path;
			if (hb_sim_init(&sim, &cat, cl, db, a ? "elastic-fixed" : "elastic", &o, &err) < 0)
				fail_msg("%s", err.msg);
			sim.policy_opts = &ticks[drop];
			hb_sim_set_arbiter(&sim, &cap_checked);
			for (int j = 0; j < 4; j++) {
				int id;

				if (hb_sim_add_job(&sim, m_r, agents[a], 10.0 * j, &id, &err) < 0)
					fail_msg("%s", err.msg);
				hb_sim_job_request(&sim.jobs[id], 0, 0);
			}
			run(&sim);
			assert_true(chk.checked > 0);
			/* All four ran on the 8 GPUs before the withdrawal, on at
			 * most the 3 left after it. */
			assert_int_equal(seen.revokes, 1);
			assert_true(seen.captures >= 1);
			print_message("%s%s: %d jobs on 3 GPUs after the withdrawal, %ld preempted, %ld shrunk, last finish %.0f s\n",
				      a ? "elastic-fixed" : "elastic", drop ? " (drop)" : "", seen.jobs_after,
				      sim.capacity->preemptions, sim.capacity->shrinks, sim.jobs[3].finish_s);
			assert_int_equal(seen.jobs_before, 4);
			assert_true(seen.gpus_before >= 6); /* so the withdrawal takes busy GPUs */
			assert_true(seen.jobs_after >= 1 && seen.jobs_after <= 3);
			assert_true(seen.gpus_after >= 1 && seen.gpus_after <= 3);
			assert_int_equal(sim.capacity->withdrawn_gpus, 5);
			for (int j = 0; j < 4; j++) {
				assert_int_equal(sim.jobs[j].state, HB_JOB_DONE);
				preempted += sim.jobs[j].preemptions;
				resumed += count_events(&sim, j, "resume");
			}
			/* Four jobs, three GPUs: one at least is preempted, and every
			 * preempted one came back (drop mode keeps them).  Exactly:
			 * the DP gave 4/2/1/1 (elastic), placed as job 0 on node 0
			 * and jobs 1-3 on node 1; node 1 goes whole and one GPU of
			 * node 0, so jobs 1-3 lose everything and are preempted and
			 * job 0 shrinks 4 -> 3. */
			assert_true(sim.capacity->preemptions >= 1);
			assert_int_equal(sim.capacity->preemptions, 3);
			assert_int_equal(sim.capacity->shrinks, 1);
			assert_int_equal(sim.jobs[0].preemptions, 0);
			assert_int_equal(sim.capacity->preemptions, preempted);
			assert_int_equal(resumed, preempted);
			assert_true(sim.capacity->shrinks >= 1);
			/* Exactly the jobs that stopped holding GPUs were preempted. */
			assert_int_equal(sim.capacity->preemptions, 4 - seen.jobs_after);
			/* Shrinks happen at the withdrawal only (elastic scale-ins
			 * of the DP are "resize"). */
			for (size_t i = 0; i < sim.nevents; i++)
				if (strcmp(sim.events[i].kind, "shrink") == 0)
					assert_true(sim.events[i].t == 400.0);
			hb_sim_free(&sim);
		}
	}
	chk_reset();
	remove(path);
}

/* The JSA entry of model m on cluster c under agent a (a fixed-batch agent
 * gives the factors of its fixed batch, elastic-fixed-min those at b_min). */
static void ibm_entry(const struct hb_cluster *c, const struct hb_model *m, const struct hb_agent_ops *a,
		      struct hb_sim *sim, struct hb_elastic_entry *e)
{
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	int id;

	hb_sim_opts_default(&o);
	o.quiet = 1;
	if (hb_sim_init(sim, &cat, c, db, "elastic", &o, &err) < 0 || hb_sim_add_job(sim, m, a, 0.0, &id, &err) < 0 ||
	    hb_elastic_entry_build(sim, &sim->jobs[id], e, &err) < 0)
		fail_msg("%s", err.msg);
}

/* Largest S(k) of an entry. */
static double best_factor(const struct hb_elastic_entry *e)
{
	double best = -INFINITY;

	for (int k = 1; k <= e->sc.k_max; k++)
		best = fmax(best, e->sc.speedup[k]);
	return best;
}

/* The IBM testbed's all-reduce (link classes ffdl-pcie3-x16 and
 * ffdl-eth-10g, models/analytic.c) is derived from the paper's category 1
 * numbers, with t_p the one-GPU step at c_1 = 32:
 *   Table II, 2 GPUs at 32 per GPU, factor 1.66: t_comm(2) = (2/1.66 - 1) t_p;
 *   IV-D, 5 GPUs at 32 per GPU 1.6x the 2-GPU run at 16 per GPU (Table II:
 *   1.3): t_comm(5) = (160 / (1.6 x 1.3 x 32) - 1) t_p.
 * The JSA must give them back within 1 % (the factors are rounded to four
 * digits), and with them Table II's 1.66 and 1.6 x 1.3 = 2.08 as the
 * scaling factors of 64 on 2 GPUs and 160 on 5.  Other clusters keep the
 * generic families (cannikin-a: eth-10g, pcie3-x16).  IV-E's statement that
 * category 1's best factor at its minimum batch is 1.3x category 2's, which
 * fixed c_2 = 16 with Table II's 1.3 for category 1, comes out 1.16 here:
 * our 2-GPU factor at 16 per GPU is 1.16, not Table II's 1.3 (a prediction
 * of the compute model, whose step at 16 is 0.66 of the step at 32 where
 * Table II implies 0.56); the check allows 15 %. */
static void test_ibm_links_from_paper(void **state)
{
	const struct hb_cluster *ibm = hb_catalog_cluster(&cat, "ibm-p100");
	const struct hb_cluster *ibm400 = hb_catalog_cluster(&cat, "ibm-p100-400");
	const struct hb_cluster *other = hb_catalog_cluster(&cat, "cannikin-a");
	const struct hb_model *m_a = hb_catalog_model(&cat, "alexnet-cifar100");
	struct hb_sim sim;
	struct hb_elastic_entry e, e1, e2;
	double tp, r2, r5, want2 = 2.0 / 1.66 - 1.0, want5 = 160.0 / (1.6 * 1.3 * 32.0) - 1.0;

	(void)state;
	assert_non_null(ibm);
	assert_non_null(ibm400);
	assert_non_null(other);
	assert_non_null(m_a);
	for (int i = 0; i < ibm->nnodes; i++) {
		assert_string_equal(ibm->nodes[i].intra_link, "ffdl-pcie3-x16");
		assert_string_equal(ibm->nodes[i].inter_link, "ffdl-eth-10g");
	}
	for (int i = 0; i < ibm400->nnodes; i++) {
		assert_string_equal(ibm400->nodes[i].intra_link, "ffdl-pcie3-x16");
		assert_string_equal(ibm400->nodes[i].inter_link, "ffdl-eth-10g");
	}
	assert_string_equal(other->nodes[0].inter_link, "eth-10g");
	assert_string_equal(hb_analytic_link_of("eth-10g")->prefix, "eth");
	assert_string_equal(hb_analytic_link_of("pcie3-x16")->prefix, "pcie");
	assert_string_equal(hb_analytic_link_of("ffdl-eth-10g")->prefix, "ffdl-eth");
	assert_string_equal(hb_analytic_link_of("ffdl-pcie3-x16")->prefix, "ffdl-pcie");

	ibm_entry(ibm, m_r, &hb_agent_elastic, &sim, &e);
	assert_int_equal(e.per_gpu_max, 32);
	assert_int_equal(e.sc.batch[2], 64);
	assert_int_equal(e.sc.batch[5], 160);
	tp = (double)e.per_gpu_max / e.sc.base_rate;
	r2 = e.sc.iter_s[2] / tp - 1.0;
	r5 = e.sc.iter_s[5] / tp - 1.0;
	print_message("ibm-p100, %s: t_proc(32) %.4f s, t_comm(2) %.4f t_proc (paper %.4f), t_comm(5) %.4f (paper "
		      "%.4f); S(2) %.3f, S(5) %.3f\n", m_r->name, tp, r2, want2, r5, want5, e.sc.speedup[2],
		      e.sc.speedup[5]);
	assert_true(fabs(r2 - want2) <= 0.01 * want2);
	assert_true(fabs(r5 - want5) <= 0.01 * want5);
	assert_true(fabs(e.sc.speedup[2] - 1.66) <= 0.01 * 1.66);
	assert_true(fabs(e.sc.speedup[5] - 1.6 * 1.3) <= 0.01 * 1.6 * 1.3);
	hb_elastic_entry_free(&e);
	hb_sim_free(&sim);

	/* IV-E: best factors at the minimum batch (elastic-fixed-min). */
	ibm_entry(ibm, m_r, &hb_agent_elastic_fixed_min, &sim, &e1);
	hb_sim_free(&sim);
	ibm_entry(ibm, m_a, &hb_agent_elastic_fixed_min, &sim, &e2);
	hb_sim_free(&sim);
	assert_int_equal(e2.per_gpu_max, 16);
	print_message("IV-E: best factor at b_min, category 1 %.3f, category 2 %.3f: ratio %.3f (paper 1.3)\n",
		      best_factor(&e1), best_factor(&e2), best_factor(&e1) / best_factor(&e2));
	assert_true(fabs(best_factor(&e1) / best_factor(&e2) - 1.3) <= 0.15 * 1.3);
	hb_elastic_entry_free(&e1);
	hb_elastic_entry_free(&e2);
}

static int setup(void **state)
{
	static const char doc[] =
		"{\"clusters\": [{\"name\": \"elastic-test\", \"display\": \"elastic arbiter tests: 2 x 4 P100\", "
		"\"intra_link\": \"pcie3-x16\", \"intra_bw\": 15.75e9, \"inter_link\": \"eth-10g\", \"inter_bw\": 1.25e9, "
		"\"storage_bw\": 0.5e9, \"restart_latency_s\": 20, "
		"\"groups\": [{\"name\": \"p100x4\", \"gpu\": \"p100\", \"nodes\": 2, \"gpus_per_node\": 4}], "
		"\"source\": \"test: ibm-p100's links, 4 GPUs per node\"}, "
		"{\"name\": \"elastic-one\", \"display\": \"elastic arbiter tests: 1 P100\", "
		"\"intra_link\": \"pcie3-x16\", \"intra_bw\": 15.75e9, \"inter_link\": \"eth-10g\", \"inter_bw\": 1.25e9, "
		"\"storage_bw\": 0.5e9, \"restart_latency_s\": 20, "
		"\"groups\": [{\"name\": \"p100x1\", \"gpu\": \"p100\", \"nodes\": 1, \"gpus_per_node\": 1}], "
		"\"source\": \"test: one GPU\"}]}";
	struct hb_error err = { 0 };

	(void)state;
	/* The database first: it is keyed on the built-in catalog, and the test
	 * cluster reuses link classes it already has fits for. */
	if (hb_catalog_load_builtin(&cat, &err) < 0 || hb_default_profdb(&cat, NULL, &db, &err) < 0 ||
	    hb_catalog_load_json(&cat, doc, strlen(doc), "elastic-test", &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	cl = hb_catalog_cluster(&cat, "elastic-test");
	cl_one = hb_catalog_cluster(&cat, "elastic-one");
	m_r = hb_catalog_model(&cat, "resnet50-cifar100");
	m_i = hb_catalog_model(&cat, "resnet50");
	m_v = hb_catalog_model(&cat, "vgg11bn-cifar100");
	m_f = hb_catalog_model(&cat, "alexnet-food101");
	return cl && cl_one && m_r && m_i && m_v && m_f ? 0 : -1;
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
		cmocka_unit_test(test_admission_order_and_head_of_line_blocking),
		cmocka_unit_test(test_drop_mode_rejects_what_the_tick_cannot_admit),
		cmocka_unit_test(test_never_feasible_job),
		cmocka_unit_test(test_fixed_batch_job_runs_on_fixed_count),
		cmocka_unit_test(test_respread_and_no_restart_when_unchanged),
		cmocka_unit_test(test_ten_jobs_match_optimizer_and_brute_force),
		cmocka_unit_test(test_event_driven),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_agent_alone_uses_best_count),
		cmocka_unit_test(test_jsa_input_from_perf_model),
		cmocka_unit_test(test_capacity_withdrawal),
		cmocka_unit_test(test_ibm_links_from_paper),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
