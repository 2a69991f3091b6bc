#!/usr/bin/env python3
"""The figures of a run of the suite's gpu/ group (docs/gpu.md), from its JSON results.

Usage: scripts/gpu_report.py RESULTS.json [--torch TORCH.json]

Per benchmark: GPU time and host wall time per iteration, effective bandwidth (the inputs read
once per iteration) and its fraction of the device's theoretical bandwidth (2 x memory clock x
bus width) and of the read probe over the same buffer; for the searches, the FP32 rate (2QND
flops at Q = 64, D = 768) and its fraction of the device's peak (SMs x FP32 lanes x 2 x the
peak SM clock); the mean SM clock and the throttled samples that NVML showed. With --torch (the
output of scripts/gpu_torch_compare.py), the searches against PyTorch's FP32 and TF32 times of
the same shapes. Standard library only; scripts/gpu_check.sh and scripts/device_check.sh call it.
Exit 0, or 2 when the file cannot be read.
"""
import argparse
import json
import sys

QUERIES, DIM = 64, 768


def fp32_peak(gpu):
    """FP32 FLOP/s at the peak SM clock; 0 when unknown."""
    cc = gpu.get("compute_capability", "")
    # FP32 lanes per SM: 64 on Volta, Turing and A100 (8.0), 128 on GA10x, Ada, Hopper, Blackwell.
    lanes = 64 if cc in ("7.0", "7.2", "7.5", "8.0") else 128
    if gpu.get("sm_count", -1) <= 0 or gpu.get("clock_khz", -1) <= 0:
        return 0.0
    return gpu["sm_count"] * lanes * 2 * gpu["clock_khz"] * 1e3


def search_flops(n):
    return 2.0 * QUERIES * n * DIM


def report(doc, torch=None, out=sys.stdout):
    gpu = doc["context"]["gpu"]
    theo = gpu.get("theoretical_bandwidth_bytes_per_s", 0)
    peak = fp32_peak(gpu)
    print(f"device: {gpu.get('name', '?')} (cc {gpu.get('compute_capability', '?')}, "
          f"{gpu.get('sm_count', -1)} SMs), theoretical bandwidth {theo / 1e9:.0f} GB/s, "
          f"FP32 peak {peak / 1e12:.1f} TFLOP/s (boost clock)", file=out)
    loading = gpu.get("module_loading") or "?"
    if gpu.get("nvml_available"):
        print(f"NVML: default SM clock {gpu['sm_clock_default_mhz']} MHz, max "
              f"{gpu['sm_clock_max_mhz']} MHz; module loading {loading}", file=out)
    else:
        print(f"NVML unavailable: {gpu.get('nvml_reason') or 'not recorded'}; "
              f"module loading {loading}", file=out)
    rows, probe, times = [], {}, {}
    for r in doc["benchmarks"]:
        if r["status"] != "ok":
            print(f"{r['id']}: {r['status']}: {r.get('message', '')}", file=out)
            continue
        t = r["estimates"]["median"]["point"]  # ns per iteration, GPU time
        host = r.get("metrics", {}).get("host_wall", {}).get("per_iteration", {})
        host = host.get("median", {}).get("point")
        nbytes = r.get("throughput", {}).get("bytes_per_iteration", 0)
        bw = nbytes / (t * 1e-9) if t > 0 else 0
        n = r.get("param")
        if r["name"] == "read_probe":
            probe[n] = bw
        times[r["id"]] = t
        rows.append((r, t, host, bw, n))
    print(f"{'benchmark':42} {'GPU time':>11} {'host wall':>11} {'GB/s':>8} {'of theo':>8} "
          f"{'of probe':>8} {'TFLOP/s':>8} {'of peak':>8} {'SM MHz':>7} {'throttled':>10}",
          file=out)
    throttled_total = 0
    for r, t, host, bw, n in rows:
        frac_probe = f"{bw / probe[n]:.2f}" if n in probe and probe[n] > 0 else "-"
        tf = peak_frac = "-"
        if r["name"].startswith("vector_similarity") and t > 0:
            rate = search_flops(n) / (t * 1e-9)
            tf = f"{rate / 1e12:.2f}"
            if peak > 0:
                peak_frac = f"{rate / peak:.2f}"
        hw = f"{host / 1e3:.1f} us" if host is not None else "-"
        facts = r.get("facts", {})
        mhz = facts.get("gpu_sm_clock_mhz", {}).get("value")
        thr = facts.get("gpu_throttled_samples", {}).get("value")
        # The kept samples plus the throttled ones (all stay when all were throttled).
        nkept = len(r.get("samples", {}).get("totals_ns", []))
        nall = nkept if thr is None or thr >= nkept else nkept + int(thr)
        thr_text = f"{int(thr)}/{nall}" if thr is not None else "-"
        throttled_total += int(thr or 0)
        mhz_text = f"{mhz:.0f}" if mhz else "-"
        print(f"{r['id']:42} {t / 1e3:8.1f} us {hw:>11} {bw / 1e9:8.0f} "
              f"{(bw / theo if theo > 0 else 0):8.2f} {frac_probe:>8} {tf:>8} {peak_frac:>8} "
              f"{mhz_text:>7} {thr_text:>10}", file=out)
    print("GB/s counts the inputs read once per iteration (docs/gpu.md); at 64 queries the search "
          "does 32 flop per candidate byte, so it is bound by FP32 compute before memory on most "
          "GPUs.", file=out)
    print(f"throttled samples (mean SM clock below 75% of the reference, left out of the "
          f"estimates): {throttled_total}", file=out)
    if torch:
        compare_torch(times, torch, out)


def compare_torch(times, torch, out):
    """The suite's searches against PyTorch's (q @ c.T) / norms + topk on the same shapes."""
    print(f"\n{'candidates':>10} {'blocked':>10} {'simple':>10} {'torch fp32':>11} "
          f"{'torch tf32':>11} {'TFLOP/s':>8} {'vs fp32':>8} {'vs tf32':>8}", file=out)
    for n in sorted(int(k) for k in torch.get("fp32_ns", {})):
        ours = times.get(f"gpu/vector_similarity_batch/{n}")
        simple = times.get(f"gpu/vector_similarity_batch_simple/{n}")
        fp32 = torch["fp32_ns"].get(str(n))
        tf32 = torch.get("tf32_ns", {}).get(str(n))

        def us(v):
            return f"{v / 1e3:.1f} us" if v else "-"

        rate = f"{search_flops(n) / (ours * 1e-9) / 1e12:.1f}" if ours else "-"
        # Above 1: the suite's search is faster than PyTorch's.
        vs32 = f"{fp32 / ours:.2f}x" if ours and fp32 else "-"
        vs_tf = f"{tf32 / ours:.2f}x" if ours and tf32 else "-"
        print(f"{n:>10} {us(ours):>10} {us(simple):>10} {us(fp32):>11} {us(tf32):>11} "
              f"{rate:>8} {vs32:>8} {vs_tf:>8}", file=out)
    print("vs fp32/tf32: PyTorch's time over the suite's (above 1: the suite is faster); "
          "targets: at least 1.00x against FP32 at both sizes, 30 TFLOP/s at 100000 candidates.",
          file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--torch", help="JSON written by scripts/gpu_torch_compare.py")
    a = ap.parse_args()
    try:
        with open(a.results, encoding="utf-8") as f:
            doc = json.load(f)
        torch = None
        if a.torch:
            with open(a.torch, encoding="utf-8") as f:
                torch = json.load(f)
    except (OSError, ValueError) as e:
        print(f"gpu_report: {e}", file=sys.stderr)
        return 2
    report(doc, torch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
