/* libFuzzer target: hb_import_nccl on arbitrary bytes (text table or -J
 * JSON), into one in-memory profile database kept across runs: every
 * import is one transaction, so a failed one leaves nothing behind. */
#include "fuzz_common.h"
#include "import.h"
#include "profdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hb_profdb *fuzz_db;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hb_import_stats st;
	struct hb_error err = { 0 };
	const char *path = fuzz_file("allreduce.txt", data, size);

	if (!fuzz_db && hb_profdb_open(":memory:", 0, &fuzz_db, &err) < 0)
		abort();
	if (hb_import_nccl(fuzz_db, path, NULL, "nvlink4", 0, &st, &err) < 0 && !err.msg[0])
		abort();
	if (hb_import_nccl(fuzz_db, path, "inter", "ib-100g", 16, &st, &err) < 0 && !err.msg[0])
		abort();
	return 0;
}
