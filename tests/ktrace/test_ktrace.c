/* Unit tests for ktrace.c: the kernel trace files of the CUPTI injection
 * library and their attribution to NVTX phases.  The fixtures under
 * tests/fixtures/ktrace/ are HAND-MADE (see their comments), to be replaced
 * by or joined with real recordings from issue 12's GPU run; every
 * expected number below is worked out by hand from them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fileio.h"
#include "ktrace.h"
#include "rng.h"

#define MS 1e-3
#define TOL 1e-12   /* seconds: the arithmetic is exact to the ns */

static char *fixture_path(const char *name)
{
	const char *dir = getenv("HB_FIXTURES");
	char *p;

	assert_non_null(dir);
	p = malloc(strlen(dir) + strlen(name) + 16);
	assert_non_null(p);
	sprintf(p, "%s/ktrace/%s", dir, name);
	return p;
}

static char *fixture_text(const char *name, size_t *len)
{
	struct hb_error err = { 0 };
	char *path = fixture_path(name), *data = NULL;

	assert_int_equal(hb_read_file(path, &data, len, &err), 0);
	free(path);
	return data;
}

static void check_phase(const struct hb_kt_phase_time *p, double union_ms, double sum_ms, double busy_ms,
			int nstreams, long nrecs)
{
	assert_true(fabs(p->union_s - union_ms * MS) < TOL);
	assert_true(fabs(p->sum_s - sum_ms * MS) < TOL);
	assert_true(fabs(p->busy_max_s - busy_ms * MS) < TOL);
	assert_int_equal(p->nstreams, nstreams);
	assert_int_equal(p->nrecs, nrecs);
}

/* tests/fixtures/ktrace/two_vsw.ktrace, by hand (times in ms after the base):
 * iteration 0, [1, 11]: iter 10 ms
 *   data        memcpy s7 [1.3, 1.8)                        union 0.5
 *   forward     s7 [2, 4) [4, 5) (the first launched inside the transparent
 *               range conv1), s8 [3, 5.5)                   union [2, 5.5) 3.5,
 *                                                           sum 5.5, busy max 3 (s7)
 *   backward    s7 [5, 7), s8 [5.5, 7.5)                    union 2.5, sum 4, busy 2
 *   aggregation s7 [7.5, 8) (launched in aggregation nested
 *               inside backward: the innermost wins)        0.5
 *   optimizer   s7 [8, 9) (runtime and driver api lines)    1
 *   weight_copy memcpy s8 [9, 9.4)                          0.4
 *   other       s7 [9.5, 9.6) (in no phase range)           0.1
 *   corr 99 has no api line: unmatched
 * iteration 1, [11, 19]: iter 8 ms
 *   forward     s7 [12, 14), s8 [12, 14)                    union 2, sum 4, busy 2
 *   backward    s7 [14, 17), s8 [14.5, 15.5) [15.5, 16) (the last launched
 *               by thread 103 onto 102's stream: by stream)  union 3, sum 4.5, busy 3
 *   aggregation [17, 17.2) 0.2; optimizer [17.2, 17.8) 0.6;
 *   weight_copy [17.8, 18) 0.2
 * warm-up kernel (corr 5) before every iteration: outside. */
static void test_two_vsw(void **state)
{
	struct hb_error err = { 0 };
	struct hb_ktrace t = { 0 };
	struct hb_kt_result r = { 0 };
	char *path = fixture_path("two_vsw.ktrace");

	(void)state;
	assert_int_equal(hb_ktrace_read(path, &t, &err), 0);
	assert_string_equal(t.device, "Hand-made GPU (no device)");
	assert_int_equal(t.cupti_version, 130001);
	assert_int_equal(t.dropped, 0);
	assert_int_equal(t.nranges, 19);
	assert_int_equal(t.unclosed, 0);
	assert_int_equal(t.napis, 20);
	assert_int_equal(t.dev.nrecs, 20);
	assert_int_equal(hb_ktrace_attribute(&t, NULL, &r, &err), 0);

	assert_int_equal(r.niters, 2);
	assert_int_equal(r.records, 20);
	assert_int_equal(r.attributed, 17);
	assert_int_equal(r.by_stream, 1);
	assert_int_equal(r.unattributed, 1);
	assert_int_equal(r.outside, 1);
	assert_int_equal(r.unmatched, 1);
	assert_int_equal(r.ignored_ranges, 2);   /* warmup, conv1 */

	assert_true(fabs(r.iters[0].iter_s - 10 * MS) < TOL);
	check_phase(&r.iters[0].ph[HB_KT_DATA], 0.5, 0.5, 0.5, 1, 1);
	check_phase(&r.iters[0].ph[HB_KT_FWD], 3.5, 5.5, 3, 2, 3);
	check_phase(&r.iters[0].ph[HB_KT_BWD], 2.5, 4, 2, 2, 2);
	check_phase(&r.iters[0].ph[HB_KT_AGG], 0.5, 0.5, 0.5, 1, 1);
	check_phase(&r.iters[0].ph[HB_KT_OPT], 1, 1, 1, 1, 1);
	check_phase(&r.iters[0].ph[HB_KT_COPY], 0.4, 0.4, 0.4, 1, 1);
	check_phase(&r.iters[0].ph[HB_KT_OTHER], 0.1, 0.1, 0.1, 1, 1);

	assert_true(fabs(r.iters[1].iter_s - 8 * MS) < TOL);
	check_phase(&r.iters[1].ph[HB_KT_DATA], 0, 0, 0, 0, 0);
	check_phase(&r.iters[1].ph[HB_KT_FWD], 2, 4, 2, 2, 2);
	check_phase(&r.iters[1].ph[HB_KT_BWD], 3, 4.5, 3, 2, 3);
	check_phase(&r.iters[1].ph[HB_KT_AGG], 0.2, 0.2, 0.2, 1, 1);
	check_phase(&r.iters[1].ph[HB_KT_OPT], 0.6, 0.6, 0.6, 1, 1);
	check_phase(&r.iters[1].ph[HB_KT_COPY], 0.2, 0.2, 0.2, 1, 1);
	check_phase(&r.iters[1].ph[HB_KT_OTHER], 0, 0, 0, 0, 0);

	/* means over the two iterations; nrecs is the total */
	assert_true(fabs(r.mean.iter_s - 9 * MS) < TOL);
	check_phase(&r.mean.ph[HB_KT_DATA], 0.25, 0.25, 0.25, 1, 1);
	check_phase(&r.mean.ph[HB_KT_FWD], 2.75, 4.75, 2.5, 2, 5);
	check_phase(&r.mean.ph[HB_KT_BWD], 2.75, 4.25, 2.5, 2, 5);
	check_phase(&r.mean.ph[HB_KT_AGG], 0.35, 0.35, 0.35, 1, 2);
	check_phase(&r.mean.ph[HB_KT_OPT], 0.8, 0.8, 0.8, 1, 2);
	check_phase(&r.mean.ph[HB_KT_COPY], 0.3, 0.3, 0.3, 1, 2);
	check_phase(&r.mean.ph[HB_KT_OTHER], 0.05, 0.05, 0.05, 1, 1);

	{
		struct hb_compute_row row;

		memset(&row, 0, sizeof(row));
		row.mem_bytes = 7;
		hb_kt_compute_times(&r, &row);
		assert_true(fabs(row.data_s - 0.25 * MS) < TOL);
		assert_true(fabs(row.fwd_s - 2.75 * MS) < TOL);
		assert_true(fabs(row.bwd_s - (2.75 + 0.35) * MS) < TOL);   /* backward + aggregation */
		assert_true(fabs(row.update_s - 0.8 * MS) < TOL);
		assert_true(fabs(row.copy_s - 0.3 * MS) < TOL);
		assert_true(fabs(row.total_s - 9 * MS) < TOL);
		assert_true(row.mem_bytes == 7);
	}
	hb_kt_result_free(&r);
	hb_ktrace_free(&t);
	free(path);
}

static void test_phase_names(void **state)
{
	(void)state;
	assert_int_equal(hb_kt_phase_of("forward"), HB_KT_FWD);
	assert_int_equal(hb_kt_phase_of("weight_copy"), HB_KT_COPY);
	assert_int_equal(hb_kt_phase_of("other"), -1);   /* not a range name the worker may use */
	assert_int_equal(hb_kt_phase_of(HB_KTRACE_ITER_NAME), -1);
	assert_int_equal(hb_kt_phase_of("Forward"), -1);
	assert_string_equal(hb_kt_phase_name(HB_KT_AGG), "aggregation");
	assert_string_equal(hb_kt_phase_name(HB_KT_OTHER), "other");
	assert_string_equal(hb_kt_phase_name(99), "?");
}

/* Dropped records: refused unless allowed (issue 12: zero dropped records
 * in every kept run). */
static void test_dropped(void **state)
{
	struct hb_error err = { 0 };
	struct hb_ktrace t = { 0 };
	struct hb_kt_result r = { 0 };
	struct hb_kt_opts allow = { .allow_dropped = 1 };
	char *path = fixture_path("dropped.ktrace");

	(void)state;
	assert_int_equal(hb_ktrace_read(path, &t, &err), 0);
	assert_int_equal(t.dropped, 3);
	assert_int_equal(hb_ktrace_attribute(&t, NULL, &r, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "dropped.ktrace: header: dropped 3"));
	assert_non_null(strstr(err.msg, "not kept"));
	assert_int_equal(hb_ktrace_attribute(&t, &allow, &r, &err), 0);
	assert_int_equal(r.niters, 1);
	check_phase(&r.iters[0].ph[HB_KT_FWD], 1, 1, 1, 1, 1);
	hb_kt_result_free(&r);
	hb_ktrace_free(&t);
	free(path);
}

#define HEAD "hetbatch-ktrace 1\ndevice D\ncupti 1\ndropped 0\nuntimed 0\n"

/* Parse text; expect failure with every fragment in the message. */
static void expect_parse_error(const char *text, const char *frag1, const char *frag2)
{
	struct hb_error err = { 0 };
	struct hb_ktrace t = { 0 };

	if (hb_ktrace_parse(text, strlen(text), "bad.ktrace", &t, &err) == 0) {
		hb_ktrace_free(&t);
		fail_msg("parsed, expected an error with '%s': %s", frag1, text);
	}
	assert_int_equal(err.code, HB_EINPUT);
	if (!strstr(err.msg, frag1) || (frag2 && !strstr(err.msg, frag2)))
		fail_msg("message '%s' lacks '%s' / '%s'", err.msg, frag1, frag2 ? frag2 : "");
}

static void test_malformed(void **state)
{
	(void)state;
	expect_parse_error("", "bad.ktrace: empty file", NULL);
	expect_parse_error("hello\n", "bad.ktrace:1: not a hetbatch kernel trace", "'hello'");
	expect_parse_error("hetbatch-ktrace 2\n", "bad.ktrace:1: version '2'", "reads version 1");
	expect_parse_error("hetbatch-ktrace 1x\n", "bad.ktrace:1: version '1x'", NULL);
	/* header */
	expect_parse_error("hetbatch-ktrace 1\ndevice D\ncupti 1\ndropped 0\nend 0\n",
			   "bad.ktrace:5: unknown line kind 'end' in the header", NULL);
	expect_parse_error("hetbatch-ktrace 1\ndevice D\ndevice E\n", "bad.ktrace:3: header: device given twice", NULL);
	expect_parse_error("hetbatch-ktrace 1\ndevice \n", "bad.ktrace:2: header: device: name missing", NULL);
	expect_parse_error("hetbatch-ktrace 1\ndevice D\ncupti x1\n",
			   "bad.ktrace:3: cupti: field value 'x1' is not an unsigned decimal number", NULL);
	expect_parse_error("hetbatch-ktrace 1\ndevice D\ncupti 1\ndropped -3\n",
			   "bad.ktrace:4: dropped: field value '-3'", NULL);
	expect_parse_error("hetbatch-ktrace 1\ndevice D\ncupti 1\ndropped 0\n", "header: untimed missing", NULL);
	expect_parse_error("hetbatch-ktrace 1\ndevice D\ncupti 1\ndropped 0\nuntimed 0 0\n",
			   "bad.ktrace:5: untimed: unexpected extra field '0'", NULL);
	/* records */
	expect_parse_error(HEAD "kernel 5 7 abc 10\nend 1\n",
			   "bad.ktrace:6: kernel: field START 'abc' is not an unsigned decimal number", NULL);
	expect_parse_error(HEAD "kernel 5 4294967296 1 10\nend 1\n",
			   "bad.ktrace:6: kernel: field STREAM '4294967296' is out of range", NULL);
	expect_parse_error(HEAD "memset 5 7 1 99999999999999999999\nend 1\n",
			   "bad.ktrace:6: memset: field END '99999999999999999999' is out of range", NULL);
	expect_parse_error(HEAD "memcpy 5 7 20 10\nend 1\n", "bad.ktrace:6: memcpy: END 10 is before START 20", NULL);
	expect_parse_error(HEAD "api 5 7 10\nend 1\n", "bad.ktrace:6: api: field END missing", NULL);
	expect_parse_error(HEAD "api 5 7 10 20 30\nend 1\n", "bad.ktrace:6: api: unexpected extra field '30'", NULL);
	expect_parse_error(HEAD "kernal 5 7 10 20\nend 1\n", "bad.ktrace:6: unknown record kind 'kernal'", NULL);
	expect_parse_error(HEAD "range_start 1 2 30\nend 1\n", "bad.ktrace:6: range_start: field NAME missing", NULL);
	expect_parse_error(HEAD "range_start 1 2 30 x\nrange_end 1 2 20\nend 2\n",
			   "bad.ktrace:7: range_end: TS 20 is before the start 30", "(line 6)");
	expect_parse_error(HEAD "range_start 1 2 30 x\nrange_end 5 3 40\nend 2\n",
			   "bad.ktrace:7: range_end: ID 5 TID 3 closes no open range", NULL);
	expect_parse_error(HEAD "range_end 1 2 40\nend 1\n", "closes no open range", NULL);
	/* the end line */
	expect_parse_error(HEAD "kernel 5 7 10 20\n", "bad.ktrace:6: no end line after 1 records", "cut short");
	expect_parse_error(HEAD "kernel 5 7 10 20\nend 2\n", "bad.ktrace:7: end: N 2 but 1 record lines", NULL);
	expect_parse_error(HEAD "end 0\nkernel 5 7 10 20\n", "bad.ktrace:7: 'kernel' after the end line", NULL);
	expect_parse_error(HEAD "end\n", "bad.ktrace:6: end: field N missing", NULL);
	{
		static const char nul[] = HEAD "kernel 5 7 1\0 2\nend 1\n";
		struct hb_error err = { 0 };
		struct hb_ktrace t = { 0 };

		assert_int_equal(hb_ktrace_parse(nul, sizeof(nul) - 1, "bad.ktrace", &t, &err), -1);
		assert_non_null(strstr(err.msg, "bad.ktrace:6: a NUL byte"));
	}
}

/* Every proper prefix of a good file fails (the end line guards against
 * truncation, wherever the writer stopped); the whole file parses. */
static void test_truncated(void **state)
{
	struct hb_error err = { 0 };
	size_t len = 0, cut;
	char *text = fixture_text("two_vsw.ktrace", &len);
	struct hb_ktrace t = { 0 };

	(void)state;
	for (cut = 0; cut + 1 < len; cut++) {
		/* "end 78" itself cut to "end 7" is a count mismatch; "end" alone a missing
		 * field; everything before is "no end line" or a broken field */
		if (hb_ktrace_parse(text, cut, "cut.ktrace", &t, &err) == 0) {
			hb_ktrace_free(&t);
			fail_msg("a prefix of %zu of %zu bytes parsed", cut, len);
		}
		assert_int_equal(err.code, HB_EINPUT);
	}
	assert_int_equal(hb_ktrace_parse(text, len, "whole.ktrace", &t, &err), 0);
	hb_ktrace_free(&t);
	/* without its final newline it is still whole */
	assert_int_equal(hb_ktrace_parse(text, len - 1, "whole.ktrace", &t, &err), 0);
	hb_ktrace_free(&t);
	free(text);
}

static void expect_attr_error(const char *text, const char *frag)
{
	struct hb_error err = { 0 };
	struct hb_ktrace t = { 0 };
	struct hb_kt_result r = { 0 };

	assert_int_equal(hb_ktrace_parse(text, strlen(text), "a.ktrace", &t, &err), 0);
	if (hb_ktrace_attribute(&t, NULL, &r, &err) == 0) {
		hb_kt_result_free(&r);
		hb_ktrace_free(&t);
		fail_msg("attributed, expected '%s'", frag);
	}
	assert_int_equal(err.code, HB_EINPUT);
	if (!strstr(err.msg, frag))
		fail_msg("message '%s' lacks '%s'", err.msg, frag);
	hb_ktrace_free(&t);
}

static void test_attribution_errors(void **state)
{
	(void)state;
	expect_attr_error(HEAD "range_start 1 2 10 forward\nrange_end 1 2 20\nend 2\n",
			  "a.ktrace: no 'iteration' range");
	expect_attr_error(HEAD "range_start 1 2 10 iteration\nrange_start 2 3 15 iteration\n"
			  "range_end 1 2 20\nrange_end 2 3 30\nend 4\n",
			  "a.ktrace:7: the 'iteration' range starting here overlaps the one of line 6");
	expect_attr_error(HEAD "range_start 1 2 10 iteration\nrange_end 1 2 20\n"
			  "api 4 2 11 12\napi 4 3 11 12\nend 4\n",
			  "api: CORR 4 on thread 3, but line 8 gives it thread 2");
}

/* A range left open at the end of the file: counted, and open until the
 * trace's last timestamp (the kernel's end here). */
static void test_unclosed(void **state)
{
	static const char text[] = HEAD
		"range_start 1 2 10 iteration\n"
		"range_start 2 2 11 backward\n"
		"api 4 2 12 13\n"
		"kernel 4 9 100 160\n"
		"end 4\n";
	struct hb_error err = { 0 };
	struct hb_ktrace t = { 0 };
	struct hb_kt_result r = { 0 };

	(void)state;
	assert_int_equal(hb_ktrace_parse(text, strlen(text), "u.ktrace", &t, &err), 0);
	assert_int_equal(t.unclosed, 2);
	assert_int_equal(t.ranges[0].end_ns, 160);
	assert_int_equal(hb_ktrace_attribute(&t, NULL, &r, &err), 0);
	assert_true(fabs(r.iters[0].iter_s - 150e-9) < 1e-15);
	check_phase(&r.iters[0].ph[HB_KT_BWD], 60e-6, 60e-6, 60e-6, 1, 1);
	hb_kt_result_free(&r);
	hb_ktrace_free(&t);
}

/* Random nested push/pop ranges on a few threads and kernels launched at
 * random times: every kernel's phase, as hb_ktrace_attribute counts them
 * per iteration, against a brute-force search for the innermost phase
 * range open on its thread at its launch. */
#define RT_THREADS 3
#define RT_MAXR 400
#define RT_MAXK 600

struct rt_range { uint32_t tid; uint64_t s, e; int phase; /* -1: iteration or other name */ };

static void test_random_oracle(void **state)
{
	static const char *const names[] = { "data", "forward", "backward", "aggregation", "optimizer",
					     "weight_copy", "layer" };
	struct hb_rng rng;

	(void)state;
	hb_rng_seed(&rng, 12, 0);
	for (int round = 0; round < 40; round++) {
		static char text[1 << 17];
		static struct rt_range rr[RT_MAXR];
		size_t pos = 0;
		int nr = 0, nrec = 0, niter = 2 + (int)(hb_rng_u64(&rng) % 3);
		long expect[8][HB_KT_NPHASES] = { { 0 } };
		uint64_t iter_len = 10000;
		struct hb_error err = { 0 };
		struct hb_ktrace t = { 0 };
		struct hb_kt_result r = { 0 };
		uint32_t corr = 1, id = 1;

		pos += (size_t)snprintf(text + pos, sizeof(text) - pos, HEAD);
		for (int it = 0; it < niter; it++) {
			uint64_t base = 1000 + (uint64_t)it * iter_len;
			uint32_t iter_id = id;

			pos += (size_t)snprintf(text + pos, sizeof(text) - pos, "range_start %u 1 %llu iteration\n",
						id++, (unsigned long long)base);
			nrec++;
			/* per thread: a sequence of nested push/pop, depth <= 3 */
			for (uint32_t tid = 1; tid <= RT_THREADS; tid++) {
				uint64_t now = base + 1;
				int stack[4], depth = 0;

				while (now < base + iter_len - 40 && nr < RT_MAXR - 4) {
					uint64_t step = 1 + hb_rng_u64(&rng) % 30;
					int what = (int)(hb_rng_u64(&rng) % 3);

					now += step;
					if (what == 0 && depth < 3) {
						int nm = (int)(hb_rng_u64(&rng) % 7);

						rr[nr] = (struct rt_range){ tid, now, UINT64_MAX, nm < 6 ? nm : -1 };
						stack[depth++] = nr++;
						pos += (size_t)snprintf(text + pos, sizeof(text) - pos,
									"range_start %u %u %llu %s\n", id++, tid,
									(unsigned long long)now, names[nm]);
						nrec++;
					} else if (what == 1 && depth > 0) {
						rr[stack[--depth]].e = now;
						/* pop by thread: id 0 matches no open range */
						pos += (size_t)snprintf(text + pos, sizeof(text) - pos,
									"range_end 0 %u %llu\n", tid,
									(unsigned long long)now);
						nrec++;
					} else if (nrec < RT_MAXK) {
						/* a kernel launched now; its phase by brute force */
						int best = -1;
						uint64_t best_s = 0;

						for (int k = 0; k < nr; k++)
							if (rr[k].tid == tid && rr[k].phase >= 0 && rr[k].s <= now &&
							    now <= rr[k].e && (best < 0 || rr[k].s >= best_s)) {
								best = k;
								best_s = rr[k].s;
							}
						expect[it][best < 0 ? HB_KT_OTHER : rr[best].phase]++;
						pos += (size_t)snprintf(text + pos, sizeof(text) - pos,
									"api %u %u %llu %llu\nkernel %u %u %llu %llu\n",
									corr, tid, (unsigned long long)now,
									(unsigned long long)now, corr, tid,
									(unsigned long long)now + 50,
									(unsigned long long)now + 60);
						corr++;
						nrec += 2;
					}
				}
				while (depth > 0) {
					now++;
					rr[stack[--depth]].e = now;
					pos += (size_t)snprintf(text + pos, sizeof(text) - pos, "range_end 0 %u %llu\n", tid,
								(unsigned long long)now);
					nrec++;
				}
			}
			pos += (size_t)snprintf(text + pos, sizeof(text) - pos, "range_end %u 1 %llu\n", iter_id,
						(unsigned long long)(base + iter_len - 1));
			nrec++;
		}
		pos += (size_t)snprintf(text + pos, sizeof(text) - pos, "end %d\n", nrec);
		assert_true(pos < sizeof(text) - 1);
		if (hb_ktrace_parse(text, pos, "random.ktrace", &t, &err))
			fail_msg("round %d: %s", round, err.msg);
		assert_int_equal(hb_ktrace_attribute(&t, NULL, &r, &err), 0);
		assert_int_equal(r.niters, niter);
		for (int it = 0; it < niter; it++)
			for (int p = 0; p < HB_KT_NPHASES; p++)
				if (r.iters[it].ph[p].nrecs != expect[it][p])
					fail_msg("round %d iteration %d phase %s: %ld records, brute force %ld", round, it,
						 hb_kt_phase_name(p), r.iters[it].ph[p].nrecs, expect[it][p]);
		hb_kt_result_free(&r);
		hb_ktrace_free(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_vsw),
		cmocka_unit_test(test_phase_names),
		cmocka_unit_test(test_dropped),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_attribution_errors),
		cmocka_unit_test(test_unclosed),
		cmocka_unit_test(test_random_oracle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
