/* libFuzzer target: Alibaba's node list -> catalog cluster, and the result
 * loaded back into the built-in catalog (what the converter writes, the
 * catalog must accept, with as many GPUs as the converter counted). */
#include "fuzz_common.h"  /* first: catalog.h needs size_t */
#include <cjson/cJSON.h>

#include "alibaba.h"
#include "catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hb_catalog cat = { 0 };
	struct hb_error err = { 0 };
	struct hb_alibaba_nodes info;
	cJSON *doc = NULL;

	if (hb_catalog_load_builtin(&cat, &err) < 0)
		abort();
	if (hb_alibaba_nodes_to_cluster(&cat, fuzz_file("nodes.csv", data, size), "fuzz-nodes", NULL, &doc, &info,
					&err) == 0) {
		char *text = cJSON_PrintUnformatted(doc);

		if (!text)
			abort();
		if (hb_catalog_load_json(&cat, text, strlen(text), "nodes", &err) < 0) {
			fprintf(stderr, "converter output rejected: %s\n", err.msg);
			abort();
		}
		if (hb_catalog_cluster(&cat, "fuzz-nodes")->ngpus != info.gpus)
			abort();
		free(text);
		cJSON_Delete(doc);
	} else if (doc || !err.msg[0] || strchr(err.msg, '\n')) {
		abort();
	}
	hb_catalog_free(&cat);
	return 0;
}
