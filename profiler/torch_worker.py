#!/usr/bin/env python3
"""hetbatch torch worker: real PyTorch models trained the way IIDP/JABAS train
on one GPU, with every phase marked by an NVTX range, for `hetbatch profile
--backend torch` (cli/profile_torch.c) and the CUPTI injection library
(profiler/inject.c), whose trace ktrace.c attributes to these phases.

Per point (local batch b, n VSWs, GA steps g), each iteration is:
  iteration                      NVTX range on the main thread around it all;
                                 the device is synchronised before it closes
  per GA step, on every VSW's thread, on the VSW's own CUDA stream:
    data                         a pinned host batch copied to the device
    forward                      the VSW's replica of the model, loss / g
    backward                     loss.backward(): gradients accumulate in the
                                 replica (PyTorch's autograd device thread
                                 launches these kernels onto the VSW's stream;
                                 ktrace.c attributes them through the stream)
  on the main thread, after every VSW's last backward:
    aggregation                  the main VSW (0) adds the other VSWs' gradients
    optimizer                    the main VSW's optimizer step, then zero grads
    weight_copy                  the main VSW's weights copied to every other
                                 VSW's replica, on that VSW's stream
Warm-up iterations run without the iteration range (ktrace.c leaves them out).

Models are built from configurations with random weights, never downloaded:
torchvision ResNet-50 (weights=None) and a VisionTransformer shaped like the
catalog's T2T-ViT-14 (14 blocks, 6 heads, width 384, MLP ratio 3);
transformers BERT-large (BertConfig), GPT-3 XL (GPT2Config, d 2048, 24
layers) and LLaMA 2 7B (LlamaConfig); GNMT-like LSTM seq2seq in torch.nn.
--scale keeps round(scale x layers) layers of the layered models.

Exit status: 0 ok, 2 usage, 4 torch (or torchvision / transformers) missing,
5 no CUDA device, 6 out of device memory at a point (its result says so and
the worker goes on with the next point unless it was the only one), 1 other.

torch is imported inside main() only, so `check_worker.py` can import this
module (the argument parser and the phase table) where torch is absent.
"""
import argparse
import json
import os
import sys
import threading
import time

# NVTX range names: ktrace.h's HB_KTRACE_PHASE_NAMES, in its order, and
# HB_KTRACE_ITER_NAME (tests/torch/check_worker.py checks they agree).
PHASES = ("data", "forward", "backward", "aggregation", "optimizer", "weight_copy")
ITER_RANGE = "iteration"

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NO_TORCH, EXIT_NO_GPU, EXIT_OOM = 0, 1, 2, 4, 5, 6

# Catalog model -> (family, default sequence length or image size, optimizer
# as the catalog says, layers that --scale shrinks).
MODELS = {
    "resnet50": ("cnn", 224, "sgd", None),
    "vit": ("vit", 224, "adamw", 14),
    "gnmt": ("lstm", 50, "adam", 4),
    "bert-large": ("bert", 128, "adam", 24),
    "gpt3-xl": ("gpt", 512, "adam", 24),
    "llama2-7b": ("llama", 512, "adam", 32),
}
PRECISIONS = ("fp32", "amp-bf16", "bf16")


def parse_points(text):
    """'32x1,32x2,64x1' -> [(32, 1), (32, 2), (64, 1)] (local batch x VSWs)."""
    points = []
    for item in text.split(","):
        parts = item.strip().split("x")
        if len(parts) != 2 or not parts[0].isdigit() or not parts[1].isdigit():
            raise argparse.ArgumentTypeError(
                "point '%s': LOCAL_BATCHxN_VSW, e.g. 32x2" % item)
        b, n = int(parts[0]), int(parts[1])
        if b < 1 or n < 1 or n > 64:
            raise argparse.ArgumentTypeError(
                "point '%s': local batch >= 1, VSWs 1..64" % item)
        points.append((b, n))
    return points


def build_parser():
    p = argparse.ArgumentParser(
        prog="torch_worker.py",
        description="Train a real PyTorch model with n VSWs per point, NVTX-marked, "
                    "for hetbatch profile --backend torch.")
    p.add_argument("--check", action="store_true",
                   help="print the device, torch and CUDA versions as JSON and exit")
    p.add_argument("--model", choices=sorted(MODELS), help="catalog model")
    p.add_argument("--points", type=parse_points,
                   help="LOCAL_BATCHxN_VSW,... e.g. 32x1,32x2,64x1")
    p.add_argument("--ga", type=int, default=1, help="gradient accumulation steps (default 1)")
    p.add_argument("--warmup", type=int, default=5, help="warm-up iterations (default 5)")
    p.add_argument("--iters", type=int, default=20, help="measured iterations (default 20)")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32",
                   help="fp32, amp-bf16 (autocast) or bf16 weights (default fp32)")
    p.add_argument("--scale", type=float, default=1.0,
                   help="keep round(scale x layers) layers, (0, 1] (layered models)")
    p.add_argument("--seq-len", type=int, default=0,
                   help="tokens per sample (image size for CNN/ViT); 0: the model's default")
    p.add_argument("--out-dir", help="per point: MODEL-bB-vN.json and, when traced, MODEL-bB-vN.ktrace")
    p.add_argument("--seed", type=int, default=1)
    return p


def check_args(p, a):
    if a.check:
        return
    if not a.model or not a.points or not a.out_dir:
        p.error("--model, --points and --out-dir are required (or --check)")
    if a.ga < 1 or a.warmup < 0 or a.iters < 1:
        p.error("--ga >= 1, --warmup >= 0, --iters >= 1")
    if not (0 < a.scale <= 1):
        p.error("--scale %g: a number in (0, 1]" % a.scale)
    if a.scale < 1 and MODELS[a.model][3] is None:
        p.error("--scale applies to layered models, not %s" % a.model)
    if a.seq_len < 0:
        p.error("--seq-len >= 0")


def point_name(model, b, n):
    return "%s-b%d-v%d" % (model, b, n)


# --------------------------------------------------------------------------
# Everything below runs with torch imported (main passes the modules in).

def scaled_layers(model, scale):
    layers = MODELS[model][3]
    return max(1, int(round(layers * scale))) if layers else None


def build_model(torch, model, scale, seq):
    """(nn.Module, make_batch(b) -> (inputs, labels), loss(out, labels))."""
    nn = torch.nn
    fam = MODELS[model][0]
    layers = scaled_layers(model, scale)
    if fam == "cnn" or fam == "vit":
        import torchvision
        if fam == "cnn":
            m = torchvision.models.resnet50(weights=None)
        else:
            m = torchvision.models.vision_transformer.VisionTransformer(
                image_size=seq, patch_size=16, num_layers=layers, num_heads=6,
                hidden_dim=384, mlp_dim=1152, num_classes=1000)

        def batch(b):
            return torch.randn(b, 3, seq, seq), torch.randint(0, 1000, (b,))

        def loss(out, y):
            return nn.functional.cross_entropy(out, y)
        return m, batch, loss
    if fam == "lstm":
        m = GnmtLike(torch, layers)

        def batch(b):
            return torch.randint(0, m.vocab, (b, seq)), torch.randint(0, m.vocab, (b, seq))

        def loss(out, y):
            return nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        return m, batch, loss
    import transformers
    if fam == "bert":
        cfg = transformers.BertConfig(vocab_size=30522, hidden_size=1024, num_hidden_layers=layers,
                                      num_attention_heads=16, intermediate_size=4096,
                                      max_position_embeddings=max(512, seq))
        m = transformers.BertForMaskedLM(cfg)
        vocab = cfg.vocab_size
    elif fam == "gpt":
        cfg = transformers.GPT2Config(vocab_size=50257, n_embd=2048, n_layer=layers, n_head=16,
                                      n_positions=max(2048, seq))
        m = transformers.GPT2LMHeadModel(cfg)
        vocab = cfg.vocab_size
    else:
        cfg = transformers.LlamaConfig(vocab_size=32000, hidden_size=4096, intermediate_size=11008,
                                       num_hidden_layers=layers, num_attention_heads=32,
                                       num_key_value_heads=32, max_position_embeddings=max(4096, seq))
        m = transformers.LlamaForCausalLM(cfg)
        vocab = cfg.vocab_size
    m.config.use_cache = False

    def batch(b):
        ids = torch.randint(0, vocab, (b, seq))
        return ids, ids.clone()

    def loss(out, y):
        logits = out.logits
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    return m, batch, loss


def GnmtLike(torch, layers):
    """NVIDIA GNMT v2's shape: shared 32320-token embedding, encoder with a
    bidirectional first layer, decoder LSTMs fed [h, attention context],
    1024 units, untied classifier (the catalog's gnmt)."""
    nn = torch.nn

    class Gnmt(nn.Module):
        vocab = 32320

        def __init__(self):
            super().__init__()
            h = 1024
            self.emb = nn.Embedding(self.vocab, h)
            self.enc0 = nn.LSTM(h, h // 2, batch_first=True, bidirectional=True)
            self.enc = nn.LSTM(h, h, num_layers=max(1, layers - 1), batch_first=True)
            self.dec0 = nn.LSTM(h, h, batch_first=True)
            self.att = nn.MultiheadAttention(h, 1, batch_first=True)
            self.dec = nn.LSTM(2 * h, h, num_layers=max(1, layers - 1), batch_first=True)
            self.cls = nn.Linear(h, self.vocab)

        def forward(self, x):
            e = self.emb(x)
            enc, _ = self.enc0(e)
            enc, _ = self.enc(enc)
            d, _ = self.dec0(e)
            ctx, _ = self.att(d, enc, enc, need_weights=False)
            d, _ = self.dec(torch.cat([d, ctx], dim=-1))
            return self.cls(d)
    return Gnmt()


def make_optimizer(torch, kind, params):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=1e-4)
    return torch.optim.Adam(params, lr=1e-4)


class Injection:
    """The CUPTI injection library, when the CUDA driver loaded it."""

    def __init__(self):
        self.lib = None
        path = os.environ.get("CUDA_INJECTION64_PATH")
        if path and os.environ.get("HETBATCH_TRACE_OUT"):
            import ctypes
            try:
                self.lib = ctypes.CDLL(path)
                self.lib.hb_inject_write_to.argtypes = [ctypes.c_char_p]
            except (OSError, AttributeError) as e:
                print("torch_worker: %s: %s: not writing traces" % (path, e), file=sys.stderr)
                self.lib = None

    def write(self, path):
        if self.lib is None:
            return False
        return self.lib.hb_inject_write_to(path.encode()) == 0


def run_point(torch, args, b, n, inj):
    """One point: returns the result dict (raises torch.cuda.OutOfMemoryError)."""
    dev = torch.device("cuda", 0)
    nvtx = torch.cuda.nvtx
    seq = args.seq_len or MODELS[args.model][1]
    torch.manual_seed(args.seed)
    base, make_batch, loss_fn = build_model(torch, args.model, args.scale, seq)
    if args.precision == "bf16":
        base = base.to(torch.bfloat16)
    replicas = [base.to(dev)]
    for _ in range(1, n):
        r, _, _ = build_model(torch, args.model, args.scale, seq)
        if args.precision == "bf16":
            r = r.to(torch.bfloat16)
        r = r.to(dev)
        r.load_state_dict(replicas[0].state_dict())
        replicas.append(r)
    params = [list(r.parameters()) for r in replicas]
    opt = make_optimizer(torch, MODELS[args.model][2], params[0])
    streams = [torch.cuda.Stream(device=dev) for _ in range(n)]
    host = []
    for _ in range(n):
        x, y = make_batch(b)
        if args.precision == "bf16" and x.is_floating_point():
            x = x.to(torch.bfloat16)
        host.append((x.pin_memory(), y.pin_memory()))
    autocast = args.precision == "amp-bf16"
    errors = []

    def vsw(v):
        try:
            with torch.cuda.stream(streams[v]):
                for _ in range(args.ga):
                    nvtx.range_push("data")
                    x = host[v][0].to(dev, non_blocking=True)
                    y = host[v][1].to(dev, non_blocking=True)
                    nvtx.range_pop()
                    nvtx.range_push("forward")
                    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
                        loss = loss_fn(replicas[v](x), y) / args.ga
                    nvtx.range_pop()
                    nvtx.range_push("backward")
                    loss.backward()
                    nvtx.range_pop()
        except BaseException as e:  # re-raised on the main thread
            errors.append(e)

    def iteration(measured):
        if measured:
            nvtx.range_push(ITER_RANGE)
        t0 = time.perf_counter()
        threads = [threading.Thread(target=vsw, args=(v,)) for v in range(1, n)]
        for t in threads:
            t.start()
        vsw(0)
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        main = streams[0]
        with torch.cuda.stream(main):
            nvtx.range_push("aggregation")
            for v in range(1, n):
                main.wait_stream(streams[v])
                torch._foreach_add_([p.grad for p in params[0]], [p.grad for p in params[v]])
            nvtx.range_pop()
            nvtx.range_push("optimizer")
            opt.step()
            opt.zero_grad(set_to_none=False)
            for v in range(1, n):
                replicas[v].zero_grad(set_to_none=False)
            nvtx.range_pop()
        nvtx.range_push("weight_copy")
        for v in range(1, n):
            streams[v].wait_stream(main)
            with torch.cuda.stream(streams[v]), torch.no_grad():
                torch._foreach_copy_(params[v], params[0])
        nvtx.range_pop()
        torch.cuda.synchronize(dev)
        dt = time.perf_counter() - t0
        if measured:
            nvtx.range_pop()
        return dt

    torch.cuda.reset_peak_memory_stats(dev)
    for _ in range(args.warmup):
        iteration(False)
    times = [iteration(True) for _ in range(args.iters)]
    res = {
        "model": args.model, "local_bs": b, "n_vsw": n, "ga": args.ga,
        "warmup": args.warmup, "iters": args.iters, "precision": args.precision,
        "scale": args.scale, "seq_len": seq, "layers": scaled_layers(args.model, args.scale),
        "params": sum(p.numel() for p in params[0]),
        "peak_mem_bytes": torch.cuda.max_memory_allocated(dev),
        "iter_s_host": times,
        "status": "ok",
    }
    del opt, replicas, params, host
    return res


def device_info(torch):
    import platform
    info = {"torch": torch.__version__, "cuda": torch.version.cuda or "", "host": platform.node(),
            "device": torch.cuda.get_device_name(0), "driver": ""}
    try:
        import ctypes
        v = ctypes.c_int()
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(v)) == 0:
            info["driver"] = "%d.%d" % (v.value // 1000, (v.value % 1000) // 10)
    except OSError:
        pass
    return info


def write_json(path, obj):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def main(argv=None):
    p = build_parser()
    args = p.parse_args(argv)
    check_args(p, args)
    try:
        import torch
    except ImportError as e:
        print("torch_worker: cannot import torch (%s): install PyTorch with CUDA" % e, file=sys.stderr)
        return EXIT_NO_TORCH
    if not torch.cuda.is_available():
        print("torch_worker: torch %s sees no CUDA device (torch.cuda.is_available() is False)"
              % torch.__version__, file=sys.stderr)
        return EXIT_NO_GPU
    # CUDA initialises before the first NVTX call, so the injection library
    # can point NVTX at CUPTI in time (inject.c).
    torch.cuda.init()
    info = device_info(torch)
    if args.check:
        print(json.dumps(info))
        return EXIT_OK
    fam = MODELS[args.model][0]
    try:
        if fam in ("cnn", "vit"):
            import torchvision  # noqa: F401
        elif fam != "lstm":
            import transformers  # noqa: F401
    except ImportError as e:
        print("torch_worker: %s needs %s (%s)" % (args.model, "torchvision" if fam in ("cnn", "vit")
                                                  else "transformers", e), file=sys.stderr)
        return EXIT_NO_TORCH
    os.makedirs(args.out_dir, exist_ok=True)
    inj = Injection()
    status = EXIT_OK
    for b, n in args.points:
        name = point_name(args.model, b, n)
        try:
            res = run_point(torch, args, b, n, inj)
        except torch.cuda.OutOfMemoryError as e:
            res = {"model": args.model, "local_bs": b, "n_vsw": n, "status": "oom", "error": str(e)[:400]}
            status = EXIT_OOM if len(args.points) == 1 else status
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        res.update(info)
        res["traced"] = inj.write(os.path.join(args.out_dir, name + ".ktrace"))
        write_json(os.path.join(args.out_dir, name + ".json"), res)
        print("torch_worker: %s: %s%s" % (name, res["status"], ", %.3f ms/iteration" % (
            1e3 * sum(res["iter_s_host"]) / len(res["iter_s_host"])) if res["status"] == "ok" else ""),
            file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
