/* Tests for profiler/workload_spec.c: every catalog model becomes layers
 * whose parameters and forward FLOPs are within 5 % of the catalog's at
 * scale 1, with the layer rules of workload.h (formulas, residual and
 * attention shapes, embedding first, buckets); the width scale; bad input;
 * and the catalog's "arch" entries (validation, round trip). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "catalog.h"
#include "workload.h"

#define TOLERANCE 0.05
/* A forward pass at scale 0.02 a CPU runs in milliseconds. */
#define CHEAP_SCALE 0.02
#define CHEAP_FLOPS 50e6

static struct hb_catalog cat;

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hb_catalog_free(&cat);
	return 0;
}

static void build(const struct hb_model *m, double scale, struct hb_workload *w)
{
	struct hb_error err = { 0 };

	if (hb_workload_build(m, scale, w, &err))
		fail_msg("%s at scale %g: %s", m->name, scale, err.msg);
}

/* The widest hidden layer (not the embedding, not the prediction layer). */
static long widest(const struct hb_workload *w)
{
	long best = 0;

	for (int i = 0; i < w->nlayers - 1; i++)
		if (w->layers[i].kind != HB_WL_EMBEDDING && w->layers[i].out > best)
			best = w->layers[i].out;
	return best;
}

/* Tokens of the layer holding the most weights: the sequence length,
 * time steps or positions where the bulk of the model runs. */
static long main_tokens(const struct hb_workload *w)
{
	const struct hb_wl_layer *best = &w->layers[0];

	for (int i = 0; i < w->nlayers; i++)
		if (w->layers[i].kind != HB_WL_EMBEDDING && w->layers[i].params * w->layers[i].tokens >
								   best->params * best->tokens)
			best = &w->layers[i];
	return best->tokens;
}

/* ------------------------------------------------------------ catalog match */

static void test_every_model_matches_catalog(void **state)
{
	(void)state;
	assert_true(cat.nmodels >= 17);
	printf("%-18s %-11s %6s %8s %8s %8s %7s   %10s %10s  %s\n", "MODEL", "CLASS", "LAYERS", "PARAMS", "FLOPS",
	       "TOKENS", "WIDTH", "PARAMS@.02", "FLOPS@.02", "NOTE@.02");
	for (int i = 0; i < cat.nmodels; i++) {
		const struct hb_model *m = &cat.models[i];
		struct hb_workload w, s;
		double pr, fr;

		build(m, 1, &w);
		build(m, CHEAP_SCALE, &s);
		pr = w.params / m->params;
		fr = w.flops_per_sample / m->flops_per_sample;
		printf("%-18s %-11s %6d %8.4f %8.4f %8ld %7ld   %10.4g %10.4g  %s\n", m->name, w.arch, w.nlayers, pr, fr,
		       main_tokens(&w), widest(&w), s.params, s.flops_per_sample, s.note);
		if (fabs(pr - 1) > TOLERANCE || fabs(fr - 1) > TOLERANCE)
			fail_msg("%s: params ratio %.4f, FLOPs ratio %.4f (more than %.0f%% off)", m->name, pr, fr,
				 100 * TOLERANCE);
		assert_string_equal(w.model, m->name);
		assert_string_equal(w.arch, m->arch.cls);
		assert_true(w.scale == 1);
		assert_string_equal(w.note, "");
		hb_workload_free(&w);
		hb_workload_free(&s);
	}
}

/* The real architectures come out at their published sizes. */
static void test_known_shapes(void **state)
{
	static const struct {
		const char *model, *layer;
		long tokens, in, out; /* tokens within 2 % (solved from the FLOPs); -1: any */
	} known[] = {
		{ "bert-large", "block1.qkv", 128, 1024, 3072 },
		{ "bert", "block12.ffn_up", 384, 768, 3072 },
		{ "gpt3-xl", "block24.proj", -1, 2048, 2048 },
		{ "llama2-7b", "block1.ffn_gate", -1, 4096, 11008 },
		{ "vit", "block1.ffn_up", -1, 384, 1152 },
		{ "resnet50", "conv1", 12544, 3, 64 },
		{ "resnet50", "stage4.block3.conv3", 49, 512, 2048 },
		{ "resnet50", "fc", 1, 2048, 1000 },
		{ "cifar10", "stage1.block1.conv1", 1024, 64, 64 },
		{ "yolov3", "stage5.block4.conv2", -1, 512, 1024 },
		{ "faster-rcnn", "fc1", 512, 12544, 1024 },
		{ "alexnet-cifar100", "fc1", 1, 9216, 4096 },
		{ "vgg11bn-cifar100", "conv8", -1, 512, 512 },
		{ "gnmt", "lstm2", -1, 2048, 1024 },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
		const struct hb_model *m = hb_catalog_model(&cat, known[k].model);
		const struct hb_wl_layer *l = NULL;
		struct hb_workload w;

		assert_non_null(m);
		build(m, 1, &w);
		for (int i = 0; i < w.nlayers; i++)
			if (strcmp(w.layers[i].name, known[k].layer) == 0)
				l = &w.layers[i];
		if (!l)
			fail_msg("%s: no layer %s", known[k].model, known[k].layer);
		if ((known[k].tokens >= 0 && fabs((double)l->tokens / known[k].tokens - 1) > 0.02) || l->in != known[k].in ||
		    l->out != known[k].out)
			fail_msg("%s %s: tokens %ld in %ld out %ld, expected %ld %ld %ld", known[k].model, known[k].layer,
				 l->tokens, l->in, l->out, known[k].tokens, known[k].in, known[k].out);
		hb_workload_free(&w);
	}
}

/* ------------------------------------------------------------ structure */

static void check_structure(const struct hb_model *m, const struct hb_workload *w)
{
	double params = 0, flops = 0, buckets = 0;

	assert_true(w->nlayers > 0);
	for (int i = 0; i < w->nlayers; i++) {
		const struct hb_wl_layer *l = &w->layers[i];
		double tok = (double)l->tokens, in = (double)l->in, out = (double)l->out, p, f;

		if (l->name[0] == '\0' || l->tokens < 1 || l->in < 1 || l->out < 1)
			fail_msg("%s layer %d '%s': tokens %ld in %ld out %ld", m->name, i, l->name, l->tokens, l->in, l->out);
		for (int j = 0; j < i; j++)
			if (strcmp(w->layers[j].name, l->name) == 0)
				fail_msg("%s: layer name '%s' used twice", m->name, l->name);
		switch (l->kind) {
		case HB_WL_DENSE:
			p = in * out;
			f = 2 * tok * in * out;
			assert_int_equal(l->taps, 0);
			break;
		case HB_WL_CONV:
			assert_true(l->taps >= 1);
			p = in * l->taps * out;
			f = 2 * tok * in * l->taps * out;
			break;
		case HB_WL_ATTENTION:
			p = 0;
			f = 4 * tok * tok * out;
			assert_true(l->in == 3 * l->out);
			assert_true(l->heads >= 1 && l->out % l->heads == 0);
			/* Preceded by its Q|K|V projection d -> 3d. */
			assert_true(i > 0 && w->layers[i - 1].kind == HB_WL_DENSE && w->layers[i - 1].out == l->in &&
				    w->layers[i - 1].in == l->out && w->layers[i - 1].tokens == l->tokens);
			break;
		case HB_WL_LSTM:
			p = 4 * out * (in + out);
			f = 8 * tok * out * (in + out);
			break;
		case HB_WL_EMBEDDING:
			assert_int_equal(i, 0);
			assert_true(l->vocab >= 1);
			p = (double)l->vocab * out;
			f = 0;
			break;
		default:
			fail_msg("%s: layer %s has kind %d", m->name, l->name, (int)l->kind);
			return;
		}
		if (l->kind != HB_WL_ATTENTION)
			assert_int_equal(l->heads, 0);
		if (l->kind != HB_WL_EMBEDDING)
			assert_true(l->vocab == 0);
		if (l->params != p || l->flops != f)
			fail_msg("%s %s: params %.17g flops %.17g, formulas give %.17g %.17g", m->name, l->name, l->params,
				 l->flops, p, f);
		if (l->residual && (l->in != l->out || l->relu))
			fail_msg("%s %s: residual with in %ld, out %ld, relu %d", m->name, l->name, l->in, l->out, l->relu);
		params += p;
		flops += f;
	}
	assert_true(params == w->params);
	assert_true(flops == w->flops_per_sample);
	/* Inputs and targets per sample. */
	if (w->layers[0].kind == HB_WL_EMBEDDING) {
		assert_true(w->input_floats == 0);
		assert_true(w->input_indices == w->layers[0].tokens * w->layers[0].in);
	} else {
		assert_true(w->input_indices == 0);
		assert_true(w->input_floats == (double)w->layers[0].tokens * (double)w->layers[0].in);
	}
	assert_true(w->target_floats ==
		    (double)w->layers[w->nlayers - 1].tokens * (double)w->layers[w->nlayers - 1].out);
	/* Buckets: the catalog's count, whole floats, adding up to 4 x params. */
	assert_int_equal(w->nbuckets, m->nbuckets);
	for (int b = 0; b < w->nbuckets; b++) {
		assert_true(w->buckets[b] >= 4 && fmod(w->buckets[b], 4) == 0);
		buckets += w->buckets[b];
	}
	assert_true(buckets == 4 * w->params);
}

static void test_structure_every_model_and_scale(void **state)
{
	static const double scales[] = { 1, 0.5, 0.1, CHEAP_SCALE, 0.001 };

	(void)state;
	for (int i = 0; i < cat.nmodels; i++) {
		for (size_t k = 0; k < sizeof(scales) / sizeof(scales[0]); k++) {
			struct hb_workload w;

			build(&cat.models[i], scales[k], &w);
			assert_true(w.scale == scales[k]);
			check_structure(&cat.models[i], &w);
			hb_workload_free(&w);
		}
	}
}

/* The bucket proportions follow the catalog's (ResNet-50: JABAS artifact). */
static void test_bucket_proportions(void **state)
{
	const struct hb_model *m = hb_catalog_model(&cat, "resnet50");
	struct hb_workload w;
	double total = 0;

	(void)state;
	build(m, 1, &w);
	for (int b = 0; b < m->nbuckets; b++)
		total += m->buckets[b];
	for (int b = 0; b < m->nbuckets; b++)
		assert_float_equal(w.buckets[b] / (4 * w.params), m->buckets[b] / total, 1e-6);
	hb_workload_free(&w);
}

static void test_optimizers(void **state)
{
	struct hb_workload w;

	(void)state;
	build(hb_catalog_model(&cat, "resnet50"), 0.1, &w);
	assert_int_equal(w.optimizer, HB_WL_SGD);
	assert_true(w.lr == 0.01 && w.momentum == 0.9 && w.weight_decay == 1e-4);
	hb_workload_free(&w);
	build(hb_catalog_model(&cat, "bert"), 0.1, &w); /* AdamW */
	assert_int_equal(w.optimizer, HB_WL_ADAM);
	assert_true(w.lr == 1e-4 && w.beta1 == 0.9 && w.beta2 == 0.999 && w.eps == 1e-8 && w.weight_decay == 0.01);
	hb_workload_free(&w);
	build(hb_catalog_model(&cat, "gpt3-xl"), 0.1, &w); /* Adam */
	assert_int_equal(w.optimizer, HB_WL_ADAM);
	assert_true(w.weight_decay == 0 && w.momentum == 0);
	hb_workload_free(&w);
}

/* ------------------------------------------------------------ scale */

static void test_scale_shrinks(void **state)
{
	(void)state;
	for (int i = 0; i < cat.nmodels; i++) {
		const struct hb_model *m = &cat.models[i];
		struct hb_workload one, half, small;

		build(m, 1, &one);
		build(m, 0.5, &half);
		build(m, CHEAP_SCALE, &small);
		assert_true(half.params < one.params && small.params < half.params);
		assert_true(half.flops_per_sample < one.flops_per_sample);
		assert_true(small.flops_per_sample <= half.flops_per_sample);
		/* Depth stays. */
		assert_int_equal(half.nlayers, one.nlayers);
		assert_int_equal(small.nlayers, one.nlayers);
		for (int l = 0; l < one.nlayers; l++) {
			assert_string_equal(one.layers[l].name, small.layers[l].name);
			assert_true(small.layers[l].tokens == one.layers[l].tokens);
		}
		hb_workload_free(&one);
		hb_workload_free(&half);
		hb_workload_free(&small);
	}
}

static void test_cheap_at_small_scale(void **state)
{
	static const char *const models[] = { "resnet50", "imagenet", "bert-large", "cifar10",
					      "resnet50-cifar100", "vgg11bn-cifar100", "ncf", "vit" };

	(void)state;
	for (size_t k = 0; k < sizeof(models) / sizeof(models[0]); k++) {
		struct hb_workload w;

		build(hb_catalog_model(&cat, models[k]), CHEAP_SCALE, &w);
		if (!(w.flops_per_sample < CHEAP_FLOPS))
			fail_msg("%s at scale %g: %.4g FLOPs per sample", models[k], CHEAP_SCALE, w.flops_per_sample);
		hb_workload_free(&w);
	}
}

/* Heads stay; the head width shrinks to 1, and the note says when it had to be raised. */
static void test_transformer_scale_keeps_heads(void **state)
{
	struct hb_workload w;

	(void)state;
	build(hb_catalog_model(&cat, "bert-large"), CHEAP_SCALE, &w);
	for (int i = 0; i < w.nlayers; i++)
		if (w.layers[i].kind == HB_WL_ATTENTION) {
			assert_int_equal(w.layers[i].heads, 16);
			assert_int_equal(w.layers[i].out, 16);
		}
	hb_workload_free(&w);
	build(hb_catalog_model(&cat, "bert-large"), 0.001, &w);
	assert_non_null(strstr(w.note, "head width raised to 1"));
	hb_workload_free(&w);
	build(hb_catalog_model(&cat, "resnet50"), CHEAP_SCALE, &w);
	assert_non_null(strstr(w.note, "widths below 4 raised to 4"));
	hb_workload_free(&w);
}

/* ------------------------------------------------------------ bad input */

static void test_bad_scales(void **state)
{
	static const struct {
		double scale;
		const char *text;
	} bad[] = { { 0, "scale 0 " }, { -0.5, "scale -0.5 " }, { 1.5, "scale 1.5 " }, { NAN, "scale nan " },
		    { INFINITY, "scale inf " } };
	const struct hb_model *m = hb_catalog_model(&cat, "resnet50");

	(void)state;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct hb_workload w;
		struct hb_error err = { 0 };

		memset(&w, 0x5a, sizeof(w));
		assert_int_equal(hb_workload_build(m, bad[k].scale, &w, &err), -1);
		assert_int_equal(err.code, HB_EINPUT);
		if (!strstr(err.msg, bad[k].text) || !strstr(err.msg, "'resnet50'"))
			fail_msg("scale %g: '%s'", bad[k].scale, err.msg);
		assert_null(w.layers);
		hb_workload_free(&w);
	}
}

static const char user_model[] =
	"{\"models\": [{\"name\": \"my-net\", \"params\": 1e6, \"flops_per_sample\": 1e8, \"act_bytes_per_sample\": 1e6,"
	" \"optimizer\": \"sgd\", \"dataset_size\": 50000, \"m0\": 64, \"min_gbs\": 64, \"max_gbs\": 1024,"
	" \"min_lbs\": 16, \"lr_rule\": \"linear\", \"gamma\": 0.1, \"target_epochs\": 10,"
	" \"gns\": [[0, 100], [1, 1000]], \"sim_noise_sigma\": 0.05, \"fwd_fraction\": 0.33,"
	" \"data_s_per_sample\": 1e-5, \"init_s\": 5, \"source\": \"test\"%s}]}";

/* Load user_model with `extra` spliced in; returns 0 or -1 with err filled. */
static int load_user(struct hb_catalog *c, const char *extra, struct hb_error *err)
{
	char doc[4096];

	snprintf(doc, sizeof(doc), user_model, extra);
	memset(c, 0, sizeof(*c));
	return hb_catalog_load_json(c, doc, strlen(doc), "user.json", err);
}

static void test_model_without_arch(void **state)
{
	struct hb_catalog c;
	struct hb_error err = { 0 };
	struct hb_workload w;
	const struct hb_model *m;
	cJSON *j;

	(void)state;
	if (load_user(&c, "", &err))
		fail_msg("%s", err.msg);
	m = hb_catalog_model(&c, "my-net");
	assert_non_null(m);
	assert_string_equal(m->arch.cls, "");
	j = hb_model_to_json(m);
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "arch"));
	cJSON_Delete(j);
	assert_int_equal(hb_workload_build(m, 1, &w, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "model 'my-net'"));
	assert_non_null(strstr(err.msg, "\"arch\""));
	hb_catalog_free(&c);
}

/* A user's own CNN: two convs and a classifier, solved like the built-ins. */
static void test_user_arch_builds(void **state)
{
	struct hb_catalog c;
	struct hb_error err = { 0 };
	struct hb_workload w;

	(void)state;
	if (load_user(&c,
		      ", \"arch\": {\"class\": \"cnn\", \"in_channels\": 3, \"classes\": 10, \"convs\": [[9, 0, 1, 0], "
		      "[9, 1, 2, 1]], \"block\": \"basic\", \"stages\": [1, 1], \"flatten\": 1, \"source\": \"test\"}",
		      &err))
		fail_msg("%s", err.msg);
	build(&c.models[0], 1, &w);
	assert_float_equal(w.params / 1e6, 1, TOLERANCE);
	assert_float_equal(w.flops_per_sample / 1e8, 1, TOLERANCE);
	check_structure(&c.models[0], &w);
	hb_workload_free(&w);
	hb_catalog_free(&c);
}

/* A template whose fixed layers outweigh the catalog's params cannot fit. */
static void test_arch_that_cannot_fit(void **state)
{
	struct hb_catalog c;
	struct hb_error err = { 0 };
	struct hb_workload w;

	(void)state;
	/* A 1e7-row embedding alone holds 1e7 params per unit of width. */
	if (load_user(&c,
		      ", \"arch\": {\"class\": \"transformer\", \"layers\": 2, \"heads\": 2, \"vocab\": 10000000, "
		      "\"ffn_ratio\": 4, \"source\": \"test\"}",
		      &err))
		fail_msg("%s", err.msg);
	assert_int_equal(hb_workload_build(&c.models[0], 1, &w, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	if (!strstr(err.msg, "model 'my-net'") || !strstr(err.msg, "does not fit"))
		fail_msg("%s", err.msg);
	hb_catalog_free(&c);
}

static void test_bad_arch_entries(void **state)
{
	static const struct {
		const char *arch, *frag;
	} bad[] = {
		{ "\"arch\": 3", "'my-net': field 'arch': expected an object" },
		{ "\"arch\": {\"class\": \"rnn\", \"source\": \"x\"}", "arch: field 'class': unknown value 'rnn'" },
		{ "\"arch\": {\"class\": \"transformer\", \"layers\": 2, \"ffn_ratio\": 4, \"source\": \"x\"}",
		  "'my-net': arch: field 'heads': missing" },
		{ "\"arch\": {\"class\": \"transformer\", \"layers\": 2, \"heads\": 2, \"ffn_ratio\": 4}",
		  "arch: field 'source': missing" },
		{ "\"arch\": {\"class\": \"cnn\", \"in_channels\": 3, \"heads\": 4, \"source\": \"x\"}",
		  "unknown field 'heads'" },
		{ "\"arch\": {\"class\": \"cnn\", \"in_channels\": 3, \"convs\": [[9, 0, 1]], \"source\": \"x\"}",
		  "field 'convs': element 0: expected [taps, in, out, level]" },
		{ "\"arch\": {\"class\": \"cnn\", \"in_channels\": 3, \"convs\": [[9, 1, 1, 0]], \"flatten\": 1, "
		  "\"classes\": 10, \"source\": \"x\"}",
		  "the first convolution must read the input" },
		{ "\"arch\": {\"class\": \"cnn\", \"in_channels\": 3, \"convs\": [[9, 0, 1, 0]], \"stages\": [2], "
		  "\"flatten\": 1, \"classes\": 10, \"source\": \"x\"}",
		  "field 'block': missing" },
		{ "\"arch\": {\"class\": \"cnn\", \"in_channels\": 3, \"convs\": [[9, 0, 1, 0]], \"source\": \"x\"}",
		  "the network has no output" },
		{ "\"arch\": {\"class\": \"transformer\", \"layers\": 2, \"heads\": 2, \"ffn_ratio\": 4, \"pooled\": true, "
		  "\"source\": \"x\"}",
		  "field 'pooled': a pooled head needs 'classes'" },
		{ "\"arch\": {\"class\": \"lstm\", \"rnn\": [[1, 3]], \"source\": \"x\"}",
		  "field 'rnn': element 0: [in, directions]: entry 1 must be an integer in [1, 2]" },
		{ "\"arch\": {\"class\": \"mlp\", \"vocab\": 100, \"lookups\": 2, \"classes\": 1, \"source\": \"x\"}",
		  "field 'mlp_layers': missing" },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct hb_catalog c;
		struct hb_error err = { 0 };
		char extra[1024];

		snprintf(extra, sizeof(extra), ", %s", bad[k].arch);
		if (load_user(&c, extra, &err) != -1 || err.code != HB_EINPUT || !strstr(err.msg, bad[k].frag) ||
		    !strstr(err.msg, "user.json"))
			fail_msg("%s: message '%s' does not contain '%s'", bad[k].arch, err.msg, bad[k].frag);
		assert_int_equal(c.nmodels, 0);
		hb_catalog_free(&c);
	}
}

/* ------------------------------------------------------------ catalog round trip */

/* Every built-in model written out and read back has the same arch, and
 * builds the same workload. */
static void test_catalog_round_trip_with_arch(void **state)
{
	(void)state;
	for (int i = 0; i < cat.nmodels; i++) {
		const struct hb_model *m = &cat.models[i];
		struct hb_catalog c;
		struct hb_error err = { 0 };
		struct hb_workload a, b;
		cJSON *j = hb_model_to_json(m), *j2, *doc;
		char *text;

		assert_non_null(j);
		assert_non_null(cJSON_GetObjectItemCaseSensitive(j, "arch"));
		doc = cJSON_CreateObject();
		cJSON_AddItemToArray(cJSON_AddArrayToObject(doc, "models"), cJSON_Duplicate(j, 1));
		text = cJSON_PrintUnformatted(doc);
		cJSON_Delete(doc);
		memset(&c, 0, sizeof(c));
		if (hb_catalog_load_json(&c, text, strlen(text), "round-trip.json", &err))
			fail_msg("%s: %s", m->name, err.msg);
		free(text);
		assert_int_equal(c.nmodels, 1);
		assert_string_equal(m->arch.cls, c.models[0].arch.cls);
		assert_string_equal(m->arch.source, c.models[0].arch.source);
		j2 = hb_model_to_json(&c.models[0]);
		assert_true(cJSON_Compare(j, j2, 1));
		cJSON_Delete(j);
		cJSON_Delete(j2);
		build(m, 0.25, &a);
		build(&c.models[0], 0.25, &b);
		assert_int_equal(a.nlayers, b.nlayers);
		for (int l = 0; l < a.nlayers; l++) {
			const struct hb_wl_layer *x = &a.layers[l], *y = &b.layers[l];

			assert_string_equal(x->name, y->name);
			assert_true(x->kind == y->kind && x->tokens == y->tokens && x->in == y->in && x->out == y->out &&
				    x->taps == y->taps && x->heads == y->heads && x->vocab == y->vocab &&
				    x->relu == y->relu && x->residual == y->residual);
		}
		assert_memory_equal(a.buckets, b.buckets, sizeof(double) * (size_t)a.nbuckets);
		hb_workload_free(&a);
		hb_workload_free(&b);
		hb_catalog_free(&c);
	}
}

/* ------------------------------------------------------------ saved floats */

static void test_saved_floats_rule(void **state)
{
	struct hb_wl_layer l[5];
	struct hb_workload w;

	(void)state;
	memset(&w, 0, sizeof(w));
	memset(l, 0, sizeof(l));
	l[0] = (struct hb_wl_layer){ .kind = HB_WL_EMBEDDING, .tokens = 10, .in = 1, .out = 8, .vocab = 100 };
	l[1] = (struct hb_wl_layer){ .kind = HB_WL_DENSE, .tokens = 10, .in = 8, .out = 24 };
	l[2] = (struct hb_wl_layer){ .kind = HB_WL_ATTENTION, .tokens = 10, .in = 24, .out = 8, .heads = 2 };
	l[3] = (struct hb_wl_layer){ .kind = HB_WL_CONV, .tokens = 10, .in = 8, .out = 4, .taps = 9 };
	l[4] = (struct hb_wl_layer){ .kind = HB_WL_LSTM, .tokens = 10, .in = 4, .out = 6 };
	w.layers = l;
	w.nlayers = 5;
	assert_float_equal(hb_workload_saved_floats(&w),
			   10 * 8                                  /* embedding output */
				   + 10 * 8                        /* dense input */
				   + 3 * 10 * 8 + 2 * 10 * 10 + 10 * 8 /* q, k, v; probabilities; output */
				   + 10 * 8 + 10 * 8 * 9           /* conv input and its im2col */
				   + 10 * (4 * 6 + 6) + 10 * 4,    /* gates, c, input */
			   0);
	/* Built workloads: positive, and smaller at a smaller scale. */
	for (int i = 0; i < cat.nmodels; i++) {
		struct hb_workload a, b;

		build(&cat.models[i], 1, &a);
		build(&cat.models[i], 0.1, &b);
		assert_true(hb_workload_saved_floats(&b) > 0);
		assert_true(hb_workload_saved_floats(&b) < hb_workload_saved_floats(&a));
		hb_workload_free(&a);
		hb_workload_free(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_model_matches_catalog),
		cmocka_unit_test(test_known_shapes),
		cmocka_unit_test(test_structure_every_model_and_scale),
		cmocka_unit_test(test_bucket_proportions),
		cmocka_unit_test(test_optimizers),
		cmocka_unit_test(test_scale_shrinks),
		cmocka_unit_test(test_cheap_at_small_scale),
		cmocka_unit_test(test_transformer_scale_keeps_heads),
		cmocka_unit_test(test_bad_scales),
		cmocka_unit_test(test_model_without_arch),
		cmocka_unit_test(test_user_arch_builds),
		cmocka_unit_test(test_arch_that_cannot_fit),
		cmocka_unit_test(test_bad_arch_entries),
		cmocka_unit_test(test_catalog_round_trip_with_arch),
		cmocka_unit_test(test_saved_floats_rule),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
