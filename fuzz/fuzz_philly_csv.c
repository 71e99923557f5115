/* libFuzzer target: the philly_csv trace reader (HB_TRACE_PHILLY_CSV) on arbitrary bytes. */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_read_both(fuzz_file("input.csv", data, size), HB_TRACE_PHILLY_CSV);
	return 0;
}
