/* Alibaba's 2023 GPU trace (traces/alibaba.h, alibaba_openb.c): the pod
 * reader on a hand-written fixture (what each kind of pod becomes, the
 * skip counts), one malformed row per field (the message names file, line,
 * field and value), format detection, the GPU-code table and its
 * overrides, the node-list cluster loader (good file, unknown model,
 * malformed rows, the catalog round trip) and the shipped data under
 * data/alibaba (8,152 pods -> 3,630 jobs; 1,213 nodes, 6,212 GPUs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "alibaba.h"
#include "catalog.h"
#include "jobspec.h"
#include "strutil.h"

static char tmpdir[256];
static char fixtures[1024];
static char source_root[1024];

#define HEADER "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time," \
	       "scheduled_time\n"
#define GOOD_ROW "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,100,0\n"

static const char *fx(const char *name)
{
	static char path[4][2048];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/traces/%s", fixtures, name);
	return path[k];
}

/* Write text to tmpdir/name and return the path. */
static const char *tmpfile_with(const char *name, const char *text)
{
	static char path[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

static long read_all(const char *path, struct hb_jobspec *jobs, long max, struct hb_trace_stats *st)
{
	struct hb_trace_reader *r = NULL;
	struct hb_error err = { 0 };
	long n = 0;
	int rc;

	if (hb_trace_open(path, HB_TRACE_AUTO, NULL, &r, &err) < 0)
		fail_msg("open %s: %s", path, err.msg);
	assert_int_equal(hb_trace_get_format(r), HB_TRACE_ALIBABA_OPENB);
	while ((rc = hb_trace_next(r, &jobs[n < max ? n : max - 1], &err)) == 1)
		n++;
	if (rc < 0)
		fail_msg("read %s: %s", path, err.msg);
	if (st)
		*st = *hb_trace_get_stats(r);
	hb_trace_close(r);
	return n;
}

/* ---- pods ---------------------------------------------------------------- */

static void test_pods_good(void **state)
{
	struct hb_jobspec j[16];
	struct hb_trace_stats st;
	long n;

	(void)state;
	n = read_all(fx("alibaba_pods_good.csv"), j, 16, &st);
	assert_int_equal(n, 5);
	assert_int_equal(st.records, 8);
	assert_int_equal(st.skipped[HB_SKIP_GPU_SHARE], 1);
	assert_int_equal(st.skipped[HB_SKIP_NO_GPUS], 1);
	assert_int_equal(st.skipped[HB_SKIP_NEVER_SCHEDULED], 1);
	assert_int_equal(st.skipped_total, 3);

	assert_string_equal(j[0].name, "openb-pod-0000");
	assert_true(j[0].arrival_s == 0.0);
	assert_int_equal(j[0].gpus, 1);
	assert_true(j[0].duration_s == 12537496.0);
	assert_true(j[0].gpu_time_s == 12537496.0);
	assert_string_equal(j[0].status, "Running");
	assert_string_equal(j[0].vc, "LS");
	assert_string_equal(j[0].model, "");
	assert_string_equal(j[0].gpu_type, "");
	assert_int_equal(j[0].record, 2);

	/* 8 GPUs, scheduled 3 s after creation: arrival is creation_time */
	assert_string_equal(j[1].name, "openb-pod-0003");
	assert_true(j[1].arrival_s == 9437497.0);
	assert_int_equal(j[1].gpus, 8);
	assert_true(j[1].duration_s == 10769854.0 - 9437500.0);
	assert_true(j[1].gpu_time_s == 8 * (10769854.0 - 9437500.0));
	assert_string_equal(j[1].vc, "Burstable");

	/* two GPU types: no single preference */
	assert_string_equal(j[2].name, "openb-pod-0004");
	assert_string_equal(j[2].status, "Failed");
	assert_string_equal(j[2].gpu_type, "");
	/* one type: its catalog GPU */
	assert_string_equal(j[3].gpu_type, "t4");
	assert_int_equal(j[3].gpus, 2);
	/* one type listed twice, and a zero run time (no hint) */
	assert_string_equal(j[4].gpu_type, "v100-32gb");
	assert_true(j[4].duration_s == 0.0);
	assert_int_equal(j[4].record, 9);
}

static void test_pods_filters(void **state)
{
	struct hb_trace_options opt;
	struct hb_jobspec *jobs = NULL;
	struct hb_trace_stats st;
	struct hb_error err = { 0 };
	long n = 0;

	(void)state;
	hb_trace_options_init(&opt);
	hb_strlcpy(opt.status, "Succeeded", sizeof(opt.status));
	if (hb_trace_read_all(fx("alibaba_pods_good.csv"), HB_TRACE_ALIBABA_OPENB, &opt, &jobs, &n, &st, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 3);
	assert_int_equal(st.skipped[HB_SKIP_STATUS], 2);
	free(jobs);
	hb_trace_options_init(&opt);
	hb_strlcpy(opt.vc, "BE", sizeof(opt.vc));
	if (hb_trace_read_all(fx("alibaba_pods_good.csv"), HB_TRACE_ALIBABA_OPENB, &opt, &jobs, &n, &st, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 1);
	assert_string_equal(jobs[0].name, "openb-pod-0007");
	free(jobs);
}

struct bad_row {
	const char *row;     /* the second line of the file */
	const char *field;   /* expected in the message: field 'F' */
	const char *value;   /* and the value (or NULL when the field is missing/empty) */
	const char *reason;  /* and a piece of the reason */
};

static void expect_pod_error(int k, const struct bad_row *b)
{
	char file[64], text[2048], want[256];
	const char *path;
	struct hb_jobspec *jobs = NULL;
	struct hb_error err = { 0 };
	long n = 0;

	snprintf(file, sizeof(file), "pods_bad_%d.csv", k);
	snprintf(text, sizeof(text), HEADER GOOD_ROW "%s\n", b->row);
	path = tmpfile_with(file, text);
	assert_int_equal(hb_trace_read_all(path, HB_TRACE_AUTO, NULL, &jobs, &n, NULL, &err), -1);
	assert_null(jobs);
	assert_int_equal(err.code, HB_EINPUT);
	snprintf(want, sizeof(want), "%s:3: field '%s'", path, b->field);
	if (!strstr(err.msg, want) || (b->value && !strstr(err.msg, b->value)) || !strstr(err.msg, b->reason))
		fail_msg("row '%s': want '%s' ... '%s' ... '%s', got: %s", b->row, want, b->value ? b->value : "",
			 b->reason, err.msg);
}

static void test_pods_malformed(void **state)
{
	static const struct bad_row bad[] = {
		{ ",1,1,1,1000,,LS,Running,0,1,0", "name", NULL, "empty" },
		{ "p,x12,1,1,1000,,LS,Running,0,1,0", "cpu_milli", "'x12'", "not an integer" },
		{ "p,1,-5,1,1000,,LS,Running,0,1,0", "memory_mib", "'-5'", "out of range" },
		{ "p,1,1,one,1000,,LS,Running,0,1,0", "num_gpu", "'one'", "not an integer" },
		{ "p,1,1,-1,1000,,LS,Running,0,1,0", "num_gpu", "'-1'", "out of range" },
		{ "p,1,1,1,1001,,LS,Running,0,1,0", "gpu_milli", "'1001'", "out of range" },
		{ "p,1,1,1,0.5,,LS,Running,0,1,0", "gpu_milli", "'0.5'", "not an integer" },
		{ "p,1,1,0,500,,LS,Running,0,1,0", "gpu_milli", "'500'", "num_gpu 0" },
		{ "p,1,1,2,0,,LS,Running,0,1,0", "gpu_milli", "'0'", "a whole GPU" },
		{ "p,1,1,2,500,,LS,Running,0,1,0", "gpu_milli", "'500'", "several GPUs" },
		{ "p,1,1,1,1000,H100,LS,Running,0,1,0", "gpu_spec", "'H100'", "known: T4, P100" },
		{ "p,1,1,1,1000,T4||P100,LS,Running,0,1,0", "gpu_spec", "'T4||P100'", "empty GPU model" },
		{ "p,1,1,1,1000,T4|,LS,Running,0,1,0", "gpu_spec", "'T4|'", "empty GPU model" },
		{ "p,1,1,1,1000,,,Running,0,1,0", "qos", NULL, "empty" },
		{ "p,1,1,1,1000,,LS,Done,0,1,0", "pod_phase", "'Done'", "not a pod phase" },
		{ "p,1,1,1,1000,,LS,Running,,1,0", "creation_time", NULL, "empty" },
		{ "p,1,1,1,1000,,LS,Running,yesterday,1,0", "creation_time", "'yesterday'", "not a number" },
		{ "p,1,1,1,1000,,LS,Running,-3,1,0", "creation_time", "'-3'", "out of range" },
		{ "p,1,1,1,1000,,LS,Running,0,,0", "deletion_time", NULL, "empty" },
		{ "p,1,1,1,1000,,LS,Running,10,5,10", "deletion_time", "'5'", "earlier than creation_time" },
		{ "p,1,1,1,1000,,LS,Running,10,20,5", "scheduled_time", "'5'", "earlier than creation_time" },
		{ "p,1,1,1,1000,,LS,Running,10,20,30", "scheduled_time", "'30'", "later than deletion_time" },
		{ "p,1,1,1,1000,,LS,Running,10,20,nan", "scheduled_time", "'nan'", "not a number" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_pod_error((int)i, &bad[i]);
}

static void test_pods_bad_shape(void **state)
{
	struct hb_jobspec *jobs = NULL;
	struct hb_error err = { 0 };
	const char *path;
	long n = 0;

	(void)state;
	/* a short row: the message names the line and the width */
	path = tmpfile_with("pods_short.csv", HEADER GOOD_ROW "p,1,1,1,1000,,LS\n");
	assert_int_equal(hb_trace_read_all(path, HB_TRACE_ALIBABA_OPENB, NULL, &jobs, &n, NULL, &err), -1);
	assert_non_null(strstr(err.msg, ":3:"));
	/* the multigpu variants' five columns: refused naming a missing column */
	path = tmpfile_with("pods_multigpu.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,1000\n");
	assert_int_equal(hb_trace_read_all(path, HB_TRACE_AUTO, NULL, &jobs, &n, NULL, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	if (!strstr(err.msg, ":1:") || !strstr(err.msg, "missing column 'gpu_spec'"))
		fail_msg("multigpu: %s", err.msg);
	/* an unterminated quote */
	path = tmpfile_with("pods_quote.csv", HEADER "\"p,1,1,1,1000,,LS,Running,0,1,0\n");
	assert_int_equal(hb_trace_read_all(path, HB_TRACE_ALIBABA_OPENB, NULL, &jobs, &n, NULL, &err), -1);
	assert_non_null(strstr(err.msg, ":2:"));
}

static void test_detect(void **state)
{
	enum hb_trace_format f;
	struct hb_error err = { 0 };

	(void)state;
	if (hb_trace_detect(fx("alibaba_pods_good.csv"), &f, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(f, HB_TRACE_ALIBABA_OPENB);
	assert_string_equal(hb_trace_format_name(HB_TRACE_ALIBABA_OPENB), "alibaba-openb");
	assert_int_equal(hb_trace_format_parse("Alibaba-OpenB", &f, &err), 0);
	assert_int_equal(f, HB_TRACE_ALIBABA_OPENB);
	assert_int_equal(hb_trace_format_parse("alibaba", &f, &err), -1);
	assert_non_null(strstr(err.msg, "alibaba-openb"));
	/* the node list is a cluster, not a trace */
	assert_int_equal(hb_trace_detect(fx("alibaba_nodes_good.csv"), &f, &err), -1);
	assert_non_null(strstr(err.msg, "--from-alibaba"));
	assert_string_equal(hb_trace_skip_name(HB_SKIP_GPU_SHARE), "GPU share (gpu_milli < 1000)");
	assert_string_equal(hb_trace_skip_name(HB_SKIP_NEVER_SCHEDULED), "never scheduled");
}

/* ---- GPU codes ------------------------------------------------------------ */

static void test_gpu_codes(void **state)
{
	struct hb_catalog cat = { 0 };
	struct hb_alibaba_gpus map;
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	hb_alibaba_gpus_default(&map);
	/* every default is a catalog GPU */
	for (int i = 0; i < HB_ALIBABA_NGPUS; i++)
		if (!hb_catalog_gpu(&cat, map.gpu[i]))
			fail_msg("code %s -> '%s': not in the catalog", hb_alibaba_gpu_code(i), map.gpu[i]);
	assert_string_equal(hb_alibaba_gpu(&map, "v100m16"), "v100");
	assert_string_equal(hb_alibaba_gpu(&map, "V100M32"), "v100-32gb");
	assert_string_equal(hb_alibaba_gpu(NULL, "A10"), "a10");
	assert_string_equal(hb_alibaba_gpu(NULL, "G2"), "a100-40gb");
	assert_null(hb_alibaba_gpu(&map, "G1"));
	/* overrides take catalog names or aliases, and store the name */
	assert_int_equal(hb_alibaba_gpus_parse(&map, &cat, "G2=Tesla V100-SXM2-32GB, g3 = h100-80gb", &err), 0);
	assert_string_equal(hb_alibaba_gpu(&map, "G2"), "v100-32gb");
	assert_string_equal(hb_alibaba_gpu(&map, "G3"), "h100-80gb");
	assert_string_equal(hb_alibaba_gpu(&map, "T4"), "t4");
	assert_int_equal(hb_alibaba_gpus_parse(&map, &cat, "G9=t4", &err), -1);
	assert_non_null(strstr(err.msg, "'G9' is not a GPU code of the trace (known: T4, P100"));
	assert_int_equal(hb_alibaba_gpus_parse(&map, &cat, "G2=tpu", &err), -1);
	assert_non_null(strstr(err.msg, "'tpu' is not a GPU type in the catalog"));
	assert_int_equal(hb_alibaba_gpus_parse(&map, &cat, "G2", &err), -1);
	assert_non_null(strstr(err.msg, "not CODE=GPU"));
	assert_int_equal(hb_alibaba_gpus_parse(&map, &cat, "G2=", &err), -1);
	assert_int_equal(hb_alibaba_gpus_parse(&map, &cat, "", &err), -1);
	hb_catalog_free(&cat);
}

/* ---- nodes ---------------------------------------------------------------- */

static const struct hb_cluster *load_nodes(struct hb_catalog *cat, const char *path, const struct hb_alibaba_gpus *map,
					   struct hb_alibaba_nodes *info)
{
	struct hb_error err = { 0 };
	cJSON *doc = NULL;
	char *text;

	if (hb_alibaba_nodes_to_cluster(cat, path, "ali", map, &doc, info, &err) < 0)
		fail_msg("%s", err.msg);
	text = cJSON_Print(doc);
	assert_non_null(text);
	if (hb_catalog_load_json(cat, text, strlen(text), "ali", &err) < 0)
		fail_msg("round trip: %s", err.msg);
	free(text);
	cJSON_Delete(doc);
	return hb_catalog_cluster(cat, "ali");
}

static void test_nodes_good(void **state)
{
	struct hb_catalog cat = { 0 };
	struct hb_alibaba_nodes info;
	struct hb_alibaba_gpus map;
	struct hb_error err = { 0 };
	const struct hb_cluster *c;

	(void)state;
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	c = load_nodes(&cat, fx("alibaba_nodes_good.csv"), NULL, &info);
	assert_non_null(c);
	assert_int_equal(info.nodes, 7);
	assert_int_equal(info.skipped, 1);
	assert_int_equal(info.gpus, 30);
	assert_int_equal(info.gpus_by_code[0], 2);  /* T4 */
	assert_int_equal(info.gpus_by_code[5], 8);  /* G2, lower-case in the file */
	assert_int_equal(c->nnodes, 7);
	assert_int_equal(c->ngpus, 30);
	assert_string_equal(c->nodes[0].name, "openb-node-0000");
	assert_string_equal(cat.gpus[c->nodes[0].gpu].name, "p100");
	assert_int_equal(c->nodes[0].ngpus, 2);
	assert_string_equal(c->nodes[1].name, "openb-node-0228");
	assert_string_equal(cat.gpus[c->nodes[1].gpu].name, "a100-80gb");
	assert_string_equal(cat.gpus[c->nodes[2].gpu].name, "v100-32gb");
	assert_string_equal(cat.gpus[c->nodes[5].gpu].name, "a10");
	assert_string_equal(cat.gpus[c->nodes[6].gpu].name, "v100");
	assert_string_equal(c->nodes[0].intra_link, "pcie3-x16");
	assert_string_equal(c->nodes[0].inter_link, "eth-25g");
	assert_non_null(strstr(c->source, "G2 -> a100-40gb"));
	hb_catalog_free(&cat);

	/* an override changes the GPU type, not the shape */
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	hb_alibaba_gpus_default(&map);
	assert_int_equal(hb_alibaba_gpus_parse(&map, &cat, "G3=v100-32gb", &err), 0);
	c = load_nodes(&cat, fx("alibaba_nodes_good.csv"), &map, &info);
	assert_string_equal(cat.gpus[c->nodes[1].gpu].name, "v100-32gb");
	assert_int_equal(c->ngpus, 30);
	hb_catalog_free(&cat);
}

static void expect_nodes_error(int k, const char *text, const char *a, const char *b)
{
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	cJSON *doc = NULL;
	char file[64];
	const char *path;

	snprintf(file, sizeof(file), "nodes_bad_%d.csv", k);
	path = tmpfile_with(file, text);
	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	assert_int_equal(hb_alibaba_nodes_to_cluster(&cat, path, "x", NULL, &doc, NULL, &err), -1);
	assert_null(doc);
	assert_int_equal(err.code, HB_EINPUT);
	if (!strstr(err.msg, path) || !strstr(err.msg, a) || (b && !strstr(err.msg, b)))
		fail_msg("nodes case %d: want '%s' and '%s', got: %s", k, a, b ? b : "", err.msg);
	hb_catalog_free(&cat);
}

#define NODES_HEADER "sn,cpu_milli,memory_mib,gpu,model\n"
#define NODE_OK "openb-node-0000,64000,262144,2,P100\n"

static void test_nodes_malformed(void **state)
{
	(void)state;
	expect_nodes_error(0, NODES_HEADER NODE_OK "openb-node-0001,64000,262144,8,H800\n", ":3: field 'model': value 'H800'",
			   "known: T4, P100, V100M16, V100M32, A10, G2, G3");
	expect_nodes_error(1, NODES_HEADER NODE_OK "openb-node-0001,64000,262144,8,\n", ":3: field 'model': empty",
			   "known:");
	expect_nodes_error(2, NODES_HEADER NODE_OK "openb-node-0001,64000,262144,eight,T4\n",
			   ":3: field 'gpu': value 'eight'", "not an integer");
	expect_nodes_error(3, NODES_HEADER NODE_OK "openb-node-0001,64000,262144,65,T4\n", ":3: field 'gpu': value '65'",
			   "out of range");
	expect_nodes_error(4, NODES_HEADER NODE_OK "openb-node-0001,-1,262144,2,T4\n", ":3: field 'cpu_milli'", "'-1'");
	expect_nodes_error(5, NODES_HEADER NODE_OK "openb-node-0001,1,lots,2,T4\n", ":3: field 'memory_mib'", "'lots'");
	expect_nodes_error(6, NODES_HEADER NODE_OK "openb node 1,1,1,2,T4\n", ":3: field 'sn'", "not a valid node name");
	expect_nodes_error(7, NODES_HEADER NODE_OK ",1,1,2,T4\n", ":3: field 'sn': empty", NULL);
	expect_nodes_error(8, NODES_HEADER NODE_OK NODE_OK, ":3: field 'sn'", "already listed on line 2");
	expect_nodes_error(9, NODES_HEADER NODE_OK "openb-node-0001,1,1,2\n", ":3:", NULL);
	expect_nodes_error(10, "sn,cpu_milli,memory_mib,gpu\n" NODE_OK, ":1:", "missing column 'model'");
	expect_nodes_error(11, NODES_HEADER "openb-node-0001,1,1,0,\n", "no node with GPUs", NULL);
}

/* ---- the shipped data ------------------------------------------------------ */

static void test_shipped_data(void **state)
{
	char pods[2048], nodes[2048], spec[2048];
	struct hb_jobspec *jobs = NULL;
	struct hb_trace_stats st;
	struct hb_catalog cat = { 0 };
	struct hb_alibaba_nodes info;
	struct hb_error err = { 0 };
	const struct hb_cluster *c;
	long n = 0, typed = 0;

	(void)state;
	snprintf(pods, sizeof(pods), "%s/data/alibaba/openb_pod_list_default.csv", source_root);
	snprintf(spec, sizeof(spec), "%s/data/alibaba/openb_pod_list_gpuspec33.csv", source_root);
	snprintf(nodes, sizeof(nodes), "%s/data/alibaba/openb_node_list_gpu_node.csv", source_root);
	if (hb_trace_read_all(pods, HB_TRACE_AUTO, NULL, &jobs, &n, &st, &err) < 0)
		fail_msg("%s", err.msg);
	/* the README's 8,152 pods; 1,088 CPU-only, 3,078 shares, 356 GPU pods never scheduled */
	assert_int_equal(st.records, 8152);
	assert_int_equal(n, 3630);
	assert_int_equal(st.skipped[HB_SKIP_NO_GPUS], 1088);
	assert_int_equal(st.skipped[HB_SKIP_GPU_SHARE], 3078);
	assert_int_equal(st.skipped[HB_SKIP_NEVER_SCHEDULED], 356);
	free(jobs);
	if (hb_trace_read_all(spec, HB_TRACE_AUTO, NULL, &jobs, &n, &st, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 3630);
	for (long i = 0; i < n; i++)
		typed += jobs[i].gpu_type[0] != '\0';
	assert_true(typed > 0 && typed < n);
	free(jobs);

	assert_int_equal(hb_catalog_load_builtin(&cat, &err), 0);
	c = load_nodes(&cat, nodes, NULL, &info);
	assert_int_equal(c->nnodes, 1213);
	assert_int_equal(c->ngpus, 6212);
	assert_int_equal(info.skipped, 0);
	assert_int_equal(info.gpus_by_code[5], 4392); /* G2 */
	assert_int_equal(info.gpus_by_code[4], 2);    /* A10 */
	assert_true(c->ngpus <= HB_SIM_MAX_GPUS);
	hb_catalog_free(&cat);
}

static int setup(void **state)
{
	const char *f = getenv("HB_FIXTURES"), *s = getenv("HB_SOURCE_ROOT");

	(void)state;
	snprintf(fixtures, sizeof(fixtures), "%s", f ? f : "tests/fixtures");
	snprintf(source_root, sizeof(source_root), "%s", s ? s : ".");
	snprintf(tmpdir, sizeof(tmpdir), "%s/hbalibabaXXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	/* only files this test wrote, in the directory it made */
	snprintf(cmd, sizeof(cmd), "rm -f '%s'/*.csv && rmdir '%s'", tmpdir, tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pods_good),      cmocka_unit_test(test_pods_filters),
		cmocka_unit_test(test_pods_malformed), cmocka_unit_test(test_pods_bad_shape),
		cmocka_unit_test(test_detect),         cmocka_unit_test(test_gpu_codes),
		cmocka_unit_test(test_nodes_good),     cmocka_unit_test(test_nodes_malformed),
		cmocka_unit_test(test_shipped_data),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
