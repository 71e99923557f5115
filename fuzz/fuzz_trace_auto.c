/* libFuzzer target: the trace_auto trace reader (HB_TRACE_AUTO) on arbitrary bytes. */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_read_both(fuzz_file("input.json", data, size), HB_TRACE_AUTO);
	return 0;
}
