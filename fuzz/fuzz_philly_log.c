/* libFuzzer target: the philly_log trace reader (HB_TRACE_PHILLY_LOG) on arbitrary bytes. */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_read_both(fuzz_file("input.json", data, size), HB_TRACE_PHILLY_LOG);
	return 0;
}
