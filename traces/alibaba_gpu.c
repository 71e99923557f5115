/*
 * alibaba_gpu.c: the GPU model codes of Alibaba's 2023 trace as catalog
 * GPUs (alibaba.h).  One table serves the node list (its `model`) and the
 * pod list (its `gpu_spec`).
 *
 * Disclosed codes map to the catalog GPU of that name: T4 -> t4, P100 ->
 * p100 (the catalog's PCIe 16 GB part; the trace gives no form factor),
 * V100M16 -> v100 (16 GB), V100M32 -> v100-32gb, A10 -> a10.
 *
 * G2 and G3 are assumptions: the trace's README calls them "undisclosed
 * internal GPU codes", and neither it nor the ATC '23 paper names them.
 * What the node list does say: both sit in 8-GPU hosts (G2: 549 nodes of
 * 96 vCPU and 384 GiB, 4,392 GPUs, 71 % of the fleet; G3: 39 nodes of 128
 * vCPU and 768 GiB, 312 GPUs), the disclosed 8-GPU training parts are the
 * V100s, and the disclosed rest are Pascal, Turing or inference parts.  A
 * training fleet bought after the V100 and left unnamed in 2023 reads as
 * the Ampere generation, so G2 -> a100-40gb and G3 -> a100-80gb (the host
 * with twice the memory per GPU, 96 GiB against 48 GiB, gets the larger
 * part).  Both keep their own catalog type, so utilisation per type still
 * tells them from the disclosed V100s.  --gpu-alias G2=v100-32gb (any
 * catalog GPU) replaces the guess.
 */
#include <stdio.h>
#include <string.h>

#include "alibaba.h"
#include "strutil.h"

static const struct {
	const char *code, *gpu;
} table[HB_ALIBABA_NGPUS] = {
	{ "T4", "t4" },         { "P100", "p100" },     { "V100M16", "v100" }, { "V100M32", "v100-32gb" },
	{ "A10", "a10" },       { "G2", "a100-40gb" },  { "G3", "a100-80gb" },
};

void hb_alibaba_gpus_default(struct hb_alibaba_gpus *map)
{
	for (int i = 0; i < HB_ALIBABA_NGPUS; i++)
		hb_strlcpy(map->gpu[i], table[i].gpu, sizeof(map->gpu[i]));
}

const char *hb_alibaba_gpu_codes(void)
{
	return "T4, P100, V100M16, V100M32, A10, G2, G3";
}

const char *hb_alibaba_gpu_code(int i)
{
	return i >= 0 && i < HB_ALIBABA_NGPUS ? table[i].code : "?";
}

static int code_index(const char *code)
{
	for (int i = 0; i < HB_ALIBABA_NGPUS; i++)
		if (hb_strcaseeq(code, table[i].code))
			return i;
	return -1;
}

const char *hb_alibaba_gpu(const struct hb_alibaba_gpus *map, const char *code)
{
	int i = code_index(code);

	if (i < 0)
		return NULL;
	return map && map->gpu[i][0] ? map->gpu[i] : table[i].gpu;
}

int hb_alibaba_gpus_parse(struct hb_alibaba_gpus *map, const struct hb_catalog *cat, const char *list,
			  struct hb_error *err)
{
	char buf[1024], *items[HB_ALIBABA_NGPUS * 4];
	int n;

	if (hb_strlcpy(buf, list, sizeof(buf)) >= sizeof(buf))
		return hb_input_error(err, "GPU aliases: list longer than %zu characters", sizeof(buf) - 1);
	n = hb_split_list(buf, items, (int)(sizeof(items) / sizeof(items[0])));
	if (n <= 0)
		return hb_input_error(err, "GPU aliases: '%s' is not a list CODE=GPU[,CODE=GPU...]", list);
	for (int k = 0; k < n; k++) {
		char *eq = strchr(items[k], '=');
		const char *code, *gpu;
		int i;

		if (!eq)
			return hb_input_error(err, "GPU aliases: item '%s' is not CODE=GPU (codes: %s)", items[k],
					      hb_alibaba_gpu_codes());
		*eq = '\0';
		code = hb_trim(items[k]);
		gpu = hb_trim(eq + 1);
		i = code_index(code);
		if (i < 0)
			return hb_input_error(err, "GPU aliases: '%s' is not a GPU code of the trace (known: %s)", code,
					      hb_alibaba_gpu_codes());
		if (!gpu[0])
			return hb_input_error(err, "GPU aliases: %s= names no GPU", table[i].code);
		if (cat && !hb_catalog_gpu(cat, gpu))
			return hb_input_error(err, "GPU aliases: %s=%s: '%s' is not a GPU type in the catalog", table[i].code,
					      gpu, gpu);
		/* the catalog's own name, so a cluster file says "v100-32gb" */
		hb_strlcpy(map->gpu[i], cat ? hb_catalog_gpu(cat, gpu)->name : gpu, sizeof(map->gpu[i]));
	}
	return 0;
}
