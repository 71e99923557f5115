/* libFuzzer target: hb_catalog_load_json on arbitrary text, into an empty
 * catalog, and into one that already holds the built-in GPU types (so
 * that clusters and power-capped variants can refer to them). */
#include "fuzz_common.h"  /* first: catalog.h needs size_t */
#include <cjson/cJSON.h>

#include "catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *fuzz_gpus_doc;  /* {"gpus": [every built-in GPU]}, made once */

static void fuzz_init(void)
{
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "gpus");

	if (hb_catalog_load_builtin(&cat, &err) < 0 || !arr)
		abort();
	for (int i = 0; i < cat.ngpus; i++)
		cJSON_AddItemToArray(arr, hb_gpu_to_json(&cat.gpus[i]));
	fuzz_gpus_doc = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	hb_catalog_free(&cat);
	if (!fuzz_gpus_doc)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	char *text = malloc(size + 1);

	if (!fuzz_gpus_doc)
		fuzz_init();
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	if (hb_catalog_load_json(&cat, text, size, "fuzz.json", &err) < 0 && !err.msg[0])
		abort();
	hb_catalog_free(&cat);
	memset(&cat, 0, sizeof(cat));
	if (hb_catalog_load_json(&cat, fuzz_gpus_doc, strlen(fuzz_gpus_doc), "gpus.json", &err) < 0) {
		fprintf(stderr, "built-in GPUs do not round-trip: %s\n", err.msg);
		abort();
	}
	if (hb_catalog_load_json(&cat, text, size, "fuzz.json", &err) < 0 && !err.msg[0])
		abort();
	hb_catalog_free(&cat);
	free(text);
	return 0;
}
