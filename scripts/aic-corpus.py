#!/usr/bin/env python3
"""kvplan simulate against the AIConfigurator silicon corpus (tests/data/sim/aic-corpus.csv).

  scripts/aic-corpus.py [--kvplan build/release/kvplan] [--requests-per-client 4] [--rows] [--every N]
                        [--by-concurrency] [--generator-limits] [--sglang-mixed-chunk]
                        [--coefficients FILE]
  scripts/aic-corpus.py --extract SILICON_SAMPLE_CSV

The corpus: ai-dynamo/aiconfigurator @ 095f58a, aic-core/src/aiconfigurator_core/systems/silicon_sample.csv,
5,221 measured serving runs (backend, version, model, GPU, parallelism, ISL/OSL, concurrency, TTFT, TPOT).
--extract keeps the aggregated (not disaggregated) runs kvplan can state without guessing: a built-in model
profile (Llama-3.1-8B and -70B, Qwen3-32B, Qwen3-235B-A22B FP8, gpt-oss-120b), H100 SXM, H200 or B200, bf16 or
FP8 weights (gpt-oss: its own MXFP4), tensor parallelism only (no attention DP, no expert parallelism), and
writes them with the kvplan arguments they map to, and the engine limits AIConfigurator's generator would have
written for the run (engine_limits below; the corpus does not state the limits of its runs, so by default the
rows run with the engines' defaults, and --generator-limits runs them with these; --sglang-mixed-chunk runs the SGLang
rows with --enable-mixed-chunk, which the generator writes for every aggregated SGLang deployment).

Each row runs `kvplan simulate MODEL --gpu G --tp N --engine E@V --concurrency C --prompt-tokens ISL
--output-tokens OSL --requests R*C --seed 1` (a closed loop of C clients, fixed lengths, as the corpus's aiperf
runs) and compares the median TPOT (within 20%: the issue #13 floor for ITL / TPOT) and the median TTFT
(within 35%). The corpus does not say whether its figures are means or medians. Prints the count within the
floor per (engine, model, GPU) group (--by-concurrency: and concurrency range) and overall; --rows prints every
row. Nothing is fitted here.
"""
import argparse
import collections
import concurrent.futures
import csv
import json
import os
import statistics
import subprocess
import sys
from coefficients_file import read_coefficients

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "tests", "data", "sim", "aic-corpus.csv")

MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "llama-3.1-8b",
    "meta-llama/Llama-3.1-70B": "llama-3.1-70b",
    "Qwen/Qwen3-32B": "qwen3-32b",
    "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "openai/gpt-oss-120b": "gpt-oss-120b",
}
GPUS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200", "b200_sxm": "b200"}
FIELDS = ["id", "engine", "model", "gpu", "weight_format", "tp", "concurrency", "isl", "osl", "max_num_seqs",
          "max_num_batched_tokens", "max_model_len", "max_prefill_tokens", "ttft_ms", "tpot_ms"]


def engine_limits(backend, c, isl, osl):
    """The limits AIConfigurator's generator writes into an aggregated deployment it benchmarks (rule=benchmark,
    src/aiconfigurator/generator/rule_plugin/benchmark/{vllm,trtllm,sglang}.rule @ 095f58a), with max_batch_size the
    run's concurrency: vLLM --max-num-seqs c, --max-num-batched-tokens c + ISL + 1500, --max-model-len ISL + OSL + 1500;
    TensorRT-LLM max_batch_size c, max_num_tokens c + ISL + 1500 rounded up to the 32-token block; SGLang
    --max-running-requests c, --max-prefill-tokens ISL + 1500 (and --enable-mixed-chunk, written for every aggregated
    SGLang deployment: --sglang-mixed-chunk adds it).
    Returns max_num_seqs, max_num_batched_tokens, max_model_len, max_prefill_tokens ("" where none is written)."""
    if backend == "vllm":
        return str(c), str(c + isl + 1500), str(isl + osl + 1500), ""
    if backend == "trtllm":
        return str(c), str((c + isl + 1500 + 31) // 32 * 32), "", ""
    return str(c), "", "", str(isl + 1500)

def extract(path):
    out = []
    for r in csv.DictReader(open(path, newline="")):
        if r["mode"] != "agg" or r["model_path"] not in MODELS or r["system"] not in GPUS:
            continue
        if r["backend"] not in ("vllm", "sglang", "trtllm"):
            continue
        tp = r["tp_size"]
        if r["attention_dp_size"] not in ("", "1") or r["moe_ep_size"] not in ("", "0", "1"):
            continue
        model = MODELS[r["model_path"]]
        moe = model in ("qwen3-235b-a22b", "gpt-oss-120b")
        if (moe and r["moe_tp_size"] != tp) or r["pp_size"] not in ("", "1"):
            continue
        prec = r["precision"]
        if model == "gpt-oss-120b":
            if prec != "fp4":
                continue
            fmt = ""  # the checkpoint's MXFP4 (the corpus labels these runs fp4 / nvfp4)
        elif prec in ("", "bf16"):
            fmt = ""
        elif prec == "fp8":
            fmt = "fp8"
        else:
            continue
        engine = r["backend"] + ("@" + r["backend_version"] if r["backend_version"][:1].isdigit() else "")
        seqs, tokens, max_len, prefill = engine_limits(r["backend"], int(r["batch_size"]), int(r["isl"]), int(r["osl"]))
        out.append({"id": r["id"], "engine": engine, "model": model, "gpu": GPUS[r["system"]], "weight_format": fmt,
                    "tp": tp, "concurrency": r["batch_size"], "isl": r["isl"], "osl": r["osl"], "max_num_seqs": seqs,
                    "max_num_batched_tokens": tokens, "max_model_len": max_len, "max_prefill_tokens": prefill,
                    "ttft_ms": r["silicon_ttft_ms"], "tpot_ms": r["silicon_tpot_ms"]})
    w = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerows(out)
    print(f"{len(out)} rows", file=sys.stderr)


def args_of(row, per_client, defaults=False, mixed_chunk=False):
    c = int(row["concurrency"])
    a = [row["model"], "--gpu", row["gpu"], "--tp", row["tp"], "--engine", row["engine"], "--concurrency", str(c),
         "--prompt-tokens", row["isl"], "--output-tokens", row["osl"], "--requests", str(per_client * c),
         "--seed", "1"]
    if row["weight_format"]:
        a += ["--weight-format", row["weight_format"]]
    for key in ("max_num_seqs", "max_num_batched_tokens", "max_model_len", "max_prefill_tokens"):
        if row[key] and not defaults:
            a += ["--" + key.replace("_", "-"), row[key]]
    if mixed_chunk and row["engine"].startswith("sglang"):
        a.append("--enable-mixed-chunk")  # benchmark/sglang.rule: agg enable_mixed_chunk = true
    return a


def bucket(c):
    c = int(c)
    for hi, name in ((8, "1-8"), (16, "16"), (32, "32"), (64, "64"), (128, "128")):
        if c <= hi:
            return name
    return ">128"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kvplan", default=os.path.join(ROOT, "build", "release", "kvplan"))
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--requests-per-client", type=int, default=4)
    ap.add_argument("--rows", action="store_true")
    ap.add_argument("--by-concurrency", action="store_true", help="one table row per concurrency range too")
    ap.add_argument("--generator-limits", action="store_true",
                    help="run with the engine limits AIConfigurator's generator writes (the max_num_seqs, "
                         "max_num_batched_tokens, max_model_len and max_prefill_tokens columns); default: the engines' "
                         "defaults")
    ap.add_argument("--sglang-mixed-chunk", action="store_true",
                    help="run the SGLang rows with --enable-mixed-chunk (AIConfigurator's generator: agg enable_mixed_chunk = true)")
    ap.add_argument("--every", type=int, default=1,
                    help="run every N-th row only (tests/unit/test_sim_cases.cpp runs every 20th)")
    ap.add_argument("--extract", metavar="SILICON_SAMPLE_CSV")
    ap.add_argument("--coefficients", help="a --perf-coefficients JSON file every run takes (as scripts/sim-cases.py)")
    a = ap.parse_args()
    coeffs = ["--perf-coefficients", json.dumps(read_coefficients(a.coefficients))] if a.coefficients else []
    if a.extract:
        extract(a.extract)
        return 0
    rows = list(csv.DictReader(open(a.corpus, newline="")))[::a.every]

    def run(row):
        p = subprocess.run([a.kvplan, "simulate"] + args_of(row, a.requests_per_client, not a.generator_limits, a.sglang_mixed_chunk) +
                           ["--format", "json"] + coeffs,
                           capture_output=True, text=True)
        if p.returncode != 0:
            return None, p.stderr.strip()
        res = json.loads(p.stdout)["results"]
        return (res["tpot_ms"]["p50"], res["ttft_ms"]["p50"]), ""

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        results = list(ex.map(run, rows))
    failed = [(r["id"], e) for r, (v, e) in zip(rows, results) if v is None]
    groups = collections.defaultdict(lambda: ([], []))
    every_tpot, every_ttft = [], []
    if a.rows:
        print("| id | engine | model | GPU | TP | c | ISL/OSL | TPOT pub / sim | TTFT pub / sim |")
        print("|---|---|---|---|---:|---:|---|---:|---:|")
    for r, (v, _) in zip(rows, results):
        if v is None:
            continue
        tpot = v[0] / float(r["tpot_ms"]) - 1
        ttft = v[1] / float(r["ttft_ms"]) - 1
        g = groups[(r["engine"].split("@")[0], r["model"], r["gpu"],
                    bucket(r["concurrency"]) if a.by_concurrency else "all")]
        g[0].append(tpot)
        g[1].append(ttft)
        every_tpot.append(tpot)
        every_ttft.append(ttft)
        if a.rows:
            print(f"| {r['id']} | {r['engine']} | {r['model']} | {r['gpu']} | {r['tp']} | {r['concurrency']} | "
                  f"{r['isl']}/{r['osl']} | {float(r['tpot_ms']):.2f} / {v[0]:.2f} ({100 * tpot:+.0f}%) | "
                  f"{float(r['ttft_ms']):.0f} / {v[1]:.0f} ({100 * ttft:+.0f}%) |")
    within = lambda e, f: sum(abs(x) <= f for x in e)
    print("| engine | model | GPU | concurrency | runs | TPOT median error | TPOT within 20% | "
          "TTFT median error | TTFT within 35% |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    order = {"1-8": 0, "16": 1, "32": 2, "64": 3, "128": 4, ">128": 5, "all": 6}
    for k in sorted(groups, key=lambda k: (k[0], k[1], k[2], order[k[3]])):
        tp, tt = groups[k]
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {len(tp)} | {100 * statistics.median(tp):+.0f}% | "
              f"{within(tp, 0.2)} | {100 * statistics.median(tt):+.0f}% | {within(tt, 0.35)} |")
    by_engine = collections.defaultdict(lambda: ([], []))
    for k, (tp, tt) in groups.items():
        by_engine[k[0]][0].extend(tp)
        by_engine[k[0]][1].extend(tt)
    print()
    for e in sorted(by_engine):
        tp, tt = by_engine[e]
        print(f"- {e}: {len(tp)} runs, TPOT within 20% {within(tp, 0.2)}, TTFT within 35% {within(tt, 0.35)}")
    print(f"- all: {len(every_tpot)} runs, TPOT within 20% {within(every_tpot, 0.2)}, "
          f"TTFT within 35% {within(every_ttft, 0.35)}")
    for i, e in failed:
        print(f"- kvplan failed on {i}: {e}")
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
