/* Sia's heterogeneity-unaware Pollux, its pure parts (sim/policies/pollux/
 * pollux_vnodes.h; siasosp23/artifacts sia-simulator/cluster_unaware.py):
 *  - sia-hetero's 16 vnodes of 4 GPUs in the artifact's order (T4 0-5,
 *    A100 6-9, RTX 10-15, two per 8-GPU node), and a node whose GPU count
 *    is not a multiple of the smallest node's refused by name;
 *  - the repair (fix_allocations_by_dropping) against an oracle written
 *    from the artifact's Python, Counter.most_common's stable order and
 *    all, on every row of 0-2 GPUs over a 6-vnode cluster of three types
 *    (729 rows), on hand-made rows, and on one of ten types;
 *  - vnode rows to node rows and back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "catalog.h"
#include "pollux_vnodes.h"

static struct hb_catalog cat;

static int setup(void **state)
{
	struct hb_error err = { 0 };

	(void)state;
	if (hb_catalog_load_builtin(&cat, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hb_catalog_free(&cat);
	return 0;
}

static void test_sia_hetero(void **state)
{
	const struct hb_cluster *cl = hb_catalog_cluster(&cat, "sia-hetero");
	struct hb_vnodes v;
	struct hb_error err = { 0 };
	int t4 = hb_catalog_gpu_index(&cat, "t4"), a100 = hb_catalog_gpu_index(&cat, "a100-40gb"),
	    rtx = hb_catalog_gpu_index(&cat, "rtx-2080ti");

	(void)state;
	assert_non_null(cl);
	assert_int_equal(hb_vnodes_init(&v, cl, &err), 0);
	assert_int_equal(v.per, 4);
	assert_int_equal(v.n, 16);
	for (int k = 0; k < 16; k++) {
		int want_node = k < 6 ? k : k < 10 ? 6 + (k - 6) / 2 : 8 + (k - 10) / 2;

		assert_int_equal(v.node[k], want_node);
		assert_int_equal(v.type[k], k < 6 ? t4 : k < 10 ? a100 : rtx);
	}
	assert_int_equal(v.first[6], 6);
	assert_int_equal(v.first[7], 8);
	assert_int_equal(v.first[10], 14);
	hb_vnodes_free(&v);
}

static void test_not_a_multiple(void **state)
{
	struct hb_node nodes[2] = { { .name = "small", .ngpus = 4 }, { .name = "odd", .ngpus = 6 } };
	struct hb_cluster cl = { .name = "mixed", .nodes = nodes, .nnodes = 2, .ngpus = 10 };
	struct hb_vnodes v;
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_vnodes_init(&v, &cl, &err), -1);
	assert_non_null(strstr(err.msg, "node odd has 6 GPUs"));
	assert_non_null(strstr(err.msg, "smallest node's 4"));
}

/* The artifact's rule as its Python reads (fix_allocations_by_dropping):
 * allocation list in vnode order, Counter(types).most_common() (count
 * descending, ties in first-insertion order), one type: as is; else the
 * first, or the second when their counts tie and it ranks higher. */
static void oracle(const struct hb_vnodes *v, const double *tflops, int *row)
{
	int order[16], cnt[16], n = 0, keep, sorted[16];

	for (int k = 0; k < v->n; k++)
		for (int g = 0; g < row[k]; g++) {
			int i = 0;

			while (i < n && order[i] != v->type[k])
				i++;
			if (i == n) {
				order[n] = v->type[k];
				cnt[n++] = 0;
			}
			cnt[i]++;
		}
	if (n <= 1)
		return;
	for (int i = 0; i < n; i++)
		sorted[i] = i;
	for (int i = 1; i < n; i++) /* insertion sort: stable */
		for (int j = i; j > 0 && cnt[sorted[j]] > cnt[sorted[j - 1]]; j--) {
			int t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	keep = order[sorted[0]];
	if (cnt[sorted[0]] == cnt[sorted[1]] && tflops[order[sorted[1]]] > tflops[keep])
		keep = order[sorted[1]];
	for (int k = 0; k < v->n; k++)
		if (v->type[k] != keep)
			row[k] = 0;
}

static void test_repair_against_oracle(void **state)
{
	/* three types, the strongest in the middle, vnodes a a b b c c */
	int node[6] = { 0, 1, 2, 3, 4, 5 }, first[6] = { 0, 1, 2, 3, 4, 5 }, type[6] = { 0, 0, 1, 1, 2, 2 };
	const struct hb_vnodes v = { .per = 2, .n = 6, .node = node, .first = first, .type = type };
	const double tflops[3] = { 8.1, 19.5, 13.4 };
	int rows = 0, dropped_rows = 0;

	(void)state;
	for (int code = 0; code < 729; code++) {
		int row[6], want[6], c = code, before = 0, after = 0, d;

		for (int k = 0; k < 6; k++, c /= 3)
			row[k] = want[k] = c % 3;
		for (int k = 0; k < 6; k++)
			before += row[k];
		oracle(&v, tflops, want);
		d = hb_vnodes_drop_minority(&v, tflops, row);
		assert_memory_equal(row, want, sizeof(row));
		for (int k = 0; k < 6; k++)
			after += row[k];
		assert_int_equal(d, before - after);
		rows++;
		dropped_rows += d > 0;
	}
	assert_int_equal(rows, 729);
	assert_true(dropped_rows > 300);
}

static void test_repair_by_hand(void **state)
{
	int node[4] = { 0, 1, 2, 3 }, first[4] = { 0, 1, 2, 3 }, type[4] = { 0, 1, 2, 0 };
	const struct hb_vnodes v = { .per = 4, .n = 4, .node = node, .first = first, .type = type };
	const double tflops[3] = { 8.1, 19.5, 13.4 }; /* T4, A100, 2080Ti */
	int a[4] = { 3, 1, 0, 0 }, b[4] = { 2, 2, 0, 0 }, c[4] = { 1, 0, 1, 1 }, d[4] = { 1, 1, 1, 0 },
	    e[4] = { 0, 0, 0, 0 }, f[4] = { 2, 0, 0, 2 };

	(void)state;
	assert_int_equal(hb_vnodes_drop_minority(&v, tflops, a), 1); /* majority T4 */
	assert_int_equal(a[0], 3);
	assert_int_equal(a[1], 0);
	assert_int_equal(hb_vnodes_drop_minority(&v, tflops, b), 2); /* 2 : 2, the A100 */
	assert_int_equal(b[0], 0);
	assert_int_equal(b[1], 2);
	assert_int_equal(hb_vnodes_drop_minority(&v, tflops, c), 1); /* T4 on two vnodes: 2 against 1 */
	assert_int_equal(c[0] + c[3], 2);
	assert_int_equal(c[2], 0);
	/* three-way tie: only T4 and A100 (first two seen) compared: the A100 */
	assert_int_equal(hb_vnodes_drop_minority(&v, tflops, d), 2);
	assert_int_equal(d[1], 1);
	assert_int_equal(hb_vnodes_drop_minority(&v, tflops, e), 0);
	assert_int_equal(hb_vnodes_drop_minority(&v, tflops, f), 0); /* one type on two vnodes */
	assert_int_equal(f[0] + f[3], 4);
}

/* Any number of types: on a row over ten types the tenth, with the most
 * GPUs, is kept. */
static void test_repair_many_types(void **state)
{
	int node[10], first[10], type[10], row[10];
	double tflops[10];
	const struct hb_vnodes v = { .per = 4, .n = 10, .node = node, .first = first, .type = type };

	(void)state;
	for (int k = 0; k < 10; k++) {
		node[k] = first[k] = type[k] = k;
		tflops[k] = 10.0 - k; /* the tenth is the slowest: no tie to break */
		row[k] = 1;
	}
	row[9] = 3;
	assert_int_equal(hb_vnodes_drop_minority(&v, tflops, row), 9);
	for (int k = 0; k < 9; k++)
		assert_int_equal(row[k], 0);
	assert_int_equal(row[9], 3);
}

static void test_node_rows(void **state)
{
	const struct hb_cluster *cl = hb_catalog_cluster(&cat, "sia-hetero");
	struct hb_vnodes v;
	struct hb_error err = { 0 };
	int grant[11] = { 0 }, row[16], back[11];

	(void)state;
	assert_int_equal(hb_vnodes_init(&v, cl, &err), 0);
	grant[2] = 3;  /* a T4 node */
	grant[6] = 6;  /* the first A100 node: 4 + 2 */
	grant[10] = 8; /* the last 2080Ti node: 4 + 4 */
	hb_vnodes_from_nodes(&v, grant, cl->nnodes, row);
	assert_int_equal(row[2], 3);
	assert_int_equal(row[6], 4);
	assert_int_equal(row[7], 2);
	assert_int_equal(row[14], 4);
	assert_int_equal(row[15], 4);
	hb_vnodes_to_nodes(&v, row, cl->nnodes, back);
	assert_memory_equal(back, grant, sizeof(grant));
	/* GPUs moved between a node's vnodes: the same node row */
	row[6] = 1;
	row[7] = 5 > v.per ? v.per : 5;
	row[6] = 6 - row[7];
	hb_vnodes_to_nodes(&v, row, cl->nnodes, back);
	assert_memory_equal(back, grant, sizeof(grant));
	hb_vnodes_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sia_hetero),
		cmocka_unit_test(test_not_a_multiple),
		cmocka_unit_test(test_repair_against_oracle),
		cmocka_unit_test(test_repair_by_hand),
		cmocka_unit_test(test_repair_many_types),
		cmocka_unit_test(test_node_rows),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
