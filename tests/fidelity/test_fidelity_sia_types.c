/* Sia fidelity's per-GPU-type throughput fits (sim/policies/pollux/
 * agent_pollux.c, "Sia fidelity"; Sia's simulator, job.py
 * Job.update_params, sia.py _compute_goodputs_v2), on a made-up Sia trace
 * folder built from Pollux's published CIFAR-10 profile in
 * $HB_SHARED/data/pollux (exit 77 when absent): the T4 rows as measured,
 * the A100 rows at exactly half the step and sync times, the 2080Ti rows
 * at 0.8 of them.  One CIFAR-10 job on sia-hetero, scheduled by a scripted
 * arbiter: one T4, then two A100 of one node.
 *  - the T4 is fitted from its own rows, the A100 not until it ran there,
 *    and the T4 fit is untouched by the A100 observations;
 *  - a type without a fit is projected from the fitted one by the ratio of
 *    their one-GPU rates (exactly 2 for A100 : T4 here);
 *  - the first batch on a type without a fit is max(M0, min_local K) by
 *    the artifact's split, on the T4 and again on the A100;
 *  - a round's retune changes the batch in place, never a restart;
 *  - without the mode the agent keeps one reference-type fit.
 * And the per-type batch range and one-GPU rate on made-up rows. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "agent_pollux.h"
#include "catalog.h"
#include "cli_run.h"
#include "fidelity.h"
#include "import.h"
#include "perf_measured.h"
#include "policy.h"
#include "profdb.h"
#include "sim.h"

static char shared[1024], dbpath[1024];
static struct hb_catalog cat;
static struct hb_profdb *db;
static int t4_min_local; /* the smallest local batch of Pollux's CIFAR-10 placements */

/* Copy src to dst with the columns in cols[] (0-based, -1 ends) times k. */
static void copy_scaled(const char *src, const char *dst, double k, const int *cols)
{
	FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
	char line[512];
	int lineno = 0;

	if (!in || !out)
		fail_msg("cannot copy %s to %s", src, dst);
	while (fgets(line, sizeof(line), in)) {
		char *f[8], *save = NULL;
		int n = 0;

		line[strcspn(line, "\r\n")] = '\0';
		if (lineno++ == 0) {
			fprintf(out, "%s\n", line);
			continue;
		}
		for (char *p = strtok_r(line, ",", &save); p && n < 8; p = strtok_r(NULL, ",", &save))
			f[n++] = p;
		for (int i = 0; i < n; i++) {
			int scaled = 0;

			for (int c = 0; cols[c] >= 0; c++)
				scaled |= cols[c] == i;
			if (scaled)
				fprintf(out, "%s%.17g", i ? "," : "", strtod(f[i], NULL) * k);
			else
				fprintf(out, "%s%s", i ? "," : "", f[i]);
		}
		fprintf(out, "\n");
		if (cols[0] == 2 && n > 1 && (t4_min_local == 0 || atoi(f[1]) < t4_min_local))
			t4_min_local = atoi(f[1]); /* placements: placement,local_bsz,step_time,sync_time */
	}
	fclose(in);
	fclose(out);
}

static int setup(void **state)
{
	static const char *const suffix[] = { "aws", "dgx-ext", "rtx" };
	static const double scale[] = { 1.0, 0.5, 0.8 };
	static const int place_cols[] = { 2, 3, -1 }, scal_cols[] = { 3, 4, -1 }, none[] = { -1 };
	static const int batches[] = { 128, 256, 512, 1024, 2048, 4096 };
	struct hb_error err = { 0 };
	struct hb_import_stats st;
	char dir[1200], src[1400], dst[1400];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/traces/cifar10", tmpdir);
	assert_int_equal(run("-q profile --analytic --db '%s/s.db' --gpus t4,a100-40gb,rtx-2080ti", tmpdir), 0);
	snprintf(dst, sizeof(dst), "%s/traces", tmpdir);
	if (mkdir(dst, 0755) != 0 || mkdir(dir, 0755) != 0)
		fail_msg("mkdir %s", dir);
	for (int t = 0; t < 3; t++) {
		snprintf(src, sizeof(src), "%s/data/pollux/profiles/cifar10/placements.csv", shared);
		snprintf(dst, sizeof(dst), "%s/placements-%s.csv", dir, suffix[t]);
		copy_scaled(src, dst, scale[t], place_cols);
		snprintf(src, sizeof(src), "%s/data/pollux/profiles/cifar10/scalability.csv", shared);
		snprintf(dst, sizeof(dst), "%s/scalability-%s.csv", dir, suffix[t]);
		copy_scaled(src, dst, scale[t], scal_cols);
	}
	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		snprintf(src, sizeof(src), "%s/data/pollux/profiles/cifar10/validation-%d.csv", shared, batches[b]);
		snprintf(dst, sizeof(dst), "%s/validation-%d.csv", dir, batches[b]);
		copy_scaled(src, dst, 1.0, none);
	}
	snprintf(dbpath, sizeof(dbpath), "%s/s.db", tmpdir);
	if (hb_catalog_load_builtin(&cat, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_profdb_open(dbpath, 0, &db, &err), 0);
	memset(&st, 0, sizeof(st));
	snprintf(dst, sizeof(dst), "%s/traces", tmpdir);
	if (hb_import_sia(db, &cat, dst, &st, &err) < 0)
		fail_msg("%s", err.msg);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hb_profdb_close(db);
	hb_catalog_free(&cat);
	return 0;
}

/* ---- the scripted run ------------------------------------------------------ */

struct script {
	int t4_node, a100_node;     /* first node of each type */
	int step;
	struct hb_pollux_report rep[2]; /* .types points into the agent: read types[] */
	struct hb_pollux_type types[2][8]; /* rep[k].types as they were */
	long start_gbs, start_lbs;  /* the first configuration */
	long a100_gbs, a100_lbs;    /* right after the move to two A100 */
	long restarts_before, restarts_after_retune;
	int retune_rc;
	struct hb_goodput_config projected, t4_two;
	int projected_rc, unfitted_rc;
};

static struct script sc;

static int script_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	int *g = calloc((size_t)sim->cl->nnodes, sizeof(int)), rc;

	(void)state;
	if (!g)
		return hb_runtime_error(err, "out of memory");
	g[sc.t4_node] = 1;
	rc = hb_sim_start_job(sim, job, g, err);
	free(g);
	sc.start_gbs = job->cfg.global_bs;
	sc.start_lbs = job->cfg.local_bs;
	return rc;
}

static double script_round_s(const struct hb_sim *sim, const void *state)
{
	(void)sim;
	(void)state;
	return 300.0;
}

static int script_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	struct hb_sim_job *job = &sim->jobs[0];
	struct hb_error scratch = { 0 };
	int k = sc.step, rc = 0, *g;

	(void)state;
	if (job->state == HB_JOB_DONE || k >= 2)
		return 0;
	if (hb_pollux_agent_report(sim, job, &sc.rep[k], err) < 0)
		return -1;
	if (sc.rep[k].ntypes > 8)
		return hb_runtime_error(err, "more GPU types than the test keeps");
	memcpy(sc.types[k], sc.rep[k].types, sizeof(sc.types[k][0]) * (size_t)sc.rep[k].ntypes);
	sc.step++;
	if (k == 1)
		return 0;
	if (sc.rep[0].per_type) {
		const int t4 = job->perf->nodes[sc.t4_node].gpu, a100 = job->perf->nodes[sc.a100_node].gpu;

		sc.projected_rc = hb_pollux_report_projected(&sc.rep[0], a100, t4, 4, 2, &sc.projected, &scratch);
		if (hb_pollux_report_argmax(&sc.rep[0], t4, 1, 2, &sc.t4_two, err) < 0)
			return -1;
		struct hb_goodput_config none;

		sc.unfitted_rc = hb_pollux_report_argmax(&sc.rep[0], a100, 1, 2, &none, &scratch);
	}
	sc.restarts_before = job->restarts;
	sc.retune_rc = hb_pollux_agent_retune(sim, job, err);
	sc.restarts_after_retune = job->restarts;
	if (sc.retune_rc < 0)
		return -1;
	if (!(g = calloc((size_t)sim->cl->nnodes, sizeof(int))))
		return hb_runtime_error(err, "out of memory");
	g[sc.a100_node] = 2;
	rc = hb_sim_regrant(sim, job, g, err);
	free(g);
	sc.a100_gbs = job->cfg.global_bs;
	sc.a100_lbs = job->cfg.local_bs;
	return rc;
}

static const struct hb_arbiter_ops script_arbiter = {
	.name = "script", .summary = "test", .on_arrival = script_arrival,
	.round_s = script_round_s, .on_round = script_round,
};

static int first_node_of(const struct hb_cluster *cl, const char *gpu)
{
	for (int n = 0; n < cl->nnodes; n++)
		if (strcmp(cat.gpus[cl->nodes[n].gpu].name, gpu) == 0)
			return n;
	fail_msg("sia-hetero has no %s node", gpu);
	return -1;
}

static void scripted_run(struct hb_sim *sim, int fidelity)
{
	const struct hb_cluster *cl = hb_catalog_cluster(&cat, "sia-hetero");
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	int id;

	assert_non_null(cl);
	memset(&sc, 0, sizeof(sc));
	sc.t4_node = first_node_of(cl, "t4");
	sc.a100_node = first_node_of(cl, "a100-40gb");
	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.fidelity = fidelity;
	if (fidelity == HB_FIDELITY_SIA)
		o.reconfig_s = o.gns_overhead = 0.0; /* what `sim --fidelity sia` sets */
	if (hb_sim_init(sim, &cat, cl, db, "sia", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(sim, &script_arbiter);
	if (hb_sim_add_job(sim, hb_catalog_model(&cat, "cifar10"), &hb_agent_pollux, 0.0, &id, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_job_request(&sim->jobs[id], 4, 4096);
	if (hb_sim_run(sim, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(sim->jobs[id].state, HB_JOB_DONE);
	assert_int_equal(sc.step, 2);
}

static void test_per_type_fits(void **state)
{
	struct hb_sim sim;
	const struct hb_pollux_report *r0 = &sc.rep[0];
	const struct hb_pollux_type *y0 = sc.types[0], *y1 = sc.types[1];
	int t4, a100, rtx;

	(void)state;
	scripted_run(&sim, HB_FIDELITY_SIA);
	t4 = sim.jobs[0].perf->nodes[sc.t4_node].gpu;
	a100 = sim.jobs[0].perf->nodes[sc.a100_node].gpu;
	rtx = sim.jobs[0].perf->nodes[first_node_of(sim.cl, "rtx-2080ti")].gpu;
	/* The first batch, max(M0 128, min_local 32 x 1 GPU), as is. */
	assert_int_equal(t4_min_local, 32);
	assert_int_equal(sc.start_gbs, 128);
	assert_int_equal(sc.start_lbs, 128);
	/* After the T4 ran: its fit only. */
	assert_true(r0->per_type);
	assert_true(r0->fitted);
	assert_true(y0[t4].fitted);
	assert_false(y0[a100].fitted);
	assert_false(y0[rtx].fitted);
	assert_int_equal(y0[t4].min_local_bsz, 32);
	assert_int_equal(y0[a100].min_local_bsz, 32);
	/* One-GPU rates: max batch / max step, so A100 : T4 is 2 exactly,
	 * 2080Ti : T4 1 / 0.8. */
	assert_true(y0[t4].rate > 0);
	assert_true(y0[a100].rate == 2.0 * y0[t4].rate);
	assert_true(fabs(y0[rtx].rate / y0[t4].rate - 1.25) < 1e-12);
	/* The A100 projected from the T4: two T4 on one node, times 2. */
	assert_int_equal(sc.projected_rc, 0);
	assert_true(sc.projected.feasible && sc.t4_two.feasible);
	assert_true(fabs(sc.projected.goodput / sc.t4_two.goodput - 2.0) < 1e-12);
	/* The A100's own argmax needs its fit. */
	assert_int_equal(sc.unfitted_rc, -1);
	/* The round's retune is in place. */
	assert_int_equal(sc.retune_rc, 0);
	assert_int_equal(sc.restarts_after_retune, sc.restarts_before);
	/* On the A100, not run there yet: max(128, 32 x 2) split over two. */
	assert_int_equal(sc.a100_gbs, 128);
	assert_int_equal(sc.a100_lbs, 64);
	/* After the A100 ran: its own fit; the T4's is the same bits. */
	assert_true(y1[a100].fitted);
	assert_true(y1[t4].fitted);
	assert_memory_equal(&y1[t4].theta, &y0[t4].theta, sizeof(y0[t4].theta));
	assert_memory_not_equal(&y1[a100].theta, &y1[t4].theta, sizeof(y1[t4].theta));
	/* Half the compute time: at the A100's batch its fit predicts a
	 * shorter pass than the T4's (the artifact's early-stopping L-BFGS-B
	 * may split it between alpha_c and beta_c any way). */
	assert_true(hb_goodput_compute_time(&y1[a100].theta, sc.a100_lbs) <
		    hb_goodput_compute_time(&y1[t4].theta, sc.a100_lbs));
	assert_false(y1[rtx].fitted);
	hb_sim_free(&sim);
}

static void test_reference_type_without_mode(void **state)
{
	struct hb_sim sim;

	(void)state;
	scripted_run(&sim, HB_FIDELITY_NONE);
	assert_false(sc.rep[0].per_type);
	assert_true(sc.rep[0].fitted);
	assert_true(sc.rep[0].ref_type >= 0);
	/* hetbatch's own agent ignores the round's retune */
	assert_int_equal(sc.retune_rc, 0);
	assert_int_equal(sc.restarts_after_retune, sc.restarts_before);
	hb_sim_free(&sim);
}

/* njobs 4-GPU CIFAR-10 jobs at batch 4096, one every `spacing` s, under
 * `policy`'s arbiter and agent on sia-hetero with --fidelity sia over
 * database d: every one must finish. */
static void run_cifar_jobs(const char *policy, struct hb_profdb *d, int njobs, double spacing)
{
	const struct hb_policy *p = hb_policy_find(policy);
	struct hb_sim sim;
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	int id;

	assert_non_null(p);
	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.fidelity = HB_FIDELITY_SIA;
	o.reconfig_s = o.gns_overhead = 0.0;
	if (hb_sim_init(&sim, &cat, hb_catalog_cluster(&cat, "sia-hetero"), d, policy, &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(&sim, p->shared);
	for (int k = 0; k < njobs; k++) {
		if (hb_sim_add_job(&sim, hb_catalog_model(&cat, "cifar10"), p->agent, spacing * k, &id, &err) < 0)
			fail_msg("%s", err.msg);
		hb_sim_job_request(&sim.jobs[id], 4, 4096);
	}
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("%s: %s", policy, err.msg);
	for (int k = 0; k < njobs; k++)
		assert_int_equal(sim.jobs[k].state, HB_JOB_DONE);
	hb_sim_free(&sim);
}

/* PolluxSched under --fidelity sia is Sia's heterogeneity-unaware Pollux
 * (sim/policies/pollux/pollux_vnodes.h), checked after each of its rounds
 * by a wrapper that keeps its name (the agent's merged fit follows the
 * name): no job holds GPUs of two types or more than 16 GPUs (the T4s'
 * 24, A100s' 16, 2080Tis' 24: max_num_replicas), every fitted job's
 * theta_sys is one fit shared by every type, and some job ran on two
 * types over its life with that one fit (the same observations, one per
 * (N, K, m) whatever the type). */
static struct {
	int rounds, mixed, over, checked, not_merged, dropped_notes;
	unsigned *types_used; /* per job: bit per catalog GPU type it held */
} uw;

static int uw_round(struct hb_sim *sim, void *state, struct hb_error *err)
{
	if (hb_arbiter_pollux.on_round(sim, state, err) < 0)
		return -1;
	uw.rounds++;
	for (int j = 0; j < sim->njobs; j++) {
		struct hb_sim_job *job = &sim->jobs[j];
		struct hb_pollux_report rep;
		unsigned used = 0;
		int first = -1;

		if (job->state != HB_JOB_RUNNING && job->state != HB_JOB_RESTARTING)
			continue;
		for (int n = 0; n < sim->cl->nnodes; n++)
			if (job->grant[n] > 0)
				used |= 1u << sim->cl->nodes[n].gpu;
		uw.mixed += (used & (used - 1)) != 0;
		uw.over += job->ngrant > 16;
		uw.types_used[j] |= used;
		if (job->state != HB_JOB_RUNNING || hb_pollux_agent_report(sim, job, &rep, err) < 0)
			continue;
		if (!rep.fitted)
			continue;
		uw.checked++;
		for (int t = 0; t < rep.ntypes; t++) {
			if (!rep.types[t].usable)
				continue;
			if (first < 0)
				first = t;
			if (!rep.types[t].fitted ||
			    memcmp(&rep.types[t].theta, &rep.types[first].theta, sizeof(rep.theta)) != 0)
				uw.not_merged++;
		}
	}
	return 0;
}

static void test_pollux_unaware(void **state)
{
	struct hb_arbiter_ops wrap = hb_arbiter_pollux;
	struct hb_sim sim;
	struct hb_sim_opts o;
	struct hb_error err = { 0 };
	int id, multi = 0;

	(void)state;
	memset(&uw, 0, sizeof(uw));
	wrap.on_round = uw_round;
	hb_sim_opts_default(&o);
	o.quiet = 1;
	o.fidelity = HB_FIDELITY_SIA;
	o.reconfig_s = o.gns_overhead = 0.0;
	if (hb_sim_init(&sim, &cat, hb_catalog_cluster(&cat, "sia-hetero"), db, "pollux", &o, &err) < 0)
		fail_msg("%s", err.msg);
	hb_sim_set_arbiter(&sim, &wrap);
	for (int k = 0; k < 12; k++) {
		if (hb_sim_add_job(&sim, hb_catalog_model(&cat, "cifar10"), &hb_agent_pollux, 30.0 * k, &id, &err) < 0)
			fail_msg("%s", err.msg);
		hb_sim_job_request(&sim.jobs[id], 4, 4096);
	}
	uw.types_used = calloc((size_t)sim.njobs, sizeof(unsigned));
	assert_non_null(uw.types_used);
	if (hb_sim_run(&sim, &err) < 0)
		fail_msg("pollux: %s", err.msg);
	for (int k = 0; k < sim.njobs; k++) {
		assert_int_equal(sim.jobs[k].state, HB_JOB_DONE);
		multi += (uw.types_used[k] & (uw.types_used[k] - 1)) != 0;
	}
	for (size_t e = 0; e < sim.nevents; e++)
		uw.dropped_notes += strstr(sim.events[e].detail, "minority types dropped") != NULL;
	print_message("pollux unaware: %d rounds, %d fitted reports, %d jobs on two types, %d rounds with drops\n",
		      uw.rounds, uw.checked, multi, uw.dropped_notes);
	assert_true(uw.rounds > 10);
	assert_int_equal(uw.mixed, 0);
	assert_int_equal(uw.over, 0);
	assert_true(uw.checked > 0);
	assert_int_equal(uw.not_merged, 0);
	assert_true(multi > 0);
	assert_true(uw.dropped_notes > 0);
	free(uw.types_used);
	hb_sim_free(&sim);
}

/* Sia's arbiter under the mode on a database whose A100 and 2080Ti have
 * no measured placements (Pollux's T4 rows over the analytic profiles): a
 * job sent to them starts at the profiled local batch nearest the first
 * batch instead of failing ("no batch on 1 GPUs of rtx-2080ti"), and the
 * trace finishes. */
static void test_types_without_placements(void **state)
{
	struct hb_profdb *mix;
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	char path[1200], dir[1200];

	(void)state;
	assert_int_equal(run("-q profile --analytic --db '%s/mix.db' --gpus t4,a100-40gb,rtx-2080ti", tmpdir), 0);
	snprintf(path, sizeof(path), "%s/mix.db", tmpdir);
	snprintf(dir, sizeof(dir), "%s/data/pollux/profiles", shared);
	assert_int_equal(hb_profdb_open(path, 0, &mix, &err), 0);
	memset(&st, 0, sizeof(st));
	if (hb_import_pollux(mix, &cat, dir, &st, &err) < 0)
		fail_msg("%s", err.msg);
	run_cifar_jobs("sia", mix, 3, 50.0);
	hb_profdb_close(mix);
}

/* ---- made-up rows ---------------------------------------------------------- */

static void test_range_and_rate(void **state)
{
	struct hb_meas_point one[] = { { 16, 0.10, 0.0 }, { 32, 0.15, 0.0 }, { 64, 0.25, 0.0 } };
	struct hb_meas_point four[] = { { 8, 0.20, 0.05 }, { 96, 0.90, 0.10 } };
	struct hb_meas_set sets[] = {
		{ .key = "1", .nodes = 1, .replicas = 1, .pts = one, .npts = 3 },
		{ .key = "4", .nodes = 1, .replicas = 4, .pts = four, .npts = 2 },
	};
	struct hb_perf_measured m;
	int lo, hi;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.place = m.aplace = sets;
	m.nplace = m.naplace = 2;
	/* Only one-GPU rows: largest batch 64 over largest step 0.25 s. */
	assert_true(hb_perf_measured_one_gpu_rate(&m) == 64 / 0.25);
	hb_perf_measured_local_range(&m, &lo, &hi);
	assert_int_equal(lo, 8);
	assert_int_equal(hi, 96);
	/* Sia's one explicit cap: DeepSpeech2 on the 2080Ti at 57. */
	hb_fid_sia_local_range(&m, "deepspeech2", "rtx-2080ti", &lo, &hi);
	assert_int_equal(lo, 8);
	assert_int_equal(hi, 57);
	hb_fid_sia_local_range(&m, "deepspeech2", "t4", &lo, &hi);
	assert_int_equal(hi, 96);
	hb_fid_sia_local_range(&m, "cifar10", "rtx-2080ti", &lo, &hi);
	assert_int_equal(hi, 96);
	/* Nothing measured. */
	assert_true(hb_perf_measured_one_gpu_rate(NULL) == 0.0);
	hb_fid_sia_local_range(NULL, "deepspeech2", "rtx-2080ti", &lo, &hi);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 0);
	m.naplace = 1;
	m.aplace = &sets[1]; /* no one-GPU placement */
	assert_true(hb_perf_measured_one_gpu_rate(&m) == 0.0);
	/* get_restart_penalty, not the simulated rescale */
	assert_true(hb_fid_sia_restart_penalty_s("cifar10") == 30.0);
	assert_true(hb_fid_sia_restart_penalty_s("yolov3") == 45.0);
	assert_true(hb_fid_sia_restart_penalty_s("imagenet") == 250.0);
	assert_true(hb_fid_sia_restart_penalty_s("bert") == 120.0);
	assert_true(hb_fid_sia_restart_penalty_s("deepspeech2") == 25.0);
	assert_true(hb_fid_sia_restart_penalty_s("ncf") == 30.0);
	assert_true(hb_fid_sia_restart_penalty_s("gpt2") == 30.0);
}

int main(void)
{
	const char *s = getenv("HB_SHARED");
	struct stat sb;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_type_fits),
		cmocka_unit_test(test_reference_type_without_mode),
		cmocka_unit_test(test_pollux_unaware),
		cmocka_unit_test(test_types_without_placements),
		cmocka_unit_test(test_range_and_rate),
	};
	char dir[1200];
	int rc;

	if (!s)
		return 77;
	snprintf(shared, sizeof(shared), "%s", s);
	snprintf(dir, sizeof(dir), "%s/data/pollux/profiles/cifar10", shared);
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return 77;
	if (cli_setup("siatypes") < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, setup, teardown);
	cli_teardown();
	return rc;
}
