/* Tests for models/catalog*: the built-in data (counts, the papers' numbers),
 * lookups, overrides, the noise-scale trajectory, user files (round trip,
 * resolving twice, rollback) and every broken fixture in
 * tests/fixtures/catalog/, through the library and through the CLI. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "catalog.h"
#include "fileio.h"

#define MIB 1048576.0

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static const char *write_tmp(const char *name, const char *text)
{
	const char *path = tmp_path(name);
	struct hb_error err = { 0 };

	assert_int_equal(hb_write_file_atomic(path, text, strlen(text), &err), 0);
	return path;
}

static void load(struct hb_catalog *cat)
{
	struct hb_error err = { 0 };

	if (hb_catalog_load_builtin(cat, &err) != 0)
		fail_msg("builtin catalog: %s", err.msg);
}

/* ------------------------------------------------------------ built-in */

static void test_builtin_counts(void **state)
{
	struct hb_catalog cat;

	(void)state;
	load(&cat);
	assert_true(cat.ngpus >= 14 + 3);
	assert_true(cat.nmodels >= 14);
	assert_true(cat.nclusters >= 8);
	for (int i = 0; i < cat.nclusters; i++) {
		int gpus = 0;

		for (int n = 0; n < cat.clusters[i].nnodes; n++) {
			assert_in_range(cat.clusters[i].nodes[n].gpu, 0, cat.ngpus - 1);
			gpus += cat.clusters[i].nodes[n].ngpus;
		}
		assert_int_equal(gpus, cat.clusters[i].ngpus);
	}
	hb_catalog_free(&cat);
	assert_int_equal(cat.ngpus, 0);
	hb_catalog_free(&cat); /* twice is harmless */
}

static void test_gpu_spot_values(void **state)
{
	struct hb_catalog cat;
	const struct hb_gpu *g;

	(void)state;
	load(&cat);
	g = hb_catalog_gpu(&cat, "v100");
	assert_non_null(g);
	assert_float_equal(g->fp32_tflops, 14.13, 1e-12);
	assert_float_equal(g->price_per_hour, 3.06, 1e-12);
	assert_int_equal(g->price_overridden, 0);
	/* JABAS artifact total_memory for the V100-PCIE-16GB. */
	assert_float_equal(g->mem_bytes, 16945512448.0, 0.5);
	g = hb_catalog_gpu(&cat, "rtx-a6000");
	assert_float_equal(g->price_per_hour, 8.381, 0.001);
	assert_float_equal(hb_price_eq8(38.7), 3.06 * 38.7 / 14.13, 1e-12);
	/* Every JABAS Table 1 card, price per 4-GPU node from notes/jabas.md 4.5. */
	static const struct {
		const char *name;
		double tflops, node_price;
	} t1[] = { { "p100", 9.52, 8.25 }, { "titan-rtx", 16.31, 14.13 }, { "rtx-3090", 35.58, 30.82 },
		   { "rtx-2060", 6.45, 5.59 }, { "quadro-p4000", 5.30, 4.59 }, { "titan-v", 14.90, 12.91 },
		   { "titan-xp", 12.1, 10.48 } };
	for (size_t i = 0; i < sizeof(t1) / sizeof(t1[0]); i++) {
		g = hb_catalog_gpu(&cat, t1[i].name);
		assert_non_null(g);
		assert_float_equal(g->fp32_tflops, t1[i].tflops, 1e-12);
		assert_float_equal(4 * g->price_per_hour, t1[i].node_price, 0.006);
	}
	hb_catalog_free(&cat);
}

/* JABAS cluster C's capped A6000s run at the speeds measured on the A40
 * (same GA102 die and 300 W board power) by Zeus (NSDI '23 artifact,
 * summary_power_a40.csv, BERT-base: catalog_gpu.c), not at the cap^(1/3)
 * model's, which stays the default of a variant without perf_scale. */
static void test_power_capped_variants(void **state)
{
	static const double caps[] = { 0.75, 0.50, 0.25 };
	static const double measured[] = { 0.947, 0.574, 0.250 };
	static const char *const names[] = { "rtx-a6000-pc75", "rtx-a6000-pc50", "rtx-a6000-pc25" };
	struct hb_catalog cat;
	double prev = 38.7;

	(void)state;
	load(&cat);
	assert_float_equal(hb_power_cap_perf(1.0), 1.0, 0);
	assert_float_equal(hb_power_cap_perf(0.5), 0.7937005259840998, 1e-12);
	assert_float_equal(hb_power_cap_perf(0.0), 0.0, 0);
	for (int i = 0; i < 3; i++) {
		const struct hb_gpu *g = hb_catalog_gpu(&cat, names[i]);
		const struct hb_gpu *b = hb_catalog_gpu(&cat, "rtx-a6000");

		assert_non_null(g);
		assert_string_equal(g->base, "rtx-a6000");
		assert_float_equal(g->power_cap, caps[i], 0);
		assert_float_equal(g->fp32_tflops, 38.7 * measured[i], 1e-9);
		assert_true(fabs(measured[i] - cbrt(caps[i])) > 0.03);
		assert_true(g->fp32_tflops < prev); /* slower at each deeper cap */
		prev = g->fp32_tflops;
		assert_float_equal(g->nominal_tflops, 38.7, 0);
		/* Priced at nominal TFLOPS (notes/jabas.md 10 item 14). */
		assert_float_equal(g->price_per_hour, b->price_per_hour, 0);
		assert_float_equal(g->mem_bytes, b->mem_bytes, 0);
		assert_float_equal(g->tensor_tflops, b->tensor_tflops * measured[i], 1e-9);
	}
	hb_catalog_free(&cat);
}

static void test_aliases_case_insensitive(void **state)
{
	struct hb_catalog cat;

	(void)state;
	load(&cat);
	assert_string_equal(hb_catalog_gpu(&cat, "Tesla V100-PCIE-16GB")->name, "v100");
	assert_string_equal(hb_catalog_gpu(&cat, "tesla t4")->name, "t4");
	assert_string_equal(hb_catalog_gpu(&cat, "NVIDIA A100-SXM4-40GB")->name, "a100-40gb");
	assert_string_equal(hb_catalog_gpu(&cat, "P100")->name, "p100");
	assert_int_equal(hb_catalog_gpu_index(&cat, "no-such-gpu"), -1);
	assert_null(hb_catalog_model(&cat, "no-such-model"));
	assert_string_equal(hb_catalog_model(&cat, "ResNet50")->name, "resnet50");
	assert_string_equal(hb_catalog_cluster(&cat, "JABAS-A")->name, "jabas-a");
	/* The Pollux profile directory names map directly. */
	static const char *const pollux[] = { "imagenet", "yolov3", "deepspeech2", "bert", "cifar10", "ncf" };
	for (int i = 0; i < 6; i++)
		assert_string_equal(hb_catalog_model(&cat, pollux[i])->family, "pollux");
	hb_catalog_free(&cat);
}

static void test_cluster_prices(void **state)
{
	static const struct {
		const char *name;
		int nodes, gpus;
		double price;
	} want[] = { { "jabas-a", 4, 16, 65.4 }, { "jabas-b", 8, 32, 74.4 }, { "jabas-c", 4, 16, 134.1 },
		     { "jabas-d", 4, 16, 41.9 },  { "pollux-t4", 16, 64, -1 }, { "ibm-p100", 20, 40, -1 },
		     { "easyscale", 16, 64, -1 } };
	struct hb_catalog cat;

	(void)state;
	load(&cat);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct hb_cluster *c = hb_catalog_cluster(&cat, want[i].name);

		assert_non_null(c);
		assert_int_equal(c->nnodes, want[i].nodes);
		assert_int_equal(c->ngpus, want[i].gpus);
		if (want[i].price > 0)
			assert_float_equal(hb_cluster_price_per_hour(&cat, c), want[i].price, 0.1);
	}
	/* JABAS links (notes/jabas.md 6): PCIe 15.75e9, IB 12.5e9 on A and C, 7e9 on B and D. */
	const struct hb_cluster *a = hb_catalog_cluster(&cat, "jabas-a"), *b = hb_catalog_cluster(&cat, "jabas-b");
	assert_string_equal(a->nodes[0].name, "node0");
	assert_float_equal(a->nodes[0].intra_bw, 15.75e9, 0);
	assert_float_equal(a->nodes[3].inter_bw, 12.5e9, 0);
	assert_string_equal(a->nodes[3].inter_link, "ib-100g");
	assert_float_equal(b->nodes[7].inter_bw, 7e9, 0);
	assert_string_equal(cat.gpus[b->nodes[7].gpu].name, "titan-rtx");
	/* Groups expand with numbered names and racks. */
	const struct hb_cluster *p = hb_catalog_cluster(&cat, "philly");
	assert_string_equal(p->nodes[17].name, "p40x8-17");
	assert_int_equal(p->nodes[17].rack, 1);
	assert_int_equal(p->nodes[128].rack, 8);
	assert_int_equal(p->ngpus, 2048);
	hb_catalog_free(&cat);
}

static void test_overrides(void **state)
{
	struct hb_catalog cat;
	const struct hb_model *m;
	double gamma;
	long lo, hi;

	(void)state;
	load(&cat);
	m = hb_catalog_model(&cat, "faster-rcnn");
	hb_model_bounds(m, "jabas-a", &gamma, &lo, &hi);
	assert_int_equal(lo, 16);
	assert_int_equal(hi, 192);
	hb_model_bounds(m, "jabas-b", &gamma, &lo, &hi);
	assert_int_equal(lo, 32);
	assert_float_equal(gamma, 0.1, 0);
	hb_model_bounds(m, NULL, &gamma, &lo, &hi);
	assert_int_equal(lo, m->min_gbs);
	hb_model_bounds(m, "pollux-t4", NULL, &lo, NULL); /* no override: defaults */
	assert_int_equal(lo, m->min_gbs);
	m = hb_catalog_model(&cat, "gnmt");
	hb_model_bounds(m, "jabas-a", NULL, &lo, &hi);
	assert_int_equal(lo, 512);
	assert_int_equal(hi, 4096);
	hb_model_bounds(m, "jabas-d", NULL, &lo, NULL);
	assert_int_equal(lo, 128);
	m = hb_catalog_model(&cat, "gpt3-xl");
	hb_model_bounds(m, "jabas-c", &gamma, &lo, &hi);
	assert_float_equal(gamma, 0.9, 0);
	assert_int_equal(hi, 32768); /* Table 4's 32678 is a typo */
	m = hb_catalog_model(&cat, "llama2-7b");
	hb_model_bounds(m, "jabas-c", &gamma, &lo, &hi);
	assert_int_equal(lo, 32);
	assert_int_equal(hi, 2048);
	hb_catalog_free(&cat);
}

static void test_resnet50_artifact_numbers(void **state)
{
	static const double artifact[] = { 7.81, 30.04, 25.04, 25.25, 9.2 };
	struct hb_catalog cat;
	const struct hb_model *m;
	const struct hb_gpu *v100;
	double states;

	(void)state;
	load(&cat);
	m = hb_catalog_model(&cat, "resnet50");
	assert_int_equal(m->nbuckets, 5);
	for (int i = 0; i < 5; i++)
		assert_float_equal(m->buckets[i], artifact[i] * MIB, 1e-6);
	assert_float_equal(m->fwd_fraction, 32.35 / (32.35 + 66.35), 1e-4);
	assert_float_equal(m->bn_sync_s, 6.29e-3, 1e-12);
	assert_float_equal(hb_catalog_model(&cat, "faster-rcnn")->bn_sync_s, 14.048e-3, 1e-12);
	assert_float_equal(hb_catalog_model(&cat, "gnmt")->bn_sync_s, 0, 0);
	assert_float_equal(m->adapt_rate, 0.1, 0);
	assert_int_equal(m->adapt_interval, 100);
	assert_float_equal(hb_model_checkpoint_bytes(m), m->params * 8, 1);
	/* Memory: local batch 128 fits a 16 GB V100 with room for the CUDA context
	 * and workspaces (weights + grads + momentum + activations + 1 GiB), but
	 * 160 does not fit even without them (JABAS memory profile, 2.4). */
	v100 = hb_catalog_gpu(&cat, "v100");
	states = m->params * (m->param_bytes * 2 + m->opt_state_bytes_per_param);
	assert_true(states + 128 * m->act_bytes_per_sample + 1024 * MIB < v100->mem_bytes);
	assert_true(states + 160 * m->act_bytes_per_sample > v100->mem_bytes);
	/* Derived buckets: 25 MiB cap, remainder last, sum = gradient bytes. */
	m = hb_catalog_model(&cat, "gnmt");
	assert_int_equal(m->nbuckets, (int)ceil(m->params * 4 / (25 * MIB)));
	double sum = 0;
	for (int i = 0; i < m->nbuckets; i++) {
		assert_true(m->buckets[i] <= 25 * MIB);
		sum += m->buckets[i];
	}
	assert_float_equal(sum, m->params * 4, 1);
	/* ZeRO-Offload: fp16 weights and grads on the GPU. */
	m = hb_catalog_model(&cat, "llama2-7b");
	assert_float_equal(m->param_bytes, 2, 0);
	assert_int_equal(m->opt_offload, 1);
	assert_true(m->nbuckets <= HB_MAX_BUCKETS);
	hb_catalog_free(&cat);
}

static void test_gns_log_interpolation(void **state)
{
	struct hb_catalog cat;
	const struct hb_model *m;

	(void)state;
	load(&cat);
	m = hb_catalog_model(&cat, "resnet50");
	assert_float_equal(hb_model_gns(m, 0), 928, 0);
	assert_float_equal(hb_model_gns(m, 1), 14400, 0);
	assert_float_equal(hb_model_gns(m, -0.5), 928, 0);
	assert_float_equal(hb_model_gns(m, 7), 14400, 0);
	/* Halfway between (0, 928) and (0.0112, 2760) in f: the geometric mean. */
	assert_float_equal(hb_model_gns(m, 0.0056), sqrt(928.0 * 2760.0), 1e-6);
	/* A quarter of the way: 928^(3/4) 2760^(1/4), not the arithmetic value. */
	assert_float_equal(hb_model_gns(m, 0.0028), pow(928.0, 0.75) * pow(2760.0, 0.25), 1e-6);
	assert_float_equal(hb_model_gns(m, 0.0112), 2760, 1e-9);
	/* Every built-in trajectory is positive and matches its points. */
	for (int i = 0; i < cat.nmodels; i++) {
		m = &cat.models[i];
		assert_true(m->ngns >= 2);
		for (int k = 0; k < m->ngns; k++)
			assert_float_equal(hb_model_gns(m, m->gns_frac[k]), m->gns_phi[k], 1e-9 * m->gns_phi[k]);
		for (double f = 0; f <= 1; f += 0.01)
			assert_true(hb_model_gns(m, f) > 0);
	}
	hb_catalog_free(&cat);
}

static void test_every_model_consistent(void **state)
{
	struct hb_catalog cat;

	(void)state;
	load(&cat);
	for (int i = 0; i < cat.nmodels; i++) {
		const struct hb_model *m = &cat.models[i];
		double sum = 0;

		assert_true(m->min_lbs <= m->min_gbs);
		assert_true(m->m0 >= m->min_gbs && m->m0 <= m->max_gbs);
		assert_true(m->source[0] != '\0');
		for (int b = 0; b < m->nbuckets; b++)
			sum += m->buckets[b];
		assert_float_equal(sum, m->params * m->param_bytes, 0.1 * m->params * m->param_bytes);
		for (int o = 0; o < m->noverrides; o++)
			assert_non_null(hb_catalog_cluster(&cat, m->overrides[o].cluster));
	}
	for (int i = 0; i < cat.ngpus; i++)
		assert_true(cat.gpus[i].source[0] != '\0');
	hb_catalog_free(&cat);
}

/* ------------------------------------------------------------ user files */

static cJSON *catalog_document(const struct hb_catalog *cat)
{
	cJSON *doc = cJSON_CreateObject(), *g = cJSON_AddArrayToObject(doc, "gpus"),
	      *m = cJSON_AddArrayToObject(doc, "models"), *c = cJSON_AddArrayToObject(doc, "clusters");

	for (int i = 0; i < cat->ngpus; i++)
		cJSON_AddItemToArray(g, hb_gpu_to_json(&cat->gpus[i]));
	for (int i = 0; i < cat->nmodels; i++)
		cJSON_AddItemToArray(m, hb_model_to_json(&cat->models[i]));
	for (int i = 0; i < cat->nclusters; i++)
		cJSON_AddItemToArray(c, hb_cluster_to_json(cat, &cat->clusters[i]));
	return doc;
}

/* Write the whole built-in catalog as JSON, load it into an empty catalog and
 * compare every field. */
static void test_round_trip_whole_catalog(void **state)
{
	struct hb_catalog a, b;
	struct hb_error err = { 0 };
	cJSON *doc;
	char *text;

	(void)state;
	load(&a);
	doc = catalog_document(&a);
	text = cJSON_Print(doc);
	cJSON_Delete(doc);
	memset(&b, 0, sizeof(b));
	if (hb_catalog_load_json(&b, text, strlen(text), "round-trip.json", &err))
		fail_msg("%s", err.msg);
	free(text);
	assert_int_equal(a.ngpus, b.ngpus);
	assert_int_equal(a.nmodels, b.nmodels);
	assert_int_equal(a.nclusters, b.nclusters);
	for (int i = 0; i < a.ngpus; i++) {
		const struct hb_gpu *x = &a.gpus[i], *y = &b.gpus[i];

		assert_string_equal(x->name, y->name);
		assert_string_equal(x->display, y->display);
		assert_string_equal(x->base, y->base);
		assert_string_equal(x->source, y->source);
		assert_int_equal(x->naliases, y->naliases);
		for (int k = 0; k < x->naliases; k++)
			assert_string_equal(x->aliases[k], y->aliases[k]);
		assert_true(x->fp32_tflops == y->fp32_tflops && x->nominal_tflops == y->nominal_tflops &&
			    x->tensor_tflops == y->tensor_tflops && x->mem_bytes == y->mem_bytes &&
			    x->mem_bw == y->mem_bw && x->price_per_hour == y->price_per_hour &&
			    x->power_cap == y->power_cap && x->price_overridden == y->price_overridden);
	}
	for (int i = 0; i < a.nmodels; i++) {
		const struct hb_model *x = &a.models[i], *y = &b.models[i];
		cJSON *jx = hb_model_to_json(x), *jy = hb_model_to_json(y);

		assert_string_equal(x->name, y->name);
		assert_string_equal(x->display, y->display);
		assert_string_equal(x->task, y->task);
		assert_string_equal(x->dataset, y->dataset);
		assert_string_equal(x->family, y->family);
		assert_string_equal(x->optimizer, y->optimizer);
		assert_string_equal(x->lr_rule, y->lr_rule);
		assert_string_equal(x->source, y->source);
		assert_true(x->params == y->params && x->flops_per_sample == y->flops_per_sample &&
			    x->act_bytes_per_sample == y->act_bytes_per_sample && x->param_bytes == y->param_bytes &&
			    x->opt_offload == y->opt_offload &&
			    x->opt_state_bytes_per_param == y->opt_state_bytes_per_param &&
			    x->dataset_size == y->dataset_size && x->gamma == y->gamma &&
			    x->adapt_rate == y->adapt_rate && x->target_epochs == y->target_epochs &&
			    x->sim_noise_sigma == y->sim_noise_sigma && x->fwd_fraction == y->fwd_fraction &&
			    x->data_s_per_sample == y->data_s_per_sample && x->bn_sync_s == y->bn_sync_s &&
			    x->init_s == y->init_s);
		assert_true(x->m0 == y->m0 && x->min_gbs == y->min_gbs && x->max_gbs == y->max_gbs &&
			    x->min_lbs == y->min_lbs && x->adapt_interval == y->adapt_interval);
		assert_int_equal(x->nbuckets, y->nbuckets);
		assert_memory_equal(x->buckets, y->buckets, sizeof(double) * (size_t)x->nbuckets);
		assert_int_equal(x->ngns, y->ngns);
		assert_memory_equal(x->gns_frac, y->gns_frac, sizeof(double) * (size_t)x->ngns);
		assert_memory_equal(x->gns_phi, y->gns_phi, sizeof(double) * (size_t)x->ngns);
		assert_string_equal(x->arch.cls, y->arch.cls);
		assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(jx, "arch"),
					  cJSON_GetObjectItemCaseSensitive(jy, "arch"), 1));
		cJSON_Delete(jx);
		cJSON_Delete(jy);
		assert_int_equal(x->noverrides, y->noverrides);
		for (int o = 0; o < x->noverrides; o++) {
			assert_string_equal(x->overrides[o].cluster, y->overrides[o].cluster);
			assert_true(x->overrides[o].gamma == y->overrides[o].gamma &&
				    x->overrides[o].min_gbs == y->overrides[o].min_gbs &&
				    x->overrides[o].max_gbs == y->overrides[o].max_gbs);
		}
	}
	for (int i = 0; i < a.nclusters; i++) {
		const struct hb_cluster *x = &a.clusters[i], *y = &b.clusters[i];

		assert_string_equal(x->name, y->name);
		assert_string_equal(x->display, y->display);
		assert_string_equal(x->source, y->source);
		assert_int_equal(x->nnodes, y->nnodes);
		assert_int_equal(x->ngpus, y->ngpus);
		assert_true(x->storage_bw == y->storage_bw && x->restart_latency_s == y->restart_latency_s);
		assert_memory_equal(x->nodes, y->nodes, sizeof(*x->nodes) * (size_t)x->nnodes);
	}
	hb_catalog_free(&a);
	hb_catalog_free(&b);
}

static void test_user_cluster_file(void **state)
{
	struct hb_catalog cat;
	struct hb_error err = { 0 };
	const struct hb_cluster *c, *again;
	const char *path;
	int n;

	(void)state;
	load(&cat);
	n = cat.nclusters;
	path = write_tmp("lab.json",
			 "{\"name\": \"lab\", \"storage_bw\": 1e9, \"restart_latency_s\": 10,\n"
			 " \"intra_link\": \"pcie3-x16\", \"intra_bw\": 15.75e9, \"inter_link\": \"eth-25g\","
			 " \"inter_bw\": 3.125e9,\n"
			 " \"groups\": [{\"gpu\": \"Tesla V100-PCIE-16GB\", \"nodes\": 2, \"gpus_per_node\": 4},\n"
			 "            {\"name\": \"old\", \"gpu\": \"p100\", \"nodes\": 3, \"gpus_per_node\": 2,"
			 " \"inter_link\": \"eth-10g\", \"inter_bw\": 1.25e9}],\n"
			 " \"source\": \"test\"}\n");
	if (hb_catalog_resolve_cluster(&cat, path, &c, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(c->name, "lab");
	assert_int_equal(c->nnodes, 5);
	assert_int_equal(c->ngpus, 14);
	assert_string_equal(c->nodes[1].name, "node1");
	assert_string_equal(c->nodes[4].name, "old-2");
	assert_float_equal(c->nodes[4].inter_bw, 1.25e9, 0);
	assert_float_equal(c->nodes[0].inter_bw, 3.125e9, 0);
	assert_float_equal(hb_cluster_price_per_hour(&cat, c), 8 * 3.06 + 6 * 3.06 * 9.52 / 14.13, 1e-9);
	/* Resolving the same file again returns the same entry. */
	if (hb_catalog_resolve_cluster(&cat, path, &again, &err))
		fail_msg("%s", err.msg);
	assert_ptr_equal(again, c);
	assert_int_equal(cat.nclusters, n + 1);
	/* ...and by name now. */
	assert_ptr_equal(hb_catalog_cluster(&cat, "lab"), c);
	/* A different file with the same name is a duplicate. */
	path = write_tmp("lab2.json",
			 "{\"clusters\": [{\"name\": \"lab\", \"storage_bw\": 2e9, \"restart_latency_s\": 10,"
			 " \"groups\": [{\"gpu\": \"t4\", \"nodes\": 1, \"gpus_per_node\": 1, \"intra_link\": \"x\","
			 " \"intra_bw\": 1e9, \"inter_link\": \"y\", \"inter_bw\": 1e9}], \"source\": \"other\"}]}");
	assert_int_equal(hb_catalog_resolve_cluster(&cat, path, &again, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "duplicate cluster name 'lab'"));
	assert_int_equal(cat.nclusters, n + 1);
	hb_catalog_free(&cat);
}

static void test_user_gpu_and_model_files(void **state)
{
	struct hb_catalog cat;
	struct hb_error err = { 0 };
	const struct hb_gpu *g;
	const struct hb_model *m;
	const struct hb_cluster *c;
	const char *path;

	(void)state;
	load(&cat);
	/* A document with a priced GPU, a measured power-cap variant and a cluster using both. */
	path = write_tmp("mine.json",
			 "{\"gpus\": [{\"name\": \"lab-card\", \"aliases\": [\"Lab Card 9\"], \"fp32_tflops\": 20,"
			 " \"mem_bytes\": 25769803776, \"mem_bw\": 1e12, \"price_per_hour\": 1.5, \"source\": \"t\"},"
			 " {\"name\": \"lab-card-pc60\", \"base\": \"lab-card\", \"power_cap\": 0.6, \"perf_scale\": 0.8,"
			 " \"source\": \"measured\"}],\n"
			 " \"clusters\": [{\"name\": \"lab-cl\", \"storage_bw\": 1e9, \"restart_latency_s\": 5,"
			 " \"intra_link\": \"pcie4-x16\", \"intra_bw\": 31.5e9, \"inter_link\": \"eth-25g\", \"inter_bw\": 3.125e9,"
			 " \"groups\": [{\"gpu\": \"lab card 9\", \"nodes\": 1, \"gpus_per_node\": 2},"
			 " {\"gpu\": \"lab-card-pc60\", \"nodes\": 1, \"gpus_per_node\": 2}], \"source\": \"t\"}]}");
	if (hb_catalog_resolve_cluster(&cat, path, &c, &err))
		fail_msg("%s", err.msg);
	g = hb_catalog_gpu(&cat, "lab-card");
	assert_int_equal(g->price_overridden, 1);
	assert_float_equal(g->price_per_hour, 1.5, 0);
	g = hb_catalog_gpu(&cat, "lab-card-pc60");
	assert_float_equal(g->fp32_tflops, 16, 1e-12);
	assert_float_equal(g->price_per_hour, 3.06 * 20 / 14.13, 1e-12); /* the base's Eq. 8, not its override */
	assert_float_equal(hb_cluster_price_per_hour(&cat, c), 2 * 1.5 + 2 * 3.06 * 20 / 14.13, 1e-9);
	/* Loading the same document again reuses every identical entry. */
	if (hb_catalog_resolve_cluster(&cat, path, &c, &err))
		fail_msg("%s", err.msg);
	/* A one-object model file with defaults for the optional fields. */
	path = write_tmp("model.json",
			 "{\"name\": \"tiny\", \"params\": 1e6, \"flops_per_sample\": 1e8, \"act_bytes_per_sample\": 1e6,"
			 " \"optimizer\": \"adam\", \"dataset_size\": 1000, \"m0\": 32, \"min_gbs\": 32, \"max_gbs\": 256,"
			 " \"min_lbs\": 8, \"lr_rule\": \"sqrt\", \"gamma\": 0.2, \"target_epochs\": 3,"
			 " \"gns\": [[0, 10], [0.5, 100], [1, 1000]], \"sim_noise_sigma\": 0, \"fwd_fraction\": 0.3,"
			 " \"data_s_per_sample\": 0, \"init_s\": 1, \"source\": \"t\"}");
	if (hb_catalog_resolve_model(&cat, path, &m, &err))
		fail_msg("%s", err.msg);
	assert_float_equal(m->opt_state_bytes_per_param, 8, 0);
	assert_float_equal(m->param_bytes, 4, 0);
	assert_float_equal(m->adapt_rate, 0.1, 0);
	assert_int_equal(m->adapt_interval, 100);
	assert_int_equal(m->nbuckets, 1);
	assert_float_equal(m->buckets[0], 4e6, 1e-6);
	assert_string_equal(m->family, "user");
	assert_float_equal(hb_model_gns(m, 0.25), sqrt(10.0 * 100.0), 1e-9);
	/* Unknown names list the known ones. */
	assert_int_equal(hb_catalog_resolve_model(&cat, "resnet-51", &m, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "unknown model 'resnet-51'"));
	assert_non_null(strstr(err.msg, "resnet50"));
	assert_int_equal(hb_catalog_resolve_gpu(&cat, "Tesla T4", &g, &err), 0);
	assert_string_equal(g->name, "t4");
	hb_catalog_free(&cat);
}

static void test_failed_document_leaves_catalog_unchanged(void **state)
{
	static const char doc[] =
		"{\"gpus\": [{\"name\": \"ok-card\", \"fp32_tflops\": 5, \"mem_bytes\": 1e9, \"mem_bw\": 1e11,"
		" \"source\": \"t\"}],\n"
		" \"clusters\": [{\"name\": \"ok-cl\", \"storage_bw\": 1e9, \"restart_latency_s\": 1,"
		" \"intra_link\": \"a\", \"intra_bw\": 1e9, \"inter_link\": \"b\", \"inter_bw\": 1e9,"
		" \"groups\": [{\"gpu\": \"ok-card\", \"nodes\": 1, \"gpus_per_node\": 1}], \"source\": \"t\"},"
		" {\"name\": \"bad-cl\", \"storage_bw\": 1e9, \"restart_latency_s\": 1, \"intra_link\": \"a\","
		" \"intra_bw\": 1e9, \"inter_link\": \"b\", \"inter_bw\": 1e9,"
		" \"groups\": [{\"gpu\": \"ok-card\", \"nodes\": 1, \"gpus_per_node\": 1, \"racks\": 2}],"
		" \"source\": \"t\"}]}";
	struct hb_catalog cat;
	struct hb_error err = { 0 };
	int ng, nc;

	(void)state;
	load(&cat);
	ng = cat.ngpus;
	nc = cat.nclusters;
	assert_int_equal(hb_catalog_load_json(&cat, doc, strlen(doc), "doc.json", &err), -1);
	assert_string_equal(err.msg, "doc.json: clusters[1] 'bad-cl': groups[0]: unknown field 'racks'");
	assert_int_equal(cat.ngpus, ng);
	assert_int_equal(cat.nclusters, nc);
	assert_null(hb_catalog_gpu(&cat, "ok-card"));
	assert_null(hb_catalog_cluster(&cat, "ok-cl"));
	hb_catalog_free(&cat);
}

/* ------------------------------------------------------------ broken fixtures */

struct fixture {
	const char *file;
	char kind;          /* 'g', 'm', 'c': resolve as that kind; 'f': hb_catalog_load_file */
	const char *frag;   /* expected part of the message */
	const char *cli;    /* list word for `hetbatch catalog LIST FILE` */
	const char *cli_frag; /* expected part of the CLI's message, NULL: frag */
};

static const struct fixture fixtures[] = {
	{ "bad_syntax.json", 'c', "bad_syntax.json:5:3: invalid JSON", "clusters", NULL },
	{ "gpu_unknown_field.json", 'g', "gpu 'my-gpu': unknown field 'fp32_tflop'", "gpus", NULL },
	{ "gpu_negative_memory.json", 'g', "field 'mem_bytes': value -1.6e+10 out of range", "gpus", NULL },
	{ "gpu_variant_unknown_base.json", 'g', "gpus[0] 'a9000-pc50': field 'base': unknown gpu 'rtx-a9000'", "gpus",
	  NULL },
	{ "gpu_variant_derived_field.json", 'g', "field 'fp32_tflops': not allowed in a power-capped variant", "gpus",
	  NULL },
	{ "gpu_duplicate_names.json", 'f', "gpus[1] 'lab-gpu': duplicate gpu name 'lab-gpu'", "gpus",
	  "expected exactly one gpu, found 2" },
	{ "gpu_alias_clash.json", 'g', "field 'aliases': 'Tesla V100-PCIE-16GB' already names gpu 'v100'", "gpus",
	  NULL },
	{ "gpu_power_cap_range.json", 'g', "field 'power_cap': value 1.5 out of range [0.01, 1]", "gpus", NULL },
	{ "model_missing_field.json", 'm', "model 'tiny-cnn': field 'flops_per_sample': missing", "models", NULL },
	{ "model_gns_not_increasing.json", 'm', "field 'gns': point 2: f = 0.4 does not increase", "models", NULL },
	{ "model_gns_not_ending_at_1.json", 'm', "models[0] 'tiny-cnn': field 'gns': f must start at 0 and end at 1",
	  "models", NULL },
	{ "model_gbs_bounds.json", 'm', "field 'min_gbs': 4096 is larger than max_gbs 512", "models", NULL },
	{ "model_wrong_type.json", 'm', "field 'params': expected a number", "models", NULL },
	{ "model_bad_optimizer.json", 'm', "field 'optimizer': unknown value 'rmsprop'", "models", NULL },
	{ "model_bucket_sum.json", 'm', "field 'buckets_mib': buckets add up to 50.0 MiB", "models", NULL },
	{ "model_bad_arch.json", 'm', "model 'tiny-vit': arch: field 'heads': missing", "models", NULL },
	{ "model_override_bounds.json", 'm', "overrides[0]: min_gbs 2048 > max_gbs 1024 on cluster 'jabas-a'",
	  "models", NULL },
	{ "cluster_unknown_gpu.json", 'c', "cluster 'lab': groups[1]: field 'gpu': unknown gpu type 'v1000'",
	  "clusters", NULL },
	{ "cluster_empty_groups.json", 'c', "clusters[0] 'lab': field 'groups': empty", "clusters", NULL },
	{ "cluster_missing_link.json", 'c', "groups[0]: field 'inter_link': missing", "clusters", NULL },
	{ "cluster_zero_nodes.json", 'c', "groups[0]: field 'nodes': value 0 out of range", "clusters", NULL },
	{ "cluster_duplicate_node.json", 'c', "node name 'box' is used twice", "clusters", NULL },
	{ "cluster_bad_name.json", 'c', "field 'name': 'My Lab' is not a valid name", "clusters", NULL },
	{ "cluster_two_in_doc.json", 'c', "field 'clusters': expected exactly one cluster, found 2", "clusters", NULL },
	{ "doc_empty.json", 'f', "no entries", "clusters", NULL },
	{ "doc_unknown_key.json", 'f', "unknown field 'cluster'", "clusters", NULL },
};

#define NFIXTURES ((int)(sizeof(fixtures) / sizeof(fixtures[0])))

static const char *fixture_path(const char *file)
{
	static char path[1024];
	const char *dir = getenv("HB_FIXTURES");

	snprintf(path, sizeof(path), "%s/catalog/%s", dir ? dir : "tests/fixtures", file);
	return path;
}

static void test_broken_fixtures(void **state)
{
	(void)state;
	assert_true(NFIXTURES >= 10);
	for (int i = 0; i < NFIXTURES; i++) {
		const struct fixture *fx = &fixtures[i];
		const char *path = fixture_path(fx->file);
		struct hb_catalog cat;
		struct hb_error err = { 0 };
		const void *out = NULL;
		int rc, ng, nm, nc;

		load(&cat);
		ng = cat.ngpus;
		nm = cat.nmodels;
		nc = cat.nclusters;
		if (fx->kind == 'g')
			rc = hb_catalog_resolve_gpu(&cat, path, (const struct hb_gpu **)&out, &err);
		else if (fx->kind == 'm')
			rc = hb_catalog_resolve_model(&cat, path, (const struct hb_model **)&out, &err);
		else if (fx->kind == 'c')
			rc = hb_catalog_resolve_cluster(&cat, path, (const struct hb_cluster **)&out, &err);
		else
			rc = hb_catalog_load_file(&cat, path, &err);
		if (rc != -1 || err.code != HB_EINPUT || !strstr(err.msg, fx->frag) || !strstr(err.msg, fx->file) ||
		    strchr(err.msg, '\n'))
			fail_msg("%s: rc %d code %d, message '%s' does not contain '%s'", fx->file, rc, err.code, err.msg,
				 fx->frag);
		assert_null(out);
		assert_int_equal(cat.ngpus, ng);
		assert_int_equal(cat.nmodels, nm);
		assert_int_equal(cat.nclusters, nc);
		hb_catalog_free(&cat);
	}
}

/* ------------------------------------------------------------ CLI */

/* Run `$HETBATCH ARGS`; stdout and stderr go to files in tmpdir; returns the exit status. */
static int run_cli(const char *args, char *out, size_t outsize, char *errbuf, size_t errsize)
{
	const char *exe = getenv("HETBATCH");
	char cmd[4096];
	int st;
	FILE *f;
	size_t n;

	if (!exe)
		return -1;
	snprintf(cmd, sizeof(cmd), "'%s' %s >'%s/out.txt' 2>'%s/err.txt'", exe, args, tmpdir, tmpdir);
	st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st));
	f = fopen(tmp_path("out.txt"), "r");
	assert_non_null(f);
	n = fread(out, 1, outsize - 1, f);
	out[n] = '\0';
	fclose(f);
	f = fopen(tmp_path("err.txt"), "r");
	assert_non_null(f);
	n = fread(errbuf, 1, errsize - 1, f);
	errbuf[n] = '\0';
	fclose(f);
	return WEXITSTATUS(st);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static char cli_out[1 << 20];

static void test_cli_broken_files(void **state)
{
	char err[4096], args[2048];

	(void)state;
	if (!getenv("HETBATCH"))
		skip();
	for (int i = 0; i < NFIXTURES; i++) {
		const struct fixture *fx = &fixtures[i];
		const char *frag = fx->cli_frag ? fx->cli_frag : fx->frag;
		int rc;

		snprintf(args, sizeof(args), "catalog %s '%s'", fx->cli, fixture_path(fx->file));
		rc = run_cli(args, cli_out, sizeof(cli_out), err, sizeof(err));
		if (rc != 2 || count_lines(err) != 1 || !strstr(err, frag) || strncmp(err, "hetbatch: error: ", 17) != 0 ||
		    cli_out[0])
			fail_msg("%s: exit %d, stderr '%s' (want one line with '%s')", fx->file, rc, err, frag);
	}
}

static void test_cli_listing_and_json(void **state)
{
	char err[4096];
	cJSON *root, *arr;

	(void)state;
	if (!getenv("HETBATCH"))
		skip();
	assert_int_equal(run_cli("catalog clusters", cli_out, sizeof(cli_out), err, sizeof(err)), 0);
	assert_non_null(strstr(cli_out, "jabas-a"));
	assert_non_null(strstr(cli_out, "65.44"));
	assert_int_equal(run_cli("catalog gpus", cli_out, sizeof(cli_out), err, sizeof(err)), 0);
	assert_non_null(strstr(cli_out, "rtx-a6000-pc25"));
	assert_int_equal(run_cli("catalog models resnet50", cli_out, sizeof(cli_out), err, sizeof(err)), 0);
	assert_non_null(strstr(cli_out, "7.81, 30.04, 25.04, 25.25, 9.20"));
	assert_non_null(strstr(cli_out, "source"));
	assert_int_equal(run_cli("catalog gpus 'Tesla V100-PCIE-16GB'", cli_out, sizeof(cli_out), err, sizeof(err)), 0);
	assert_non_null(strstr(cli_out, "$3.060"));
	/* --json: the listing parses and holds every model; one entry is a loadable object. */
	assert_int_equal(run_cli("catalog models --json", cli_out, sizeof(cli_out), err, sizeof(err)), 0);
	root = cJSON_Parse(cli_out);
	assert_non_null(root);
	arr = cJSON_GetObjectItemCaseSensitive(root, "models");
	assert_true(cJSON_GetArraySize(arr) >= 14);
	cJSON_Delete(root);
	assert_int_equal(run_cli("--seed 3 catalog clusters jabas-b --json", cli_out, sizeof(cli_out), err,
				 sizeof(err)), 0);
	root = cJSON_Parse(cli_out);
	assert_non_null(root);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(root, "name")->valuestring, "jabas-b");
	cJSON_ReplaceItemInObjectCaseSensitive(root, "name", cJSON_CreateString("my-b"));
	{
		char *text = cJSON_Print(root);
		char args[1024];

		write_tmp("my-b.json", text);
		free(text);
		snprintf(args, sizeof(args), "catalog clusters '%s'", tmp_path("my-b.json"));
		assert_int_equal(run_cli(args, cli_out, sizeof(cli_out), err, sizeof(err)), 0);
		assert_non_null(strstr(cli_out, "cluster my-b"));
		assert_non_null(strstr(cli_out, "$74.43"));
	}
	cJSON_Delete(root);
	assert_int_equal(run_cli("catalog --help", cli_out, sizeof(cli_out), err, sizeof(err)), 0);
	assert_non_null(strstr(cli_out, "Examples:"));
}

static void test_cli_bad_usage(void **state)
{
	char err[4096];

	(void)state;
	if (!getenv("HETBATCH"))
		skip();
	assert_int_equal(run_cli("catalog", cli_out, sizeof(cli_out), err, sizeof(err)), 2);
	assert_non_null(strstr(err, "gpus, models or clusters"));
	assert_int_equal(run_cli("catalog nodes", cli_out, sizeof(cli_out), err, sizeof(err)), 2);
	assert_non_null(strstr(err, "unknown list 'nodes' (expected gpus, models or clusters)"));
	assert_int_equal(run_cli("catalog clusters jabas-z", cli_out, sizeof(cli_out), err, sizeof(err)), 2);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "unknown cluster 'jabas-z'"));
	assert_non_null(strstr(err, "jabas-a, jabas-b, jabas-c, jabas-d"));
	assert_int_equal(run_cli("catalog models --jsn", cli_out, sizeof(cli_out), err, sizeof(err)), 2);
	assert_non_null(strstr(err, "unknown option '--jsn'"));
	assert_int_equal(run_cli("catalog gpus v100 p100", cli_out, sizeof(cli_out), err, sizeof(err)), 2);
}

/* --from-philly: Philly's machine list as a cluster file that sim reads back. */
static void test_cli_from_philly(void **state)
{
	char err[4096], args[2048], good[1024], bad[1024];
	const char *root = getenv("HB_SOURCE_ROOT");
	cJSON *doc, *cl, *groups;
	int gpus = 0;

	(void)state;
	if (!getenv("HETBATCH") || !root)
		skip();
	snprintf(good, sizeof(good), "%s/tests/fixtures/traces/machines_good.csv", root);
	snprintf(bad, sizeof(bad), "%s/tests/fixtures/traces/machines_bad_mem.csv", root);
	snprintf(args, sizeof(args), "catalog clusters --from-philly '%s'", good);
	assert_int_equal(run_cli(args, cli_out, sizeof(cli_out), err, sizeof(err)), 0);
	assert_non_null(strstr(cli_out, "cluster philly-machines"));
	assert_non_null(strstr(cli_out, "4 machines, 22 GPUs (16 p40 from 24 GB, 6 p100 from 12 GB); 1 machine with 0 GPUs"));
	/* --out writes the document; --json prints the same one. */
	snprintf(args, sizeof(args), "catalog clusters --from-philly '%s' --name pm --out '%s' --json", good,
		 tmp_path("pm.json"));
	assert_int_equal(run_cli(args, cli_out, sizeof(cli_out), err, sizeof(err)), 0);
	doc = cJSON_Parse(cli_out);
	assert_non_null(doc);
	cl = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "clusters"), 0);
	assert_non_null(cl);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(cl, "name")->valuestring, "pm");
	groups = cJSON_GetObjectItemCaseSensitive(cl, "groups");
	assert_int_equal(cJSON_GetArraySize(groups), 4);
	for (int i = 0; i < cJSON_GetArraySize(groups); i++) {
		const cJSON *g = cJSON_GetArrayItem(groups, i), *n = cJSON_GetObjectItemCaseSensitive(g, "nodes");
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(g, "gpus_per_node");

		gpus += (n ? n->valueint : 1) * (k ? k->valueint : 0);
	}
	assert_int_equal(gpus, 22);
	cJSON_Delete(doc);
	snprintf(args, sizeof(args), "catalog clusters '%s'", tmp_path("pm.json"));
	assert_int_equal(run_cli(args, cli_out, sizeof(cli_out), err, sizeof(err)), 0);
	assert_non_null(strstr(cli_out, "4 nodes, 22 GPUs: 16 p40, 6 p100"));
	/* A memory size without a catalog GPU names file, line, field and value; nothing is written. */
	snprintf(args, sizeof(args), "catalog clusters --from-philly '%s' --out '%s'", bad, tmp_path("bad.json"));
	assert_int_equal(run_cli(args, cli_out, sizeof(cli_out), err, sizeof(err)), 2);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "machines_bad_mem.csv:3: field 'single GPU mem': no catalog GPU for 16 GB"));
	assert_false(access(tmp_path("bad.json"), F_OK) == 0);
	assert_int_equal(run_cli("catalog gpus --from-philly x.csv", cli_out, sizeof(cli_out), err, sizeof(err)), 2);
	assert_int_equal(run_cli("catalog clusters --out x.json", cli_out, sizeof(cli_out), err, sizeof(err)), 2);
	assert_non_null(strstr(err, "need --from-philly"));
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hb-catalog-test-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_counts),
		cmocka_unit_test(test_gpu_spot_values),
		cmocka_unit_test(test_power_capped_variants),
		cmocka_unit_test(test_aliases_case_insensitive),
		cmocka_unit_test(test_cluster_prices),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_resnet50_artifact_numbers),
		cmocka_unit_test(test_gns_log_interpolation),
		cmocka_unit_test(test_every_model_consistent),
		cmocka_unit_test(test_round_trip_whole_catalog),
		cmocka_unit_test(test_user_cluster_file),
		cmocka_unit_test(test_user_gpu_and_model_files),
		cmocka_unit_test(test_failed_document_leaves_catalog_unchanged),
		cmocka_unit_test(test_broken_fixtures),
		cmocka_unit_test(test_cli_broken_files),
		cmocka_unit_test(test_cli_listing_and_json),
		cmocka_unit_test(test_cli_bad_usage),
		cmocka_unit_test(test_cli_from_philly),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
