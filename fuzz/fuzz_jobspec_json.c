/* libFuzzer target: the jobspec_json trace reader (HB_TRACE_JOBSPEC_JSON) on arbitrary bytes. */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_read_both(fuzz_file("input.json", data, size), HB_TRACE_JOBSPEC_JSON);
	return 0;
}
