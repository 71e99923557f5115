/* Tests for api/hetbatch.h, the C API the Python package binds: every
 * call on good input (what it prints, the result sets it writes), each
 * kind of error with its code and message, the seed, and policies
 * registered in memory (hetbatch_register_policies): an in-memory FIFO
 * runs beside the built-in one with the same results, a callback calling
 * back into the API is refused instead of deadlocking, and a bad
 * descriptor is refused with the plugin checks' message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include <hetbatch/policy.h>

#include "hetbatch.h"

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
	static char path[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", tmpdir, name);
	return path[k];
}

/* One number from a result set's results.db. */
static double query(const char *dir, const char *sql)
{
	char path[600];
	sqlite3 *db;
	sqlite3_stmt *st;
	double v = -1;

	snprintf(path, sizeof(path), "%s/results.db", dir);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		fail_msg("%s: %s", path, sqlite3_errmsg(db));
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s: %s", path, sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static const char *const synth[] = { "--synthetic", "poisson", "--synth", "rate=12", "--synth", "hours=0.5",
				     NULL };

static void test_session(void **state)
{
	hetbatch *h = hetbatch_open();

	(void)state;
	assert_non_null(h);
	assert_string_equal(hetbatch_version(), "0.1.0");
	assert_string_equal(hetbatch_errmsg(h), "");
	assert_int_equal(hetbatch_errcode(h), 0);
	assert_int_equal(hetbatch_set_seed(h, 7), HETBATCH_OK);
	assert_int_equal(hetbatch_set_seed(h, -1), HETBATCH_ERR);
	assert_int_equal(hetbatch_errcode(h), HETBATCH_EINPUT);
	assert_non_null(strstr(hetbatch_errmsg(h), "[0, 2147483647]"));
	assert_int_equal(hetbatch_set_seed(h, 2147483648L), HETBATCH_ERR);
	hetbatch_close(h);
	hetbatch_close(NULL);
}

static void test_catalog_and_plan(void **state)
{
	hetbatch *h = hetbatch_open();
	const char *const opts[] = { "--gpus", "v100", NULL };

	(void)state;
	assert_int_equal(hetbatch_catalog(h, "gpus", NULL), HETBATCH_OK);
	assert_true(hetbatch_output_len(h) > 1000);
	assert_int_equal(hetbatch_output(h)[0], '{');
	assert_non_null(strstr(hetbatch_output(h), "\"v100\""));
	assert_int_equal(hetbatch_catalog(h, "gpus", "no-such-gpu"), HETBATCH_ERR);
	assert_int_equal(hetbatch_errcode(h), HETBATCH_EINPUT);
	assert_non_null(strstr(hetbatch_errmsg(h), "no-such-gpu"));
	assert_int_equal(hetbatch_catalog(h, NULL, NULL), HETBATCH_ERR);
	assert_non_null(strstr(hetbatch_errmsg(h), "the kind"));

	assert_int_equal(hetbatch_plan(h, "jabas-a", "resnet50", 512, opts), HETBATCH_OK);
	assert_non_null(strstr(hetbatch_output(h), "\"hetbatch-plan/1\""));
	assert_string_equal(hetbatch_errmsg(h), ""); /* a success clears the last error */
	assert_int_equal(hetbatch_plan(h, "jabas-a", "resnet50", 0, NULL), HETBATCH_ERR);
	assert_int_equal(hetbatch_errcode(h), HETBATCH_EINPUT);
	assert_non_null(strstr(hetbatch_errmsg(h), "--gbs"));
	assert_int_equal(hetbatch_plan(h, NULL, "resnet50", 512, NULL), HETBATCH_ERR);
	assert_string_equal(hetbatch_errmsg(h), "plan: the cluster is required");
	hetbatch_close(h);
}

static void test_sim_and_results(void **state)
{
	hetbatch *h = hetbatch_open();
	const char *job = tmp_path("job"), *trace = tmp_path("trace");
	const char *const bad[] = { "--no-such-option", NULL };

	(void)state;
	assert_int_equal(hetbatch_sim_job(h, "jabas-a", "resnet50", "jabas,static", job, NULL), HETBATCH_OK);
	assert_int_equal(hetbatch_results(h, job), HETBATCH_OK);
	assert_string_equal(hetbatch_output(h), "hetbatch-sim-results/1");
	assert_true(query(job, "SELECT COUNT(*) FROM runs") == 2);

	assert_int_equal(hetbatch_sim_trace(h, "demo", NULL, "fifo,tiresias", trace, synth), HETBATCH_OK);
	assert_non_null(strstr(hetbatch_output(h), "tiresias")); /* the table the command prints */
	assert_true(query(trace, "SELECT COUNT(*) FROM cluster_summary") == 2);

	assert_int_equal(hetbatch_sim_trace(h, "demo", NULL, "fifo", tmp_path("bad"), bad), HETBATCH_ERR);
	assert_int_equal(hetbatch_errcode(h), HETBATCH_EINPUT);
	assert_non_null(strstr(hetbatch_errmsg(h), "--no-such-option"));
	assert_int_equal(hetbatch_sim_job(h, "jabas-a", "no-such-model", NULL, tmp_path("bad"), NULL), HETBATCH_ERR);
	assert_non_null(strstr(hetbatch_errmsg(h), "no-such-model"));
	assert_int_equal(hetbatch_sim_job(h, "jabas-a", "resnet50", NULL, NULL, NULL), HETBATCH_ERR);
	assert_string_equal(hetbatch_errmsg(h), "sim: the output directory is required");

	assert_int_equal(hetbatch_results(h, tmpdir), HETBATCH_ERR);
	assert_int_equal(hetbatch_errcode(h), HETBATCH_EINPUT);
	assert_non_null(strstr(hetbatch_errmsg(h), "not a hetbatch result set"));
	hetbatch_close(h);
}

static void test_seed_and_command(void **state)
{
	hetbatch *h = hetbatch_open();
	const char *a = tmp_path("seed-a"), *b = tmp_path("seed-b"), *c = tmp_path("seed-c");
	const char *const version[] = { "version", NULL }, *const live[] = { "live", NULL },
			  *const nope[] = { "no-such-command", NULL };

	(void)state;
	assert_int_equal(hetbatch_set_seed(h, 3), HETBATCH_OK);
	assert_int_equal(hetbatch_sim_trace(h, "demo", NULL, "fifo", a, synth), HETBATCH_OK);
	assert_int_equal(hetbatch_sim_trace(h, "demo", NULL, "fifo", b, synth), HETBATCH_OK);
	assert_int_equal(hetbatch_set_seed(h, 4), HETBATCH_OK);
	assert_int_equal(hetbatch_sim_trace(h, "demo", NULL, "fifo", c, synth), HETBATCH_OK);
	assert_true(query(a, "SELECT jct_mean_h FROM cluster_summary") ==
		    query(b, "SELECT jct_mean_h FROM cluster_summary"));
	assert_true(query(a, "SELECT value FROM meta WHERE key = 'seed'") == 3);
	assert_true(query(c, "SELECT value FROM meta WHERE key = 'seed'") == 4);

	assert_int_equal(hetbatch_command(h, version), HETBATCH_OK);
	assert_non_null(strstr(hetbatch_output(h), "0.1.0"));
	assert_int_equal(hetbatch_command(h, live), HETBATCH_ERR);
	assert_non_null(strstr(hetbatch_errmsg(h), "not an embeddable"));
	assert_int_equal(hetbatch_command(h, nope), HETBATCH_ERR);
	assert_non_null(strstr(hetbatch_errmsg(h), "unknown subcommand"));
	assert_int_equal(hetbatch_command(h, NULL), HETBATCH_ERR);
	hetbatch_close(h);
}

/* ---- a FIFO defined in memory, as the Python package defines its policies ---- */

static const struct hb_policy_api *api; /* filled by registration */

struct memfifo {
	int *queue, head, tail, nnodes;
	int *grant;
	hetbatch *inner;   /* non-NULL: on_arrival calls the API (must be refused) */
	int inner_rc, inner_code;
};

static struct memfifo *last_run; /* the test reads what the reentrant run saw */
static int reenter;

static int mf_init(struct hb_sim *sim, const void *opts, void **state, struct hb_error *err)
{
	struct memfifo *st = calloc(1, sizeof(*st));

	(void)opts;
	if (!st || !(st->queue = calloc((size_t)api->njobs(sim) + 1, sizeof(int))) ||
	    !(st->grant = calloc((size_t)api->nnodes(sim), sizeof(int)))) {
		if (st)
			free(st->queue);
		free(st);
		return api->error(err, "memfifo: out of memory");
	}
	st->nnodes = api->nnodes(sim);
	st->inner = reenter ? hetbatch_open() : NULL;
	last_run = st;
	*state = st;
	return 0;
}

static void mf_free(void *state)
{
	struct memfifo *st = state;

	if (st->inner)
		hetbatch_close(st->inner);
	free(st->queue);
	free(st->grant);
	free(st);
	last_run = NULL;
}

/* Start queued jobs in order while the head fits (gang, fewest nodes). */
static int drain(struct hb_sim *sim, struct memfifo *st, struct hb_error *err)
{
	while (st->head < st->tail) {
		struct hb_sim_job *job = api->job(sim, st->queue[st->head]);

		if (!api->place(sim, api->job_gpus(sim, job), st->grant))
			return 0;
		if (api->start_job(sim, job, st->grant, err) < 0)
			return -1;
		st->head++;
	}
	return 0;
}

static int mf_arrival(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	struct memfifo *st = state;

	if (st->inner) {
		st->inner_rc = hetbatch_catalog(st->inner, "gpus", NULL);
		st->inner_code = hetbatch_errcode(st->inner);
		return api->error(err, hetbatch_errmsg(st->inner));
	}
	st->queue[st->tail++] = api->job_id(job);
	return drain(sim, st, err);
}

static int mf_finish(struct hb_sim *sim, void *state, struct hb_sim_job *job, struct hb_error *err)
{
	(void)job;
	return drain(sim, state, err);
}

static const struct hb_arbiter_ops memfifo_ops = {
	.name = "memfifo", .summary = "FIFO in memory", .init = mf_init, .free = mf_free,
	.on_arrival = mf_arrival, .on_finish = mf_finish,
};
static const struct hb_plugin_policy memfifo_policies[] = {
	{ .name = "memfifo", .summary = "a FIFO registered in memory", .agent_of = "fifo", .arbiter = &memfifo_ops },
	{ 0 },
};
static const struct hb_plugin memfifo = { HB_POLICY_API_VERSION, "memfifo", memfifo_policies, &api };

static void test_registered_policy(void **state)
{
	hetbatch *h = hetbatch_open();
	const char *out = tmp_path("mem"), *re = tmp_path("reenter");
	struct hb_plugin old = memfifo;

	(void)state;
	assert_int_equal(hetbatch_sim_trace(h, "demo", NULL, "memfifo", tmp_path("x"), synth), HETBATCH_ERR);
	assert_non_null(strstr(hetbatch_errmsg(h), "unknown policy 'memfifo'"));

	assert_int_equal(hetbatch_register_policies(h, &memfifo, "c:test_api.memfifo"), HETBATCH_OK);
	assert_non_null(api);
	assert_int_equal(api->version, HB_POLICY_API_VERSION);
	assert_int_equal(hetbatch_register_policies(h, &memfifo, "c:test_api.memfifo"), HETBATCH_OK); /* no-op */
	assert_int_equal(hetbatch_sim_trace(h, "demo", NULL, "memfifo,fifo", out, synth), HETBATCH_OK);
	/* the same rule as the built-in fifo: the same jobs, to the bit */
	assert_true(query(out, "SELECT COUNT(*) FROM cluster_summary") == 2);
#define JOBS_OF(p) "SELECT job, arrival_s, finish_s, time_s, gpu_hours, restarts FROM jobs JOIN runs USING (run_id) " \
		   "WHERE runs.policy = '" p "'"
	assert_true(query(out, "SELECT COUNT(*) FROM (" JOBS_OF("memfifo") " EXCEPT " JOBS_OF("fifo") ")") == 0);
	assert_true(query(out, "SELECT COUNT(*) FROM (" JOBS_OF("memfifo") ")") > 3);
	assert_true(query(out, "SELECT COUNT(*) FROM meta WHERE key = 'policy_plugins' AND "
			       "value LIKE '%c:test_api.memfifo%'") == 1);

	/* a callback calling the API is refused, and the run fails with that */
	reenter = 1;
	assert_int_equal(hetbatch_sim_trace(h, "demo", NULL, "memfifo", re, synth), HETBATCH_ERR);
	reenter = 0;
	assert_non_null(strstr(hetbatch_errmsg(h), "cannot be made from inside a running call"));
	assert_null(last_run); /* the failed run's state was freed */

	/* a descriptor of another API version, or a name taken */
	old.api_version = 99;
	assert_int_equal(hetbatch_register_policies(h, &old, "c:old"), HETBATCH_ERR);
	assert_int_equal(hetbatch_errcode(h), HETBATCH_EINPUT);
	assert_non_null(strstr(hetbatch_errmsg(h), "c:old: built against policy API version 99"));
	old.api_version = HB_POLICY_API_VERSION;
	assert_int_equal(hetbatch_register_policies(h, &old, "c:again"), HETBATCH_ERR);
	assert_non_null(strstr(hetbatch_errmsg(h), "policy 'memfifo' is already defined (by plugin "
				"c:test_api.memfifo)"));
	assert_int_equal(hetbatch_register_policies(h, NULL, "c:none"), HETBATCH_ERR);

	assert_int_equal(hetbatch_unregister_policies(h, &memfifo), HETBATCH_OK);
	assert_int_equal(hetbatch_unregister_policies(h, &memfifo), HETBATCH_ERR);
	assert_int_equal(hetbatch_errcode(h), HETBATCH_EINPUT);
	assert_int_equal(hetbatch_sim_trace(h, "demo", NULL, "memfifo", tmp_path("y"), synth), HETBATCH_ERR);
	assert_non_null(strstr(hetbatch_errmsg(h), "unknown policy 'memfifo'"));
	/* and it can come back (a notebook cell run again) */
	assert_int_equal(hetbatch_register_policies(h, &memfifo, "c:test_api.memfifo"), HETBATCH_OK);
	assert_int_equal(hetbatch_unregister_policies(h, &memfifo), HETBATCH_OK);
	hetbatch_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_catalog_and_plan),
		cmocka_unit_test(test_sim_and_results),
		cmocka_unit_test(test_seed_and_command),
		cmocka_unit_test(test_registered_policy),
	};
	char cmd[300];
	int rc;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-test-api-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_api: could not remove %s\n", tmpdir);
	return rc;
}
