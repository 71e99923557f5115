/* libFuzzer target: Philly cluster_machine_list -> catalog cluster, and the
 * result loaded back into a catalog that holds the two GPU types it uses
 * (what the converter writes, the catalog must accept). */
#include "fuzz_common.h"  /* first: catalog.h needs size_t */
#include <cjson/cJSON.h>

#include "catalog.h"
#include "philly.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hb_catalog fuzz_builtin;  /* read-only after the first run */
static char *fuzz_gpus_doc;             /* {"gpus": [p100, p40]} */

static void fuzz_init(void)
{
	struct hb_error err = { 0 };
	cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "gpus");

	if (hb_catalog_load_builtin(&fuzz_builtin, &err) < 0 || !arr)
		abort();
	cJSON_AddItemToArray(arr, hb_gpu_to_json(hb_catalog_gpu(&fuzz_builtin, "p100")));
	cJSON_AddItemToArray(arr, hb_gpu_to_json(hb_catalog_gpu(&fuzz_builtin, "p40")));
	fuzz_gpus_doc = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (!fuzz_gpus_doc)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hb_error err = { 0 };
	struct hb_philly_machines info;
	cJSON *doc = NULL;

	if (!fuzz_gpus_doc)
		fuzz_init();
	if (hb_philly_machines_to_cluster(&fuzz_builtin, fuzz_file("machines.csv", data, size), "fuzz-machines", &doc,
					  &info, &err) == 0) {
		struct hb_catalog cat = { 0 };
		char *text = cJSON_PrintUnformatted(doc);

		if (!text || hb_catalog_load_json(&cat, fuzz_gpus_doc, strlen(fuzz_gpus_doc), "gpus", &err) < 0)
			abort();
		if (hb_catalog_load_json(&cat, text, strlen(text), "machines", &err) < 0) {
			fprintf(stderr, "converter output rejected: %s\n", err.msg);
			abort();
		}
		if (hb_catalog_cluster(&cat, "fuzz-machines")->ngpus != info.gpus)
			abort();
		free(text);
		cJSON_Delete(doc);
		hb_catalog_free(&cat);
	} else if (doc || !err.msg[0] || strchr(err.msg, '\n')) {
		abort();
	}
	return 0;
}
