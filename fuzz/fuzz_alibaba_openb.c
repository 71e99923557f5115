/* libFuzzer target: the alibaba_openb trace reader (HB_TRACE_ALIBABA_OPENB) on arbitrary bytes. */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_read_both(fuzz_file("input.csv", data, size), HB_TRACE_ALIBABA_OPENB);
	return 0;
}
