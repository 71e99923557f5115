/* Unit tests for solver/alloc: JABAS candidate allocations Q
 * (notes/jabas.md §4.3).  The oracle replays the artifact's rule
 * (cluster_manager.py, read for behaviour only): units listed node by node,
 * every r-combination in lexicographic order for r = 1, 2, ..., keeping the
 * first combination of each per-node count (and, when merging, of each
 * ordered list of server classes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "alloc.h"

#define MAXN 32

/* ------------------------------------------------------------------------ */
/* Hand-built catalog and clusters (no JSON data)                            */
/* ------------------------------------------------------------------------ */

/* A cluster with the catalog it refers to, all on the caller's stack. */
struct cluster_buf {
	struct hb_gpu gpus[6];
	struct hb_catalog cat;
	struct hb_cluster cl;
	struct hb_node nodes[MAXN];
};

static struct hb_cluster *make_cluster(struct cluster_buf *b, const char *name, int n,
				       const int *gpu, const int *ngpus)
{
	const char *types[6] = { "v100", "p100", "titan-rtx", "rtx3090", "rtx2060", "p4000" };

	memset(b, 0, sizeof(*b));
	for (int i = 0; i < 6; i++)
		snprintf(b->gpus[i].name, sizeof(b->gpus[i].name), "%s", types[i]);
	b->cat.gpus = b->gpus;
	b->cat.ngpus = 6;
	snprintf(b->cl.name, sizeof(b->cl.name), "%s", name);
	b->cl.nodes = b->nodes;
	b->cl.nnodes = n;
	for (int i = 0; i < n; i++) {
		struct hb_node *nd = &b->nodes[i];

		snprintf(nd->name, sizeof(nd->name), "node%d", i);
		nd->gpu = gpu[i];
		nd->ngpus = ngpus[i];
		nd->intra_bw = 16e9;
		nd->inter_bw = 12.5e9;
		snprintf(nd->intra_link, sizeof(nd->intra_link), "pcie3-x16");
		snprintf(nd->inter_link, sizeof(nd->inter_link), "ib-100g");
		b->cl.ngpus += ngpus[i];
	}
	return &b->cl;
}

/* JABAS cluster A: 4 nodes x 4 GPUs, four types (V100, P100, TITAN RTX, 3090). */
static struct hb_cluster *cluster_a(struct cluster_buf *b)
{
	const int g[] = { 0, 1, 2, 3 }, m[] = { 4, 4, 4, 4 };

	return make_cluster(b, "jabas-a", 4, g, m);
}

/* JABAS cluster B: 8 x 4, 2060 x2, P4000 x2, TITAN V (here V100 slot) x2,
 * TITAN RTX x2, same-type nodes adjacent as in the paper. */
static struct hb_cluster *cluster_b(struct cluster_buf *b)
{
	const int g[] = { 4, 4, 5, 5, 0, 0, 2, 2 }, m[] = { 4, 4, 4, 4, 4, 4, 4, 4 };

	return make_cluster(b, "jabas-b", 8, g, m);
}

/* ------------------------------------------------------------------------ */
/* Oracle: the artifact's first-occurrence rule over lexicographic combinations */
/* ------------------------------------------------------------------------ */

struct seen {                  /* open-addressing set of nonzero 64-bit keys */
	uint64_t *slot;
	size_t size;
};

static int seen_add(struct seen *s, uint64_t key)   /* 1 if new */
{
	size_t h = (size_t)(key * 0x9E3779B97F4A7C15ull) & (s->size - 1);

	while (s->slot[h]) {
		if (s->slot[h] == key)
			return 0;
		h = (h + 1) & (s->size - 1);
	}
	s->slot[h] = key;
	return 1;
}

/* Fills want[ncand][nnodes]; returns ncand. */
static size_t oracle(const struct hb_cluster *cl, int u, int merge, const int *cls, int nclasses,
		     int *want, size_t cap)
{
	int unit_node[64], nunits = 0, n = cl->nnodes;
	size_t count = 0;
	struct seen names = { calloc(1 << 20, 8), 1 << 20 }, devs = { calloc(1 << 20, 8), 1 << 20 };

	for (int i = 0; i < n; i++)
		for (int k = 0; k < cl->nodes[i].ngpus / u; k++)
			unit_node[nunits++] = i;
	for (int r = 1; r <= nunits; r++) {
		int idx[64];

		for (int i = 0; i < r; i++)
			idx[i] = i;
		for (;;) {
			int per_node[MAXN] = { 0 };
			uint64_t nkey = 1, dkey = 1;

			for (int i = 0; i < r; i++) {
				per_node[unit_node[idx[i]]]++;
				dkey = dkey * (uint64_t)(nclasses + 1) + (uint64_t)cls[unit_node[idx[i]]] + 1;
			}
			for (int i = 0; i < n; i++)
				nkey = nkey * 17 + (uint64_t)per_node[i];
			/* the artifact checks both lists before registering either */
			{
				int new_name = seen_add(&names, nkey);
				int new_dev = merge ? seen_add(&devs, dkey) : 1;

				if (new_name && new_dev) {
					assert_true(count < cap);
					memcpy(want + count * (size_t)n, per_node, (size_t)n * sizeof(int));
					count++;
				}
			}
			/* next combination in lexicographic order */
			{
				int i = r - 1;

				while (i >= 0 && idx[i] == nunits - r + i)
					i--;
				if (i < 0)
					break;
				idx[i]++;
				for (int j = i + 1; j < r; j++)
					idx[j] = idx[j - 1] + 1;
			}
		}
	}
	free(names.slot);
	free(devs.slot);
	return count;
}

static void expect_oracle_order(const struct hb_catalog *cat, const struct hb_cluster *cl, int u,
				int merge, size_t want_n)
{
	struct hb_alloc_set s;
	struct hb_error err = { 0 };
	int *want = malloc(want_n * (size_t)cl->nnodes * sizeof(int));
	int cls[MAXN];
	size_t n;
	uint64_t c;

	assert_int_equal(hb_alloc_enumerate(cl, cat, u, merge, 0, &s, &err), 0);
	for (int i = 0; i < cl->nnodes; i++)
		cls[i] = s.node_class[i];
	n = oracle(cl, u, merge, cls, s.nclasses, want, want_n);
	assert_int_equal(n, want_n);
	assert_int_equal(s.ncand, want_n);
	assert_int_equal(hb_alloc_count(cl, cat, u, merge, &c, &err), 0);
	assert_int_equal(c, want_n);
	for (size_t i = 0; i < n; i++)
		if (memcmp(hb_alloc_node_units(&s, i), want + i * (size_t)cl->nnodes,
			   (size_t)cl->nnodes * sizeof(int)) != 0)
			fail_msg("%s u=%d merge=%d: candidate %zu differs from the artifact's order",
				 cl->name, u, merge, i);
	hb_alloc_free(&s);
	free(want);
}

/* ------------------------------------------------------------------------ */
/* Counts and order on the JABAS clusters                                    */
/* ------------------------------------------------------------------------ */

static void test_cluster_a_counts_and_order(void **state)
{
	struct cluster_buf b;
	struct hb_cluster *cl = cluster_a(&b);
	struct hb_alloc_set s;
	struct hb_error err = { 0 };

	(void)state;
	expect_oracle_order(&b.cat, cl, 2, 0, 80);       /* 3^4 - 1 */
	expect_oracle_order(&b.cat, cl, 4, 0, 15);       /* 2^4 - 1 */
	/* four distinct types: merging changes nothing */
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 2, 1, 0, &s, &err), 0);
	assert_int_equal(s.ncand, 80);
	assert_int_equal(s.ncand_unmerged, 80);
	assert_int_equal(s.nclasses, 4);
	hb_alloc_free(&s);
	/* first and last candidates: one pair on node 0; everything */
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 2, 0, 0, &s, &err), 0);
	assert_int_equal(hb_alloc_node_units(&s, 0)[0], 1);
	assert_int_equal(hb_alloc_ngpus(&s, 0), 2);
	assert_int_equal(hb_alloc_ngpus(&s, 79), 16);
	/* among 2-pair candidates (2,0,0,0) comes before (1,1,0,0) */
	assert_int_equal(hb_alloc_node_units(&s, 4)[0], 2);
	assert_int_equal(hb_alloc_node_units(&s, 5)[0], 1);
	assert_int_equal(hb_alloc_node_units(&s, 5)[1], 1);
	hb_alloc_free(&s);
}

static void test_cluster_b_counts_and_order(void **state)
{
	struct cluster_buf b;
	struct hb_cluster *cl = cluster_b(&b);

	(void)state;
	expect_oracle_order(&b.cat, cl, 2, 0, 6560);     /* 3^8 - 1 */
	expect_oracle_order(&b.cat, cl, 4, 0, 255);      /* 2^8 - 1 */
	expect_oracle_order(&b.cat, cl, 2, 1, 624);      /* 5^4 - 1 */
	expect_oracle_order(&b.cat, cl, 4, 1, 80);       /* 3^4 - 1 */
}

/* Merged Q by brute-force de-duplication: the distinct units-per-class
 * vectors of unmerged Q are exactly the merged candidates, each once, and the
 * merged list is the packed subsequence of the unmerged list. */
static void test_cluster_b_merge_bruteforce(void **state)
{
	struct cluster_buf b;
	struct hb_cluster *cl = cluster_b(&b);

	(void)state;
	for (int u = 2; u <= 4; u += 2) {
		struct hb_alloc_set full, merged;
		struct hb_error err = { 0 };
		unsigned char seen[5 * 5 * 5 * 5] = { 0 };
		size_t distinct = 0, j = 0;

		assert_int_equal(hb_alloc_enumerate(cl, &b.cat, u, 0, 0, &full, &err), 0);
		assert_int_equal(hb_alloc_enumerate(cl, &b.cat, u, 1, 0, &merged, &err), 0);
		assert_int_equal(merged.nclasses, 4);
		assert_int_equal(merged.ncand_unmerged, full.ncand);
		for (int c = 0; c < 4; c++) {
			assert_int_equal(merged.classes[c].nnodes, 2);
			assert_int_equal(merged.classes[c].max_units, 2 * (4 / u));
		}
		for (size_t i = 0; i < full.ncand; i++) {
			const int *nu = hb_alloc_node_units(&full, i);
			int key = 0, packed = 1;

			for (int c = 0; c < 4; c++) {
				int a = nu[2 * c], bb = nu[2 * c + 1];

				key = key * 5 + a + bb;
				packed &= bb == 0 || a == 4 / u;
			}
			if (!seen[key]) {
				seen[key] = 1;
				distinct++;
			}
			if (packed) {
				assert_true(j < merged.ncand);
				assert_memory_equal(hb_alloc_node_units(&merged, j), nu,
						    8 * sizeof(int));
				j++;
			}
		}
		assert_int_equal(distinct, merged.ncand);
		assert_int_equal(j, merged.ncand);
		for (size_t i = 0; i < merged.ncand; i++) {
			const int *cu = hb_alloc_class_units(&merged, i);
			const int *nu = hb_alloc_node_units(&merged, i);

			for (int c = 0; c < 4; c++)
				assert_int_equal(cu[c], nu[2 * c] + nu[2 * c + 1]);
		}
		hb_alloc_free(&full);
		hb_alloc_free(&merged);
	}
}

/* Order invariants and the GPU list on every candidate of cluster B. */
static void test_order_and_gpu_lists(void **state)
{
	struct cluster_buf b;
	struct hb_cluster *cl = cluster_b(&b);
	struct hb_alloc_set s;
	struct hb_error err = { 0 };
	struct hb_alloc_gpu g[32];

	(void)state;
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 2, 0, 0, &s, &err), 0);
	for (size_t i = 0; i < s.ncand; i++) {
		const int *nu = hb_alloc_node_units(&s, i);
		int total = 0, n;

		for (int k = 0; k < 8; k++)
			total += nu[k];
		assert_int_equal(total, s.total_units[i]);
		assert_true(total >= 1);
		if (i > 0) {
			const int *pv = hb_alloc_node_units(&s, i - 1);

			assert_true(s.total_units[i - 1] <= total);
			if (s.total_units[i - 1] == total) {
				int k = 0;

				while (k < 8 && pv[k] == nu[k])
					k++;
				assert_true(k < 8 && pv[k] > nu[k]);   /* descending lex */
			}
		}
		n = hb_alloc_gpus(&s, i, g);
		assert_int_equal(n, hb_alloc_ngpus(&s, i));
		assert_int_equal(n, 2 * total);
		for (int k = 0, node = 0, used = 0; k < n; k++) {
			while (g[k].node != node) {
				assert_int_equal(used, 2 * nu[node]);
				node++;
				used = 0;
			}
			assert_int_equal(g[k].local, used);   /* units are consecutive GPUs */
			used++;
		}
	}
	hb_alloc_free(&s);
}

/* ------------------------------------------------------------------------ */
/* Units that do not divide a node                                           */
/* ------------------------------------------------------------------------ */

static void test_odd_gpu_is_unused(void **state)
{
	const int g[] = { 0, 1 }, m[] = { 5, 4 };
	struct cluster_buf b;
	struct hb_cluster *cl = make_cluster(&b, "odd", 2, g, m);
	struct hb_alloc_set s;
	struct hb_error err = { 0 };
	struct hb_alloc_gpu gl[16];
	int saw_node0_full = 0;

	(void)state;
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 2, 0, 0, &s, &err), 0);
	assert_int_equal(s.ncand, 8);            /* (2+1)(2+1) - 1: GPU 4 of node 0 unused */
	for (size_t i = 0; i < s.ncand; i++) {
		int n = hb_alloc_gpus(&s, i, gl);

		for (int k = 0; k < n; k++)
			assert_true(!(gl[k].node == 0 && gl[k].local >= 4));
		saw_node0_full |= hb_alloc_node_units(&s, i)[0] == 2;
	}
	assert_true(saw_node0_full);
	hb_alloc_free(&s);
	expect_oracle_order(&b.cat, cl, 2, 0, 8);
}

static void test_unit_not_dividing_nodes(void **state)
{
	const int g[] = { 0, 0, 1 }, m[] = { 6, 6, 2 }, g2[] = { 0, 1 }, m2[] = { 2, 3 };
	struct cluster_buf b;
	struct hb_cluster *cl = make_cluster(&b, "six", 3, g, m);
	struct hb_alloc_set s;
	struct hb_error err = { 0 };
	struct hb_alloc_gpu gl[16];
	uint64_t c;

	(void)state;
	/* 4-GPU units: one per 6-GPU node (GPUs 4, 5 idle), none on the 2-GPU node */
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 4, 0, 0, &s, &err), 0);
	assert_int_equal(s.ncand, 3);
	for (size_t i = 0; i < s.ncand; i++) {
		int n = hb_alloc_gpus(&s, i, gl);

		assert_int_equal(hb_alloc_node_units(&s, i)[2], 0);
		for (int k = 0; k < n; k++)
			assert_true(gl[k].local < 4);
	}
	hb_alloc_free(&s);
	/* merged: the two 6-GPU nodes are one class of 2 units */
	assert_int_equal(hb_alloc_count(cl, &b.cat, 4, 1, &c, &err), 0);
	assert_int_equal(c, 2);
	/* 3-GPU units: two per 6-GPU node, none on the 2-GPU node: 3*3 - 1 */
	assert_int_equal(hb_alloc_count(cl, &b.cat, 3, 0, &c, &err), 0);
	assert_int_equal(c, 8);
	expect_oracle_order(&b.cat, cl, 3, 0, 8);
	/* no node holds a whole unit */
	cl = make_cluster(&b, "small", 2, g2, m2);
	hb_error_clear(&err);
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 4, 0, 0, &s, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "'small'"));
	assert_null(s.node_units);
	assert_int_equal(hb_alloc_count(cl, &b.cat, 4, 0, &c, &err), -1);
}

/* ------------------------------------------------------------------------ */
/* Merging rules, limits and input errors                                    */
/* ------------------------------------------------------------------------ */

static void test_merge_needs_identical_links(void **state)
{
	const int g[] = { 0, 0, 0 }, m[] = { 4, 4, 4 };
	struct cluster_buf b;
	struct hb_cluster *cl = make_cluster(&b, "links", 3, g, m);
	uint64_t c;
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(hb_alloc_count(cl, &b.cat, 2, 1, &c, &err), 0);
	assert_int_equal(c, 6);                  /* one class of 6 pairs */
	b.nodes[2].inter_bw = 3.125e9;           /* 25 GbE instead of 100 Gb IB */
	assert_int_equal(hb_alloc_count(cl, &b.cat, 2, 1, &c, &err), 0);
	assert_int_equal(c, 5 * 3 - 1);
	b.nodes[2].inter_bw = b.nodes[0].inter_bw;
	b.nodes[1].rack = 1;
	assert_int_equal(hb_alloc_count(cl, &b.cat, 2, 1, &c, &err), 0);
	assert_int_equal(c, 5 * 3 - 1);
	b.nodes[1].rack = 0;
	snprintf(b.nodes[0].intra_link, sizeof(b.nodes[0].intra_link), "nvlink");
	assert_int_equal(hb_alloc_count(cl, &b.cat, 2, 1, &c, &err), 0);
	assert_int_equal(c, 3 * 5 - 1);
}

/* Identical servers that are not adjacent still merge (the artifact would
 * not, see alloc.h); the result is the packed subsequence of unmerged Q. */
static void test_merge_non_adjacent(void **state)
{
	const int g[] = { 0, 1, 0 }, m[] = { 4, 4, 4 };
	struct cluster_buf b;
	struct hb_cluster *cl = make_cluster(&b, "split", 3, g, m);
	struct hb_alloc_set full, merged;
	struct hb_error err = { 0 };
	size_t j = 0;

	(void)state;
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 4, 0, 0, &full, &err), 0);
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 4, 1, 0, &merged, &err), 0);
	assert_int_equal(full.ncand, 7);
	assert_int_equal(merged.ncand, 5);       /* (2+1)(1+1) - 1 */
	assert_int_equal(merged.ncand_unmerged, 7);
	assert_int_equal(merged.node_class[0], merged.node_class[2]);
	for (size_t i = 0; i < full.ncand; i++) {
		const int *nu = hb_alloc_node_units(&full, i);

		if (nu[2] == 0 || nu[0] == 1) {  /* packed: node 2 only after node 0 is full */
			assert_memory_equal(hb_alloc_node_units(&merged, j), nu, 3 * sizeof(int));
			j++;
		}
	}
	assert_int_equal(j, 5);
	/* order: (1,0,0) (0,1,0) | (1,1,0) (1,0,1) | (1,1,1) */
	assert_int_equal(hb_alloc_node_units(&merged, 3)[2], 1);
	assert_int_equal(hb_alloc_class_units(&merged, 3)[merged.node_class[0]], 2);
	hb_alloc_free(&full);
	hb_alloc_free(&merged);
}

static void test_limits_and_errors(void **state)
{
	int g[MAXN], m[MAXN];
	struct cluster_buf b;
	struct hb_cluster *cl;
	struct hb_alloc_set s;
	struct hb_error err = { 0 };
	uint64_t c;

	(void)state;
	for (int i = 0; i < MAXN; i++) {
		g[i] = 1;
		m[i] = 4;
	}
	cl = make_cluster(&b, "big", 20, g, m);
	assert_int_equal(hb_alloc_count(cl, &b.cat, 2, 0, &c, &err), 0);
	assert_int_equal(c, 3486784400ull);      /* 3^20 - 1 */
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 2, 0, 0, &s, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_non_null(strstr(err.msg, "limit"));
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 2, 1, 0, &s, &err), 0);
	assert_int_equal(s.ncand, 40);           /* one class of 40 pairs */
	assert_int_equal(s.ncand_unmerged, 3486784400ull);
	for (size_t i = 0; i < s.ncand; i++)
		assert_int_equal(s.total_units[i], (int)i + 1);
	hb_alloc_free(&s);
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 4, 0, 100, &s, &err), -1);   /* 2^20 - 1 */
	/* 32 nodes of 3 pairs: 4^32 overflows 64 bits */
	cl = make_cluster(&b, "huge", 32, g, m);
	for (int i = 0; i < 32; i++)
		b.nodes[i].ngpus = 6;
	assert_int_equal(hb_alloc_count(cl, &b.cat, 2, 0, &c, &err), -1);  /* 4^32 */
	assert_non_null(strstr(err.msg, "overflows"));
	assert_int_equal(hb_alloc_count(cl, &b.cat, 2, 1, &c, &err), 0);
	assert_int_equal(c, 96);
	assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 2, 1, 0, &s, &err), 0);
	assert_true(s.ncand_unmerged == UINT64_MAX);
	hb_alloc_free(&s);

	cl = cluster_a(&b);
	hb_error_clear(&err);
	assert_int_equal(hb_alloc_count(cl, &b.cat, 0, 0, &c, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	b.nodes[1].gpu = 9;
	assert_int_equal(hb_alloc_count(cl, &b.cat, 2, 0, &c, &err), -1);
	assert_non_null(strstr(err.msg, "field 'gpu'"));
	assert_int_equal(hb_alloc_count(cl, NULL, 2, 0, &c, &err), 0);   /* unchecked without a catalog */
	b.cl.nnodes = 0;
	assert_int_equal(hb_alloc_count(cl, &b.cat, 2, 0, &c, &err), -1);
}

/* The bounded enumeration is the prefix of Q up to a size, and the count
 * of a prefix matches it, on mixed clusters (nodes of 0-8 GPUs, a few
 * types, merged and not): what the JABAS agent builds for an offer. */
static void test_enumerate_upto_is_prefix(void **state)
{
	uint64_t x = 88172645463325252ULL;

	(void)state;
	for (int it = 0; it < 60; it++) {
		struct cluster_buf b;
		int n = 1 + (int)(x % 6), gpu[MAXN], ngpus[MAXN];
		struct hb_cluster *cl;

		for (int i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			gpu[i] = (int)(x % 2);
			ngpus[i] = (int)((x >> 8) % 9);
		}
		ngpus[0] = ngpus[0] < 2 ? 2 : ngpus[0];
		cl = make_cluster(&b, "mixed", n, gpu, ngpus);
		for (int merge = 0; merge <= 1; merge++) {
			struct hb_alloc_set full;
			struct hb_error err = { 0 };

			assert_int_equal(hb_alloc_enumerate(cl, &b.cat, 2, merge, 0, &full, &err), 0);
			for (int mu = -1; mu <= cl->ngpus / 2 + 1; mu++) {
				struct hb_alloc_set part;
				uint64_t cnt = 0;
				size_t k = 0;

				assert_int_equal(hb_alloc_enumerate_upto(cl, &b.cat, 2, merge, 0, mu, &part, &err), 0);
				assert_int_equal(hb_alloc_count_upto(cl, &b.cat, 2, merge, mu, &cnt, &err), 0);
				while (k < full.ncand && full.total_units[k] <= mu)
					k++;
				assert_int_equal(part.ncand, k);
				assert_int_equal(cnt, k);
				assert_int_equal(part.nclasses, full.nclasses);
				for (size_t i = 0; i < k; i++) {
					assert_memory_equal(hb_alloc_node_units(&part, i), hb_alloc_node_units(&full, i),
							    (size_t)n * sizeof(int));
					assert_int_equal(hb_alloc_ngpus(&part, i), hb_alloc_ngpus(&full, i));
				}
				hb_alloc_free(&part);
			}
			hb_alloc_free(&full);
		}
	}
}

/* Distinct shapes of candidates, as the JABAS agent gathers them: a shape
 * is the multiset of (node kind, units) over the used nodes; each keeps its
 * last candidate and that candidate's units. */
struct shape_log {
	int nnodes;
	const int *kind;          /* [nnodes] */
	int key[4096][MAXN], klen[4096];
	size_t last[4096];
	int units[4096][MAXN];
	int n;
	size_t seen;              /* candidates visited, and the next index expected */
	int total_bad;            /* a visit whose total is not its units' sum */
	size_t stop_at;           /* answer 7 at this candidate (SIZE_MAX: never) */
};

static void shape_add(struct shape_log *g, size_t i, const int *u)
{
	int key[MAXN], k = 0, j;

	for (int n = 0; n < g->nnodes; n++)
		if (u[n] > 0) {
			int v = g->kind[n] * 64 + u[n], a = k++;

			for (; a > 0 && key[a - 1] > v; a--)
				key[a] = key[a - 1];
			key[a] = v;
		}
	for (j = 0; j < g->n; j++)
		if (g->klen[j] == k && memcmp(g->key[j], key, (size_t)k * sizeof(int)) == 0)
			break;
	if (j == g->n) {
		assert_true(g->n < 4096);
		memcpy(g->key[j], key, (size_t)k * sizeof(int));
		g->klen[g->n++] = k;
	}
	g->last[j] = i;
	memcpy(g->units[j], u, (size_t)g->nnodes * sizeof(int));
}

static int shape_visit(void *ctx, size_t i, const int *u, int total)
{
	struct shape_log *g = ctx;
	int sum = 0;

	if (i == g->stop_at)
		return 7;
	assert_int_equal(i, g->seen);
	g->seen++;
	for (int n = 0; n < g->nnodes; n++)
		sum += u[n];
	g->total_bad |= sum != total;
	shape_add(g, i, u);
	return 0;
}

/* The visited walk is the stored Q: on random offers (nodes of 0-8 GPUs,
 * two types, two racks, merged and not, every size bound) the visitor sees
 * Q's candidates in order, the set's description and count match, and the
 * distinct shapes with their last candidates and units equal those found
 * by scanning the stored Q; a visitor's nonzero answer stops the walk and
 * is returned, and the limit refuses what hb_alloc_enumerate_upto refuses. */
static void test_visit_equals_stored(void **state)
{
	uint64_t x = 0x9E3779B97F4A7C15ULL;
	static struct shape_log a, b;

	(void)state;
	for (int it = 0; it < 60; it++) {
		struct cluster_buf cb;
		int n = 1 + (int)(x % 8), gpu[MAXN], ngpus[MAXN], kind[MAXN];
		struct hb_cluster *cl;

		for (int i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			gpu[i] = (int)(x % 2);
			ngpus[i] = (int)((x >> 8) % 9);
			kind[i] = (int)((x >> 16) % 3);
		}
		ngpus[0] = ngpus[0] < 2 ? 2 : ngpus[0];
		cl = make_cluster(&cb, "offer", n, gpu, ngpus);
		for (int i = 0; i < n; i++)
			cb.nodes[i].rack = (int)((x >> (20 + i)) & 1);
		for (int merge = 0; merge <= 1; merge++)
			for (int mu = -1; mu <= cl->ngpus / 2 + 1; mu++) {
				struct hb_alloc_set q, w;
				struct hb_error err = { 0 };

				assert_int_equal(hb_alloc_enumerate_upto(cl, &cb.cat, 2, merge, 0, mu, &q, &err), 0);
				memset(&a, 0, sizeof(a));
				a.nnodes = n;
				a.kind = kind;
				a.stop_at = SIZE_MAX;
				b = a;
				for (size_t i = 0; i < q.ncand; i++)
					shape_add(&a, i, hb_alloc_node_units(&q, i));
				assert_int_equal(hb_alloc_visit_upto(cl, &cb.cat, 2, merge, 0, mu, &w, shape_visit, &b,
								     &err), 0);
				assert_int_equal(b.seen, q.ncand);
				assert_int_equal(b.total_bad, 0);
				assert_int_equal(w.ncand, q.ncand);
				assert_int_equal(w.nclasses, q.nclasses);
				assert_int_equal(w.unit, q.unit);
				assert_int_equal(w.merged, q.merged);
				assert_int_equal(w.ncand_unmerged, q.ncand_unmerged);
				assert_memory_equal(w.node_class, q.node_class, (size_t)n * sizeof(int));
				assert_memory_equal(w.node_ngpus, q.node_ngpus, (size_t)n * sizeof(int));
				assert_null(w.node_units);
				assert_int_equal(b.n, a.n);
				for (int j = 0; j < a.n; j++) {
					assert_int_equal(b.klen[j], a.klen[j]);
					assert_memory_equal(b.key[j], a.key[j], (size_t)a.klen[j] * sizeof(int));
					assert_int_equal(b.last[j], a.last[j]);
					assert_memory_equal(b.units[j], a.units[j], (size_t)n * sizeof(int));
				}
				hb_alloc_free(&w);
				if (q.ncand > 1) {
					/* stopped halfway: the visitor's answer, nothing kept */
					memset(&b, 0, sizeof(b));
					b.nnodes = n;
					b.kind = kind;
					b.stop_at = q.ncand / 2;
					assert_int_equal(hb_alloc_visit_upto(cl, &cb.cat, 2, merge, 0, mu, &w,
									     shape_visit, &b, &err), 7);
					assert_int_equal(b.seen, q.ncand / 2);
					assert_null(w.node_class);
					/* a limit below |Q| refuses the walk as it refuses the store */
					assert_int_equal(hb_alloc_visit_upto(cl, &cb.cat, 2, merge, 1, mu, &w,
									     shape_visit, &b, &err), -1);
					assert_int_equal(err.code, HB_ERUNTIME);
				}
				hb_alloc_free(&q);
			}
	}
}

/* The brute force behind test_last_by_key: every candidate of the stored
 * Q, its key, the one of highest index kept. */
static void last_by_key_brute(const struct hb_alloc_set *q, const int *kind, int nkind, struct hb_alloc_last *out)
{
	long (*keys)[8] = malloc(8192 * sizeof(*keys));
	size_t *idx = malloc(8192 * sizeof(*idx)), nk = 0;

	assert_non_null(keys);
	assert_non_null(idx);
	memset(out, 0, sizeof(*out));
	out->nnodes = q->nnodes;
	for (size_t i = 0; i < q->ncand; i++) {
		const int *u = hb_alloc_node_units(q, i);
		long k[8] = { 0 };
		int used = 0;
		size_t j;

		for (int n = 0; n < q->nnodes; n++) {
			k[kind[n]] += u[n];
			used += u[n] > 0;
		}
		k[nkind] = used == 1;
		for (j = 0; j < nk && memcmp(keys[j], k, sizeof(k)) != 0; j++)
			;
		if (j == nk) {
			assert_true(nk < 8192);
			memcpy(keys[nk++], k, sizeof(k));
		}
		idx[j] = i; /* Q's order: the later overwrites */
	}
	/* the keys in the order of their last candidates */
	for (size_t a = 1; a < nk; a++)
		for (size_t z = a; z > 0 && idx[z] < idx[z - 1]; z--) {
			size_t t = idx[z];

			idx[z] = idx[z - 1];
			idx[z - 1] = t;
		}
	out->n = nk;
	out->node_units = malloc((nk ? nk : 1) * (size_t)q->nnodes * sizeof(int));
	out->total = malloc((nk ? nk : 1) * sizeof(int));
	assert_non_null(out->node_units);
	for (size_t a = 0; a < nk; a++) {
		memcpy(out->node_units + a * (size_t)q->nnodes, hb_alloc_node_units(q, idx[a]),
		       (size_t)q->nnodes * sizeof(int));
		out->total[a] = q->total_units[idx[a]];
	}
	free(keys);
	free(idx);
}

static void assert_same_last(const struct hb_alloc_last *a, const struct hb_alloc_last *b)
{
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->nnodes, b->nnodes);
	for (size_t i = 0; i < a->n; i++) {
		assert_int_equal(a->total[i], b->total[i]);
		assert_memory_equal(a->node_units + i * (size_t)a->nnodes, b->node_units + i * (size_t)b->nnodes,
				    (size_t)a->nnodes * sizeof(int));
	}
}

/* hb_alloc_last_by_key (node by node) and its search against the stored
 * Q, on random offers: kinds by GPU type (classes within kinds: the
 * constructive way), by GPU type and count, at random (classes over two
 * kinds: the search), merged and not, every walk bound. */
static void test_last_by_key(void **state)
{
	uint64_t x = 0x9E3779B97F4A7C15ULL;
	long built = 0, searched = 0, keys = 0;

	(void)state;
	for (int it = 0; it < 400; it++) {
		struct cluster_buf cb;
		int n = 1 + (int)(x % 7), gpu[MAXN], ngpus[MAXN], kind[MAXN], nkind = 0;
		struct hb_cluster *cl;
		const int mode = it % 3;

		for (int i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			gpu[i] = (int)(x % 3);
			ngpus[i] = (int)((x >> 8) % 9);
		}
		ngpus[0] = ngpus[0] < 2 ? 2 : ngpus[0];
		cl = make_cluster(&cb, "offer", n, gpu, ngpus);
		for (int i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			cb.nodes[i].rack = (int)((x >> 20) % 2);
			kind[i] = mode == 0 ? gpu[i] : mode == 1 ? gpu[i] * 9 + ngpus[i] : (int)((x >> 30) % 3);
		}
		/* kinds numbered 0.. in order of first appearance */
		{
			int map[32], nm = 0;

			for (int i = 0; i < n; i++) {
				int j = 0;

				while (j < nm && map[j] != kind[i])
					j++;
				if (j == nm)
					map[nm++] = kind[i];
				kind[i] = j;
			}
			nkind = nm;
		}
		for (int merge = 0; merge <= 1; merge++)
			for (int mu = -1; mu <= cl->ngpus / 2 + 1; mu++) {
				struct hb_alloc_set q;
				struct hb_alloc_last want, got, srch;
				struct hb_error err = { 0 };
				int spans = 0;

				assert_int_equal(hb_alloc_enumerate_upto(cl, &cb.cat, 2, merge, 0, mu, &q, &err), 0);
				last_by_key_brute(&q, kind, nkind, &want);
				assert_int_equal(hb_alloc_last_by_key(&q, mu, kind, nkind, &got, &err), 0);
				assert_int_equal(hb_alloc_last_by_key_search(&q, mu, kind, nkind, &srch, &err), 0);
				assert_same_last(&want, &got);
				assert_same_last(&want, &srch);
				for (int i = 0; i < n; i++)
					spans |= kind[i] != kind[q.classes[q.node_class[i]].first_node];
				built += !spans;
				searched += spans;
				keys += (long)want.n;
				hb_alloc_last_free(&want);
				hb_alloc_last_free(&got);
				hb_alloc_last_free(&srch);
				hb_alloc_free(&q);
			}
	}
	/* both ways ran, on many keys */
	assert_true(built > 1000);
	assert_true(searched > 100);
	assert_true(keys > 10000);
	{
		struct cluster_buf cb;
		const int gpu[2] = { 0, 0 }, ng[2] = { 4, 4 }, kind[2] = { 0, 2 };
		struct hb_cluster *cl = make_cluster(&cb, "bad", 2, gpu, ng);
		struct hb_alloc_set q;
		struct hb_alloc_last out;
		struct hb_error err = { 0 };

		assert_int_equal(hb_alloc_enumerate_upto(cl, &cb.cat, 2, 1, 0, 4, &q, &err), 0);
		assert_int_equal(hb_alloc_last_by_key(&q, 4, kind, 2, &out, &err), -1);
		assert_int_equal(err.code, HB_EINPUT);
		assert_non_null(strstr(err.msg, "node 1: kind 2"));
		hb_alloc_last_free(&out);
		assert_int_equal(hb_alloc_last_by_key(&q, 4, kind, 0, &out, &err), -1);
		assert_int_equal(err.code, HB_EINPUT);
		hb_alloc_free(&q);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cluster_a_counts_and_order),
		cmocka_unit_test(test_cluster_b_counts_and_order),
		cmocka_unit_test(test_cluster_b_merge_bruteforce),
		cmocka_unit_test(test_order_and_gpu_lists),
		cmocka_unit_test(test_odd_gpu_is_unused),
		cmocka_unit_test(test_unit_not_dividing_nodes),
		cmocka_unit_test(test_merge_needs_identical_links),
		cmocka_unit_test(test_merge_non_adjacent),
		cmocka_unit_test(test_limits_and_errors),
		cmocka_unit_test(test_enumerate_upto_is_prefix),
		cmocka_unit_test(test_visit_equals_stored),
		cmocka_unit_test(test_last_by_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
