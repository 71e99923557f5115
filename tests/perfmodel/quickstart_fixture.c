/* quickstart_fixture.c: see quickstart_fixture.h. */
#include "quickstart_fixture.h"

#define MS 1e-3
#define MIB 1048576.0
#define BN (6.29 * MS) /* BN-sync constant of ResNet-50 (notes §2.2) */

/* fwd, bwd, data, update, copy in ms (notes §2.4 and the artifact's files). */
#define PT(n, f, b, d, u, c) { n, (f) * MS, (b) * MS, (d) * MS, (u) * MS, (c) * MS, BN }

struct qs_lbs {
	int lbs, n_max, npts;
	struct hb_perf_point pts[3];
};

static const struct qs_lbs v100[] = {
	{ 32, 3, 2, { PT(1, 32.35, 66.35, 4.06, 5.97, 0.02), PT(3, 87.01, 173.58, 11.47, 4.55, 4.45) } },
	{ 64, 2, 2, { PT(1, 62.66, 124.26, 7.89, 4.77, 0.01), PT(2, 117.12, 231.63, 16.69, 4.26, 2.20) } },
	{ 96, 1, 1, { PT(1, 90.58, 179.99, 12.29, 4.31, 0.01) } },
	{ 128, 1, 1, { PT(1, 119.74, 237.68, 16.58, 4.29, 0.01) } },
	{ 160, 0, 0, { { 0 } } },
};

static const struct qs_lbs p100[] = {
	{ 32, 4, 3, { PT(1, 50.30, 106.06, 3.92, 4.74, 0.01), PT(2, 92.79, 196.06, 7.88, 4.76, 2.12),
		      PT(4, 180.21, 384.17, 15.69, 4.72, 5.92) } },
	{ 64, 2, 2, { PT(1, 95.88, 197.78, 7.89, 4.61, 0.01), PT(2, 184.65, 377.03, 15.90, 4.81, 2.12) } },
	{ 96, 1, 1, { PT(1, 144.04, 292.10, 11.84, 4.80, 0.01) } },
	{ 128, 1, 1, { PT(1, 187.03, 383.60, 15.76, 4.67, 0.01) } },
	{ 160, 1, 1, { PT(1, 235.45, 478.93, 19.33, 4.75, 0.01) } },
};

int qs_build(struct hb_perf *p, int sync, struct hb_error *err)
{
	/* ResNet-50 buckets in reduction order (notes §2.3 item 3). */
	static const double mb[] = { 7.81, 30.04, 25.04, 25.25, 9.2 };
	/* Artifact fits (notes §2.3 item 4); the shipped inter x-values use 7 GB/s. */
	struct hb_perf_ar intra = { 1, 1.417, 1.209, 15.75e9, "pcie3-x16" };
	struct hb_perf_ar inter = { 1, 0.716, 3.948, 7e9, "ib-56g" };
	double bytes[5];
	int gv, gp;

	hb_perf_init(p, "resnet50", 32);
	p->sync_request = sync;
	if (hb_perf_add_gpu(p, "v100", &gv, err) || hb_perf_add_gpu(p, "p100", &gp, err))
		return -1;
	for (unsigned i = 0; i < sizeof(v100) / sizeof(v100[0]); i++)
		if (hb_perf_add_lbs(p, gv, v100[i].lbs, v100[i].n_max, v100[i].pts, v100[i].npts, err))
			return -1;
	for (unsigned i = 0; i < sizeof(p100) / sizeof(p100[0]); i++)
		if (hb_perf_add_lbs(p, gp, p100[i].lbs, p100[i].n_max, p100[i].pts, p100[i].npts, err))
			return -1;
	for (int i = 0; i < 5; i++)
		bytes[i] = mb[i] * MIB;
	if (hb_perf_set_buckets(p, bytes, 5, err) || hb_perf_add_node(p, "node0", gv, 4, &intra, &inter, err) ||
	    hb_perf_add_node(p, "node1", gp, 4, &intra, &inter, err))
		return -1;
	return hb_perf_prepare(p, err);
}
