/* sim/study/sweep*.c as a library: every malformed configuration is an input
 * error naming the file, the field and the value; point expansion against
 * a brute-force nested loop; cluster variants (GPU counts, nodes, prices,
 * links, inherited per-cluster model settings); the runner's rows identical
 * for 1 and 3 threads and for two "ranks" packed and unpacked; rows for
 * points that cannot run or fail; the aggregates against the rows. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "catalog.h"
#include "elastic_opts.h" /* struct hb_elastic_opts: what a point runs with */
#include "sweep.h"

/* |a - b| <= tol (cmocka 1.1 has no double comparison) */
#define assert_near(a, b, tol)                                                                          \
	do {                                                                                            \
		double a_ = (a), b_ = (b);                                                              \
		if (!(fabs(a_ - b_) <= (tol)))                                                          \
			fail_msg("%s = %.17g, expected %.17g (tolerance %g)", #a, a_, b_, (double)(tol)); \
	} while (0)

static char dir[1024]; /* tests/sweep: jobs.csv, tiny-cluster.json */

static int parse(const char *text, struct hb_sweep_config *cfg, struct hb_error *err)
{
	memset(err, 0, sizeof(*err));
	return hb_sweep_config_parse(text, strlen(text), "t.json", dir, 1, cfg, err);
}

/* ---- configuration errors ------------------------------------------------------------ */

struct bad_case {
	const char *json;
	const char *field;   /* in the message as field 'FIELD' */
	const char *value;   /* in the message (NULL: none, e.g. a missing field) */
};

#define TRACE "\"trace\": {\"file\": \"jobs.csv\"}"
#define CLUSTERS "\"clusters\": [{\"base\": \"demo\"}]"
#define POLICIES "\"policies\": [\"fifo\"]"
#define OK_REST TRACE ", " CLUSTERS ", " POLICIES

static const struct bad_case bad_cases[] = {
	{ "[1, 2]", "(top level)", "[1,2]" },
	{ "{" OK_REST ", \"polices\": [\"fifo\"]}", "polices", "[\"fifo\"]" },
	{ "{" CLUSTERS ", " POLICIES "}", "trace", NULL },
	{ "{\"trace\": 3, " CLUSTERS ", " POLICIES "}", "trace", "3" },
	{ "{\"trace\": {\"file\": \"jobs.csv\", \"synthetic\": {}}, " CLUSTERS ", " POLICIES "}", "trace", "jobs.csv" },
	{ "{\"trace\": {}, " CLUSTERS ", " POLICIES "}", "trace", "{}" },
	{ "{\"trace\": {\"file\": \"nope.csv\"}, " CLUSTERS ", " POLICIES "}", "trace.file", "\"nope.csv\"" },
	{ "{\"trace\": {\"file\": \"jobs.csv\", \"format\": \"xml\"}, " CLUSTERS ", " POLICIES "}", "trace.format",
	  "\"xml\"" },
	{ "{\"trace\": {\"file\": \"jobs.csv\", \"format\": \"synthetic\"}, " CLUSTERS ", " POLICIES "}",
	  "trace.format", "\"synthetic\"" },
	{ "{\"trace\": {\"file\": \"jobs.csv\", \"max_jobs\": 0}, " CLUSTERS ", " POLICIES "}", "trace.max_jobs", "0" },
	{ "{\"trace\": {\"file\": \"jobs.csv\", \"min_gpus\": 4, \"max_gpus\": 2}, " CLUSTERS ", " POLICIES "}",
	  "trace.max_gpus", "2" },
	{ "{\"trace\": {\"file\": \"jobs.csv\", \"attempts\": \"some\"}, " CLUSTERS ", " POLICIES "}",
	  "trace.attempts", "some" },
	{ "{\"trace\": {\"file\": \"jobs.csv\", \"from_s\": 50, \"to_s\": 10}, " CLUSTERS ", " POLICIES "}",
	  "trace.to_s", "10" },
	{ "{\"trace\": {\"synthetic\": {\"arrival\": \"weekly\"}}, " CLUSTERS ", " POLICIES "}",
	  "trace.synthetic.arrival", "\"weekly\"" },
	{ "{\"trace\": {\"synthetic\": {\"rate_per_hour\": -1}}, " CLUSTERS ", " POLICIES "}",
	  "trace.synthetic.rate_per_hour", "-1" },
	{ "{\"trace\": {\"synthetic\": {\"rate\": 3}}, " CLUSTERS ", " POLICIES "}", "trace.synthetic.rate", "3" },
	{ "{\"trace\": {\"synthetic\": {\"hours\": 0}}, " CLUSTERS ", " POLICIES "}", "trace.synthetic.hours", "0" },
	/* issue 40 item 6: the job count is bounded at every load, when read */
	{ "{\"trace\": {\"synthetic\": {\"rate_per_hour\": 1000000, \"hours\": 100000}}, " CLUSTERS ", " POLICIES "}",
	  "trace.synthetic", "limit of 1000000 jobs" },
	{ "{\"trace\": {\"synthetic\": {\"rate_per_hour\": 1000, \"hours\": 100}}, " CLUSTERS ", " POLICIES
	  ", \"loads\": [1, 20]}", "trace.synthetic", "loads[1] = 20" },
	{ "{\"trace\": {\"synthetic\": {\"hours\": 0, \"jobs\": 2000000}}, " CLUSTERS ", " POLICIES "}",
	  "trace.synthetic", "jobs 2000000" },
	{ "{\"trace\": {\"synthetic\": {\"arrival\": \"philly-window\"}}, " CLUSTERS ", " POLICIES "}",
	  "trace.synthetic.arrival", "\"philly-window\"" },
	{ "{\"trace\": {\"synthetic\": {\"pollux_filter\": 1}}, " CLUSTERS ", " POLICIES "}",
	  "trace.synthetic.pollux_filter", "1" },
	{ "{\"trace\": {\"synthetic\": {}, \"format\": \"auto\"}, " CLUSTERS ", " POLICIES "}", "trace.format",
	  "\"auto\"" },
	{ "{" TRACE ", " POLICIES "}", "clusters", NULL },
	{ "{" TRACE ", \"clusters\": [], " POLICIES "}", "clusters", "[]" },
	{ "{" TRACE ", \"clusters\": [\"demo\"], " POLICIES "}", "clusters[0]", "\"demo\"" },
	{ "{" TRACE ", \"clusters\": [{\"label\": \"x\"}], " POLICIES "}", "clusters[0].base", NULL },
	{ "{" TRACE ", \"clusters\": [{\"base\": \"demo\", \"size\": 3}], " POLICIES "}", "clusters[0].size", "3" },
	{ "{" TRACE ", \"clusters\": [{\"base\": \"missing-dir/c.json\"}], " POLICIES "}", "clusters[0].base",
	  "\"missing-dir/c.json\"" },
	{ "{" TRACE ", \"clusters\": [{\"base\": \"demo\"}, {\"base\": \"demo\", \"add\": [{\"gpu\": \"v100\", "
	  "\"nodes\": 0, \"gpus_per_node\": 4}]}], " POLICIES "}",
	  "clusters[1].add[0].nodes", "0" },
	{ "{" TRACE ", \"clusters\": [{\"base\": \"demo\", \"add\": [{\"gpu\": \"v100\", \"nodes\": 1, "
	  "\"gpus_per_node\": 2.5}]}], " POLICIES "}",
	  "clusters[0].add[0].gpus_per_node", "2.5" },
	{ "{" TRACE ", \"clusters\": [{\"base\": \"demo\", \"add\": [{\"nodes\": 1, \"gpus_per_node\": 2}]}], " POLICIES
	  "}",
	  "clusters[0].add[0].gpu", NULL },
	{ "{" TRACE ", \"clusters\": [{\"base\": \"demo\", \"add\": {\"gpu\": \"v100\"}}], " POLICIES "}",
	  "clusters[0].add", "{\"gpu\":\"v100\"}" },
	{ "{" TRACE ", \"clusters\": [{\"base\": \"demo\"}, {\"base\": \"demo\"}], " POLICIES "}", "clusters[1].label",
	  "none" },
	{ "{" TRACE ", \"clusters\": [{\"base\": \"demo\", \"label\": \"a\\\"b\"}], " POLICIES "}", "clusters[0].label",
	  "\"a\\\"b\"" },
	{ "{" TRACE ", \"clusters\": [{\"base\": \"demo\", \"label\": \"\"}], " POLICIES "}", "clusters[0].label",
	  "\"\"" },
	{ "{" OK_REST ", \"loads\": [1, -1]}", "loads[1]", "-1" },
	{ "{" OK_REST ", \"loads\": [2, 2]}", "loads[1]", "2" },
	{ "{" OK_REST ", \"loads\": 2}", "loads", "2" },
	{ "{" OK_REST ", \"loads\": []}", "loads", "[]" },
	{ "{" TRACE ", " CLUSTERS "}", "policies", NULL },
	{ "{" TRACE ", " CLUSTERS ", \"policies\": [\"fast\"]}", "policies[0]", "\"fast\"" },
	{ "{" TRACE ", " CLUSTERS ", \"policies\": [\"fifo\", \"fifo\"]}", "policies[1]", "\"fifo\"" },
	{ "{" TRACE ", " CLUSTERS ", \"policies\": [7]}", "policies[0]", "7" },
	{ "{" OK_REST ", \"seeds\": [1.5]}", "seeds[0]", "1.5" },
	{ "{" OK_REST ", \"seeds\": [3, -4]}", "seeds[1]", "-4" },
	{ "{" OK_REST ", \"seeds\": [3, 3]}", "seeds[1]", "3" },
	{ "{" OK_REST ", \"fairness\": \"yes\"}", "fairness", "\"yes\"" },
	{ "{" OK_REST ", \"knobs\": {\"restart_cost\": -5}}", "knobs.restart_cost", "-5" },
	{ "{" OK_REST ", \"knobs\": {\"restart\": 5}}", "knobs.restart", "5" },
	{ "{" OK_REST ", \"knobs\": {\"interval\": 0}}", "knobs.interval", "0" },
	{ "{" OK_REST ", \"knobs\": {\"similarity_cost\": \"off\"}}", "knobs.similarity_cost", "\"off\"" },
	{ "{" OK_REST ", \"knobs\": {\"progress\": \"jabas\"}}", "knobs.progress", "\"jabas\"" },
	{ "{" OK_REST ", \"knobs\": {\"progress\": 1}}", "knobs.progress", "1" },
	{ "{" OK_REST ", \"knobs\": [1]}", "knobs", "[1]" },
	{ "{" OK_REST ", \"knobs\": {\"elastic_interval\": -5}}", "knobs.elastic_interval", "-5" },
	{ "{" OK_REST ", \"knobs\": {\"elastic_interval\": \"600\"}}", "knobs.elastic_interval", "\"600\"" },
	{ "{" OK_REST ", \"knobs\": {\"elastic_interval\": 2e7}}", "knobs.elastic_interval", NULL },
	{ "{" OK_REST ", \"knobs\": {\"elastic_drop\": 1}}", "knobs.elastic_drop", "1" },
	{ "{" OK_REST ", \"knobs\": {\"elastic_interval\": 5, \"elastic_interval\": 6}}", "knobs.elastic_interval",
	  "6" },
	{ "{" OK_REST ", \"knobs\": {\"easyscale_comm\": false}}", "knobs.easyscale_comm", "false" },
	{ "{" OK_REST ", \"loads\": [1], \"loads\": [2]}", "loads", "[2]" },
	{ "{" OK_REST ", \"name\": 5}", "name", "5" },
};

static void test_config_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct hb_sweep_config cfg;
		struct hb_error err;
		char field[200];

		if (parse(c->json, &cfg, &err) == 0)
			fail_msg("case %zu accepted: %s", i, c->json);
		assert_int_equal(err.code, HB_EINPUT);
		snprintf(field, sizeof(field), "field '%s'", c->field);
		if (strncmp(err.msg, "t.json: ", 8) != 0 || !strstr(err.msg, field) ||
		    (c->value && !strstr(err.msg, c->value)))
			fail_msg("case %zu: message '%s' lacks the file, %s or value %s", i, err.msg, field,
				 c->value ? c->value : "-");
		assert_null(cfg.echo);
		assert_null(cfg.clusters);
		hb_sweep_config_free(&cfg);
	}
}

static void test_config_invalid_json(void **state)
{
	struct hb_sweep_config cfg;
	struct hb_error err;

	(void)state;
	assert_int_equal(parse("{\"trace\": ", &cfg, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "t.json:1:"));
}

/* A policy without a shared-cluster arbiter alone is a config error; with
 * one that has one, it is a point that cannot run (checked below). */
static const struct hb_policy *unshared_policy(void)
{
	for (const struct hb_policy *p = hb_policy_at(0); p; p = hb_policy_next(p))
		if (!p->shared)
			return p;
	return NULL;
}

static void test_config_no_shared_policy(void **state)
{
	const struct hb_policy *p = unshared_policy();
	struct hb_sweep_config cfg;
	struct hb_error err;
	char json[512];

	(void)state;
	if (!p)
		skip(); /* every policy has a shared arbiter now */
	snprintf(json, sizeof(json), "{" TRACE ", " CLUSTERS ", \"policies\": [\"%s\"]}", p->name);
	assert_int_equal(parse(json, &cfg, &err), -1);
	assert_non_null(strstr(err.msg, "field 'policies'"));
	assert_non_null(strstr(err.msg, "shared-cluster arbiter"));
}

/* Setup errors (they need the catalog) still name file, field and value. */
static void test_setup_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ "{" TRACE ", \"clusters\": [{\"base\": \"demo\"}, {\"base\": \"jabas-z\"}], " POLICIES "}",
		  "clusters[1].base", "\"jabas-z\"" },
		{ "{" TRACE ", \"clusters\": [{\"base\": \"demo\", \"add\": [{\"gpu\": \"rtx-9090\", \"nodes\": 1, "
		  "\"gpus_per_node\": 2}]}], " POLICIES "}",
		  "clusters[0].add[0].gpu", "\"rtx-9090\"" },
		{ "{\"trace\": {\"synthetic\": {\"mix\": \"resnet9000:1\", \"jobs\": 3}}, " CLUSTERS ", " POLICIES "}",
		  "trace", "resnet9000" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hb_sweep_config cfg;
		struct hb_sweep sw;
		struct hb_error err;
		char field[200];

		if (parse(cases[i].json, &cfg, &err) < 0)
			fail_msg("case %zu: %s", i, err.msg);
		assert_int_equal(hb_sweep_setup(&sw, &cfg, NULL, &err), -1);
		assert_int_equal(err.code, HB_EINPUT);
		snprintf(field, sizeof(field), "field '%s'", cases[i].field);
		if (strncmp(err.msg, "t.json: ", 8) != 0 || !strstr(err.msg, field) || !strstr(err.msg, cases[i].value))
			fail_msg("case %zu: message '%s' lacks the file, %s or value %s", i, err.msg, field,
				 cases[i].value);
		hb_sweep_free(&sw);
		hb_sweep_config_free(&cfg);
	}
}

/* ---- defaults and points ------------------------------------------------------------------- */

static void test_defaults_and_echo(void **state)
{
	struct hb_sweep_config cfg;
	struct hb_error err;
	char *echo;

	(void)state;
	if (parse("{" TRACE ", \"clusters\": [{\"base\": \"demo\"}, {\"base\": \"demo\", \"add\": [{\"gpu\": \"v100\", "
		  "\"nodes\": 2, \"gpus_per_node\": 4}, {\"gpu\": \"t4\", \"nodes\": 1, \"gpus_per_node\": 1}]}], "
		  POLICIES ", \"knobs\": {\"restart_cost\": 30, \"similarity_cost\": false}}",
		  &cfg, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(cfg.name, "t");
	assert_int_equal(cfg.nloads, 1);
	assert_near(cfg.loads[0], 1.0, 0);
	assert_int_equal(cfg.nseeds, 1);
	assert_int_equal(cfg.seeds[0], 1);
	assert_int_equal(cfg.fairness, 0);
	assert_string_equal(cfg.clusters[0].label, "demo");
	assert_string_equal(cfg.clusters[1].label, "demo+8 v100+1 t4");
	assert_near(cfg.opts.restart_const_s, 30.0, 0);
	assert_int_equal(cfg.opts.similarity_cost, 0);
	assert_near(cfg.opts.reconfig_s, 1.0, 0); /* the simulator's default */
	/* the echo names the trace by its base name: no directory */
	echo = cJSON_PrintUnformatted(cfg.echo);
	assert_non_null(strstr(echo, "\"file\":\"jobs.csv\""));
	assert_null(strstr(echo, dir));
	assert_non_null(strstr(echo, "\"restart_cost\":30"));
	free(echo);
	hb_sweep_config_free(&cfg);
}

/* The policies' knobs (their tables' sweep keys, policy_knob.h): set,
 * echoed where they always were (after max_sim_s), and listed in that
 * order when a key is unknown. */
static void test_policy_knobs(void **state)
{
	const struct hb_policy *elastic = hb_policy_find("elastic");
	const struct hb_pknob_setting *v;
	struct hb_sweep_config cfg;
	struct hb_error err;
	struct hb_elastic_opts *eo;
	void *opts;
	char *echo;

	(void)state;
	if (parse("{" OK_REST "}", &cfg, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(cfg.opts.knobs.n, 0);
	echo = cJSON_PrintUnformatted(cfg.echo);
	assert_non_null(strstr(echo, "\"max_sim_s\":1000000000,\"elastic_interval\":600,\"elastic_drop\":false,"
				     "\"progress\":\"pollux\"}"));
	free(echo);
	hb_sweep_config_free(&cfg);

	if (parse("{" OK_REST ", \"knobs\": {\"elastic_drop\": true, \"elastic_interval\": 300}}", &cfg, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(cfg.opts.knobs.n, 2);
	assert_non_null(v = hb_pknob_setting(&cfg.opts.knobs, "elastic-interval"));
	assert_near(v->value, 300, 0);
	assert_non_null(v = hb_pknob_setting(&cfg.opts.knobs, "elastic-drop"));
	assert_near(v->value, 1, 0);
	echo = cJSON_PrintUnformatted(cfg.echo);
	assert_non_null(strstr(echo, "\"elastic_interval\":300,\"elastic_drop\":true,\"progress\""));
	free(echo);
	/* what a point of the elastic policy runs with */
	assert_int_equal(hb_policy_opts_new(elastic, &cfg.opts.knobs, &opts, &err), 0);
	eo = opts;
	assert_near(eo->interval_s, 300, 0);
	assert_int_equal(eo->drop, 1);
	free(opts);
	hb_sweep_config_free(&cfg);

	/* 0 is the event-driven variant, as sim --elastic-interval 0 */
	if (parse("{" OK_REST ", \"knobs\": {\"elastic_interval\": 0}}", &cfg, &err) < 0)
		fail_msg("%s", err.msg);
	assert_near(hb_pknob_setting(&cfg.opts.knobs, "elastic-interval")->value, 0, 0);
	hb_sweep_config_free(&cfg);

	assert_int_equal(parse("{" OK_REST ", \"knobs\": {\"delta\": 5}}", &cfg, &err), -1);
	assert_non_null(strstr(err.msg, "(known: interval, restart_cost, reconfig_cost, gns_overhead, similarity_cost, "
				       "unequal_penalty, max_sim_s, elastic_interval, elastic_drop, progress, comment)"));
	hb_sweep_config_free(&cfg);
}

static void test_point_expansion(void **state)
{
	struct hb_sweep_config cfg;
	struct hb_error err;
	int id = 0;

	(void)state;
	if (parse("{" TRACE ", \"clusters\": [{\"base\": \"demo\"}, {\"base\": \"pollux-t4\"}, {\"base\": \"jabas-a\"}], "
		  "\"loads\": [0.5, 1, 2, 4], \"policies\": [\"fifo\", \"tiresias\"], \"seeds\": [9, 3, 5]}",
		  &cfg, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_sweep_npoints(&cfg), 3 * 4 * 2 * 3);
	/* the nested order clusters x loads x policies x seeds, brute force */
	for (int c = 0; c < 3; c++)
		for (int l = 0; l < 4; l++)
			for (int p = 0; p < 2; p++)
				for (int s = 0; s < 3; s++, id++) {
					struct hb_sweep_point pt;

					hb_sweep_point_of(&cfg, id, &pt);
					assert_int_equal(pt.id, id);
					assert_int_equal(pt.cluster, c);
					assert_int_equal(pt.load, l);
					assert_int_equal(pt.policy, p);
					assert_int_equal(pt.seed, s);
				}
	assert_int_equal(cfg.seeds[0], 9); /* kept in file order */
	assert_string_equal(cfg.policies[1]->name, "tiresias");
	hb_sweep_config_free(&cfg);
}

/* ---- cluster variants ------------------------------------------------------------------------ */

static void test_cluster_variants(void **state)
{
	struct hb_sweep_config cfg;
	struct hb_sweep sw;
	struct hb_error err;
	struct hb_catalog cat;
	const struct hb_cluster *a, *v1, *v2;
	double p3090, pa100, gamma, gamma_a;
	long lo, hi, lo_a, hi_a;

	(void)state;
	if (parse("{" TRACE ", \"clusters\": [{\"base\": \"jabas-a\", \"label\": \"A\"}, "
		  "{\"base\": \"jabas-a\", \"add\": [{\"gpu\": \"RTX 3090\", \"nodes\": 2, \"gpus_per_node\": 4}]}, "
		  "{\"base\": \"jabas-a\", \"add\": [{\"gpu\": \"a100-80gb\", \"nodes\": 1, \"gpus_per_node\": 8}, "
		  "{\"gpu\": \"rtx-3090\", \"nodes\": 1, \"gpus_per_node\": 2}]}], " POLICIES "}",
		  &cfg, &err) < 0 ||
	    hb_sweep_setup(&sw, &cfg, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	a = hb_catalog_cluster(&cat, "jabas-a");
	p3090 = hb_catalog_gpu(&cat, "rtx-3090")->price_per_hour;
	pa100 = hb_catalog_gpu(&cat, "a100-80gb")->price_per_hour;

	/* unchanged base: the built-in cluster itself */
	assert_string_equal(sw.info[0].name, "jabas-a");
	assert_int_equal(sw.info[0].gpus, 16);
	assert_near(sw.info[0].usd_per_h, hb_cluster_price_per_hour(&cat, a), 1e-9);

	/* +8 RTX 3090 on 2 nodes: the alias becomes the catalog key */
	v1 = sw.cl[1];
	assert_string_equal(cfg.clusters[1].label, "jabas-a+8 RTX 3090");
	assert_string_equal(sw.info[1].name, "jabas-a-v1");
	assert_string_equal(sw.info[1].base, "jabas-a");
	assert_int_equal(sw.info[1].gpus, 24);
	assert_int_equal(v1->ngpus, 24);
	assert_int_equal(sw.info[1].nodes, 6);
	assert_near(sw.info[1].usd_per_h, hb_cluster_price_per_hour(&cat, a) + 8 * p3090, 1e-9);
	assert_string_equal(sw.info[1].gpu_mix, "4 v100 + 4 p100 + 4 titan-rtx + 12 rtx-3090");
	for (int k = 4; k < 6; k++) {
		/* links of the base's RTX 3090 node */
		assert_int_equal(v1->nodes[k].ngpus, 4);
		assert_string_equal(sw.cats[1].gpus[v1->nodes[k].gpu].name, "rtx-3090");
		assert_string_equal(v1->nodes[k].intra_link, a->nodes[3].intra_link);
		assert_string_equal(v1->nodes[k].inter_link, a->nodes[3].inter_link);
		assert_near(v1->nodes[k].inter_bw, a->nodes[3].inter_bw, 0);
	}
	for (int k = 0; k < 4; k++)
		assert_string_equal(v1->nodes[k].name, a->nodes[k].name);

	/* +8 A100 (not in the base: the first node's links) +2 RTX 3090 */
	v2 = sw.cl[2];
	assert_int_equal(sw.info[2].gpus, 26);
	assert_int_equal(sw.info[2].nodes, 6);
	assert_near(sw.info[2].usd_per_h, hb_cluster_price_per_hour(&cat, a) + 8 * pa100 + 2 * p3090, 1e-9);
	assert_near(v2->nodes[4].intra_bw, a->nodes[0].intra_bw, 0);
	assert_string_equal(v2->nodes[4].inter_link, a->nodes[0].inter_link);
	assert_int_equal(v2->nodes[4].ngpus, 8);

	/* JABAS Table 4's per-cluster settings follow the variant */
	hb_model_bounds(hb_catalog_model(&cat, "resnet50"), "jabas-a", &gamma_a, &lo_a, &hi_a);
	hb_model_bounds(hb_catalog_model(&sw.cats[1], "resnet50"), "jabas-a-v1", &gamma, &lo, &hi);
	assert_near(gamma, gamma_a, 0);
	assert_int_equal(lo, lo_a);
	assert_int_equal(hi, hi_a);
	assert_int_equal(lo, 256); /* not the model's own default */

	hb_catalog_free(&cat);
	hb_sweep_free(&sw);
	hb_sweep_config_free(&cfg);
}

/* A base given as a cluster file, relative to the config's directory. */
static void test_base_from_file(void **state)
{
	struct hb_sweep_config cfg;
	struct hb_sweep sw;
	struct hb_error err;

	(void)state;
	if (parse("{" TRACE ", \"clusters\": [{\"base\": \"tiny-cluster.json\", \"add\": [{\"gpu\": \"v100\", "
		  "\"nodes\": 1, \"gpus_per_node\": 1}]}], " POLICIES "}",
		  &cfg, &err) < 0 ||
	    hb_sweep_setup(&sw, &cfg, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(cfg.clusters[0].label, "tiny-cluster.json+1 v100");
	assert_string_equal(sw.info[0].base, "sweep-test-tiny");
	assert_int_equal(sw.info[0].gpus, 2);
	assert_int_equal(sw.info[0].nodes, 2);
	hb_sweep_free(&sw);
	hb_sweep_config_free(&cfg);
}

/* ---- running ------------------------------------------------------------------------------------ */

/* Rows equal but for the wall time. */
static void assert_rows_equal(const struct hb_sweep *x, const struct hb_sweep *y)
{
	assert_int_equal(x->npoints, y->npoints);
	for (int i = 0; i < x->npoints; i++) {
		struct hb_sweep_row a = x->rows[i], b = y->rows[i];

		a.wall_s = b.wall_s = 0;
		if (memcmp(&a, &b, sizeof(a)) != 0)
			fail_msg("point %d differs: status %d/%d, JCT %.17g/%.17g", i, (int)a.status, (int)b.status,
				 a.jct_mean_h, b.jct_mean_h);
		assert_int_equal(x->jobrows[i] != NULL, y->jobrows[i] != NULL);
		if (x->jobrows[i] &&
		    memcmp(x->jobrows[i], y->jobrows[i], (size_t)a.jobs * sizeof(struct hb_sweep_jobrow)) != 0)
			fail_msg("point %d: job rows differ", i);
	}
}

/* |a - b| <= tol (cmocka 1.1 has no assert_double_equal). */
#define assert_close(a, b, tol)                                                                          \
	do {                                                                                                \
		double a_ = (a), b_ = (b);                                                                     \
		if (!(fabs(a_ - b_) <= (tol)))                                                                 \
			fail_msg("%s = %.17g, %s = %.17g", #a, a_, #b, b_);                                    \
	} while (0)

/* Bytes of rank's pack: a row per point, job rows with those that ran. */
static size_t pack_bytes(const struct hb_sweep *sw, int rank, int size)
{
	size_t n = 0;

	for (int i = 0; i < sw->npoints; i++)
		if (i % size == rank)
			n += sizeof(struct hb_sweep_row) + (sw->rows[i].status == HB_SWEEP_OK
								    ? (size_t)sw->rows[i].jobs * sizeof(struct hb_sweep_jobrow)
								    : 0);
	return n;
}

#define RUN_CONFIG                                                                                         \
	"{\"trace\": {\"file\": \"jobs.csv\", \"min_gpus\": 2}, \"clusters\": [{\"base\": \"demo\"}, "             \
	"{\"base\": \"jabas-quickstart\", \"add\": "                                                        \
	"[{\"gpu\": \"rtx-3090\", \"nodes\": 1, \"gpus_per_node\": 4}]}, {\"base\": \"tiny-cluster.json\"}], " \
	"\"loads\": [1, 0.001], \"policies\": [\"fifo\", \"optimus\"%s], \"seeds\": [1, 2], "               \
	"\"knobs\": {\"max_sim_s\": 100000}}"

static void setup_run_config(struct hb_sweep_config *cfg, struct hb_sweep *sw)
{
	const struct hb_policy *un = unshared_policy();
	char json[2048], extra[128] = "";
	struct hb_error err;

	if (un)
		snprintf(extra, sizeof(extra), ", \"%s\"", un->name);
	snprintf(json, sizeof(json), RUN_CONFIG, extra);
	if (parse(json, cfg, &err) < 0 || hb_sweep_setup(sw, cfg, NULL, &err) < 0)
		fail_msg("%s", err.msg);
}

static void test_run_threads_and_ranks(void **state)
{
	struct hb_sweep_config cfg;
	struct hb_sweep one, three, r0, r1;
	struct hb_error err;
	void *buf;
	size_t len;

	(void)state;
	setup_run_config(&cfg, &one);
	assert_int_equal(hb_sweep_run(&one, 0, 1, 1, NULL, NULL, NULL, &err), 0);
	/* identical rows on 3 threads */
	if (hb_sweep_setup(&three, &cfg, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_sweep_run(&three, 0, 1, 3, NULL, NULL, NULL, &err), 0);
	assert_rows_equal(&one, &three);
	/* two "ranks", each with 2 threads, rank 1's rows shipped to rank 0 */
	if (hb_sweep_setup(&r0, &cfg, NULL, &err) < 0 || hb_sweep_setup(&r1, &cfg, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(hb_sweep_rank_points(&r0, 0, 2) + hb_sweep_rank_points(&r0, 1, 2), r0.npoints);
	assert_int_equal(hb_sweep_run(&r0, 0, 2, 2, NULL, NULL, NULL, &err), 0);
	assert_int_equal(hb_sweep_run(&r1, 1, 2, 2, NULL, NULL, NULL, &err), 0);
	for (int i = 0; i < r0.npoints; i++)
		assert_int_equal(r0.rows[i].status == HB_SWEEP_PENDING, i % 2 == 1);
	assert_int_equal(hb_sweep_pack(&r1, 1, 2, &buf, &len, &err), 0);
	assert_int_equal(len, pack_bytes(&r1, 1, 2));
	assert_int_equal(hb_sweep_unpack(&r0, buf, len, &err), 0);
	hb_sweep_censor(&r0); /* as cmd_sweep does once every rank's rows are in */
	assert_rows_equal(&one, &r0);
	/* a torn or foreign pack is refused */
	assert_int_equal(hb_sweep_unpack(&r0, buf, len - 1, &err), -1);
	((struct hb_sweep_row *)buf)[0].id = r0.npoints;
	assert_int_equal(hb_sweep_unpack(&r0, buf, len, &err), -1);
	free(buf);
	hb_sweep_free(&one);
	hb_sweep_free(&three);
	hb_sweep_free(&r0);
	hb_sweep_free(&r1);
	hb_sweep_config_free(&cfg);
}

/* The censored means against a brute force over the job rows: every job
 * of a (load, seed) in every point, a censored one counted from its
 * arrival to the latest end of that (load, seed)'s points. */
static void test_censored_jcts(void **state)
{
	struct hb_sweep_config cfg;
	struct hb_sweep sw;
	struct hb_error err;
	int checked = 0;

	(void)state;
	setup_run_config(&cfg, &sw);
	assert_int_equal(hb_sweep_run(&sw, 0, 1, 2, NULL, NULL, NULL, &err), 0);
	for (int li = 0; li < cfg.nloads; li++)
		for (int si = 0; si < cfg.nseeds; si++) {
			const struct hb_sweep_jobset *js = hb_sweep_jobset_of(&sw, li, si);
			double horizon = -1;

			assert_int_equal(js->njobs, 6);
			assert_int_equal(js->excluded, 1);
			assert_int_equal(js->max_excluded_gpus, 24);
			assert_int_equal(js->partial, 6); /* the 1-GPU cluster runs none of them */
			for (int i = 0; i < sw.npoints; i++) {
				struct hb_sweep_point p;

				hb_sweep_point_of(&cfg, i, &p);
				if (p.load == li && p.seed == si && sw.rows[i].status == HB_SWEEP_OK) {
					double end = 0;

					for (long k = 0; k < js->njobs; k++) {
						const struct hb_sweep_jobrow *jr = &sw.jobrows[i][k];

						if (jr->state == HB_SWJOB_DONE && jr->finish_s > end)
							end = jr->finish_s;
					}
					assert_true(sw.rows[i].end_s >= end);
					if (sw.rows[i].end_s > horizon)
						horizon = sw.rows[i].end_s;
				}
			}
			if (horizon < 0)
				continue;
			assert_close(hb_sweep_horizon(&sw, li, si), horizon, 0);
			for (int i = 0; i < sw.npoints; i++) {
				struct hb_sweep_point p;
				double sum = 0;
				int done = 0;

				hb_sweep_point_of(&cfg, i, &p);
				if (p.load != li || p.seed != si || sw.rows[i].status != HB_SWEEP_OK)
					continue;
				for (long k = 0; k < js->njobs; k++) {
					const struct hb_sweep_jobrow *jr = &sw.jobrows[i][k];
					double a = js->jobs[k].arrival_s;
					double jct = jr->state == HB_SWJOB_DONE ? jr->finish_s - a : horizon - a;

					assert_int_equal(jr->job, k);
					assert_true(jct >= 0);
					assert_close(hb_sweep_job_jct(&sw, i, jr), jct, 1e-9);
					if (strcmp(js->jobs[k].name, "bert-a") == 0)
						assert_int_equal(jr->state, p.cluster == 0 ? HB_SWJOB_TOO_LARGE : HB_SWJOB_DONE);
					sum += jct;
					done += jr->state == HB_SWJOB_DONE;
				}
				assert_int_equal(done, sw.rows[i].completed);
				assert_close(sw.rows[i].jct_all_mean_h, sum / js->njobs / 3600.0, 1e-12);
				if (p.cluster > 0) {
					const struct hb_sweep_row *b = &sw.rows[i % (cfg.nloads * cfg.npolicies * cfg.nseeds)];

					if (b->status == HB_SWEEP_OK)
						assert_close(sw.rows[i].jct_delta_pct,
								    100.0 * (sw.rows[i].jct_all_mean_h - b->jct_all_mean_h) /
									    b->jct_all_mean_h,
								    1e-9);
				}
				checked++;
			}
		}
	assert_true(checked >= 8);
	hb_sweep_free(&sw);
	hb_sweep_config_free(&cfg);
}

static void test_rows_that_cannot_run(void **state)
{
	struct hb_sweep_config cfg;
	struct hb_sweep sw;
	struct hb_error err;
	int nok = 0;

	(void)state;
	setup_run_config(&cfg, &sw);
	assert_int_equal(hb_sweep_run(&sw, 0, 1, 2, NULL, NULL, NULL, &err), 0);
	for (int i = 0; i < sw.npoints; i++) {
		const struct hb_sweep_row *r = &sw.rows[i];
		struct hb_sweep_point p;

		hb_sweep_point_of(&cfg, i, &p);
		if (!cfg.policies[p.policy]->shared) {
			assert_int_equal(r->status, HB_SWEEP_CANNOT);
			assert_non_null(strstr(r->reason, "no shared-cluster arbiter"));
		} else if (p.cluster == 2) {
			/* one GPU: every job of jobs.csv with 2+ GPUs asks for more */
			assert_int_equal(r->status, HB_SWEEP_CANNOT);
			assert_non_null(strstr(r->reason, "no job to replay"));
			assert_int_equal(r->jobs, 6);
			assert_int_equal(r->dropped, 6);
			assert_null(sw.jobrows[i]);
		} else if (p.load == 1) {
			/* arrivals x 1000 run past max_sim_s */
			assert_int_equal(r->status, HB_SWEEP_FAILED);
			assert_non_null(strstr(r->reason, "did not finish within 100000 simulated seconds"));
			assert_true(isnan(r->jct_mean_h));
		} else {
			assert_int_equal(r->status, HB_SWEEP_OK);
			assert_string_equal(r->reason, "");
			/* 7 jobs with 2+ GPUs; cifar-big (24) is larger than
			 * every cluster (12 at most): left out everywhere;
			 * demo has 4 GPUs: bert-a (8) is too large there */
			assert_int_equal(r->jobs, 6);
			assert_int_equal(r->completed, p.cluster == 0 ? 5 : 6);
			assert_int_equal(r->dropped, p.cluster == 0 ? 1 : 0);
			assert_int_equal(r->too_large, p.cluster == 0 ? 1 : 0);
			assert_non_null(sw.jobrows[i]);
			/* censored: demo's mean over the set exceeds its mean over completed jobs */
			if (p.cluster == 0) {
				assert_true(r->jct_all_mean_h > r->jct_mean_h);
				assert_true(isnan(r->jct_delta_pct));
			} else {
				assert_close(r->jct_all_mean_h, r->jct_mean_h, 1e-12);
				assert_true(isfinite(r->jct_delta_pct));
			}
			assert_true(r->jct_mean_h > 0 && r->jct_mean_h <= r->jct_max_h);
			assert_true(r->util_mean > 0 && r->util_mean <= 1 + 1e-9);
			nok++;
		}
	}
	assert_int_equal(nok, 2 * 2 * 2); /* 2 clusters x load 1 x 2 policies x 2 seeds */
	assert_int_equal(hb_sweep_nok(&sw), nok);
	hb_sweep_free(&sw);
	hb_sweep_config_free(&cfg);
}

static void test_aggregates(void **state)
{
	struct hb_sweep_config cfg;
	struct hb_sweep sw;
	struct hb_sweep_agg *agg;
	struct hb_error err;
	int n;

	(void)state;
	setup_run_config(&cfg, &sw);
	assert_int_equal(hb_sweep_run(&sw, 0, 1, 1, NULL, NULL, NULL, &err), 0);
	assert_int_equal(hb_sweep_aggregate(&sw, &agg, &n, &err), 0);
	assert_int_equal(n, cfg.nclusters * cfg.nloads * cfg.npolicies);
	for (int k = 0; k < n; k++) {
		double jct = 0, cost = 0;
		int ok = 0;

		assert_int_equal(agg[k].cluster, k / (cfg.nloads * cfg.npolicies));
		assert_int_equal(agg[k].load, (k / cfg.npolicies) % cfg.nloads);
		assert_int_equal(agg[k].policy, k % cfg.npolicies);
		for (int s = 0; s < cfg.nseeds; s++) {
			const struct hb_sweep_row *r = &sw.rows[k * cfg.nseeds + s];

			if (r->status == HB_SWEEP_OK) {
				ok++;
				jct += r->jct_mean_h;
				cost += r->cost_usd;
			}
		}
		assert_int_equal(agg[k].ok, ok);
		assert_int_equal(agg[k].seeds, 2);
		if (ok) {
			assert_near(agg[k].jct_mean_h, jct / ok, 1e-12);
			assert_near(agg[k].cost_usd, cost / ok, 1e-9);
		} else {
			assert_true(agg[k].reason[0] != '\0');
		}
	}
	free(agg);
	hb_sweep_free(&sw);
	hb_sweep_config_free(&cfg);
}

int main(void)
{
	const char *root = getenv("HB_SOURCE_ROOT");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_config_invalid_json),
		cmocka_unit_test(test_config_no_shared_policy),
		cmocka_unit_test(test_setup_errors),
		cmocka_unit_test(test_defaults_and_echo),
		cmocka_unit_test(test_policy_knobs),
		cmocka_unit_test(test_point_expansion),
		cmocka_unit_test(test_cluster_variants),
		cmocka_unit_test(test_base_from_file),
		cmocka_unit_test(test_run_threads_and_ranks),
		cmocka_unit_test(test_rows_that_cannot_run),
		cmocka_unit_test(test_censored_jcts),
		cmocka_unit_test(test_aggregates),
	};

	if (!root) {
		fprintf(stderr, "HB_SOURCE_ROOT is not set (run through meson test)\n");
		return 77;
	}
	snprintf(dir, sizeof(dir), "%s/tests/sweep", root);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
