/* libFuzzer target: hb_import_pollux on a directory built from the input:
 * parts separated by FUZZ_SEP become cifar10/placements.csv,
 * scalability.csv, validation-128.csv and validation-256.csv. */
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
	static const char *const files[] = { "pollux/cifar10/placements.csv", "pollux/cifar10/scalability.csv",
					     "pollux/cifar10/validation-128.csv", "pollux/cifar10/validation-256.csv" };
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	char dir[1200];

	if (!fuzz_db && hb_profdb_open(":memory:", 0, &fuzz_db, &err) < 0)
		abort();
	if (!fuzz_cat_loaded && hb_catalog_load_builtin(&fuzz_cat, &err) < 0)
		abort();
	fuzz_cat_loaded = 1;
	fuzz_split_files(data, size, files, 4);
	snprintf(dir, sizeof(dir), "%s/pollux", fuzz_dir());
	if (hb_import_pollux(fuzz_db, &fuzz_cat, dir, &st, &err) < 0 && !err.msg[0])
		abort();
	return 0;
}
