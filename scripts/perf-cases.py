#!/usr/bin/env python3
"""Performance model against published measurements (tests/data/perf/cases.json).

  scripts/perf-cases.py [--kvplan build/release/kvplan] [--coefficients FILE]   # error table (Markdown)
  scripts/perf-cases.py --fit OUT.json [--fit-only K1,K2]                       # fit the coefficients
  scripts/perf-cases.py --explain                                               # the cases each coefficient moves

Each case runs `kvplan plan ARGS --format json` and compares one figure of results.performance with the
published one. --fit minimises, over the regimes, the mean over the regime's cases of the Huber loss of
log(predicted / measured) (squared within 10%, linear beyond; see HUBER) by coordinate descent
(multiplicative steps) over the coefficients named in FIT, and writes them as a --perf-coefficients file.
A case's regime weights it equally with the others; no coefficient is fitted to one case alone: --fit keeps
the value of each coefficient in FIT that moves fewer than two cases (by more than 0.1% when raised by 10%;
--explain lists the cases each one moves).
"""
import argparse
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import tempfile
from coefficients_file import read_coefficients

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CASES = os.path.join(ROOT, "tests", "data", "perf", "cases.json")

FIT = ["weight_eff_dense", "weight_eff_fp8", "weight_eff_int8", "weight_eff_int4", "weight_eff_ggml", "weight_eff_fp4",
       "dequant_per_sm_cycle", "dequant_pre_volta", "dequant_k", "dequant_k_low", "dmmv_per_sm_cycle", "kv_eff", "compute_eff", "compute_eff_fp8", "unified_bw_eff", "die_link_bw_eff", "cpu_bw_eff", "gddr_read_gain", "rocm_read_gain", "kernel_s", "eager_kernel_s", "kernel_llamacpp_s", "metal_kernel_s", "step_vllm_s", "step_vllm_v0_s", "step_sglang_s", "step_trtllm_s",
       "step_llamacpp_s", "step_generic_s", "ar_alpha_nvlink_s", "moe_layer_s"]
UPPER = {k: 0.95 for k in FIT if "eff" in k}
# A weak prior keeps each coefficient near its physical starting value unless the cases move it:
# loss += PRIOR x sum log(value / start)^2 (a MAP fit; without it the cases of one engine can trade
# its step overhead against a kernel efficiency without limit).
PRIOR = 0.01


def predicted(kvplan, case, coeff_file):
    args = [kvplan, "plan"] + [os.path.join(ROOT, "tests", "data", "perf", a) if a.startswith("configs/") else a for a in case["args"]]
    args += ["--format", "json"]
    if coeff_file:
        args += ["--perf-coefficients", coeff_file]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{case['id']}: kvplan exited {p.returncode}: {p.stderr.strip()}")
    d = json.loads(p.stdout)
    perf = d["results"]["performance"]
    gpus = d["inputs"]["gpus"]
    m = case["metric"]
    if m == "tpot_ms":
        return perf["tpot_s"] * 1e3
    if m == "ttft_ms":
        return perf["ttft_s"] * 1e3
    if m == "batch_time_ms":
        return perf["batch_time_s"] * 1e3
    if m == "output_tokens_per_s":
        return perf["output_tokens_per_s"]
    if m == "output_tokens_per_s_per_gpu":
        return perf["output_tokens_per_s"] / gpus
    raise SystemExit(f"{case['id']}: unknown metric {m}")


def errors(kvplan, cases, coeffs):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(coeffs, f)
        path = f.name
    try:
        out = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            preds = list(pool.map(lambda c: predicted(kvplan, c, path if coeffs else None), cases))
        for c, p in zip(cases, preds):
            # a throughput is the inverse of a time: the error sign says whether kvplan is slower (+) or faster (-)
            ratio = p / c["measured"]
            if c["metric"].startswith("output_tokens_per_s"):
                ratio = c["measured"] / p
            out.append((c, p, ratio))
        return out
    finally:
        os.unlink(path)


# The log error counts squared up to the floor of issue #12 (10%) and linearly beyond it (Huber): a case the
# model cannot reach (an unmodelled engine trait, a confounded measurement) pulls on the coefficients no harder
# than a case just outside the floor, so it does not drag the cases that can be within it out.
HUBER = math.log(1.10)


def huber(e):
    e = abs(e)
    return e * e if e <= HUBER else 2 * HUBER * e - HUBER * HUBER


def loss(rows, coeffs=None, start=None):
    by = {}
    for c, _, r in rows:
        by.setdefault(c["regime"], []).append(huber(math.log(r)))
    total = sum(sum(v) / len(v) for v in by.values())
    if coeffs and start:
        total += PRIOR * sum(math.log(coeffs[k] / start[k]) ** 2 for k in FIT if start.get(k))
    return total


def table(rows):
    print("| case | regime | metric | measured | kvplan | error |")
    print("|---|---|---|---:|---:|---:|")
    for c, p, r in rows:
        print(f"| {c['id']} | {c['regime']} | {c['metric']} | {c['measured']:.4g} | {p:.4g} | {100 * (r - 1):+.1f}% |")
    print()
    print("| regime | cases | mean abs error | max abs error | within 10% | within 20% |")
    print("|---|---:|---:|---:|---:|---:|")
    by = {}
    for c, _, r in rows:
        by.setdefault(c["regime"], []).append(abs(r - 1))
    for k, v in sorted(by.items()):
        print(f"| {k} | {len(v)} | {100 * sum(v) / len(v):.1f}% | {100 * max(v):.1f}% | {sum(x <= 0.10 for x in v)} | {sum(x <= 0.20 for x in v)} |")


def defaults_of(kvplan):
    """The built-in coefficients, as kvplan prints them in results.performance.coefficients."""
    return json.loads(subprocess.run([kvplan, "plan", "llama-3.1-8b", "--gpu", "h100-sxm", "--format", "json"],
                                     capture_output=True, text=True).stdout)["results"]["performance"]["coefficients"]


def with_defaults(kvplan, coeffs):
    """coeffs, with the built-in value of every coefficient in FIT it does not name."""
    base = dict(coeffs)
    for k, v in defaults_of(kvplan).items():
        if k in FIT:
            base.setdefault(k, v)
    return base


def moved_by(kvplan, cases, base, base_rows=None):
    """Per coefficient in FIT: the cases whose prediction moves by more than 0.1% when it is raised by 10% from
    base, or lowered by 10% when raising it would pass its cap (a share at its UPPER bound) or the whole (every FIT
    coefficient set: with_defaults; base_rows: errors() at base, when the caller has them)."""
    ref = {c["id"]: p for c, p, _ in (base_rows if base_rows is not None else errors(kvplan, cases, base))}
    out = {}
    for k in FIT:
        trial = dict(base)
        trial[k] = base[k] * 1.1 if base[k] * 1.1 <= UPPER.get(k, 1e9) else base[k] / 1.1
        out[k] = [c for c, p, _ in errors(kvplan, cases, trial) if abs(p / ref[c["id"]] - 1) > 1e-3]
    return out


def explain(kvplan, cases, coeffs):
    print("| coefficient | cases it moves | regimes |")
    print("|---|---:|---|")
    for k, moved in moved_by(kvplan, cases, with_defaults(kvplan, coeffs)).items():
        print(f"| {k} | {len(moved)} | {', '.join(sorted({c['regime'] for c in moved}))} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvplan", default=os.path.join(ROOT, "build", "release", "kvplan"))
    ap.add_argument("--coefficients")
    ap.add_argument("--fit")
    ap.add_argument("--fit-only", help="comma-separated coefficients: fit these, keep the rest (default: all of FIT)")
    ap.add_argument("--only", help="comma-separated regimes")
    ap.add_argument("--cases", default=CASES, help="the cases file (default tests/data/perf/cases.json)")
    ap.add_argument("--explain", action="store_true", help="list, per fitted coefficient, the cases it moves, and stop")
    a = ap.parse_args()
    cases = json.load(open(a.cases))["cases"]
    if a.only:
        cases = [c for c in cases if c["regime"] in a.only.split(",")]
    # moderate-concurrency closed loops interleave prefills with decode steps: kvplan simulate's cases, not a static step
    static = [c for c in cases if c["regime"] != "moderate"]
    coeffs = read_coefficients(a.coefficients) if a.coefficients else {}
    if a.fit_only:
        unknown = [k for k in a.fit_only.split(",") if k not in FIT]
        if unknown:
            sys.exit(f"--fit-only: {', '.join(unknown)} not among the fitted coefficients ({', '.join(FIT)})")
        FIT[:] = a.fit_only.split(",")
    if a.explain:
        explain(a.kvplan, static, coeffs)
        return
    if a.fit:
        # start from the built-in defaults, as kvplan prints them in results.performance.coefficients
        base = with_defaults(a.kvplan, coeffs)
        start = dict(base)
        # no coefficient is fitted to fewer than two cases: those it does not move keep their value
        base_rows = errors(a.kvplan, static, base)
        fit = [k for k, moved in moved_by(a.kvplan, static, base, base_rows).items() if len(moved) >= 2]
        for k in FIT:
            if k not in fit:
                print(f"{k}: moves fewer than two cases, kept at {base[k]:.4g}", file=sys.stderr)
        best = loss(base_rows, base, start)
        for step in (1.25, 1.06):
            improved = True
            while improved:
                improved = False
                for k in fit:
                    if base.get(k) is None:
                        continue
                    for f in (step, 1 / step):
                        trial = dict(base)
                        trial[k] = min(base[k] * f, UPPER.get(k, 1e9))
                        l = loss(errors(a.kvplan, static, trial), trial, start)
                        if l < best - 1e-9:
                            best, base, improved = l, trial, True
                            print(f"{k} = {trial[k]:.4g}  loss {l:.4f}", file=sys.stderr)
                            break
        json.dump({k: base[k] for k in FIT if base.get(k) is not None}, open(a.fit, "w"), indent=1)
        coeffs = base
    table(errors(a.kvplan, cases, coeffs))


if __name__ == "__main__":
    main()
