#!/usr/bin/env python3
"""The GPU side-by-side: kvplan's paged decode attention against PyTorch SDPA and FlashInfer.

  scripts/device/side_by_side.py PROBE.json OUTDIR [--dry-run] [--repeats 20] [--warmup 3] [--budget-s 55]

Reads the report `kvplan probe` wrote (inputs.probe_shape: q heads, KV heads, head_dim, page size;
results.cases: sequences x context tokens, cache dtype, page order and kvplan's median time) and times
the same decode step (one query token per sequence, every sequence at its full context) with
  (a) torch.nn.functional.scaled_dot_product_attention over a contiguous [B, H_kv, L, D] K and V
      (GQA by enable_gqa=True where the torch version has it, else by folding the query heads of each
      KV head into the query length, which is the same attention with no copy of K or V); each of the
      flash, cuDNN and memory-efficient backends that accepts the shape is timed and the fastest is
      the figure (the math backend is not: it materialises the scores);
  (b) flashinfer.BatchDecodeWithPagedKVCacheWrapper over a paged cache of the same page size in the
      NHD layout ([pages, 2, page_size, H_kv, D], which is kvplan's own pool layout), with the pages in
      the probe's order (a random permutation, or contiguous for the control case), where
      `import flashinfer` works.
Timing matches kvplan's CUDA backend: CUDA events around the call alone, a read of a buffer of at
least 2 x L2 before every repeat (so each starts cold and the GPU stays busy while Python enqueues the
next call), warm-up calls first, the median of --repeats. fp8 caches: SDPA has none and is skipped
with the reason; FlashInfer gets an fp8 cache with per-tensor scales. q8_0/q4_0: neither has them.

Writes OUTDIR/side-by-side-<gpu>-<date>.json (the name follows the probe's probe-<gpu>-<date>.json),
rewritten after every case, so a timeout still leaves the cases done. Per case: the shape, kvplan_s,
sdpa_s, flashinfer_s, kvplan_over_sdpa and kvplan_over_flashinfer (time / time: above 1 means kvplan is
slower), and for each the bytes moved and the achieved bytes per second, with torch's and FlashInfer's
versions at the top.

Exit status: 0 whenever the input could be read, whatever happened on the device (no torch, no CUDA,
an exception in a case: each is recorded in the JSON), so it never fails the device check;
2 for a bad command line or a file that is not a kvplan probe report.
--dry-run reads the report and prints the planned cases (stdout) without importing torch.
"""
import argparse
import datetime
import json
import math
import os
import re
import signal
import statistics
import sys
import time

SCHEMA = {"name": "kvplan.side_by_side", "version": "1.0.0"}
FP8_SCALE = 0.05  # the probe's per-tensor scale: inputs ~N(0,1), stored as x / 0.05
# bytes per element of a K or V row (q8_0 / q4_0: 32-element blocks of 34 / 18 bytes)
ELEMENT_BYTES = {"bf16": 2.0, "f16": 2.0, "fp8_e4m3": 1.0, "fp8_e5m2": 1.0, "q8_0": 34 / 32, "q4_0": 18 / 32}
SDPA_BACKENDS = ("flash", "cudnn", "efficient")


class InputError(Exception):
    pass


class Interrupted(BaseException):
    """SIGTERM (timeout): stop, write what is done, exit 0. Not an Exception, so a case's handler lets it pass."""


def log(msg):
    print("side_by_side: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the probe report (no torch)

def load_probe(path):
    try:
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    except ValueError as e:
        raise InputError(f"{path}: not JSON: {e}")
    if not isinstance(j, dict) or not isinstance(j.get("schema"), dict) or j["schema"].get("name") != "kvplan.probe":
        raise InputError(f"{path}: /schema/name: expected kvplan.probe; pass the JSON kvplan probe wrote")
    shape = (j.get("inputs") or {}).get("probe_shape")
    if not isinstance(shape, dict):
        raise InputError(f"{path}: /inputs/probe_shape: missing")
    for k in ("num_q_heads", "num_kv_heads", "head_dim", "page_size"):
        if not isinstance(shape.get(k), int) or shape[k] < 1:
            raise InputError(f"{path}: /inputs/probe_shape/{k}: expected integer >= 1, got {shape.get(k)!r}")
    if shape["num_q_heads"] % shape["num_kv_heads"] != 0:
        raise InputError(f"{path}: /inputs/probe_shape: num_q_heads {shape['num_q_heads']} is not a multiple of num_kv_heads {shape['num_kv_heads']}")
    results = j.get("results") or {}
    cases = results.get("cases")
    if not isinstance(cases, list):
        raise InputError(f"{path}: /results/cases: missing")
    for i, c in enumerate(cases):
        for k, t in (("num_seqs", int), ("context_tokens", int), ("dtype", str)):
            if not isinstance(c.get(k), t):
                raise InputError(f"{path}: /results/cases/{i}/{k}: missing or not {t.__name__}")
    return {"path": path, "shape": shape, "cases": cases, "device": results.get("device") or {},
            "backend": (j.get("inputs") or {}).get("backend", ""), "meta": j.get("meta") or {}}


def kv_bytes(s):
    """K and V bytes one decode step reads (a case's shape): seqs x context x 2 x kv_heads x head_dim x element bytes."""
    return float(s["num_seqs"]) * s["context_tokens"] * 2 * s["num_kv_heads"] * s["head_dim"] * ELEMENT_BYTES[s["dtype"]]


def plan_case(shape, c, index):
    """What each library will be asked to do for probe case `c` (or why not), from the report alone."""
    dtype = c["dtype"]
    timing = c.get("timing") or {}
    kvplan_s = timing.get("median_s")
    p = {"case": index,
         "shape": {"num_seqs": c["num_seqs"], "context_tokens": c["context_tokens"], "dtype": dtype,
                   "pages": c.get("pages", "random permutation"), "num_q_heads": shape["num_q_heads"],
                   "num_kv_heads": shape["num_kv_heads"], "head_dim": shape["head_dim"], "page_size": shape["page_size"]},
         "kvplan": {"median_s": kvplan_s, "bytes_moved": c.get("bytes_moved"), "achieved_bytes_per_s": c.get("achieved_bytes_per_s")}}
    if dtype not in ELEMENT_BYTES:
        p["sdpa_plan"] = p["flashinfer_plan"] = {"skip": f"unknown cache dtype '{dtype}'"}
        return p
    if dtype in ("bf16", "f16"):
        p["sdpa_plan"] = {"dtype": dtype}
        p["flashinfer_plan"] = {"q_dtype": dtype, "kv_dtype": dtype}
    elif dtype.startswith("fp8"):
        p["sdpa_plan"] = {"skip": "SDPA has no fp8 K/V (it takes q, k and v of one floating type)"}
        p["flashinfer_plan"] = {"q_dtype": "bf16", "kv_dtype": dtype, "k_scale": FP8_SCALE, "v_scale": FP8_SCALE}
    else:
        p["sdpa_plan"] = {"skip": f"SDPA has no {dtype} cache"}
        p["flashinfer_plan"] = {"skip": f"FlashInfer has no {dtype} cache (llama.cpp block format)"}
    if not isinstance(kvplan_s, (int, float)) or not kvplan_s > 0:
        p["note"] = "the probe has no time for this case: no ratio"
    return p


def output_name(probe_path, device_name):
    m = re.match(r"^probe-(.+)\.json$", os.path.basename(probe_path))
    if m:
        return "side-by-side-" + m.group(1) + ".json"
    gpu = re.sub(r"[^A-Za-z0-9_.-]", "", (device_name or "unknown-gpu").replace(" ", "-")) or "unknown-gpu"
    return f"side-by-side-{gpu}-{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d}.json"


def describe(p):
    s = p["shape"]
    t = p["kvplan"]["median_s"]
    head = (f"case {p['case']}: {s['num_seqs']} x {s['context_tokens']} tokens, {s['dtype']}, {s['pages']} pages; "
            + (f"kvplan {t * 1e3:.4g} ms" if isinstance(t, (int, float)) else "kvplan: no time"))
    sd = p["sdpa_plan"]
    fi = p["flashinfer_plan"]
    sdpa = ("sdpa: skip (" + sd["skip"] + ")") if "skip" in sd else (
        f"sdpa: {sd['dtype']} contiguous [{s['num_seqs']}, {s['num_kv_heads']}, {s['context_tokens']}, {s['head_dim']}], "
        f"{s['num_q_heads']} q heads, flash/cudnn/efficient")
    flash = ("flashinfer: skip (" + fi["skip"] + ")") if "skip" in fi else (
        f"flashinfer: q {fi['q_dtype']}, kv {fi['kv_dtype']} paged NHD, page {s['page_size']} (if it imports)")
    return head + "\n  " + sdpa + "\n  " + flash


# ---------------------------------------------------------------- on the device

def ratio(a, b):
    return a / b if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 and b > 0 else None


def error_text(e):
    text = f"{type(e).__name__}: {e}".strip()
    return text if len(text) < 600 else text[:600] + "..."


class Device:
    def __init__(self, torch, args):
        self.torch = torch
        self.args = args
        props = torch.cuda.get_device_properties(0)
        self.name = props.name
        self.l2 = int(getattr(props, "L2_cache_size", 0) or 0)
        self.sms = int(getattr(props, "multi_processor_count", 0) or 0)
        # at least 2 x L2 (kvplan's flush) and at least 512 MiB, so the read also outlasts Python's launch of the next call
        self.flush_bytes = max(2 * self.l2, 512 << 20)
        self.flush_buf = torch.ones(self.flush_bytes // 4, dtype=torch.int32, device="cuda")

    def time(self, fn):
        """Median, min and count of CUDA-event times of fn() (seconds), each after the L2 flush read."""
        torch = self.torch
        for _ in range(self.args.warmup):
            fn()
        torch.cuda.synchronize()
        pairs = []
        for _ in range(self.args.repeats):
            self.flush_buf.sum()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            pairs.append((s, e))
        torch.cuda.synchronize()
        t = [s.elapsed_time(e) * 1e-3 for s, e in pairs]
        return {"median_s": statistics.median(t), "min_s": min(t), "max_s": max(t), "repeats": len(t)}

    def generator(self, seed):
        g = self.torch.Generator(device="cuda")
        g.manual_seed(seed)
        return g


def reference_seq0(torch, q0, k0, v0, scale):
    """fp32 attention of sequence 0: q0 [Hq, D], k0 / v0 [L, Hkv, D] (already dequantised) -> [Hq, D]."""
    hq, d = q0.shape
    hkv = k0.shape[1]
    qg = q0.float().view(hkv, hq // hkv, d)
    s = torch.einsum("hgd,lhd->hgl", qg, k0.float()) * (1.0 / math.sqrt(d)) * scale
    p = torch.softmax(s, dim=-1)
    return torch.einsum("hgl,lhd->hgd", p, v0.float() * scale).reshape(hq, d)


def run_sdpa(dev, p, seed, deadline):
    torch = dev.torch
    import torch.nn.functional as F
    s = p["shape"]
    b, l, hq, hkv, d = s["num_seqs"], s["context_tokens"], s["num_q_heads"], s["num_kv_heads"], s["head_dim"]
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[s["dtype"]]
    g = dev.generator(seed)
    out = {"available": True, "layout": "contiguous [B, H_kv, L, D]"}
    q = torch.randn(b, hq, 1, d, dtype=dt, device="cuda", generator=g)
    k = torch.randn(b, hkv, l, d, dtype=dt, device="cuda", generator=g)
    v = torch.randn(b, hkv, l, d, dtype=dt, device="cuda", generator=g)
    group = hq // hkv

    def gqa():
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    qf = q.view(b, hkv, group, d)  # q head h reads KV head h // group: fold the group into the query length

    def folded():
        return F.scaled_dot_product_attention(qf, k, v).reshape(b, hq, 1, d)

    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
        if hasattr(SDPBackend, "CUDNN_ATTENTION"):
            backends["cudnn"] = SDPBackend.CUDNN_ATTENTION
    except ImportError:
        backends, sdpa_kernel = {}, None
    ref = reference_seq0(torch, q[0, :, 0, :], k[0].transpose(0, 1), v[0].transpose(0, 1), 1.0)
    per = {}
    import warnings
    names = [n for n in SDPA_BACKENDS if n in backends] or ["default"]
    for name in names:
        if time.monotonic() > deadline:
            per[name] = {"skip": "time budget spent"}
            continue
        ctx = (lambda: sdpa_kernel([backends[name]])) if name in backends else None
        last = None
        for form, fn in (("enable_gqa", gqa), ("folded query heads", folded)):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if ctx:
                        with ctx():
                            o = fn()
                            torch.cuda.synchronize()
                            t = dev.time(fn)
                    else:
                        o = fn()
                        torch.cuda.synchronize()
                        t = dev.time(fn)
                t["gqa"] = form
                t["max_abs_err_seq0"] = float((o[0, :, 0, :].float() - ref).abs().max())
                per[name] = t
                last = None
                break
            except Exception as e:  # this backend or form does not take the shape: try the next
                last = error_text(e)
        if last is not None:
            per[name] = {"error": last}
    out["per_backend"] = per
    timed = {n: r for n, r in per.items() if "median_s" in r}
    if not timed:
        out["why"] = "no SDPA backend ran this shape"
        return out
    best = min(timed, key=lambda n: timed[n]["median_s"])
    out.update({"backend": best, "gqa": timed[best]["gqa"], "median_s": timed[best]["median_s"],
                "max_abs_err_seq0": timed[best]["max_abs_err_seq0"]})
    elem = 2.0
    out["bytes_moved"] = kv_bytes(s) + 2 * b * hq * d * elem  # K, V read; q read, out written
    out["achieved_bytes_per_s"] = out["bytes_moved"] / out["median_s"]
    return out


def run_flashinfer(dev, flashinfer, p, seed, deadline):
    torch = dev.torch
    s = p["shape"]
    fp = p["flashinfer_plan"]
    b, l, hq, hkv, d, page = (s["num_seqs"], s["context_tokens"], s["num_q_heads"], s["num_kv_heads"], s["head_dim"],
                              s["page_size"])
    dts = {"bf16": torch.bfloat16, "f16": torch.float16, "fp8_e4m3": getattr(torch, "float8_e4m3fn", None),
           "fp8_e5m2": getattr(torch, "float8_e5m2", None)}
    qdt, kvdt = dts[fp["q_dtype"]], dts[fp["kv_dtype"]]
    if kvdt is None:
        return {"available": True, "why": f"this torch has no {fp['kv_dtype']} dtype"}
    fp8 = fp["kv_dtype"].startswith("fp8")
    scale = FP8_SCALE if fp8 else 1.0
    pps = -(-l // page)
    num_pages = b * pps
    g = dev.generator(seed)
    if s["pages"] == "contiguous":
        order = torch.arange(num_pages, device="cuda")
    else:
        order = torch.randperm(num_pages, device="cuda", generator=g)
    indices = order.to(torch.int32)
    indptr = (torch.arange(b + 1, device="cuda") * pps).to(torch.int32)
    last_len = torch.full((b,), l - (pps - 1) * page, dtype=torch.int32, device="cuda")
    kv = torch.empty(num_pages, 2, page, hkv, d, dtype=kvdt, device="cuda")
    chunk = max(1, (256 << 20) // (2 * page * hkv * d))  # fill in pieces of 256 Mi elements: no full-size temporary
    for i in range(0, num_pages, chunk):
        n = min(chunk, num_pages - i)
        x = torch.randn(n, 2, page, hkv, d, dtype=torch.bfloat16, device="cuda", generator=g)
        kv[i:i + n] = (x / scale).to(kvdt) if fp8 else x.to(kvdt)
        del x
    q = torch.randn(b, hq, d, dtype=qdt, device="cuda", generator=g)
    ws = torch.zeros(256 << 20, dtype=torch.uint8, device="cuda")
    w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
    out = {"available": True, "layout": "NHD [pages, 2, page_size, H_kv, D]", "use_tensor_cores": False}
    if hasattr(w, "plan"):
        try:
            w.plan(indptr, indices, last_len, hq, hkv, d, page, pos_encoding_mode="NONE", q_data_type=qdt, kv_data_type=kvdt)
        except TypeError:  # older: one data_type for the cache
            w.plan(indptr, indices, last_len, hq, hkv, d, page, pos_encoding_mode="NONE", data_type=kvdt, q_data_type=qdt)
        run = w.run
    else:  # 0.1.x: begin_forward / forward
        w.begin_forward(indptr, indices, last_len, hq, hkv, d, page, "NONE", data_type=kvdt)
        run = w.forward
    if fp8:
        def fn():
            return run(q, kv, k_scale=scale, v_scale=scale)
    else:
        def fn():
            return run(q, kv)
    if time.monotonic() > deadline:
        out["why"] = "time budget spent (after the cache was built)"
        return out
    o = fn()
    torch.cuda.synchronize()
    idx0 = indices[:pps].long()  # sequence 0's pages, in its order (gathered as bytes: fp8 indexing is not everywhere)
    pages0 = kv.view(torch.uint8)[idx0].view(kvdt) if fp8 else kv[idx0]
    k0 = pages0[:, 0].reshape(pps * page, hkv, d)[:l].float()
    v0 = pages0[:, 1].reshape(pps * page, hkv, d)[:l].float()
    ref = reference_seq0(torch, q[0], k0, v0, scale)
    out["max_abs_err_seq0"] = float((o[0].float() - ref).abs().max())
    out.update(dev.time(fn))
    qbytes = 2.0 * b * hq * d * q.element_size()  # q read, out written (same dtype as q)
    out["bytes_moved"] = kv_bytes(s) + qbytes
    out["achieved_bytes_per_s"] = out["bytes_moved"] / out["median_s"]
    return out


def write(report, path):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def on_term(signum, frame):
    raise Interrupted()


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("probe", help="the JSON kvplan probe wrote")
    ap.add_argument("outdir", help="where side-by-side-<gpu>-<date>.json goes")
    ap.add_argument("--dry-run", action="store_true", help="print the planned cases; import nothing, write nothing")
    ap.add_argument("--repeats", type=int, default=20, help="timed calls per library and case (median)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls first")
    ap.add_argument("--budget-s", type=float, default=55.0,
                    help="start no new measurement after this many seconds from start (the rest are recorded as skipped)")
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args(argv)
    t_start = time.monotonic()
    deadline = t_start + args.budget_s
    try:
        if args.repeats < 1 or args.warmup < 0:
            raise InputError("--repeats must be >= 1 and --warmup >= 0")
        probe = load_probe(args.probe)
    except InputError as e:
        print(f"side_by_side: error: {e}", file=sys.stderr)
        return 2
    plans = [plan_case(probe["shape"], c, i) for i, c in enumerate(probe["cases"])]
    if args.dry_run:
        print(f"probe {args.probe}: {len(plans)} cases, {probe['shape']['num_q_heads']} q / {probe['shape']['num_kv_heads']} KV heads, "
              f"head_dim {probe['shape']['head_dim']}, page {probe['shape']['page_size']}, kvplan measured on "
              f"{probe['device'].get('name', '?')} ({probe['backend'] or '?'} backend)")
        for p in plans:
            print(describe(p))
        print(f"would write {os.path.join(args.outdir, output_name(args.probe, None))}")
        return 0

    signal.signal(signal.SIGTERM, on_term)
    report = {"schema": SCHEMA,
              "meta": {"tool": "scripts/device/side_by_side.py", "argv": sys.argv,
                       "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
              "inputs": {"probe_report": args.probe, "probe_shape": probe["shape"],
                         "kvplan_device": probe["device"].get("name"), "kvplan_backend": probe["backend"],
                         "repeats": args.repeats, "warmup": args.warmup, "budget_s": args.budget_s, "seed": args.seed},
              "results": {"torch": {"available": False}, "flashinfer": {"available": False}, "device": None,
                          "timing": None, "cases": [], "interrupted": False, "elapsed_s": 0.0}}
    res = report["results"]
    os.makedirs(args.outdir, exist_ok=True)
    path = os.path.join(args.outdir, output_name(args.probe, None))
    torch = flashinfer = None
    dev = None
    try:
        try:
            import torch  # noqa: F811
            res["torch"] = {"available": True, "version": torch.__version__, "cuda": torch.version.cuda}
            if not torch.cuda.is_available():
                res["torch"]["why"] = "torch.cuda.is_available() is False"
        except Exception as e:
            res["torch"] = {"available": False, "why": error_text(e)}
            torch = None
        if torch is not None and torch.cuda.is_available():
            try:
                dev = Device(torch, args)
                res["device"] = {"name": dev.name, "l2_bytes": dev.l2, "sm_count": dev.sms}
                res["timing"] = {"method": "CUDA events around the call; a read of flush_bytes before each repeat; "
                                           "median of repeats after warmup calls", "flush_bytes": dev.flush_bytes,
                                 "repeats": args.repeats, "warmup": args.warmup}
                if probe["device"].get("name") and probe["device"]["name"] != dev.name:
                    res["warning"] = f"kvplan was measured on {probe['device']['name']}, this is {dev.name}: the ratios compare devices"
            except Exception as e:
                res["torch"]["why"] = "CUDA device setup failed: " + error_text(e)
                dev = None
            try:
                import flashinfer  # noqa: F811
                res["flashinfer"] = {"available": True, "version": getattr(flashinfer, "__version__", "?")}
            except Exception as e:
                res["flashinfer"] = {"available": False, "why": "import flashinfer: " + error_text(e)}
                flashinfer = None
        else:
            why = "no torch" if torch is None else "no CUDA device"
            res["flashinfer"] = {"available": False, "why": f"not tried: {why}"}
        no_device = "not run: " + (res["torch"].get("why") or "no CUDA device")
        write(report, path)
        for p in plans:
            s = p["shape"]
            kvplan_s = p["kvplan"]["median_s"]
            row = {"case": p["case"], "shape": s, "kvplan": p["kvplan"]}
            if p.get("note"):
                row["note"] = p["note"]
            for lib, plan_key in (("sdpa", "sdpa_plan"), ("flashinfer", "flashinfer_plan")):
                plan = p[plan_key]
                if "skip" in plan:
                    row[lib] = {"available": False, "why": plan["skip"]}
                elif dev is None:
                    row[lib] = {"available": False, "why": no_device}
                elif lib == "flashinfer" and flashinfer is None:
                    row[lib] = {"available": False, "why": res["flashinfer"]["why"]}
                elif time.monotonic() > deadline:
                    row[lib] = {"available": True, "why": f"skipped: the {args.budget_s:g} s time budget was spent"}
                else:
                    log(f"case {p['case']}: {s['num_seqs']} x {s['context_tokens']} {s['dtype']}: {lib}")
                    try:
                        if lib == "sdpa":
                            row[lib] = run_sdpa(dev, p, args.seed + p["case"], deadline)
                        else:
                            row[lib] = run_flashinfer(dev, flashinfer, p, args.seed + p["case"], deadline)
                    except Exception as e:
                        row[lib] = {"available": True, "error": error_text(e)}
                    finally:
                        release(torch)
            row["kvplan_s"] = kvplan_s
            row["sdpa_s"] = row["sdpa"].get("median_s")
            row["flashinfer_s"] = row["flashinfer"].get("median_s")
            row["kvplan_over_sdpa"] = ratio(kvplan_s, row["sdpa_s"])
            row["kvplan_over_flashinfer"] = ratio(kvplan_s, row["flashinfer_s"])
            res["cases"].append(row)
            res["elapsed_s"] = time.monotonic() - t_start
            write(report, path)
    except Interrupted:
        res["interrupted"] = True
        log("interrupted (SIGTERM): writing the cases done")
    except Exception as e:  # never fail the device check
        res["error"] = error_text(e)
        log("error: " + res["error"])
    res["elapsed_s"] = time.monotonic() - t_start
    try:
        write(report, path)
        log(f"wrote {path} ({len(res['cases'])} of {len(plans)} cases, {res['elapsed_s']:.1f} s)")
        for row in res["cases"]:
            log(f"  case {row['case']}: kvplan/sdpa {fmt(row['kvplan_over_sdpa'])}, kvplan/flashinfer {fmt(row['kvplan_over_flashinfer'])}")
    except OSError as e:
        log(f"error: {path}: cannot write: {e.strerror}")
    return 0


def release(torch):
    """After a case: wait for the device and hand the case's buffers back (a sticky CUDA error is left to the next case)."""
    try:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    except Exception:
        pass


def fmt(x):
    return "-" if x is None else f"{x:.3f}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
