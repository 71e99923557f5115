/*
 * catalog_gpu.c: GPU types and their power-capped variants.
 *
 * A variant ({"name", "base", "power_cap", "source"}) copies its base and
 * scales the compute rates by perf(cap).  Power-cap model (assumed, stated in
 * the data's source): under a board power limit the driver lowers clock and
 * voltage together; dynamic power goes as C V^2 f with V roughly
 * proportional to f, so P ~ f^3 and a compute-bound kernel's speed ~ f gives
 * perf(cap) = cap^(1/3): 0.91 at 75 %, 0.79 at 50 %, 0.63 at 25 %.  Static
 * power is ignored, which makes deep caps optimistic; memory size and
 * bandwidth are unchanged (the memory clock is not capped).  Measured
 * factors can be given as "perf_scale" instead, and JABAS cluster C's are:
 *
 * Evidence (issue 38).  Zeus (You, Chung, Chowdhury, NSDI '23) published
 * training time per epoch under power limits of 100-300 W on an NVIDIA A40,
 * the RTX A6000's GA102 die, memory and 300 W board power (artifact
 * ml-energy/zeus, examples/research_reproducibility/zeus_nsdi23/trace/
 * summary_power_a40.csv).  Speed at a cap, t(300 W) / t(cap), median over
 * BERT-base's 8 batch sizes on SQuAD (a transformer, as cluster C's LLMs):
 * 0.947 at 225 W (75 %), 0.574 at 150 W (50 %), 0.250 at 100 W (33 %, the
 * A40's lowest limit, so 75 W cannot be measured; the 25 % node is taken
 * at 100 W).  ResNet-50 at batch 256: 0.984, 0.608, 0.363.  The card never
 * draws its full 300 W (265 W at the limit for BERT-base), so a shallow cap
 * costs little, and below 150 W speed falls faster than power (from 150 to
 * 100 W as power^2.05): cap^(1/3) is 4 % low at 75 % and 38 % and 150 %
 * high at 50 % and 25 %.  The measured factors scale compute only, as
 * cap^(1/3) does; the end-to-end time they come from also slowed the
 * fixed, memory-bound parts, so capped GPUs stay slightly fast here.
 *
 * What JABAS's 43.8 % implies (sec. 7.2, JABAS vs SimiGrad time on C, the
 * mean over its three LLMs).  SimiGrad runs equal local batches at the
 * slowest GPU's pace, 16 s_25 per unit time; IIDP at best balances work to
 * every GPU's speed, 4 (1 + s_75 + s_50 + s_25).  So the time reduction is
 * at most 1 - 16 s_25 / (4 (1 + s_75 + s_50 + s_25)), and with fixed costs
 * (all-reduce, optimizer) less.  For speed = cap^k that bound reaches 43.8 %
 * only at k >= 0.656 (speeds 0.83, 0.63, 0.40); cap^(1/3) bounds it at
 * 24.4 % (IIDP at most 1.32x SimiGrad), the measured factors at 63.9 %.
 *
 * Price stays that of the uncapped card (nominal TFLOPS in Eq. 8): JABAS
 * does not say how it priced cluster C's capped GPUs.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "catalog_priv.h"
#include "json.h"
#include "strutil.h"

double hb_power_cap_perf(double cap)
{
	if (!(cap > 0.0))
		return 0.0;
	if (cap >= 1.0)
		return 1.0;
	return cbrt(cap);
}

static const char *const base_keys[] = { "name", "display", "aliases", "fp32_tflops", "tensor_tflops", "tf32_tflops", "mem_bytes",
					 "mem_bw", "price_per_hour", "source", "comment", NULL };
static const char *const variant_keys[] = { "name", "display", "aliases", "base", "power_cap", "perf_scale",
					    "price_per_hour", "source", "comment", NULL };
/* Fields a variant takes from its base. */
static const char *const derived_keys[] = { "fp32_tflops", "tensor_tflops", "tf32_tflops", "mem_bytes", "mem_bw", NULL };

static int parse_aliases(const cJSON *obj, const char *where, struct hb_gpu *g, struct hb_error *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, "aliases");
	const cJSON *it;

	if (!arr || cJSON_IsNull(arr))
		return 0;
	if (!cJSON_IsArray(arr))
		return hb_input_error(err, "%s: field 'aliases': expected an array of strings", where);
	if (cJSON_GetArraySize(arr) > HB_MAX_ALIASES)
		return hb_input_error(err, "%s: field 'aliases': %d names, at most %d", where, cJSON_GetArraySize(arr),
				      HB_MAX_ALIASES);
	cJSON_ArrayForEach(it, arr) {
		if (!cJSON_IsString(it) || !it->valuestring[0])
			return hb_input_error(err, "%s: field 'aliases': expected non-empty strings", where);
		if (strlen(it->valuestring) >= HB_NAME_MAX)
			return hb_input_error(err, "%s: field 'aliases': '%s' is longer than %d characters", where,
					      it->valuestring, HB_NAME_MAX - 1);
		for (const char *p = it->valuestring; *p; p++)
			if ((unsigned char)*p < 0x20)
				return hb_input_error(err, "%s: field 'aliases': control character in '%s'", where,
						      it->valuestring);
		hb_strlcpy(g->aliases[g->naliases++], it->valuestring, HB_NAME_MAX);
	}
	return 0;
}

static int parse_variant(const struct hb_catalog *cat, const cJSON *obj, const char *where, struct hb_gpu *g,
			 struct hb_error *err)
{
	const struct hb_gpu *base;
	char basename[HB_NAME_MAX];
	double perf;

	for (int i = 0; derived_keys[i]; i++)
		if (cJSON_GetObjectItemCaseSensitive(obj, derived_keys[i]))
			return hb_input_error(err,
					      "%s: field '%s': not allowed in a power-capped variant (it is derived from "
					      "'base')",
					      where, derived_keys[i]);
	if (hb_json_check_keys(obj, where, variant_keys, err) ||
	    hb_cat_text(obj, "base", where, NULL, basename, sizeof(basename), err))
		return -1;
	base = hb_catalog_gpu(cat, basename);
	if (!base)
		return hb_input_error(err, "%s: field 'base': unknown gpu '%s' (a base must be defined before its "
				      "variants)", where, basename);
	if (base->base[0])
		return hb_input_error(err, "%s: field 'base': '%s' is itself a power-capped variant of '%s'", where,
				      base->name, base->base);
	if (hb_json_num(obj, "power_cap", where, 0.01, 1.0, &g->power_cap, err) ||
	    hb_json_num_opt(obj, "perf_scale", where, 0.01, 1.0, -1.0, &perf, err))
		return -1;
	if (perf < 0)
		perf = hb_power_cap_perf(g->power_cap);
	hb_strlcpy(g->base, base->name, sizeof(g->base));
	g->nominal_tflops = base->nominal_tflops;
	g->fp32_tflops = base->nominal_tflops * perf;
	g->tensor_tflops = base->tensor_tflops * perf;
	g->tf32_tflops = base->tf32_tflops * perf;
	g->mem_bytes = base->mem_bytes;
	g->mem_bw = base->mem_bw;
	if (!cJSON_GetObjectItemCaseSensitive(obj, "display"))
		snprintf(g->display, sizeof(g->display), "%.200s (%.0f%% power cap)", base->display,
			 g->power_cap * 100.0);
	return 0;
}

int hb_cat_parse_gpu(const struct hb_catalog *cat, const cJSON *obj, const char *where, struct hb_gpu *g,
		     struct hb_error *err)
{
	int variant = cJSON_GetObjectItemCaseSensitive(obj, "base") != NULL;
	double price;

	if (hb_cat_text(obj, "name", where, NULL, g->name, sizeof(g->name), err) ||
	    hb_cat_check_name(g->name, where, "name", err) ||
	    hb_cat_text(obj, "display", where, g->name, g->display, sizeof(g->display), err) ||
	    parse_aliases(obj, where, g, err) ||
	    hb_cat_text(obj, "source", where, NULL, g->source, sizeof(g->source), err))
		return -1;
	if (variant) {
		if (parse_variant(cat, obj, where, g, err))
			return -1;
	} else {
		if (cJSON_GetObjectItemCaseSensitive(obj, "power_cap") ||
		    cJSON_GetObjectItemCaseSensitive(obj, "perf_scale"))
			return hb_input_error(err, "%s: field '%s': only a power-capped variant has it (add \"base\")",
					      where,
					      cJSON_GetObjectItemCaseSensitive(obj, "power_cap") ? "power_cap" : "perf_scale");
		if (hb_json_check_keys(obj, where, base_keys, err) ||
		    hb_json_num(obj, "fp32_tflops", where, 0.01, 1e4, &g->fp32_tflops, err) ||
		    hb_json_num_opt(obj, "tensor_tflops", where, 0.0, 1e5, 0.0, &g->tensor_tflops, err) ||
		    hb_json_num_opt(obj, "tf32_tflops", where, 0.0, 1e5, 0.0, &g->tf32_tflops, err) ||
		    hb_json_num(obj, "mem_bytes", where, 1048576.0, 1e14, &g->mem_bytes, err) ||
		    hb_json_num(obj, "mem_bw", where, 1e9, 1e14, &g->mem_bw, err))
			return -1;
		g->power_cap = 1.0;
		g->nominal_tflops = g->fp32_tflops;
	}
	if (hb_json_num_opt(obj, "price_per_hour", where, 0.0, 1e4, -1.0, &price, err))
		return -1;
	g->price_overridden = price >= 0;
	g->price_per_hour = price >= 0 ? price : hb_price_eq8(g->nominal_tflops);
	return 0;
}

cJSON *hb_gpu_to_json(const struct hb_gpu *g)
{
	struct hb_jw w = { cJSON_CreateObject(), 0 };

	if (!w.obj)
		return NULL;
	hb_jw_str(&w, "name", g->name);
	hb_jw_str(&w, "display", g->display);
	if (g->naliases > 0) {
		cJSON *arr = cJSON_CreateArray();

		for (int i = 0; arr && i < g->naliases; i++) {
			cJSON *s = cJSON_CreateString(g->aliases[i]);

			if (!s || !cJSON_AddItemToArray(arr, s)) {
				cJSON_Delete(s);
				w.failed = 1;
			}
		}
		hb_jw_add(&w, "aliases", arr);
	}
	if (g->base[0]) {
		hb_jw_str(&w, "base", g->base);
		hb_jw_num(&w, "power_cap", g->power_cap);
		/* Only a factor that is not the model's own needs writing. */
		if (g->fp32_tflops != g->nominal_tflops * hb_power_cap_perf(g->power_cap))
			hb_jw_num(&w, "perf_scale", g->fp32_tflops / g->nominal_tflops);
	} else {
		hb_jw_num(&w, "fp32_tflops", g->fp32_tflops);
		hb_jw_num(&w, "tensor_tflops", g->tensor_tflops);
		if (g->tf32_tflops > 0)
			hb_jw_num(&w, "tf32_tflops", g->tf32_tflops);
		hb_jw_num(&w, "mem_bytes", g->mem_bytes);
		hb_jw_num(&w, "mem_bw", g->mem_bw);
	}
	if (g->price_overridden)
		hb_jw_num(&w, "price_per_hour", g->price_per_hour);
	hb_jw_str(&w, "source", g->source);
	return hb_jw_finish(&w);
}
