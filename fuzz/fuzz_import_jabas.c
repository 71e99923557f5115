/* libFuzzer target: hb_import_jabas on a directory built from the input:
 * parts separated by FUZZ_SEP become cluster_info.json, one compute
 * profile, one memory profile, the bucket profile and the two comm files. */
#include "fuzz_common.h"  /* first: catalog.h needs size_t */
#include "catalog.h"
#include "import.h"
#include "profdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hb_profdb *fuzz_db;
static struct hb_catalog fuzz_cat;
static int fuzz_cat_loaded;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = {
		"jabas/cluster_info.json",
		"jabas/cluster_comp_profile_data/16/node0/resnet50_16_1_comp_profile.json",
		"jabas/cluster_mem_profile_data/16/node0/max_memory_profile_info.json",
		"jabas/bucket_profile_data/resnet50_bucket_size_profile.json",
		"jabas/comm_profile_data/intra_comm_profile_data.txt",
		"jabas/comm_profile_data/inter_comm_profile_data.txt",
	};
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	char dir[1200];

	if (!fuzz_db && hb_profdb_open(":memory:", 0, &fuzz_db, &err) < 0)
		abort();
	if (!fuzz_cat_loaded && hb_catalog_load_builtin(&fuzz_cat, &err) < 0)
		abort();
	fuzz_cat_loaded = 1;
	fuzz_split_files(data, size, files, 6);
	snprintf(dir, sizeof(dir), "%s/jabas", fuzz_dir());
	if (hb_import_jabas(fuzz_db, &fuzz_cat, dir, &st, &err) < 0 && !err.msg[0])
		abort();
	return 0;
}
