/*
 * test_live_schedule.c: a simulator results.db as the live plans of one
 * job (live/schedule.h).
 *
 * Real runs of `hetbatch sim` (cpu-2x2 / cifar10 with jabas and simigrad,
 * jabas-a / resnet50 with jabas, demo / cifar10 with optperf) load with
 * one plan per start, reconfig and restart event, each holding the event's
 * GPUs and B_G, IIDP slots spelling the event's layout again, OptPerf slots
 * the per-node counts and batch ranges of its layout, in the order the
 * simulator applied them.  Hand-written results.db files with one defect
 * each (no suffix, B_L 0 without per-GPU batches, a cut layout, an unknown
 * node, GPU counts that disagree, a malformed number, B_G that the slots
 * miss, per-GPU batches that miss a node, name one twice or outside the
 * alloc, or have one too many, a cluster outside the catalog, no
 * configuration) are refused with the event's seq and the reason; two
 * runs holding the job need a policy to pick one.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "catalog.h"
#include "cli_run.h"
#include "schedule.h"

static struct hb_catalog cat;

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	if (cli_setup("live-sched") < 0)
		return -1;
	return hb_catalog_load_builtin(&cat, &err);
}

static int teardown(void **state)
{
	(void)state;
	hb_catalog_free(&cat);
	return cli_teardown();
}

/* ---- real simulator runs ---------------------------------------------------- */

/* The event's "; B_G N, K GPUs" (the human part, read on its own). */
static void note_numbers(const char *db, int run_id, long seq, long *gbs, int *gpus)
{
	char sql[256];
	sqlite3 *h;
	sqlite3_stmt *st;
	const char *d, *hit = NULL;

	snprintf(sql, sizeof(sql), "SELECT detail FROM events WHERE run_id = %d AND seq = %ld", run_id, seq);
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	d = (const char *)sqlite3_column_text(st, 0);
	for (const char *p = strstr(d, "; B_G "); p; p = strstr(p + 1, "; B_G "))
		hit = p;
	assert_non_null(hit);
	assert_int_equal(sscanf(hit, "; B_G %ld, %d GPUs", gbs, gpus), 2);
	sqlite3_finalize(st);
	sqlite3_close(h);
}

/* The IIDP layout the slots spell: consecutive slots of one node, VSW and
 * GA make one entry. */
static void slots_layout(const struct hb_live_plan *p, char *buf, size_t size)
{
	size_t used = (size_t)snprintf(buf, size, "[");

	for (int i = 0; i < p->nslots;) {
		const struct hb_live_slot *s = &p->slots[i];
		int k = i;

		while (k < p->nslots && strcmp(p->slots[k].node, s->node) == 0 && p->slots[k].n_vsw == s->n_vsw &&
		       p->slots[k].n_ga == s->n_ga)
			k++;
		used += (size_t)snprintf(buf + used, size - used, "%s'%s:%dGPU,VSW:%d,GA:%d'", i ? ", " : "", s->node,
					 k - i, s->n_vsw, s->n_ga);
		i = k;
	}
	snprintf(buf + used, size - used, "]");
}

/* Counts of what a run's schedule showed, for the callers' coverage checks. */
struct seen {
	int cfgs, restarts, reconfigs, node_split; /* node_split: an IIDP node with two (VSW, GA) entries */
	int unequal, node_range;  /* OptPerf: configurations with unequal batches; a node's GPUs unequal */
};

/* An OptPerf layout, "OptPerf B 225: fast:2x82-83 slow:2x30", against the
 * slots: per node in order, K slots of that node, one VSW and no GA each,
 * whose batches span exactly LO..HI. */
static void check_optperf(const struct hb_live_plan *p, struct seen *seen)
{
	const char *at = strchr(p->config, ':');
	int k = 0;
	long b;

	assert_int_equal(sscanf(p->config, "OptPerf B %ld:", &b), 1);
	assert_int_equal(b, p->global_batch);
	assert_non_null(at);
	for (at++; *at == ' ';) {
		char node[64];
		int n, lo, hi, used, min = 1 << 30, max = 0;

		if (sscanf(at, " %63[^:]:%dx%d-%d%n", node, &n, &lo, &hi, &used) == 4) {
			seen->node_range = 1;
		} else {
			assert_int_equal(sscanf(at, " %63[^:]:%dx%d%n", node, &n, &lo, &used), 3);
			hi = lo;
		}
		assert_true(k + n <= p->nslots);
		for (int j = k; j < k + n; j++) {
			assert_string_equal(p->slots[j].node, node);
			assert_true(p->slots[j].n_vsw == 1 && p->slots[j].n_ga == 0);
			if (p->slots[j].local_bs < min)
				min = p->slots[j].local_bs;
			if (p->slots[j].local_bs > max)
				max = p->slots[j].local_bs;
		}
		assert_int_equal(min, lo);
		assert_int_equal(max, hi);
		k += n;
		at += used;
	}
	assert_int_equal(k, p->nslots);
	for (int j = 1; j < p->nslots; j++)
		if (p->slots[j].local_bs != p->slots[0].local_bs) {
			seen->unequal++;
			break;
		}
}

/* Load job 0 of policy's run in dir/results.db and check every plan
 * against the events themselves. */
static void check_run(const char *dir, const char *policy, const char *method, struct seen *seen)
{
	struct hb_live_sched s;
	struct hb_error err = { 0 };
	const struct hb_cluster *cl;
	char db[700], sql[512];
	double nevents;
	int run_id;

	snprintf(db, sizeof(db), "%s/%s/results.db", tmpdir, dir);
	snprintf(sql, sizeof(sql), "SELECT run_id FROM runs WHERE policy = '%s'", policy);
	run_id = (int)cli_query(db, sql);
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM events WHERE run_id = %d AND job = 0 AND kind IN "
		 "('start', 'reconfig', 'restart')", run_id);
	nevents = cli_query(db, sql);

	snprintf(sql, sizeof(sql), "%s/%s", tmpdir, dir);
	if (hb_live_schedule_load(sql, policy, 0, &cat, 1, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s.run_id, run_id);
	assert_string_equal(s.policy, policy);
	assert_int_equal(s.job, 0);
	assert_string_equal(s.db, db);
	assert_non_null(cl = hb_catalog_cluster(&cat, s.cluster));
	assert_int_equal(s.ncfgs, (int)nevents);
	memset(seen, 0, sizeof(*seen));
	seen->cfgs = s.ncfgs;
	for (int i = 0; i < s.ncfgs; i++) {
		const struct hb_live_sched_cfg *c = &s.cfgs[i];
		const struct hb_live_plan *p = &c->plan;
		long gbs, sum = 0;
		int gpus;

		note_numbers(db, run_id, c->seq, &gbs, &gpus);
		if (i == 0) {
			assert_string_equal(c->kind, "start");
			assert_true(c->iteration == 0 && c->t == 0);
		} else {
			assert_true(strcmp(c->kind, "reconfig") == 0 || strcmp(c->kind, "restart") == 0);
			assert_true(c->seq > c[-1].seq);
			assert_true(c->t >= c[-1].t);
			assert_true(c->iteration >= c[-1].iteration);
			seen->restarts += strcmp(c->kind, "restart") == 0;
			seen->reconfigs += strcmp(c->kind, "reconfig") == 0;
		}
		assert_string_equal(p->method, method);
		assert_string_equal(p->model, s.model);
		assert_string_equal(p->cluster, s.cluster);
		assert_int_equal(p->ows, strcmp(method, "iidp") == 0 ? 1 : 0);
		assert_int_equal(p->global_batch, gbs);
		assert_int_equal(p->nslots, gpus);
		assert_true(c->sim_iter_s > 0 && p->pred_iter_s == c->sim_iter_s);
		for (int k = 0; k < p->nslots; k++) {
			const struct hb_live_slot *sl = &p->slots[k];
			int node = -1;

			for (int n = 0; n < cl->nnodes; n++)
				if (strcmp(cl->nodes[n].name, sl->node) == 0)
					node = n;
			assert_true(node >= 0);
			assert_string_equal(sl->gpu, cat.gpus[cl->nodes[node].gpu].name);
			if (k > 0) /* cluster node order */
				for (int n = 0; n < cl->nnodes; n++)
					if (strcmp(cl->nodes[n].name, p->slots[k - 1].node) == 0)
						assert_true(n <= node);
			assert_true(sl->pred_iter_s == c->sim_iter_s);
			assert_true(sl->local_bs > 0 && sl->n_vsw >= 1 && sl->n_ga >= 0);
			if (strcmp(method, "optperf") != 0)
				assert_int_equal(sl->local_bs, p->slots[0].local_bs);
			sum += (long)sl->local_bs * sl->n_vsw * (sl->n_ga + 1);
		}
		assert_int_equal(sum, gbs);
		if (strcmp(method, "iidp") == 0) {
			char layout[512];

			slots_layout(p, layout, sizeof(layout));
			assert_string_equal(layout, p->config);
			for (int k = 1; k < p->nslots; k++)
				if (strcmp(p->slots[k].node, p->slots[k - 1].node) == 0 &&
				    (p->slots[k].n_vsw != p->slots[k - 1].n_vsw || p->slots[k].n_ga != p->slots[k - 1].n_ga))
					seen->node_split = 1;
		} else if (strcmp(method, "optperf") == 0) {
			check_optperf(p, seen);
		} else {
			int lbs, n, ga;

			assert_int_equal(sscanf(p->config, "DDP B_L %d x %d GPUs, GA %d", &lbs, &n, &ga), 3);
			assert_int_equal(n, p->nslots);
			for (int k = 0; k < p->nslots; k++)
				assert_true(p->slots[k].local_bs == lbs && p->slots[k].n_vsw == 1 && p->slots[k].n_ga == ga);
		}
	}
	hb_live_schedule_free(&s);
	assert_null(s.cfgs);
	assert_int_equal(s.ncfgs, 0);
}

static void test_cpu_cluster(void **state)
{
	struct seen jabas, simigrad;

	(void)state;
	assert_int_equal(run("profile --analytic --gpus cpu --models cifar10 --db cpu.db"), 0);
	assert_int_equal(run("sim --cluster cpu-2x2 --model cifar10 --policy jabas,simigrad --db cpu.db --out s1"), 0);
	check_run("s1", "jabas", "iidp", &jabas);
	check_run("s1", "simigrad", "ddp", &simigrad);
	assert_true(simigrad.reconfigs > 0); /* B_G changed on the same GPUs */
	print_message("cpu-2x2: jabas %d configurations, simigrad %d\n", jabas.cfgs, simigrad.cfgs);
}

static void test_jabas_a(void **state)
{
	struct seen jabas;
	struct hb_live_sched s;
	struct hb_error err = { 0 };
	char path[600];

	(void)state;
	assert_int_equal(run("sim --cluster jabas-a --model resnet50 --policy jabas --out s2"), 0);
	check_run("s2", "jabas", "iidp", &jabas);
	/* The run restarts on other GPUs and splits a node between (VSW, GA)
	 * entries: both paths of the loader ran. */
	assert_true(jabas.restarts > 0 && jabas.reconfigs > 0 && jabas.node_split);
	print_message("jabas-a: %d configurations, %d restarts\n", jabas.cfgs, jabas.restarts);

	/* The results.db file itself, and no policy with one run. */
	snprintf(path, sizeof(path), "%s/s2/results.db", tmpdir);
	if (hb_live_schedule_load(path, NULL, 0, &cat, 0, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s.ncfgs, jabas.cfgs);
	assert_string_equal(s.model, "resnet50");
	assert_string_equal(s.cluster, "jabas-a");
	assert_int_equal(s.cfgs[0].plan.ows, 0);
	hb_live_schedule_free(&s);
}

/* Cannikin on a heterogeneous cluster (2 V100 + 2 T4, the built-in
 * profiles): unequal local batches, changed in place at epoch ends, and
 * rounding that gives one node's GPUs different batches. */
static void test_optperf(void **state)
{
	struct seen optperf;

	(void)state;
	assert_int_equal(run("sim --cluster demo --model cifar10 --policy optperf --out s3"), 0);
	check_run("s3", "optperf", "optperf", &optperf);
	assert_true(optperf.cfgs > 1 && optperf.reconfigs > 0);
	/* Epoch 1 is the even split (Cannikin §4.2); every later one is unequal. */
	assert_int_equal(optperf.unequal, optperf.cfgs - 1);
	assert_true(optperf.node_range);
	print_message("demo: optperf %d configurations\n", optperf.cfgs);
}

/* ---- hand-written results ------------------------------------------------------- */

/* An events row. */
struct row {
	int run_id;
	long seq;
	double t;
	int job;
	const char *kind, *detail;
};

/* tmpdir/NAME.db with the minimal tables: run 1 on `cluster` (policy
 * jabas), run 2 on cpu-2x2 (policy simigrad) when two_runs, and the
 * events rows. */
static void write_db(const char *name, const char *cluster, int two_runs, const struct row *rows, int n)
{
	char path[600];
	sqlite3 *h;
	sqlite3_stmt *st;

	snprintf(path, sizeof(path), "%s/%s.db", tmpdir, name);
	remove(path);
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h,
				      "CREATE TABLE runs(run_id INTEGER PRIMARY KEY, cluster TEXT NOT NULL, model TEXT "
				      "NOT NULL, policy TEXT NOT NULL);"
				      "CREATE TABLE events(run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t REAL NOT NULL, "
				      "job INTEGER NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL, "
				      "PRIMARY KEY(run_id, seq));",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "INSERT INTO runs VALUES(?1, ?2, 'cifar10', ?3)", -1, &st, NULL),
			 SQLITE_OK);
	for (int r = 1; r <= 1 + two_runs; r++) {
		sqlite3_bind_int(st, 1, r);
		sqlite3_bind_text(st, 2, r == 1 ? cluster : "cpu-2x2", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, r == 1 ? "jabas" : "simigrad", -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_prepare_v2(h, "INSERT INTO events VALUES(?1, ?2, ?3, ?4, ?5, ?6)", -1, &st, NULL),
			 SQLITE_OK);
	for (int k = 0; k < n; k++) {
		sqlite3_bind_int(st, 1, rows[k].run_id);
		sqlite3_bind_int64(st, 2, rows[k].seq);
		sqlite3_bind_double(st, 3, rows[k].t);
		sqlite3_bind_int(st, 4, rows[k].job);
		sqlite3_bind_text(st, 5, rows[k].kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, rows[k].detail, -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
}

#define IIDP_OK "initial phase; B_G 192, 4 GPUs, 1.0000 s/iter: ['node0:2GPU,VSW:1,GA:0', 'node1:2GPU,VSW:2,GA:0']"
#define IIDP_SUFFIX "; B_L 32, alloc node0=2 node1=2, iteration 0, iter_s 0.9"
#define OPT_OK "phi 900: B* 128; B_G 128, 4 GPUs, 1.0000 s/iter: OptPerf B 128: node0:2x40 node1:2x24"

/* One run, job 0: a good start (seq 1), an epoch, then seq 7 with `detail`. */
static void write_one(const char *detail)
{
	const struct row rows[] = {
		{ 1, 1, 0, 0, "start", IIDP_OK IIDP_SUFFIX },
		{ 1, 4, 5, 0, "epoch", "epoch 1 done" },
		{ 1, 7, 10, 0, "reconfig", detail },
	};

	write_db("bad", "cpu-2x2", 0, rows, 3);
}

/* Loading tmpdir/NAME.db fails with an input error holding every `want`. */
static void expect_error(const char *name, const char *policy, int job, ...)
{
	struct hb_live_sched s;
	struct hb_error err = { 0 };
	char path[600];
	const char *want;
	va_list ap;

	snprintf(path, sizeof(path), "%s/%s.db", tmpdir, name);
	if (hb_live_schedule_load(path, policy, job, &cat, 1, &s, &err) == 0) {
		hb_live_schedule_free(&s);
		fail_msg("%s loaded", path);
	}
	assert_int_equal(err.code, HB_EINPUT);
	assert_null(s.cfgs);
	assert_int_equal(s.ncfgs, 0);
	va_start(ap, job);
	while ((want = va_arg(ap, const char *)))
		if (!strstr(err.msg, want)) {
			va_end(ap);
			fail_msg("'%s' not in: %s", want, err.msg);
		}
	va_end(ap);
}

/* One bad event (seq 7) after a good start: refused, naming seq 7 and why. */
static void expect_bad(const char *detail, const char *why)
{
	write_one(detail);
	expect_error("bad", NULL, 0, "bad.db: event seq 7: ", why, NULL);
}

/* write_one(detail), loaded into s (the start and the event); the event's
 * plan. */
static const struct hb_live_plan *load_one(const char *detail, struct hb_live_sched *s)
{
	struct hb_error err = { 0 };
	char path[600];

	write_one(detail);
	snprintf(path, sizeof(path), "%s/bad.db", tmpdir);
	if (hb_live_schedule_load(path, NULL, 0, &cat, 1, s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s->ncfgs, 2);
	return &s->cfgs[1].plan;
}

static void test_good_by_hand(void **state)
{
	struct hb_live_sched s;
	const struct hb_live_plan *p;

	(void)state;
	load_one("similarity 0.05 < gamma 0.1: B_G 128 -> 256; B_G 256, 4 GPUs, 2.0000 s/iter: DDP B_L 32 x 4 GPUs, "
		 "GA 1, pace node0; B_L 32, alloc node0=2 node1=2, iteration 300, iter_s 1.5", &s);
	p = &s.cfgs[0].plan;
	assert_string_equal(p->method, "iidp");
	assert_int_equal(p->nslots, 4);
	assert_int_equal(p->ows, 1);
	assert_true(p->pred_iter_s == 0.9);
	assert_string_equal(p->slots[2].node, "node1");
	assert_string_equal(p->slots[2].gpu, "cpu");
	assert_int_equal(p->slots[1].n_vsw, 1);
	assert_int_equal(p->slots[3].n_vsw, 2);
	assert_int_equal(p->slots[3].local_bs, 32);
	assert_true(p->slots[3].pred_iter_s == 0.9);
	assert_string_equal(p->config, "['node0:2GPU,VSW:1,GA:0', 'node1:2GPU,VSW:2,GA:0']");
	assert_int_equal(s.cfgs[1].seq, 7);
	assert_string_equal(s.cfgs[1].kind, "reconfig");
	assert_true(s.cfgs[1].t == 10 && s.cfgs[1].iteration == 300 && s.cfgs[1].sim_iter_s == 1.5);
	p = &s.cfgs[1].plan;
	assert_string_equal(p->method, "ddp");
	assert_int_equal(p->ows, 0);
	assert_int_equal(p->global_batch, 256);
	assert_int_equal(p->nslots, 4);
	for (int k = 0; k < 4; k++)
		assert_true(p->slots[k].n_vsw == 1 && p->slots[k].n_ga == 1 && p->slots[k].local_bs == 32);
	assert_string_equal(s.model, "cifar10"); /* no jobs table: the run's model */
	hb_live_schedule_free(&s);

	/* OptPerf: each GPU's batch from lbs, in alloc order; equal batches
	 * need none */
	p = load_one("phi 900: B 128 -> B* 130; B_G 130, 4 GPUs, 1.0000 s/iter: OptPerf B 130: node0:2x40-41 "
		     "node1:2x24-25; B_L 0, alloc node0=2 node1=2, lbs node0=41,40 node1=24,25, iteration 700, "
		     "iter_s 0.85", &s);
	assert_string_equal(p->method, "optperf");
	assert_int_equal(p->ows, 0);
	assert_int_equal(p->global_batch, 130);
	assert_int_equal(p->nslots, 4);
	{
		const int want[4] = { 41, 40, 24, 25 };

		for (int k = 0; k < 4; k++) {
			assert_string_equal(p->slots[k].node, k < 2 ? "node0" : "node1");
			assert_int_equal(p->slots[k].local_bs, want[k]);
			assert_true(p->slots[k].n_vsw == 1 && p->slots[k].n_ga == 0 && p->slots[k].pred_iter_s == 0.85);
		}
	}
	assert_string_equal(p->config, "OptPerf B 130: node0:2x40-41 node1:2x24-25");
	hb_live_schedule_free(&s);
	p = load_one("phi 900: B* 96; B_G 96, 3 GPUs, 1.0000 s/iter: OptPerf B 96: node0:1x32 node1:2x32"
		     "; B_L 32, alloc node0=1 node1=2, iteration 0, iter_s 0.5", &s);
	assert_string_equal(p->method, "optperf");
	assert_int_equal(p->nslots, 3);
	for (int k = 0; k < 3; k++)
		assert_true(p->slots[k].local_bs == 32 && p->slots[k].n_vsw == 1 && p->slots[k].n_ga == 0);
	hb_live_schedule_free(&s);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_bad("similarity 0.05; B_G 128, 4 GPUs, 1.0000 s/iter: DDP B_L 32 x 4 GPUs, GA 0, pace node0",
		   "older hetbatch; run the simulation again");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, iteration 100, iter_s 0.9",
		   "B_L 0 (unequal local batches) without ', lbs NODE=B,B ...' after the alloc");
	expect_bad("x; B_G 192, 4 GPUs, 1.0000 s/iter: ['node0:2GPU,VSW:1,GA:0', 'node1:2GPU,VS..." IIDP_SUFFIX,
		   "the layout was cut");
	expect_bad("x; B_G 192, 4 GPUs, 1.0000 s/iter: ['node0:2GPU,VSW:1,GA:0', 'node9:2GPU,VSW:2,GA:0']" IIDP_SUFFIX,
		   "layout: node 'node9' is not in cluster cpu-2x2");
	expect_bad(IIDP_OK "; B_L 32, alloc node0=2 node7=2, iteration 0, iter_s 0.9",
		   "alloc: node 'node7' is not in cluster cpu-2x2");
	expect_bad("x; B_G 192, 4 GPUs, 1.0000 s/iter: ['node0:2GPU,VSW:1,GA:0', 'node0:2GPU,VSW:2,GA:0']" IIDP_SUFFIX,
		   "node 'node0': the layout has 4 GPUs, the alloc 2");
	expect_bad(IIDP_OK "; B_L 32, alloc node0=2, iteration 0, iter_s 0.9",
		   "the alloc holds 2 GPUs, the event says 4 GPUs");
	expect_bad(IIDP_OK "; B_L 32, alloc node0=2 node1=4, iteration 0, iter_s 0.9",
		   "4 GPUs on node 'node1', which has 2");
	expect_bad(IIDP_OK "; B_L 3x2, alloc node0=2 node1=2, iteration 0, iter_s 0.9", "malformed number: B_L '3x2'");
	expect_bad(IIDP_OK "; B_L 32, alloc node0=2 node1=2, iteration 0, iter_s fast",
		   "malformed number: iter_s 'fast'");
	expect_bad(IIDP_OK "; B_L 32, alloc node0=two node1=2, iteration 0, iter_s 0.9",
		   "malformed number: alloc GPUs 'two'");
	expect_bad("x; B_G 192, 4 GPUs, 1.0000 s/iter: ['node0:2GPU,VSW:1,GA:0', 'node1:2GPU,VSW:-2,GA:0']" IIDP_SUFFIX,
		   "malformed number: layout VSW '-2'");
	expect_bad("x; B_G 192, 4 GPUs, 1.0000 s/iter: ['node0:2GPU,VSW:1,GA:0' 'node1:2GPU,VSW:2,GA:0']" IIDP_SUFFIX,
		   "malformed IIDP layout");
	expect_bad("x; B_G 192, 4 GPUs, 1.0000 s/iter: ['node0:2,VSW:1,GA:0', 'node1:2GPU,VSW:2,GA:0']" IIDP_SUFFIX,
		   "malformed layout entry 'node0:2,VSW:1,GA:0'");
	expect_bad("x; B_G 200, 4 GPUs, 1.0000 s/iter: ['node0:2GPU,VSW:1,GA:0', 'node1:2GPU,VSW:2,GA:0']" IIDP_SUFFIX,
		   "the GPUs' local batches add up to 192 samples, the event says B_G 200");
	expect_bad("x; B_G 128, 4 GPUs, 1.0000 s/iter: DDP B_L 32 x 4 GPUs, GA 1, pace node0"
		   "; B_L 32, alloc node0=2 node1=2, iteration 0, iter_s 0.9",
		   "add up to 256 samples, the event says B_G 128");
	expect_bad("x; B_G 128, 4 GPUs, 1.0000 s/iter: something else; B_L 32, alloc node0=2 node1=2, iteration 0, "
		   "iter_s 0.9", "neither IIDP");
	expect_bad(IIDP_OK "; B_L 32, node0=2 node1=2, iteration 0, iter_s 0.9", "malformed suffix");
}

/* The per-GPU batches of unequal-batch configurations (lbs). */
static void test_malformed_lbs(void **state)
{
	(void)state;
	expect_bad(OPT_OK "; B_L 32, alloc node0=2 node1=2, lbs node0=40,40 node1=24,24, iteration 0, iter_s 0.9",
		   "B_L 32 with ', lbs node0=40,40 node1=24,24': per-GPU local batches go with B_L 0 only");
	expect_bad("x; B_G 192, 4 GPUs, 1.0000 s/iter: ['node0:2GPU,VSW:1,GA:0', 'node1:2GPU,VSW:2,GA:0']"
		   "; B_L 0, alloc node0=2 node1=2, lbs node0=64,64 node1=32,32, iteration 0, iter_s 0.9",
		   "per-GPU local batches (lbs) with the layout '['node0:2GPU");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs node0=40,40 node9=24,24, iteration 0, iter_s 0.9",
		   "lbs: node 'node9' is not in cluster cpu-2x2");
	expect_bad("x; B_G 80, 2 GPUs, 1.0000 s/iter: OptPerf B 80: node0:2x40"
		   "; B_L 0, alloc node0=2, lbs node0=41,39 node1=24,24, iteration 0, iter_s 0.9",
		   "lbs: node 'node1' is not in the alloc");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs node0=40,40 node0=24,24, iteration 0, iter_s 0.9",
		   "lbs: node 'node0' is named twice");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs node0=40,40 node1=24,24,8, iteration 0, iter_s 0.9",
		   "lbs: node 'node1' has 3 local batches, the alloc 2 GPUs");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs node0=40,40 node1=24, iteration 0, iter_s 0.9",
		   "lbs: node 'node1' has 1 local batches, the alloc 2 GPUs");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs node0=40,40, iteration 0, iter_s 0.9",
		   "lbs: node 'node1' of the alloc has no local batches");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs node0=40,forty node1=24,24, iteration 0, iter_s 0.9",
		   "malformed number: lbs local batch 'forty'");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs node0=40,40 node1=0,48, iteration 0, iter_s 0.9",
		   "malformed number: lbs local batch '0'");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs node0=40,40 node1=24,, iteration 0, iter_s 0.9",
		   "malformed number: lbs local batch ''");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs node0 node1=24,24, iteration 0, iter_s 0.9",
		   "malformed lbs entry 'node0'");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs , iteration 0, iter_s 0.9", "lbs is empty");
	expect_bad(OPT_OK "; B_L 0, alloc node0=2 node1=2, lbs node0=40,41 node1=24,24, iteration 0, iter_s 0.9",
		   "the GPUs' local batches add up to 129 samples, the event says B_G 128");
}

static void test_run_level_errors(void **state)
{
	char path[600];
	struct hb_live_sched s;
	struct hb_error err = { 0 };
	const struct row start[] = { { 1, 1, 0, 0, "start", IIDP_OK IIDP_SUFFIX } };
	const struct row nocfg[] = {
		{ 1, 1, 0, 0, "arrival", "asks for 4 GPUs, B_G 128" },
		{ 1, 2, 9, 0, "drop", "does not fit" },
	};

	(void)state;
	write_db("nocl", "my-own-cluster", 0, start, 1);
	expect_error("nocl", NULL, 0, "nocl.db: run 1's cluster 'my-own-cluster' is not a catalog cluster", NULL);

	write_db("nocfg", "cpu-2x2", 0, nocfg, 2);
	expect_error("nocfg", NULL, 0, "job 0 has no start, reconfig or restart event", NULL);
	expect_error("nocfg", NULL, 3, "no run has job 3", NULL);

	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	assert_int_equal(hb_live_schedule_load(path, NULL, 0, &cat, 1, &s, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "no such file"));

	write_file("notdb.db", "plain text\n");
	expect_error("notdb", NULL, 0, "notdb.db: not an SQLite database", NULL);
	write_db("empty", "cpu-2x2", 0, start, 0);
	expect_error("empty", NULL, 0, "no run has job 0", NULL);
}

static void test_two_runs(void **state)
{
	struct hb_live_sched s;
	struct hb_error err = { 0 };
	char path[600];
	const struct row rows[] = {
		{ 1, 1, 0, 0, "start", IIDP_OK IIDP_SUFFIX },
		{ 2, 1, 0, 0, "start", "simigrad; B_G 128, 4 GPUs, 1.0000 s/iter: DDP B_L 32 x 4 GPUs, GA 0, pace node0"
				       "; B_L 32, alloc node0=2 node1=2, iteration 0, iter_s 0.8" },
		{ 2, 2, 0, 1, "start", "simigrad; B_G 64, 2 GPUs, 1.0000 s/iter: DDP B_L 32 x 2 GPUs, GA 0, pace node1"
				       "; B_L 32, alloc node1=2, iteration 0, iter_s 0.7" },
	};

	(void)state;
	write_db("two", "cpu-2x2", 1, rows, 3);
	expect_error("two", NULL, 0, "2 runs have job 0", "run 1 (policy jabas, model cifar10)",
		     "run 2 (policy simigrad, model cifar10)", "pass --policy", NULL);
	expect_error("two", "pollux", 0, "no run of policy 'pollux' has job 0", NULL);

	snprintf(path, sizeof(path), "%s/two.db", tmpdir);
	if (hb_live_schedule_load(path, "simigrad", 0, &cat, 1, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s.run_id, 2);
	assert_string_equal(s.policy, "simigrad");
	assert_int_equal(s.ncfgs, 1);
	assert_string_equal(s.cfgs[0].plan.method, "ddp");
	assert_true(s.cfgs[0].sim_iter_s == 0.8);
	hb_live_schedule_free(&s);

	if (hb_live_schedule_load(path, "jabas", 0, &cat, 1, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s.run_id, 1);
	assert_string_equal(s.cfgs[0].plan.method, "iidp");
	hb_live_schedule_free(&s);

	/* Job 1 is only in run 2: no policy needed. */
	if (hb_live_schedule_load(path, NULL, 1, &cat, 1, &s, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(s.run_id, 2);
	assert_int_equal(s.cfgs[0].plan.nslots, 2);
	assert_string_equal(s.cfgs[0].plan.slots[0].node, "node1");
	hb_live_schedule_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_cluster),
		cmocka_unit_test(test_jabas_a),
		cmocka_unit_test(test_optperf),
		cmocka_unit_test(test_good_by_hand),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_malformed_lbs),
		cmocka_unit_test(test_run_level_errors),
		cmocka_unit_test(test_two_runs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
