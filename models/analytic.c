/*
 * analytic.c: the analytic profile model (the embedded default profiles).
 *
 * What this is: a small roofline-style model that predicts what the JABAS /
 * IIDP profilers would measure for a catalog GPU and DNN model, so the
 * planner and simulator run with no GPU and no download.  It is not a
 * kernel-level simulator: a model is described only by the catalog's
 * numbers (parameters, forward FLOPs per sample, activation bytes per
 * sample, optimizer state, forward fraction, data time per sample), and a
 * GPU by its peak TFLOPS, memory size and memory bandwidth.
 *
 * Assumptions (symbols: N params, F forward FLOPs/sample, zeta forward
 * fraction, pb bytes per weight, S optimizer bytes/param, A activation
 * bytes/sample, B local batch, n VSWs, BW memory bandwidth):
 *
 *  1. Compute rate R = peak x eff(arch).  peak is the FP32 TFLOPS, or the
 *     tensor TFLOPS for a model whose weights are 16-bit (param_bytes <= 2)
 *     on a GPU that has tensor cores.  The catalog has no precision field, so
 *     a mixed-precision run that keeps FP32 weights (apex AMP O1) is modelled
 *     as FP32.
 * 1b. Exception: an FP32 CNN on a GPU with a TF32 rate (tf32_tflops in the
 *     catalog, Ampere and later) runs at tf32 x eff_tf32(arch), because
 *     PyTorch runs cuDNN convolutions as TF32 by default.  eff_tf32 of
 *     GA100 is fitted to NVIDIA DeepLearningExamples' ResNet-50 v1.5
 *     PyTorch table (README, pytorch-21.03 container): 938 img/s on one
 *     A100 80GB at TF32, batch 256, DALI loading (no host data time): with
 *     t_fixed and the update of assumptions 3 and 6 at 2039 GB/s that is
 *     256 x 25.0 GFLOP in 0.2631 s = 24.3 TFLOPS = 0.156 of 156.  The same
 *     table's FP32 V100 16GB figure, 367 img/s, is close to what the
 *     fitted Volta eff_fp32 predicts (354 at batch 128, the largest a 16 GB
 *     V100 holds here; -4 %), which checks the method.  Other TF32 GPUs
 *     (GA10x, Hopper) keep eff_tf32 = 0: no public point to fit.
 * 1c. TU102 (TITAN RTX, Quadro RTX 6000/8000, RTX 2080 Ti) has its own
 *     eff_fp32, fitted the same way to Lambda's PyTorch benchmark
 *     (github.com/lambdal/deeplearning-benchmark, pytorch/
 *     pytorch-train-throughput-fp32.csv and pytorch-train-bs-fp32.csv:
 *     NVIDIA DeepLearningExamples' ResNet-50 v1.5 in NGC pytorch:22.09,
 *     synthetic data, one GPU): 274 img/s on a Quadro RTX 8000 (the RTX
 *     6000's die, clocks and 672 GB/s, with 48 GB) at batch 496, i.e.
 *     496 x 25.0 GFLOP in 1.810 - 0.018 (t_fixed) - 0.005 (update) s =
 *     6.94 TFLOPS = 0.426 of 16.3.  The same table checks the method on
 *     the other two GPUs of Cannikin's cluster B: V100 16GB 369 img/s at
 *     batch 128 (Volta eff_fp32 predicts 354, -4 %) and A100 40GB PCIe
 *     882 img/s at batch 360 (eff_tf32 predicts 943, +7 %).  The Turing
 *     row's 0.65 stays: it is what Pollux's T4 CIFAR-10 ResNet-18 step
 *     times give (the calibration test's pollux-cifar10 group).  The two
 *     do not disagree about chips so much as about models: in NVIDIA's
 *     FP32 ResNet-50 inference tables (the same README) the forward pass
 *     alone reaches 428 x 8.2 GFLOP/s = 0.43 of a T4's peak at batch 64,
 *     against 0.66 of a V100's at batch 256 (its training eff_fp32), so on
 *     Turing CIFAR-10's ResNet-18 reaches a larger share of the peak than
 *     ImageNet's ResNet-50.  One constant per architecture cannot express
 *     that; each row keeps the measurement made on its own chip.  (Lambda's
 *     "fp32" on an A100 is TF32, PyTorch's default for convolutions.)
 *  2. fwd+bwd FLOPs per sample = F / zeta (backward = (1-zeta)/zeta x
 *     forward, 2x at zeta = 1/3).
 *  3. One VSW's fwd+bwd time is affine in the batch:
 *         fb1(B) = B * F/(zeta R) + t_fixed,   t_fixed = K_PARAM * pb * N / BW.
 *     Equivalently the effective FLOP rate saturates in the batch,
 *     R * B / (B + B_half) with B_half = t_fixed * zeta R / F.  t_fixed is
 *     the per-step floor that does not shrink with the batch (kernel
 *     launches, weight and gradient traffic), which grows with the model's
 *     size; it is expressed as K_PARAM passes over the weights at full
 *     memory bandwidth.  K_PARAM is one global constant.
 *  4. n VSWs on one GPU (JABAS Eq. 1-2 in normalised form,
 *     notes/jabas.md 2.2): thp(n)/thp(1) = a ln n + 1 and
 *     fb(n) = n fb1 / (a ln n + 1), with a = vsw_k(arch) sqrt(1 - u1) where
 *     u1 = B F/(zeta R) / fb1 is how close one VSW is to saturating the GPU:
 *     a busy GPU gains little from a second stream.  The forward share of
 *     fb(n) is zeta.
 *  5. Data loading: n B d (the artifact's t_data(1) n, notes/jabas.md 2.2).
 *  6. Optimizer step of the main VSW (SWS, run once per iteration):
 *         T_UPDATE_FIXED + N (3 pb + 2 S) UNFUSED / (BW BW_EFF)
 *     (read weight and gradient, write weight, read and write each state
 *     buffer; UNFUSED for the temporaries of per-op PyTorch optimizers).
 *     With ZeRO-Offload (opt_offload) the step is gradients to the host,
 *     Adam on the CPU and weights back: 2 pb N / HOST_BW + N / CPU_ADAM_RATE.
 *     That is one GPU's step, the whole model's, as a one-GPU profiler
 *     measures it; on N_G GPUs ZeRO-Offload partitions it over the ranks
 *     and the perf model charges each GPU 1/N_G of it (solver/perfmodel.h).
 *     The host constants are then one rank's share of the host.
 *  7. Weight copy to the other n-1 VSWs:
 *         (n-1) (T_COPY_FIXED + 2 pb N / (BW BW_EFF)).
 *  8. Memory = optimizer state (S N, 0 when offloaded) + DDP's bucket copy of
 *     the gradients (pb N) + n x (weights pb N + gradients pb N + library
 *     workspace(arch) + act_scale(arch) A B) + MEM_RESERVE (CUDA context,
 *     allocator slack).
 *     n_max(B) is the largest n <= 10 that fits and never exceeds n_max of
 *     a smaller batch (the artifact's memory profiler, notes/jabas.md 2.3).
 *  9. All-reduce: ring all-reduce moves 2(N-1)/N d at a fraction e of the
 *     nominal link bandwidth K plus a fixed latency L per call, which in the
 *     artifact's Eq. 3 units (x = d 4(N-1)/N / K, ms) is alpha = 1/(2e),
 *     beta = L.
 *
 * Calibration (tests/analytic/test_analytic_calib.c prints every point):
 *  - eff_fp32, K_PARAM: least squares on the JABAS artifact's ResNet-50
 *    fwd+bwd at 1 VSW, local batch 32..128 (V100) and 32..160 (P100): the
 *    slopes give eff (V100 0.659, P100 0.604), the intercepts K_PARAM
 *    (118.4 and 117.0, one global 118).  Turing eff_fp32 = 0.65 from Pollux's
 *    T4 CIFAR-10 ResNet-18 step times, the one FP32 CNN measured on T4.
 *  - vsw_k and the sqrt form: least squares on relative error over the
 *    artifact's multi-VSW points (V100 32x3, 64x2; P100 32x2, 32x4, 64x2),
 *    the exponent searched over 0.25..1 (0.5 best), vsw_k per architecture.
 *  - T_UPDATE_FIXED, T_COPY_FIXED: the artifact's update and copy times.
 *  - workspace, act_scale and MEM_RESERVE: chosen inside the region where
 *    the model reproduces the artifact's n_max tables for V100 and P100
 *    exactly, for a ResNet-50 activation figure of either 95 or 105 MiB per
 *    sample (the catalog's value is itself an estimate).  The P100 fitting
 *    local batch 160 in 17.07 GB while the V100 (16.95 GB) does not forces
 *    Pascal to keep less per sample or Volta to hold more per VSW; both
 *    are per-architecture constants.
 *  - link efficiency and latency of PCIe and InfiniBand: least squares on
 *    relative error over the artifact's intra and inter all-reduce profiles
 *    (9 tensor sizes each), the metric the calibration test reports.
 *  - the IBM elastic testbed's two link classes (ffdl-pcie, ffdl-eth):
 *    derived from that paper's Table II and IV-D (above link_table).
 *  Everything else in the tables below is an assumption and says so.
 *
 * Known limits, visible in the calibration table: efficiencies are fitted on
 * CNNs, so on the T4 an FP32 transformer (Pollux BERT) comes out about 25 %
 * too fast and an RNN (DeepSpeech2, whose catalog FLOPs are an estimate)
 * about 60 % too fast; a tiny model (NCF) is dominated by per-step costs
 * that scale with kernel count rather than size, and comes out up to 70 %
 * too slow at small batches.  t_fixed grows linearly with the weights; that
 * is checked up to BERT-base (110M parameters) and extrapolated beyond.
 *
 * Local batches: every multiple of min_lbs up to the model's max global
 * batch, thinned to a geometric grid when there are more than
 * HB_ANALYTIC_MAX_LBS_STEPS (hb_analytic_lbs_grid), so the default
 * database stays small (about 80k compute rows for the built-in catalog).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analytic.h"   /* defines: hb_analytic_compute, _mem_bytes, _max_vsw, _allreduce_fit, _generate */
#include "strutil.h"    /* defines: hb_strlcpy, hb_strcaseeq */

/* ------------------------------------------------------------------------ */
/* Constants                                                                 */

/* Passes over the weights that make up one step's fixed fwd+bwd time
 * (assumption 3); fitted: V100 118.4, P100 117.0. */
#define K_PARAM 118.0
/* Achieved fraction of memory bandwidth by streaming kernels (assumed, the
 * usual STREAM-like figure for HBM2/GDDR6). */
#define BW_EFF 0.8
/* Extra memory traffic of per-op (unfused) optimizers over the minimal
 * 3 pb + 2 S bytes per parameter (assumed). */
#define UNFUSED 1.5
/* Fixed part of the optimizer step and of one weight copy, s: launch-bound
 * per-tensor loops; fitted to the artifact's ResNet-50 update_time
 * (4.3-4.8 ms) and copy_time per copy (2.0-2.2 ms) on V100 and P100. */
#define T_UPDATE_FIXED 3.4e-3
#define T_COPY_FIXED 1.8e-3
/* ZeRO-Offload host side (assumed): practical PCIe 3 x16 bandwidth, and
 * DeepSpeed CPU-Adam throughput on a two-socket server (ZeRO-Offload,
 * Ren et al. 2021, reports a few billion parameters per second). */
#define HOST_BW 12e9
#define CPU_ADAM_RATE 2e9
/* CUDA context, cuBLAS/cuDNN handles and allocator slack, bytes; with the
 * workspaces and activation scales below it reproduces the artifact's n_max
 * tables (any of 0-0.8 GB does, see the calibration notes above). */
#define MEM_RESERVE 0.4e9

/* Matching is on the lower-cased catalog name, its power-cap base, then the
 * display name; the first pattern found as a substring wins, so longer
 * names come before their prefixes ("a100" before "a10"). */
struct arch_pattern {
	const char *pattern;
	int arch;            /* index into arch_table */
};

enum { ARCH_VOLTA, ARCH_PASCAL, ARCH_TURING, ARCH_TU102, ARCH_GA100, ARCH_GA10X, ARCH_HOPPER, ARCH_ADA, ARCH_CPU, ARCH_GENERIC };

static const struct hb_analytic_arch arch_table[] = {
	[ARCH_VOLTA] = { "volta", 0.659, 0.40, 0.0, 0.35, 0.8e9, 1.0,
		"fitted: JABAS artifact ResNet-50 V100 comp (eff, vsw_k) and memory (workspace) profiles; "
		"eff_tensor assumed (typical 16-bit training utilisation)" },
	[ARCH_PASCAL] = { "pascal", 0.604, 0.40, 0.0, 0.26, 0.2e9, 0.9,
		"fitted: JABAS artifact ResNet-50 P100 comp (eff, vsw_k) and memory (workspace, act_scale: a P100 "
		"fits B=160 in 17.07 GB, so it keeps less than 104 MB per sample) profiles; no tensor cores" },
	[ARCH_TURING] = { "turing", 0.65, 0.40, 0.0, 0.305, 0.8e9, 1.0,
		"eff fitted: Pollux T4 CIFAR-10 ResNet-18 placement '1'; assumed: vsw_k mean of Volta and Pascal, "
		"workspace and act_scale as Volta, eff_tensor" },
	[ARCH_TU102] = { "turing-tu102", 0.426, 0.40, 0.0, 0.305, 0.8e9, 1.0,
		"eff fitted: Lambda deeplearning-benchmark PyTorch ResNet-50 v1.5 FP32, Quadro RTX 8000 274 img/s at "
		"batch 496 (assumption 1c); other constants as the Turing row" },
	[ARCH_GA100] = { "ampere", 0.659, 0.40, 0.156, 0.35, 0.8e9, 1.0,
		"assumed: as Volta (no public measurement in the calibration data)" },
	[ARCH_GA10X] = { "ga10x", 0.33, 0.40, 0.0, 0.35, 0.8e9, 1.0,
		"assumed: half of Volta's eff, because GA10x's quoted FP32 peak counts a second FP32 pipe "
		"shared with INT32 that dense kernels rarely fill; other constants as Volta" },
	[ARCH_HOPPER] = { "hopper", 0.659, 0.40, 0.0, 0.35, 0.8e9, 1.0,
		"assumed: as Volta (no public measurement in the calibration data)" },
	[ARCH_ADA] = { "ada", 0.33, 0.40, 0.0, 0.35, 0.8e9, 1.0,
		"assumed: as GA10x (same dual FP32 issue)" },
	[ARCH_CPU] = { "cpu", 0.095, 0.0, 0.0, 0.35, 0.0, 1.0,
		"fitted: hetbatch profile --backend cpu, ResNet-50 at --scale 0.02, B_L 32 and 64, one VSW, on a "
		"2-core AMD EPYC with OpenBLAS 0.3.21 (7.5-7.9 of 80 nominal GFLOP/s); the scaled transformers "
		"are bound by softmax, not GEMMs, and come out slower; vsw_k assumed (the form is a GPU's)" },
	[ARCH_GENERIC] = { "generic", 0.659, 0.40, 0.0, 0.35, 0.8e9, 1.0,
		"assumed: unknown GPU, Volta's constants" },
};

static const struct arch_pattern arch_patterns[] = {
	{ "v100", ARCH_VOLTA }, { "titan-v", ARCH_VOLTA }, { "titan v", ARCH_VOLTA },
	{ "p100", ARCH_PASCAL }, { "p40", ARCH_PASCAL }, { "p4000", ARCH_PASCAL }, { "p6000", ARCH_PASCAL },
	{ "titan-xp", ARCH_PASCAL }, { "titan xp", ARCH_PASCAL }, { "1080", ARCH_PASCAL },
	{ "titan-rtx", ARCH_TU102 }, { "titan rtx", ARCH_TU102 }, { "quadro-rtx-6000", ARCH_TU102 },
	{ "quadro rtx 6000", ARCH_TU102 }, { "quadro-rtx-8000", ARCH_TU102 }, { "quadro rtx 8000", ARCH_TU102 },
	{ "2080 ti", ARCH_TU102 }, { "2080-ti", ARCH_TU102 },
	{ "t4", ARCH_TURING }, { "quadro-rtx", ARCH_TURING }, { "quadro rtx", ARCH_TURING }, { "2060", ARCH_TURING },
	{ "2070", ARCH_TURING }, { "2080", ARCH_TURING },
	{ "a100", ARCH_GA100 }, { "a800", ARCH_GA100 }, { "a30", ARCH_GA100 },
	{ "h100", ARCH_HOPPER }, { "h200", ARCH_HOPPER }, { "h800", ARCH_HOPPER },
	{ "a6000", ARCH_GA10X }, { "a5000", ARCH_GA10X }, { "a4000", ARCH_GA10X }, { "a40", ARCH_GA10X },
	{ "a10", ARCH_GA10X }, { "3060", ARCH_GA10X }, { "3070", ARCH_GA10X }, { "3080", ARCH_GA10X },
	{ "3090", ARCH_GA10X },
	{ "4090", ARCH_ADA }, { "4080", ARCH_ADA }, { "l40", ARCH_ADA }, { "l4", ARCH_ADA },
	{ "cpu", ARCH_CPU },
};

#define NPATTERNS ((int)(sizeof(arch_patterns) / sizeof(arch_patterns[0])))

/* The IBM elastic-scaling testbed's links (Saxena et al., MASCOTS 2020:
 * 20 x 2 P100, 10 GbE, PyTorch on FfDL/Kubernetes), derived from the
 * paper's own numbers for its category 1 job (CIFAR ResNet-50, 24M
 * weights), because the scaling factors it reports are ratios of the
 * all-reduce to the single-GPU step that our generic PCIe and Ethernet
 * families do not reproduce (they give 0.374 and 4.02 where the paper
 * implies 0.205 and 1.404).  With t_p = t_proc(32), the one-GPU step at
 * category 1's per-GPU limit 32, and the JSA's model t_iter(b, k) =
 * t_proc(b/k) + t_comm(k) (III-B3):
 *   Table II, 2 GPUs at 32 per GPU: T(64, 2) / T(32, 1) = 1.66
 *     = 2 t_p / (t_p + t_comm(2)),  so t_comm(2) = (2 / 1.66 - 1) t_p = 0.2048 t_p;
 *   IV-D, one job on 5 GPUs at 32 per GPU ran 1.6x faster than on 2 GPUs at
 *     16 per GPU, whose factor is Table II's 1.3:  160 / (t_p + t_comm(5)) =
 *     1.6 x 1.3 x 32 / t_p,  so t_comm(5) = (160 / 66.56 - 1) t_p = 1.4038 t_p.
 * t_comm(5) / t_comm(2) = 6.85 is more than the 1.6 a ring's traffic grows
 * from 2 to 5 GPUs (2(k-1)/k), so the two runs did not use the same link:
 * the 2-GPU job ran inside one machine (PCIe, intra) and the 5-GPU job
 * across three (10 GbE, inter).  Each number fixes one constant, so each
 * class is its generic family (pcie, eth below) with the whole alpha-beta
 * line scaled by one factor (efficiency / f, latency x f: the family's
 * split between bandwidth and latency, measured on the JABAS artifact's
 * links, is kept): f is the paper's ratio over the family's on hetbatch's
 * analytic P100 (0.2048 / 0.37416 and 1.4038 / 4.0240, measured with
 * the elastic JSA of sim/policies/elastic/arbiter_elastic.c on ibm-p100;
 * tests/arbiter_elastic checks the ratios within 1 %).  The inter class's
 * efficiency comes out 1.43 of the 10 GbE line rate: against hetbatch's
 * P100 step (63.9 ms at 32) the paper's all-reduce is faster than 10 GbE
 * can carry 24M fp32 weights, so its own P100 step must have been longer
 * (at least 1.35x); only the ratio matters to the scheduler, so the ratio
 * is what is transferred.  Other clusters keep the generic families. */
#define IBM_F_INTRA 0.5474
#define IBM_F_INTER 0.3489

/* Link families, matched by prefix of the class name. */
static const struct hb_analytic_link link_table[] = {
	{ "ffdl-pcie", 0.453 / IBM_F_INTRA, 2.66 * IBM_F_INTRA,
	  "derived: IBM elastic paper Table II (2 P100s at 32 per GPU: scaling factor 1.66, so the all-reduce of "
	  "24M weights is 0.2048 of the one-GPU step); the pcie family scaled by 0.5474" },
	{ "ffdl-eth", 0.5 / IBM_F_INTER, 3.66 * IBM_F_INTER,
	  "derived: IBM elastic paper IV-D and Table II (5 P100s at 32 per GPU 1.6x faster than 2 at 16 per GPU, "
	  "factor 1.3: the all-reduce of 24M weights on 5 GPUs is 1.4038 of the one-GPU step); the eth family "
	  "scaled by 0.3489" },
	{ "pcie", 0.453, 2.66,
	  "fitted: JABAS artifact intra_comm_profile_data.txt (4 GPUs, 15.75 GB/s), least squares on relative "
	  "error: alpha 1.104, beta 2.66 ms" },
	{ "ib", 0.388, 3.66,
	  "fitted: JABAS artifact inter_comm_profile_data.txt (8 GPUs, 2 nodes), least squares on relative error: "
	  "alpha 0.722 at the data's K = 7 GB/s, i.e. 1.290 at the cluster's 12.5 GB/s; beta 3.66 ms" },
	{ "nvlink", 0.75, 2.66,
	  "assumed: NCCL ring bus bandwidth ~75% of NVLink nominal; latency as PCIe (framework-bound)" },
	{ "shm", 0.5, 0.02,
	  "assumed: MPI over shared memory on one host (the cpu backend's devices); latency from hetbatch profile "
	  "allreduce on a 2-core EPYC (intercepts 0.005-0.018 ms), efficiency a round figure" },
	{ "tcp", 0.5, 0.05,
	  "assumed: MPI over TCP (loopback for the cpu-2x2 preset): MPI-scale latency, not a GPU framework's" },
	{ "eth", 0.5, 3.66,
	  "assumed: NCCL over TCP reaches about half the line rate; latency as InfiniBand (framework-bound)" },
	{ "default", 0.4, 3.66,
	  "assumed: unknown link class, between the measured PCIe and InfiniBand" },
};

#define NLINKS ((int)(sizeof(link_table) / sizeof(link_table[0])))

/* ------------------------------------------------------------------------ */
/* Lookups                                                                   */

static void lower_copy(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = (char)((src[i] >= 'A' && src[i] <= 'Z') ? src[i] - 'A' + 'a' : src[i]);
	dst[i] = '\0';
}

static int arch_index(const char *name)
{
	char low[HB_TEXT_MAX];

	if (!name || !*name)
		return -1;
	lower_copy(low, sizeof(low), name);
	for (int i = 0; i < NPATTERNS; i++)
		if (strstr(low, arch_patterns[i].pattern))
			return arch_patterns[i].arch;
	return -1;
}

const struct hb_analytic_arch *hb_analytic_arch_of(const struct hb_gpu *g)
{
	const char *names[3] = { g->name, g->base, g->display };

	for (int i = 0; i < 3; i++) {
		int a = arch_index(names[i]);

		if (a >= 0)
			return &arch_table[a];
	}
	return &arch_table[ARCH_GENERIC];
}

const struct hb_analytic_link *hb_analytic_link_of(const char *link)
{
	char low[HB_NAME_MAX];

	lower_copy(low, sizeof(low), link ? link : "");
	for (int i = 0; i < NLINKS - 1; i++)
		if (strncmp(low, link_table[i].prefix, strlen(link_table[i].prefix)) == 0)
			return &link_table[i];
	return &link_table[NLINKS - 1];
}

/* ------------------------------------------------------------------------ */
/* Compute                                                                   */

static double param_bytes(const struct hb_model *m)
{
	return m->param_bytes > 0 ? m->param_bytes : 4.0;
}

static double fwd_fraction(const struct hb_model *m)
{
	/* Outside (0, 1) the split is meaningless; 1/3 is the 2x-backward rule. */
	return m->fwd_fraction > 0 && m->fwd_fraction < 1 ? m->fwd_fraction : 1.0 / 3.0;
}

/* Assumption 1: the peak that the model's arithmetic runs at. */
static double compute_rate(const struct hb_gpu *g, const struct hb_model *m, const struct hb_analytic_arch *a)
{
	if (param_bytes(m) <= 2.0 && g->tensor_tflops > 0)
		return g->tensor_tflops * 1e12 * a->eff_tensor;
	/* FP32 weights, but cuDNN convolutions run as TF32 on tensor cores
	 * where the GPU has them: PyTorch's torch.backends.cudnn.allow_tf32
	 * defaults to True (since 1.7), while matmuls stay FP32 by default
	 * (torch.backends.cuda.matmul.allow_tf32, False since 1.12).  So only a
	 * CNN takes the TF32 rate (assumption 1b). */
	if (g->tf32_tflops > 0 && a->eff_tf32 > 0 && strcmp(m->arch.cls, "cnn") == 0)
		return g->tf32_tflops * 1e12 * a->eff_tf32;
	return g->fp32_tflops * 1e12 * a->eff_fp32;
}

int hb_analytic_check_gpu(const struct hb_gpu *g, struct hb_error *err)
{
	if (!(g->fp32_tflops > 0) || !(g->mem_bw > 0) || !(g->mem_bytes > 0))
		return hb_input_error(err, "gpu '%s': fp32_tflops %g, mem_bw %g and mem_bytes %g must all be positive "
				      "for the analytic model", g->name, g->fp32_tflops, g->mem_bw, g->mem_bytes);
	return 0;
}

int hb_analytic_check_model(const struct hb_model *m, struct hb_error *err)
{
	if (!(m->flops_per_sample > 0) || !(m->params > 0) || m->act_bytes_per_sample < 0 ||
	    m->data_s_per_sample < 0 || m->opt_state_bytes_per_param < 0)
		return hb_input_error(err, "model '%s': params %g and flops_per_sample %g must be positive, "
				      "act_bytes_per_sample %g, data_s_per_sample %g and opt_state_bytes_per_param %g "
				      "non-negative", m->name, m->params, m->flops_per_sample, m->act_bytes_per_sample,
				      m->data_s_per_sample, m->opt_state_bytes_per_param);
	return 0;
}

/* Assumptions 3 and 4 for one VSW at batch B. */
static void fb_single(const struct hb_gpu *g, const struct hb_model *m, int local_bs,
		      struct hb_analytic_breakdown *bd)
{
	const struct hb_analytic_arch *a = hb_analytic_arch_of(g);
	double per_sample, compute;

	bd->rate_flops = compute_rate(g, m, a);
	bd->fb_flops = m->flops_per_sample / fwd_fraction(m);
	per_sample = bd->fb_flops / bd->rate_flops;
	bd->t_fixed_s = K_PARAM * param_bytes(m) * m->params / g->mem_bw;
	bd->b_half = bd->t_fixed_s / per_sample;
	compute = per_sample * local_bs;
	bd->fb1_s = compute + bd->t_fixed_s;
	bd->util1 = compute / bd->fb1_s;
	bd->vsw_a = a->vsw_k * sqrt(1.0 - bd->util1);
}

/* Assumption 6. */
static double update_time(const struct hb_gpu *g, const struct hb_model *m)
{
	double pb = param_bytes(m);

	if (m->opt_offload)
		return T_UPDATE_FIXED + 2.0 * pb * m->params / HOST_BW + m->params / CPU_ADAM_RATE;
	return T_UPDATE_FIXED +
	       m->params * (3.0 * pb + 2.0 * m->opt_state_bytes_per_param) * UNFUSED / (g->mem_bw * BW_EFF);
}

/* Assumption 7, for one copy. */
static double copy_time(const struct hb_gpu *g, const struct hb_model *m)
{
	return T_COPY_FIXED + 2.0 * param_bytes(m) * m->params / (g->mem_bw * BW_EFF);
}

int hb_analytic_compute(const struct hb_gpu *g, const struct hb_model *m, int local_bs, int n_vsw,
			struct hb_compute_row *row, struct hb_analytic_breakdown *bd, struct hb_error *err)
{
	struct hb_analytic_breakdown tmp;
	double fb, zeta = fwd_fraction(m);

	if (local_bs < 1 || n_vsw < 1)
		return hb_input_error(err, "analytic model: gpu '%s', model '%s': local batch %d and n_vsw %d must "
				      "be >= 1", g->name, m->name, local_bs, n_vsw);
	if (hb_analytic_check_gpu(g, err) < 0 || hb_analytic_check_model(m, err) < 0)
		return -1;
	if (!bd)
		bd = &tmp;
	fb_single(g, m, local_bs, bd);
	fb = n_vsw * bd->fb1_s / (bd->vsw_a * log((double)n_vsw) + 1.0);

	memset(row, 0, sizeof(*row));
	hb_strlcpy(row->gpu, g->name, sizeof(row->gpu));
	hb_strlcpy(row->model, m->name, sizeof(row->model));
	row->local_bs = local_bs;
	row->n_vsw = n_vsw;
	row->fwd_s = zeta * fb;
	row->bwd_s = (1.0 - zeta) * fb;
	row->data_s = (double)n_vsw * local_bs * m->data_s_per_sample;
	row->update_s = update_time(g, m);
	row->copy_s = (n_vsw - 1) * copy_time(g, m);
	row->bn_s = m->bn_sync_s;
	row->total_s = row->data_s + row->fwd_s + row->bwd_s + row->update_s + row->copy_s;
	row->mem_bytes = hb_analytic_mem_bytes(g, m, local_bs, n_vsw);
	hb_strlcpy(row->source, "analytic", sizeof(row->source));
	row->run_id = 0;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */

double hb_analytic_mem_bytes(const struct hb_gpu *g, const struct hb_model *m, int local_bs, int n_vsw)
{
	return hb_analytic_mem_bytes_on(hb_analytic_arch_of(g), m, local_bs, n_vsw);
}

double hb_analytic_mem_bytes_on(const struct hb_analytic_arch *a, const struct hb_model *m, int local_bs, int n_vsw)
{
	double pb = param_bytes(m);
	double once = (m->opt_offload ? 0.0 : m->opt_state_bytes_per_param * m->params) + pb * m->params;
	double per_vsw = 2.0 * pb * m->params + a->workspace_bytes + a->act_scale * m->act_bytes_per_sample * local_bs;

	return once + n_vsw * per_vsw + MEM_RESERVE;
}

int hb_analytic_max_vsw(const struct hb_gpu *g, const struct hb_model *m, int local_bs, int cap)
{
	int limit = (cap > 0 && cap < HB_ANALYTIC_MAX_VSW) ? cap : HB_ANALYTIC_MAX_VSW;
	int n = 0;

	if (local_bs < 1)
		return 0;
	while (n < limit && hb_analytic_mem_bytes(g, m, local_bs, n + 1) <= g->mem_bytes)
		n++;
	return n;
}

/* The local batches generate() considers: multiples of min_lbs up to the
 * model's max global batch.  When there are more than
 * HB_ANALYTIC_MAX_LBS_STEPS of them (NCF: 32..32768), a geometric grid of
 * that many multiples replaces them: dense at small batches, where time
 * changes fastest, and a bounded table everywhere.  Returns the count. */
int hb_analytic_lbs_grid(const struct hb_model *m, int *out, int max)
{
	long step = m->min_lbs > 0 ? m->min_lbs : 1;
	long lim = m->max_gbs >= step ? m->max_gbs : step * HB_ANALYTIC_MAX_LBS_STEPS;
	long nmul = lim / step;
	int n = 0;

	if (lim > INT_MAX)
		lim = INT_MAX - INT_MAX % step, nmul = lim / step;
	if (nmul <= HB_ANALYTIC_MAX_LBS_STEPS) {
		for (long k = 1; k <= nmul && n < max; k++)
			out[n++] = (int)(k * step);
		return n;
	}
	for (int i = 0; i < HB_ANALYTIC_MAX_LBS_STEPS && n < max; i++) {
		double f = pow((double)nmul, (double)i / (HB_ANALYTIC_MAX_LBS_STEPS - 1));
		long k = lround(f);

		if (i == HB_ANALYTIC_MAX_LBS_STEPS - 1)
			k = nmul;
		if (k < 1)
			k = 1;
		if (n > 0 && k * step <= out[n - 1])
			k = out[n - 1] / step + 1;
		if (k > nmul)
			break;
		out[n++] = (int)(k * step);
	}
	return n;
}

int hb_analytic_max_local_bs(const struct hb_gpu *g, const struct hb_model *m)
{
	int grid[HB_ANALYTIC_MAX_LBS_STEPS];
	int n = hb_analytic_lbs_grid(m, grid, HB_ANALYTIC_MAX_LBS_STEPS), best = 0;

	for (int i = 0; i < n; i++) {
		if (hb_analytic_max_vsw(g, m, grid[i], 1) < 1)
			break;
		best = grid[i];
	}
	return best;
}

/* ------------------------------------------------------------------------ */
/* All-reduce                                                                */

int hb_analytic_allreduce_fit(const char *scope, const char *link, double bandwidth,
			      struct hb_allreduce_fit *out, struct hb_error *err)
{
	const struct hb_analytic_link *l;

	if (!scope || (strcmp(scope, "intra") != 0 && strcmp(scope, "inter") != 0))
		return hb_input_error(err, "analytic all-reduce fit: scope '%s' must be 'intra' or 'inter'",
				      scope ? scope : "");
	if (!link || !*link)
		return hb_input_error(err, "analytic all-reduce fit (%s): empty link class name", scope);
	if (!(bandwidth > 0))
		return hb_input_error(err, "analytic all-reduce fit (%s, %s): bandwidth %g must be positive", scope,
				      link, bandwidth);
	l = hb_analytic_link_of(link);
	memset(out, 0, sizeof(*out));
	hb_strlcpy(out->scope, scope, sizeof(out->scope));
	hb_strlcpy(out->link, link, sizeof(out->link));
	out->alpha = 1.0 / (2.0 * l->efficiency);
	out->beta = l->latency_ms;
	out->bandwidth = bandwidth;
	out->r2 = 1.0;
	hb_strlcpy(out->source, "analytic", sizeof(out->source));
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The catalog's all-reduce fits                                             */

int hb_analytic_catalog_fits(const struct hb_catalog *cat, struct hb_allreduce_fit **fits, int *nfits,
			     struct hb_error *err)
{
	static const char *const scopes[2] = { "intra", "inter" };
	struct hb_allreduce_fit *out = NULL;
	int cap = 0, n = 0;

	*fits = NULL;
	*nfits = 0;
	for (int c = 0; c < cat->nclusters; c++)
		cap += 2 * cat->clusters[c].nnodes;
	if (cap == 0)
		return 0;
	out = calloc((size_t)cap, sizeof(*out));
	if (!out)
		return hb_runtime_error(err, "analytic all-reduce fits: out of memory");
	for (int c = 0; c < cat->nclusters; c++)
		for (int k = 0; k < cat->clusters[c].nnodes; k++) {
			const struct hb_node *nd = &cat->clusters[c].nodes[k];
			const char *links[2] = { nd->intra_link, nd->inter_link };
			double bws[2] = { nd->intra_bw, nd->inter_bw };

			for (int s = 0; s < 2; s++) {
				int dup = 0;

				if (!links[s][0] || !(bws[s] > 0))
					continue;
				for (int i = 0; i < n && !dup; i++)
					dup = strcmp(out[i].scope, scopes[s]) == 0 &&
					      strcmp(out[i].link, links[s]) == 0;
				if (dup)
					continue;
				if (hb_analytic_allreduce_fit(scopes[s], links[s], bws[s], &out[n], err) < 0) {
					free(out);
					return -1;
				}
				n++;
			}
		}
	*fits = out;
	*nfits = n;
	return 0;
}
