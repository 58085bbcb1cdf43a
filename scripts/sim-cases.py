#!/usr/bin/env python3
"""Serving simulator against published load tests (tests/data/sim/cases.json).

  scripts/sim-cases.py [--kvplan build/release/kvplan] [--only ID_SUBSTRING] [--json OUT.json] [--coefficients FILE]
  scripts/sim-cases.py --fit-frontend
  scripts/sim-cases.py --audit

--audit checks each fixed-length case's published figures against the hardware instead: how much of the GPUs'
datasheet dense tensor peak (the weight format's: fp8 for fp8 weights, fp4 for fp4, else bf16 / fp16) the
published figures would need for the linear layers alone (2 x active parameters less the embedding and the output
layer per token; attention FLOPs left out, so every figure is a lower bound). Three demands, each from one
published figure: the throughput (tokens/s x FLOPs per prompt + output token), a closed loop's latencies (Little's
law: concurrency x (ISL + OSL - 1) tokens of work per mean E2E = TTFT + (OSL - 1) x TPOT, medians where only
medians are published), and a closed burst's median TTFT (N requests at once: the k-th first token waits for k
prompts' prefill, so the median waits for ceil(N / 2)). Over 100% means the published figure cannot come from the
stated workload on the stated GPUs (prefix-cache hits, another GPU or other lengths would explain it); such cases
stay in the tables and the counts, marked † in the summary table (which adds the counts without them). No kvplan
coefficient enters.

--fit-frontend derives the performance-model coefficients frontend_s and frontend_vllm_v0_s (the API server's
share of TTFT, docs/simulation.md "Front end") instead: it reruns, with both 0, the vLLM open-loop cases below
saturation (an --rate run whose published request rate is within 5% of the offered one, so that TTFT is
one request's path and not queueing) and prints each published-minus-simulated TTFT and their median, V0
(vllm@ below 0.8) and later releases apart.

Each case runs `kvplan simulate ARGS --format json` and compares three figures with the published ones:
  throughput  output tok/s (request/s where only that is published; input tok/s when only that is)
  ITL         median ITL, else mean ITL, else median TPOT, else mean TPOT
  TTFT        median TTFT, else mean TTFT
error = (simulated - published) / published. The floor (issue #13): throughput and ITL within 20%, TTFT
within 35%. Prints a Markdown table per case, one summary table and the count within the floor. Nothing is
fitted here: the step times come from the performance model (docs/performance-model.md).
Exit status: 0 when every case ran (misses do not fail it), 2 when kvplan failed on a case.
"""
import argparse
import json
import os
import subprocess
import sys
from coefficients_file import read_coefficients

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "tests", "data", "sim")

# (column, candidate keys in order of preference, label of each)
COLUMNS = [
    ("throughput", [("output_tokens_per_s", "out tok/s"), ("request_throughput_per_s", "req/s"),
                    ("input_tokens_per_s", "in tok/s")]),
    ("itl", [("itl_ms.p50", "ITL p50 ms"), ("itl_ms.mean", "ITL mean ms"), ("tpot_ms.p50", "TPOT p50 ms"),
             ("tpot_ms.mean", "TPOT mean ms")]),
    ("ttft", [("ttft_ms.p50", "TTFT p50 ms"), ("ttft_ms.mean", "TTFT mean ms")]),
]


def lookup(results, key):
    """A figure of kvplan's results by its JSON path; input tok/s = total - output."""
    if key == "input_tokens_per_s":
        return results["total_tokens_per_s"] - results["output_tokens_per_s"]
    v = results
    for part in key.split("."):
        v = v[part]
    return v


# performance-model coefficients every run takes (--coefficients FILE: a --perf-coefficients JSON object)
COEFFICIENTS = {}


def case_args(case):
    # a relative path (configs/..., traces/..., ../perf/configs/...) is relative to tests/data/sim
    return [os.path.join(DATA, a) if a.endswith((".json", ".csv")) and not os.path.isabs(a) else a
            for a in case["args"]]


def simulate_doc(kvplan, case, extra=None):
    """The whole `kvplan simulate --format json` document of a case."""
    coeffs = dict(COEFFICIENTS, **(extra or {}))
    cmd = [kvplan, "simulate"] + case_args(case) + ["--format", "json"] + (["--perf-coefficients", json.dumps(coeffs)] if coeffs else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"kvplan exited {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def simulate(kvplan, case, extra=None):
    return simulate_doc(kvplan, case, extra)["results"]


def compare(case, results, floor):
    """Rows (column, label, key, published, simulated, error, within) for the three compared figures."""
    rows = []
    for col, candidates in COLUMNS:
        for key, label in candidates:
            if key in case["measured"]:
                pub = case["measured"][key]
                sim = lookup(results, key)
                err = (sim - pub) / pub
                rows.append((col, label, key, pub, sim, err, abs(err) <= floor[col]))
                break
        else:
            rows.append((col, None, None, None, None, None, None))
    return rows


def arg(case, flag):
    a = case["args"]
    return a[a.index(flag) + 1] if flag in a else None


def vllm_v0(engine):
    """vllm@X.Y below 0.8: the V0 engine (its own front-end coefficient, frontend_vllm_v0_s)."""
    ver = engine.partition("@")[2]
    try:
        return bool(ver) and tuple(int(x) for x in ver.split(".")[:2]) < (0, 8)
    except ValueError:
        return False


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def fit_frontend(kvplan, cases):
    """Median of published - simulated TTFT (front end 0) over the unsaturated vLLM open-loop cases, V1 and V0 apart."""
    gaps = {"frontend_s": [], "frontend_vllm_v0_s": []}
    print("| case | TTFT figure | published ms | simulated ms, front end 0 | gap ms | coefficient |")
    print("|---|---|---:|---:|---:|---|")
    for case in cases:
        rate, engine = arg(case, "--rate"), arg(case, "--engine") or ""
        got = case["measured"].get("request_throughput_per_s")
        if not rate or not engine.startswith("vllm") or got is None or abs(got / float(rate) - 1) > 0.05:
            continue
        key = "ttft_ms.p50" if "ttft_ms.p50" in case["measured"] else "ttft_ms.mean"
        if key not in case["measured"]:
            continue
        sim = lookup(simulate(kvplan, case, {"frontend_s": 0, "frontend_vllm_v0_s": 0}), key)
        pub = case["measured"][key]
        coef = "frontend_vllm_v0_s" if vllm_v0(engine) else "frontend_s"
        gaps[coef].append((pub - sim) / 1000)
        print(f"| {case['id']} | {key} | {pub:.2f} | {sim:.2f} | {pub - sim:.2f} | {coef} |")
    if not any(gaps.values()):
        sys.exit("sim-cases.py: no case qualifies for the front-end fit")
    print()
    for coef, g in gaps.items():
        if g:
            print(f"{coef} = median of {len(g)} gaps = {median(g):.4f} s")


def kvplan_json(kvplan, args):
    p = subprocess.run([kvplan] + args + ["--format", "json"], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"kvplan {args[0]} exited {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def peak_demand(kvplan, case, doc, gpus):
    """The shares of the datasheet dense peak a fixed-length case's published figures need (see the docstring), with
    the peak's TFLOP/s, dtype and the FLOPs a token; None for a case the audit does not apply to."""
    if any(f in case["args"] for f in ("--prompt-dist", "--output-dist", "--trace", "--shared-prefix-tokens", "--turns")):
        return None
    inp = doc["inputs"]
    w = inp["workload"]
    isl, osl = w["prompt"]["mean_tokens"], w["output"]["mean_tokens"]
    params = kvplan_json(kvplan, ["kv", case_args(case)[0]])["results"]
    comp = params["params_by_component"]
    flop = 2 * (params["params_active"] - comp["embedding"] - comp["position_embedding"] - comp["lm_head"])
    g = gpus[inp["gpu"]]
    fmt_w = (inp.get("weight_format") or "").lower()
    dtype = "fp8" if "fp8" in fmt_w else "fp4" if "fp4" in fmt_w else "bf16"
    tflops = g.get(f"{dtype}_dense_tflops") or (g.get("fp16_dense_tflops") if dtype == "bf16" else None)
    if not tflops:
        return None
    peak = tflops * 1e12 * inp["gpus"]
    m = case["measured"]
    need = {}
    if "output_tokens_per_s" in m:
        need["throughput"] = m["output_tokens_per_s"] / osl * (isl + osl - 1) * flop / peak
    elif "request_throughput_per_s" in m:
        need["throughput"] = m["request_throughput_per_s"] * (isl + osl - 1) * flop / peak
    ttft = m.get("ttft_ms.mean", m.get("ttft_ms.p50"))
    tpot = m.get("tpot_ms.mean", m.get("tpot_ms.p50", m.get("itl_ms.mean", m.get("itl_ms.p50"))))
    c, n = w.get("concurrency"), w.get("requests")
    if w["mode"] == "closed_loop" and c and ttft is not None and tpot is not None and n and n > c:
        e2e = (ttft + (osl - 1) * tpot) / 1000
        need["latency"] = c * (isl + osl - 1) * flop / (e2e * peak)
    if w["mode"] == "closed_loop" and c and n and n <= c and "ttft_ms.p50" in m:
        need["burst"] = -(-n // 2) * isl * flop / (m["ttft_ms.p50"] / 1000 * peak)
    return (need, tflops, dtype, flop) if need else None


def gpu_table(kvplan):
    return {g["id"]: g for g in kvplan_json(kvplan, ["gpus"])["results"]["gpus"]}


def audit(kvplan, cases):
    """Share of the datasheet dense peak each fixed-length case's published figures need (see the docstring)."""
    gpus = gpu_table(kvplan)
    print("| case | GPUs | peak TFLOP/s (dtype) | GFLOP / token | from throughput | from closed-loop latency | "
          "from burst TTFT | verdict |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    flagged = []
    for case in cases:
        doc = simulate_doc(kvplan, case)
        got = peak_demand(kvplan, case, doc, gpus)
        if not got:
            continue
        need, tflops, dtype, flop = got
        worst = max(need.values())
        verdict = "unreachable" if worst > 1 else "near the peak" if worst > 0.8 else "reachable"
        if worst > 1:
            flagged.append(case["id"])
        cell = lambda k: f"{need[k]:.0%}" if k in need else "n/a"
        print(f"| {case['id']} | {doc['inputs']['gpus']} | {tflops:g} ({dtype}) | {flop / 1e9:.2f} | {cell('throughput')} | "
              f"{cell('latency')} | {cell('burst')} | {verdict} |")
    print(f"\n- published figures over 100% of the peak: {len(flagged)}" + (f" ({', '.join(flagged)})" if flagged else ""))


def fmt(v):
    if v is None:
        return "n/a"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:.1f}"
    return f"{v:.2f}"


def pct(e):
    return "n/a" if e is None else f"{e * 100:+.0f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kvplan", default=os.path.join(ROOT, "build", "release", "kvplan"))
    ap.add_argument("--cases", default=os.path.join(DATA, "cases.json"))
    ap.add_argument("--only", help="run the cases whose id contains this")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    ap.add_argument("--fit-frontend", action="store_true", help="derive frontend_s (see above) and stop")
    ap.add_argument("--audit", action="store_true", help="the published figures against the datasheet peak (see above)")
    ap.add_argument("--coefficients", help="a --perf-coefficients JSON file every run takes (e.g. a perf-cases.py --fit result)")
    a = ap.parse_args()
    if a.coefficients:
        COEFFICIENTS.update(read_coefficients(a.coefficients))
    if not os.access(a.kvplan, os.X_OK):
        sys.exit(f"sim-cases.py: {a.kvplan}: no kvplan executable there; build it (cmake --preset release && "
                 "cmake --build build/release) or give --kvplan PATH")
    doc = json.load(open(a.cases))
    floor = doc["floor"]
    cases = [c for c in doc["cases"] if not a.only or a.only in c["id"]]
    if a.fit_frontend:
        fit_frontend(a.kvplan, cases)
        return 0
    if a.audit:
        audit(a.kvplan, cases)
        return 0
    summary, failed, out = [], 0, []
    gpus, unreachable = gpu_table(a.kvplan), set()
    for case in cases:
        print(f"### {case['id']}\n")
        print(f"`kvplan simulate {' '.join(case['args'])}`\n")
        print(f"Source: {case['source']}. Assumptions: {case['assumptions']}\n")
        try:
            doc = simulate_doc(a.kvplan, case)
            results = doc["results"]
            got = peak_demand(a.kvplan, case, doc, gpus)
            if got and max(got[0].values()) > 1:
                unreachable.add(case["id"])
        except RuntimeError as e:
            print(f"**failed**: {e}\n")
            failed += 1
            continue
        rows = compare(case, results, floor)
        print("| figure | published | simulated | error | within floor |")
        print("|---|---:|---:|---:|---|")
        for col, label, key, pub, sim, err, ok in rows:
            if label:
                print(f"| {label} | {fmt(pub)} | {fmt(sim)} | {pct(err)} | {'yes' if ok else 'no'} (±{floor[col]:.0%}) |")
        # the other published figures, for information
        shown = {r[2] for r in rows}
        for key, pub in case["measured"].items():
            if key in shown:
                continue
            try:
                sim = lookup(results, key)
            except KeyError:
                continue
            print(f"| {key} (info) | {fmt(pub)} | {fmt(sim)} | {pct((sim - pub) / pub if pub else None)} | |")
        print()
        summary.append((case["id"], rows))
        out.append({"id": case["id"], "rows": [dict(zip(("column", "label", "key", "published", "simulated", "error",
                                                         "within"), r)) for r in rows if r[1]]})
    print("### Summary\n")
    print("| case | throughput | ITL (or TPOT) | TTFT |")
    print("|---|---:|---:|---:|")
    for cid, rows in summary:
        cells = []
        for col, label, key, pub, sim, err, ok in rows:
            cells.append("n/a" if label is None else f"{pct(err)}{'' if ok else ' ✗'} ({label.split(' ')[0]})")
        print(f"| {cid}{' †' if cid in unreachable else ''} | " + " | ".join(cells) + " |")
    print()
    if unreachable:
        print("† the published figures need more than the GPUs' datasheet dense peak for this workload (--audit): "
              "counted below all the same\n")
    for col, name in [("throughput", "throughput"), ("itl", "median ITL / TPOT"), ("ttft", "TTFT")]:
        got = [r for _, rows in summary for r in rows if r[0] == col and r[1]]
        n_ok = sum(1 for r in got if r[6])
        print(f"- {name} within {floor[col]:.0%}: {n_ok} of {len(got)}")
    every = [rows for _, rows in summary if all(r[6] for r in rows if r[1])]
    print(f"- cases with every compared figure within the floor: {len(every)} of {len(summary)}")
    if unreachable:
        rest = [(cid, rows) for cid, rows in summary if cid not in unreachable]
        parts = []
        for col, name in [("throughput", "throughput"), ("itl", "ITL / TPOT"), ("ttft", "TTFT")]:
            got = [r for _, rows in rest for r in rows if r[0] == col and r[1]]
            parts.append(f"{name} {sum(1 for r in got if r[6])} of {len(got)}")
        n_every = sum(1 for _, rows in rest if all(r[6] for r in rows if r[1]))
        print(f"- without the {len(unreachable)} cases marked †: " + ", ".join(parts) +
              f", every figure {n_every} of {len(rest)}")
    for nr in doc.get("not_run", []):
        print(f"- not run: {nr['id']}: {nr['reason']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
