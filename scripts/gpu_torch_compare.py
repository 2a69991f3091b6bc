#!/usr/bin/env python3
"""PyTorch's time for the suite's GPU similarity search, for comparison (docs/gpu.md).

Usage: scripts/gpu_torch_compare.py [--sizes 10000,100000] [--reps 100] [--json OUT.json]

The same shapes as the suite's gpu/vector_similarity_batch: 64 queries and N candidates of 768
floats, uniform in [-1, 1), top 10 per query. PyTorch's search is a user's obvious one:
(q @ c.T) / (|q| |c|) then topk(10), with the norms' outer product made beforehand (untimed, as
the suite's candidate norms are). Timed with CUDA events around each call after 20 warm-up
calls; the median of --reps calls. FP32 first (torch.backends.cuda.matmul.allow_tf32 = False),
then TF32 allowed (tensor cores, lower precision). Prints a table and, with --json, writes
{"device": ..., "torch": VERSION, "fp32_ns": {N: ns}, "tf32_ns": {N: ns}} for
scripts/gpu_report.py --torch. Exit 0; 2 without PyTorch or a CUDA device (the reason printed).
"""
import argparse
import json
import statistics
import sys


def median_ns(torch, fn, reps):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e6)  # ms to ns
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--json")
    a = ap.parse_args()
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except ImportError as e:
        print(f"gpu_torch_compare: no PyTorch here ({e})", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gpu_torch_compare: PyTorch sees no CUDA device", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    result = {"device": torch.cuda.get_device_name(dev), "torch": torch.__version__,
              "fp32_ns": {}, "tf32_ns": {}}
    print(f"PyTorch {torch.__version__} on {result['device']}: 64 queries x N x 768, top 10")
    print(f"{'N':>8} {'fp32':>12} {'tf32':>12} {'fp32 TFLOP/s':>13}")
    for n in (int(x) for x in a.sizes.split(",")):
        c = torch.rand(n, 768, device=dev, generator=gen) * 2 - 1
        q = torch.rand(64, 768, device=dev, generator=gen) * 2 - 1
        norms = q.norm(dim=1)[:, None] * c.norm(dim=1)[None, :]

        def search():
            return ((q @ c.T) / norms).topk(10, dim=1)

        row = {}
        for mode, allow in (("fp32", False), ("tf32", True)):
            torch.backends.cuda.matmul.allow_tf32 = allow
            row[mode] = median_ns(torch, search, a.reps)
            result[f"{mode}_ns"][str(n)] = row[mode]
        torch.backends.cuda.matmul.allow_tf32 = False
        rate = 2.0 * 64 * n * 768 / (row["fp32"] * 1e-9) / 1e12
        print(f"{n:>8} {row['fp32'] / 1e3:9.1f} us {row['tf32'] / 1e3:9.1f} us {rate:13.1f}")
        del c, q, norms
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
