#!/usr/bin/env python3
"""End-to-end tests of CUDA benchmarks (docs/gpu.md), with the real programs.

Two programs: e2e_gpu_fixture (tests/e2e/fixture_gpu.c: BENCH_CUDA_FNs that enqueue nothing, a
CPU benchmark, and a CPU benchmark that misuses bench_cuda_stream) and the reference suite `bench`
(its `gpu/` group). Paths come from E2E_GPU_FIXTURE and E2E_BENCH; E2E_HAVE_CUDA says whether the
build has CUDA (1) or not (0).

Which half runs depends on the machine, read from the programs' own context: without a usable GPU
(no CUDA build, no driver, no device) every CUDA benchmark must be reported skipped with the reason,
its body must not run, the other benchmarks must run and the exit code must stay 0; with a GPU
the CUDA benchmarks must be measured with GPU time, a host_wall metric and the memory facts, and
hiding the GPU (CUDA_VISIBLE_DEVICES=) must bring back the skip path. Standard library only.
"""
import json
import os
import re
import sys
import tempfile
import unittest

import e2e_helpers

FIXTURE = os.environ.get("E2E_GPU_FIXTURE", "")
BENCH = os.environ.get("E2E_BENCH", "")
HAVE_CUDA = os.environ.get("E2E_HAVE_CUDA", "")

FAST = ["--warm-up-time", "0.02", "--measurement-time", "0.1", "--nresamples", "200"]
CUDA_IDS = ["cuda/cold_blocking", "cuda/plain", "cuda/sized/1", "cuda/sized/2"]
GPU_SUITE_IDS = [
    "gpu/read_probe/10000", "gpu/read_probe/100000",
    "gpu/vector_similarity_batch/10000", "gpu/vector_similarity_batch/100000",
    "gpu/vector_similarity_batch_cold/10000",
    "gpu/vector_similarity_batch_simple/10000", "gpu/vector_similarity_batch_simple/100000",
]
GPU_KEYS = [
    "available", "reason", "device_count", "name", "pci_bus_id", "compute_capability", "sm_count",
    "memory_bytes", "l2_bytes", "memory_bus_width_bits", "clock_khz", "memory_clock_khz",
    "theoretical_bandwidth_bytes_per_s", "driver_version", "runtime_version", "module_loading",
    "module_loading_set_by_harness", "nvml_available", "nvml_reason", "sm_clock_default_mhz",
    "sm_clock_max_mhz", "memory_clock_max_mhz", "sm_clock_locked_mhz",
]
# Per-sample GPU state (NVML) of a measured CUDA benchmark, and the facts derived from it.
NVML_METRICS = ["gpu_sm_cycles", "gpu_mem_cycles", "gpu_energy", "gpu_slowdown_ns"]
NVML_FACTS = ["gpu_sm_clock_reference_mhz", "gpu_sm_clock_threshold_mhz", "gpu_throttled_samples",
              "gpu_sm_clock_mhz", "gpu_mem_clock_mhz", "gpu_power_w", "gpu_temperature_max_c"]


def run(prog, *args, env=None):
    """Runs prog with args; returns the CompletedProcess with text stdout and stderr."""
    return e2e_helpers.run([prog, *args], timeout=300, env=env, encoding="utf-8")


def ran_lines(stderr):
    """The ids whose bodies ran, from the fixture's "e2e_gpu_fixture: ID ran ..." lines."""
    return [m.group(1) for m in re.finditer(r"^e2e_gpu_fixture: (\S+) ran ", stderr, re.M)]


_CONTEXT = {}


def gpu_context(prog=None, env=None):
    """The context's gpu object of a run of prog (cached per environment)."""
    key = (prog or FIXTURE, tuple(sorted((env or {}).items())))
    if key not in _CONTEXT:
        cpu_id = "cpu/spin" if (prog or FIXTURE) == FIXTURE else "harness/empty"
        p = run(prog or FIXTURE, *FAST, "--output-format", "json", "--exact", cpu_id,
                env=e2e_helpers.environ(env) if env else None)
        if p.returncode != 0:
            raise AssertionError(f"context run failed ({p.returncode}): {p.stderr}")
        _CONTEXT[key] = json.loads(p.stdout)["context"]["gpu"]
    return _CONTEXT[key]


def gpu_available():
    return gpu_context()["available"]


class Case(e2e_helpers.Case):
    def run_json(self, prog, *args, env=None):
        p = run(prog, *FAST, "--output-format", "json", *args, env=env)
        try:
            doc = json.loads(p.stdout) if p.stdout else None
        except json.JSONDecodeError as e:
            self.fail(f"not JSON ({e}): {p.stdout[:2000]}")
        return p, doc


class ContextTest(Case):
    """The context's gpu object and --context, whatever the machine."""

    def test_gpu_object_has_every_key(self):
        g = gpu_context()
        self.assertEqual(list(g.keys()), GPU_KEYS)
        self.assertIsInstance(g["available"], bool)
        if g["available"]:
            self.assertEqual(g["reason"], "")
            self.assertGreaterEqual(g["device_count"], 1)
            self.assertTrue(g["name"])
            self.assertRegex(g["compute_capability"], r"^\d+\.\d+$")
            for k in ("sm_count", "memory_bytes", "l2_bytes", "memory_bus_width_bits",
                      "clock_khz", "memory_clock_khz", "theoretical_bandwidth_bytes_per_s"):
                self.assertGreater(g[k], 0, k)
            self.assertRegex(g["driver_version"], r"^\d+\.\d+$")
            self.assertIn(g["module_loading"], ("eager", "lazy", ""))
            if g["nvml_available"]:
                self.assertEqual(g["nvml_reason"], "")
            else:
                self.assertTrue(g["nvml_reason"], "an unavailable NVML must say why")
        else:
            self.assertTrue(g["reason"], "an unavailable GPU must say why")
            self.assertEqual(g["name"], "")
            self.assertEqual(g["sm_count"], -1)
            self.assertFalse(g["nvml_available"])
            self.assertEqual(g["nvml_reason"], "no usable GPU")
            self.assertEqual(g["sm_clock_default_mhz"], -1)
        self.assertEqual(g["sm_clock_locked_mhz"], -1)

    def test_lock_clocks_without_permission_or_gpu_warns(self):
        """--gpu-lock-clocks where it cannot lock: a warning, the run goes on, exit 0."""
        g = gpu_context()
        if g["available"] and g["nvml_available"] and os.geteuid() == 0:
            self.skipTest("root with a GPU and NVML: locking would really change the clocks")
        p, doc = self.run_json(FIXTURE, "--gpu-lock-clocks", "1200", "--exact", "cpu/spin")
        self.assert_exit(p, 0)
        self.assertRegex(p.stderr, re.escape(e2e_helpers.prog_prefix(FIXTURE)) +
                         r"warning: --gpu-lock-clocks: the SM clock is not locked \(.+\); the "
                         r"GPU runs at the clocks it chooses")
        self.assertEqual(doc["context"]["gpu"]["sm_clock_locked_mhz"], -1)
        self.assertEqual(doc["benchmarks"][0]["status"], "ok")

    def test_lock_clocks_range_is_checked(self):
        p = run(FIXTURE, "--gpu-lock-clocks", "50", "--exact", "cpu/spin")
        self.assert_exit(p, 2)
        self.assertIn("--gpu-lock-clocks", p.stderr)

    def test_runtime_version_matches_build(self):
        g = gpu_context()
        if HAVE_CUDA == "1":
            self.assertRegex(g["runtime_version"], r"^\d+\.\d+$")
        elif HAVE_CUDA == "0":
            self.assertEqual(g["runtime_version"], "")
            self.assertFalse(g["available"])
            self.assertIn("no CUDA support", g["reason"])

    def test_context_flag_prints_gpu(self):
        p = run(FIXTURE, "--context")
        self.assert_exit(p, 0)
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith(("gpu ", "cuda "))]
        self.assertEqual(len(lines), 2, p.stdout)
        g = gpu_context()
        if g["available"]:
            self.assertIn(g["name"], lines[0])
        else:
            self.assertIn("none: " + g["reason"], lines[0])

    def test_version_names_cuda_layer(self):
        out = run(FIXTURE, "--version").stdout
        if HAVE_CUDA == "1":
            self.assertRegex(out, r"CUDA events: CUDA \d+\.\d+")
        elif HAVE_CUDA == "0":
            self.assertIn("CUDA events: compiled out", out)

    def test_list_shows_cuda_benchmarks(self):
        p = run(FIXTURE, "--list")
        self.assert_exit(p, 0)
        self.assertEqual(p.stdout.splitlines(),
                         ["cpu/spin"] + CUDA_IDS + ["misuse/stream_in_cpu_benchmark"])


class SkipTest(Case):
    """No usable GPU: skipped with the reason, body never runs, the rest runs, exit 0."""

    def setUp(self):
        if gpu_available():
            self.skipTest("a GPU is available: the skip path is tested by "
                          "RunTest.test_hidden_gpu_is_skipped")

    def test_fixture_skips_cuda_benchmarks(self):
        reason = gpu_context()["reason"]
        p, doc = self.run_json(FIXTURE, "^(cuda|cpu)/")
        self.assert_exit(p, 0)
        self.assertEqual(ran_lines(p.stderr), [], "a skipped benchmark's body ran")
        status = {r["id"]: r for r in doc["benchmarks"]}
        self.assertEqual(sorted(status), sorted(CUDA_IDS + ["cpu/spin"]))
        for bid in CUDA_IDS:
            self.assertEqual(status[bid]["status"], "skipped", bid)
            self.assertEqual(status[bid]["message"], reason, bid)
            # Six keys, and the code identity when objdump could read the program.
            keys = set(status[bid]) - {"code_hash"}
            self.assertEqual(len(keys), 6, f"a skipped entry has six keys: {status[bid]}")
            self.assertRegex(status[bid].get("code_hash", "0" * 64), "^[0-9a-f]{64}$")
        self.assertEqual(status["cpu/spin"]["status"], "ok")
        self.assertNotIn("metrics", status["cpu/spin"], "CPU benchmarks get no host_wall")

    def test_pretty_output_says_skipped_and_why(self):
        p = run(FIXTURE, *FAST, "--color", "never", "^(cuda|cpu)/")
        self.assert_exit(p, 0)
        reason = gpu_context()["reason"]
        for bid in CUDA_IDS:
            self.assertRegex(p.stdout, rf"(?m)^{re.escape(bid)}\s+skipped: {re.escape(reason)}$")
        self.assertIn("5 benchmarks: 1 measured, 4 skipped, 0 failed", p.stdout)

    def test_reference_suite_skips_gpu_group(self):
        reason = gpu_context(BENCH)["reason"]
        p, doc = self.run_json(BENCH, "--quick", "^gpu/", "^harness/empty$")
        self.assert_exit(p, 0)
        status = {r["id"]: r for r in doc["benchmarks"]}
        self.assertEqual(sorted(status), sorted(GPU_SUITE_IDS + ["harness/empty"]))
        for bid in GPU_SUITE_IDS:
            self.assertEqual((status[bid]["status"], status[bid]["message"]), ("skipped", reason))
        self.assertEqual(status["harness/empty"]["status"], "ok")
        self.assertFalse(doc["context"]["gpu"]["available"])


class MisuseTest(Case):
    """bench_cuda_stream in a CPU benchmark fails it (exit 3), naming the function."""

    def test_stream_in_cpu_benchmark_fails(self):
        p, doc = self.run_json(FIXTURE, "--exact", "misuse/stream_in_cpu_benchmark", "cpu/spin")
        self.assert_exit(p, 3)
        status = {r["id"]: r for r in doc["benchmarks"]}
        bad = status["misuse/stream_in_cpu_benchmark"]
        self.assertEqual(bad["status"], "failed")
        self.assertIn("bench_cuda_stream", bad["message"])
        self.assertIn("not a BENCH_CUDA_FN", bad["message"])
        self.assertEqual(status["cpu/spin"]["status"], "ok")
        self.assertIn("e2e_gpu_fixture: misuse/stream_in_cpu_benchmark stream=no", p.stderr)


class RunTest(Case):
    """A usable GPU: CUDA benchmarks are measured with GPU time and host_wall."""

    def setUp(self):
        if not gpu_available():
            self.skipTest(f"no usable GPU: {gpu_context()['reason']}")

    def test_fixture_measures_cuda_benchmarks(self):
        p, doc = self.run_json(FIXTURE, "^(cuda|cpu)/")
        self.assert_exit(p, 0)
        # Each benchmark's body runs once in each of its worker processes.
        self.assertEqual(sorted(set(ran_lines(p.stderr))), sorted(CUDA_IDS))
        self.assertNotIn("stream=no", p.stderr)
        for r in doc["benchmarks"]:
            self.assertEqual(r["status"], "ok", r)
            if not r["id"].startswith("cuda/"):
                continue
            self.assertIn("host_wall", r["metrics"], r["id"])
            self.assertEqual(r["metrics"]["host_wall"]["unit"], "ns")
            self.assertEqual(len(r["metrics"]["host_wall"]["totals"]),
                             len(r["samples"]["totals_ns"]))
            for k in ("gpu_mem_used_before_bytes", "gpu_mem_used_after_bytes"):
                self.assertGreater(r["facts"][k]["value"], 0, k)
                self.assertEqual(r["facts"][k]["unit"], "B")
            if doc["context"]["gpu"]["nvml_available"]:
                for k in NVML_METRICS:
                    self.assertEqual(len(r["metrics"][k]["totals"]),
                                     len(r["samples"]["totals_ns"]), k)
                for k in NVML_FACTS:
                    self.assertIn(k, r["facts"], r["id"])
                self.assertGreater(r["facts"]["gpu_sm_clock_mhz"]["value"], 0)

    def test_eager_loading_unless_chosen(self):
        env = dict(os.environ)
        env.pop("CUDA_MODULE_LOADING", None)
        g = gpu_context(env={"CUDA_MODULE_LOADING": "EAGER"})
        self.assertEqual(g["module_loading"], "eager")
        self.assertFalse(g["module_loading_set_by_harness"])
        p, doc = self.run_json(FIXTURE, "--exact", "cpu/spin", env=env)
        self.assert_exit(p, 0)
        self.assertEqual(doc["context"]["gpu"]["module_loading"], "eager")
        self.assertTrue(doc["context"]["gpu"]["module_loading_set_by_harness"])

    def test_blocking_benchmarks_run_under_lazy_loading(self):
        """The user's CUDA_MODULE_LOADING=LAZY stands, and the cold, blocking benchmarks still
        run: their first timed block loads the body's kernels without holding the stream."""
        env = e2e_helpers.environ({"CUDA_MODULE_LOADING": "LAZY"})
        p, doc = self.run_json(FIXTURE, "--exact", "cuda/cold_blocking", env=env)
        self.assert_exit(p, 0)
        self.assertEqual(doc["context"]["gpu"]["module_loading"], "lazy")
        p, doc = self.run_json(BENCH, "--quick", "--exact", "gpu/vector_similarity_batch_cold/10000",
                               env=env)
        self.assert_exit(p, 0)
        self.assertEqual(doc["benchmarks"][0]["status"], "ok")

    def test_hidden_gpu_is_skipped(self):
        env = {"CUDA_VISIBLE_DEVICES": ""}
        g = gpu_context(env=env)
        self.assertFalse(g["available"])
        self.assertIn("no CUDA device", g["reason"])
        p, doc = self.run_json(FIXTURE, "^(cuda|cpu)/", env=e2e_helpers.environ(env))
        self.assert_exit(p, 0)
        self.assertEqual(ran_lines(p.stderr), [])
        for r in doc["benchmarks"]:
            want = "skipped" if r["id"].startswith("cuda/") else "ok"
            self.assertEqual(r["status"], want, r)

    def test_reference_suite_gpu_group_runs(self):
        p, doc = self.run_json(BENCH, "--quick", "^gpu/")
        self.assert_exit(p, 0)
        for r in doc["benchmarks"]:
            self.assertEqual(r["status"], "ok", r)
            self.assertGreater(r["throughput"]["bytes_per_iteration"], 0)
            self.assertIn("host_wall", r["metrics"])


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fake_gpu_run():
    """A results document as a GPU run of the gpu/ group writes it (numbers chosen by hand)."""
    gpu = {"available": True, "name": "Fake H200", "compute_capability": "9.0", "sm_count": 132,
           "clock_khz": 1980000, "theoretical_bandwidth_bytes_per_s": 4.8e12,
           "nvml_available": True, "nvml_reason": "", "sm_clock_default_mhz": 1980,
           "sm_clock_max_mhz": 1980, "module_loading": "eager"}

    def entry(name, n, ns, nbytes, throttled=0, samples=40):
        return {"id": f"gpu/{name}/{n}", "name": name, "param": n, "status": "ok",
                "estimates": {"median": {"point": ns}},
                "throughput": {"bytes_per_iteration": nbytes},
                "samples": {"totals_ns": [1e6] * samples},
                "metrics": {"host_wall": {"per_iteration": {"median": {"point": ns * 1.1}}}},
                "facts": {"gpu_sm_clock_mhz": {"value": 1975.0},
                          "gpu_throttled_samples": {"value": throttled}}}
    cand = 100000 * 768 * 4
    return {"context": {"gpu": gpu}, "benchmarks": [
        entry("read_probe", 100000, 71630.0, cand),
        entry("vector_similarity_batch", 100000, 300000.0, cand + 400000 + 196608, throttled=3),
        entry("vector_similarity_batch_simple", 100000, 599400.0, cand + 400000 + 196608),
        {"id": "gpu/vector_similarity_batch_cold/10000", "name": "vector_similarity_batch_cold",
         "param": 10000, "status": "failed", "message": "CUDA error: something"},
    ]}


class ReportTest(Case):
    """scripts/gpu_report.py on a hand-made GPU run: the figures gpu_check.sh and
    device_check.sh print, checked without a GPU."""

    def report(self, doc, torch=None):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            args = [sys.executable, os.path.join(ROOT, "scripts", "gpu_report.py"), path]
            if torch is not None:
                tpath = os.path.join(d, "torch.json")
                with open(tpath, "w", encoding="utf-8") as f:
                    json.dump(torch, f)
                args += ["--torch", tpath]
            p = e2e_helpers.run(args, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_bandwidth_compute_and_throttling(self):
        out = self.report(fake_gpu_run())
        # 132 SMs x 128 lanes x 2 x 1.98 GHz
        self.assertIn("FP32 peak 66.9 TFLOP/s", out)
        probe = next(ln for ln in out.splitlines() if ln.startswith("gpu/read_probe/100000"))
        # 307.2 MB in 71.63 us: 4289 GB/s, 0.89 of 4800
        self.assertRegex(probe, r" 4289 +0\.89 +1\.00 ")
        search = next(ln for ln in out.splitlines()
                      if ln.startswith("gpu/vector_similarity_batch/100000"))
        # 2 x 64 x 100000 x 768 flop in 300 us: 32.77 TFLOP/s, 0.49 of the peak
        self.assertRegex(search, r" 32\.77 +0\.49 +1975 +3/43$")
        self.assertIn("throttled samples (mean SM clock below 75% of the reference, left out of "
                      "the estimates): 3", out)
        self.assertIn("gpu/vector_similarity_batch_cold/10000: failed: CUDA error: something", out)
        self.assertIn("NVML: default SM clock 1980 MHz", out)

    def test_against_pytorch(self):
        torch = {"fp32_ns": {"100000": 418500.0}, "tf32_ns": {"100000": 264900.0}}
        out = self.report(fake_gpu_run(), torch)
        row = next(ln for ln in out.splitlines() if ln.strip().startswith("100000"))
        self.assertRegex(row, r"300\.0 us +599\.4 us +418\.5 us +264\.9 us +32\.8 +1\.40x "
                              r"+0\.88x")

    def test_unreadable_file_is_exit_2(self):
        p = e2e_helpers.run([sys.executable, os.path.join(ROOT, "scripts", "gpu_report.py"),
                             "/nonexistent/run.json"], timeout=60)
        self.assertEqual(p.returncode, 2)


class ScriptsTest(Case):
    """gpu_check.sh and device_check.sh say what they need and stop cleanly where it is
    missing."""

    def test_gpu_check_without_a_gpu_is_exit_2(self):
        if gpu_available():
            self.skipTest("a GPU is available: scripts/gpu_check.sh runs for real there")
        build = os.path.dirname(os.path.dirname(BENCH))
        with tempfile.TemporaryDirectory() as d:
            p = e2e_helpers.run([os.path.join(ROOT, "scripts", "gpu_check.sh"), "-n", "-b", build,
                                 "-o", d], timeout=120)
        self.assert_exit(p, 2)
        if HAVE_CUDA == "0":
            self.assertIn("gpu_check: this build has no CUDA layer", p.stderr)
        else:
            self.assertIn("gpu_check: no usable GPU: " + gpu_context(BENCH)["reason"], p.stderr)

    def test_gpu_check_checks_its_options(self):
        p = e2e_helpers.run([os.path.join(ROOT, "scripts", "gpu_check.sh"), "-A", "x"],
                            timeout=60)
        self.assert_exit(p, 2)
        self.assertIn("-A takes whole seconds", p.stderr)

    def test_device_check_needs_a_prepared_build(self):
        with tempfile.TemporaryDirectory() as d:
            p = e2e_helpers.run([os.path.join(ROOT, "scripts", "device_check.sh"), "run", d,
                                 os.path.join(d, "no-build")], timeout=60)
            self.assert_exit(p, 2)
            self.assertIn("no prepared build", p.stderr)
        p = e2e_helpers.run([os.path.join(ROOT, "scripts", "device_check.sh")], timeout=60)
        self.assert_exit(p, 2)
        self.assertIn("Usage: scripts/device_check.sh prepare", p.stderr)


def main():
    missing = [n for n, v in (("E2E_GPU_FIXTURE", FIXTURE), ("E2E_BENCH", BENCH)) if not v]
    if missing:
        sys.exit(f"test_gpu.py: set {', '.join(missing)}")
    unittest.main(argv=sys.argv)


if __name__ == "__main__":
    main()
