// Conformance of kvplan's llama.cpp rules against the real engine (scripts/conformance-llamacpp.sh runs this).
// For every synthetic architecture: load the GGUF in llama.cpp once (load.mjs --settings, via node-llama-cpp); for
// every setting of the matrix create a context, keep the log a process of its own would have printed, and run
// `kvplan log` on it with the settings llama.cpp was given. kvplan's rule rows (n_ctx and its padding, n_ctx_seq, n_seq_max, kv_unified, cells per cache, K and
// V bytes per cache type, recurrent R + S) must reproduce what llama.cpp printed within its printed rounding.
// Usage: node run.mjs --kvplan PATH --make-gguf PATH --out DIR [--quick]
// Exit 0 all agree, 1 any difference, 2 a case could not run.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const kvplan = arg("--kvplan");
const makeGguf = arg("--make-gguf");
const out = arg("--out", "conformance-out");
const quick = process.argv.includes("--quick");
if (!kvplan || !makeGguf) {
  console.error("run.mjs: --kvplan PATH and --make-gguf PATH are required");
  process.exit(2);
}
mkdirSync(out, { recursive: true });

// Architectures: [name, has sliding-window layers]
const arches = [
  ["llama", false], ["qwen3", false], ["gemma2", true], ["gemma3", true], ["gemma3n", true], ["gemma4", true], ["gpt-oss", true], ["deepseek2", false],
  ["qwen3moe", false], ["llama4", true], ["mamba2", false], ["nemotron_h", false], ["granitehybrid", false],
  ["lfm2", false], ["falcon-h1", false],
];
// Contexts per sequence (node-llama-cpp's contextSize), including values that are not multiples of 256
const contexts = quick ? [1000, 4096] : [512, 1000, 4096, 5000, 40960];
const sequences = [1, 3, 4];
const types = quick ? [["f16", "f16"], ["q8_0", "q4_0"]] : [["f16", "f16"], ["q8_0", "q8_0"], ["q4_0", "q4_0"], ["q8_0", "f16"]];

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 << 20, ...opts });
  return { code: r.status ?? -1, out: r.stdout ?? "", err: (r.stderr ?? "") + (r.error ? String(r.error) : "") };
}

// the same, without blocking: the cases run on every core at once (each llama.cpp load is one process)
function runAsync(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args);
    let out = "", err = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    child.on("error", (e) => (err += String(e)));
    child.on("close", (code) => resolve({ code: code ?? -1, out, err }));
  });
}

const caseName = (arch, s) => `${arch}-c${s.ctx}-s${s.seqs}-${s.tk}-${s.tv}${s.swaFull ? "-swafull" : ""}`;

// one case: `kvplan log` on what llama.cpp printed for setting s (out/<name>.log, written by load.mjs)
async function checkCase(arch, gguf, s) {
  const name = caseName(arch, s);
  const log = join(out, `${name}.log`);
  // what llama.cpp was asked for: node-llama-cpp pads contextSize to 256 when that stays below n_ctx_train
  // (65536 here) and passes n_ctx = pad256(contextSize x sequences), one stream per sequence (kv_unified off);
  // n_ubatch as llama.cpp printed it (taken from the log)
  const pad = (x) => Math.ceil(x / 256) * 256;
  const perSeq = pad(s.ctx) < 65536 ? pad(s.ctx) : s.ctx;
  const nCtx = pad(perSeq * s.seqs);
  const kv = await runAsync(kvplan, ["log", log, "--model", gguf, "--set", `ctx-size=${nCtx}`, "--set", `parallel=${s.seqs}`,
    "--set", "kv-unified=false", "--set", `cache-type-k=${s.tk}`, "--set", `cache-type-v=${s.tv}`,
    "--set", `swa-full=${s.swaFull}`, "--format", "json"]);
  if (kv.code === 2 || !kv.out) return { arch, setting: name, status: "ERROR", detail: "kvplan: " + kv.err.trim().split("\n").pop() };
  const res = JSON.parse(kv.out).results.logs[0];
  const bad = res.rows.filter((r) => r.kind === "rule" && !r.ok);
  return {
    arch, setting: name, status: bad.length ? "DIFFERS" : "ok", rules: `${res.rule_checks_ok}/${res.rule_checks}`,
    detail: bad.map((r) => `${r.term}: printed ${r.printed_text}, kvplan ${r.kvplan_low}${r.kvplan_high !== r.kvplan_low ? ".." + r.kvplan_high : ""}`).join("; "),
  };
}

// one architecture: llama.cpp loads its GGUF once and creates a context per setting (load.mjs --settings), then
// each setting's log is checked; the cases fill their slots in the matrix's order
async function runArch(arch, gguf, settings, slots) {
  const list = settings.map((s) => {
    const quant = s.tk !== "f16" || s.tv !== "f16";
    return { name: caseName(arch, s), context: s.ctx, sequences: s.seqs, typeK: s.tk, typeV: s.tv, swaFull: s.swaFull,
      flashAttention: quant };
  });
  const file = join(out, `${arch}.settings.json`);
  writeFileSync(file, JSON.stringify(list) + "\n");
  const loaded = await runAsync(process.execPath, [join(here, "load.mjs"), gguf, "--settings", file, "--out-dir", out]);
  let made = null;
  try { made = JSON.parse(loaded.out.trim().split("\n").pop()); } catch { made = null; }  // its last line
  for (let i = 0; i < settings.length; i++) {
    const r = made?.[i];
    if (!r || !r.ok) {
      const why = r?.error ?? (loaded.err.trim().split("\n").pop() || `load.mjs exited ${loaded.code}`);
      cases[slots[i]] = { arch, setting: list[i].name, status: "ERROR", detail: "llama.cpp: " + why };
    } else cases[slots[i]] = await checkCase(arch, gguf, settings[i]);
  }
}

const cases = [];   // in the matrix's order; a job fills its slots
const jobs = [];
for (const [arch, swa] of arches) {
  const gguf = join(out, `${arch}.gguf`);
  const made = run(makeGguf, [arch, gguf, "--ctx-train", "65536"]);
  if (made.code !== 0) {
    cases.push({ arch, setting: "generate", status: "ERROR", detail: made.err.trim().split("\n").pop() });
    continue;
  }
  const settings = [];
  for (const ctx of contexts) for (const seqs of sequences) settings.push({ ctx, seqs, tk: "f16", tv: "f16", swaFull: false });
  // MLA needs K and V of one type (llama_init_from_model: "model does not support different K and V cache types";
  // kvplan refuses it too, a unit test); quantized caches run with flash attention on
  for (const [tk, tv] of types.slice(1))
    if (arch !== "deepseek2" || tk === tv) settings.push({ ctx: 4096, seqs: 1, tk, tv, swaFull: false });
  if (swa) for (const seqs of [1, 3]) settings.push({ ctx: 4096, seqs, tk: "f16", tv: "f16", swaFull: true });
  const slots = settings.map(() => cases.push(null) - 1);
  jobs.push(() => runArch(arch, gguf, settings, slots));
}
// the architectures run on every core at once (each llama.cpp load is one process)
const workers = Math.max(1, Number(process.env.KVPLAN_CONFORMANCE_JOBS) || availableParallelism());
let next = 0;
await Promise.all(Array.from({ length: Math.min(workers, jobs.length) }, async () => {
  while (next < jobs.length) await jobs[next++]();
}));

writeFileSync(join(out, "report.json"), JSON.stringify(cases, null, 2) + "\n");
const width = Math.max(...cases.map((c) => c.setting.length), 10);
for (const c of cases) console.log(`${c.status.padEnd(8)} ${c.setting.padEnd(width)} ${c.rules ?? ""} ${c.detail ?? ""}`.trimEnd());
const differs = cases.filter((c) => c.status === "DIFFERS").length, errors = cases.filter((c) => c.status === "ERROR").length;
console.log(`conformance: ${cases.length - differs - errors} of ${cases.length} cases agree with llama.cpp, ${differs} differ, ${errors} could not run`);
process.exit(errors ? 2 : differs ? 1 : 0);
