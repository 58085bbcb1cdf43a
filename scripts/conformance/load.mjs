// Loads a GGUF file in a real llama.cpp (the npm package node-llama-cpp, CPU build), creates one
// context, disposes it, and prints every log line llama.cpp wrote, verbatim, one per line on
// stdout, so kvplan's llama.cpp rules can be checked against the engine's own `llama_kv_cache` /
// `llama_memory_recurrent` lines.
//
//   node load.mjs MODEL.gguf --context N --sequences S [--type-k f16|q8_0|q4_0] [--type-v ...]
//        [--swa-full] [--flash-attention on|off|auto] [--batch-size B]
//
// The package is resolved from $KVPLAN_NLC_DIR (default /tmp/nlc), where
//   npm install --omit=optional node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1
// put it. Exit 0 on success; 1 (error on stderr) when the model or the context fails; 2 bad usage.
//
// How node-llama-cpp 3.22.1 maps createContext() options to llama_context_params (read from
// dist/evaluator/LlamaContext/LlamaContext.js and llama/addon/AddonContext.cpp):
// - contextSize is per sequence. LlamaContext._create pads it up to a multiple of 256
//   (padSafeContextSize, contextSizePad = 256) when the padded value stays below the model's
//   n_ctx_train; the constructor then passes n_ctx = pad256(contextSize * sequences) ("each sequence
//   needs its own <contextSize> of cells"). So --context 1000 --sequences 3 gives n_ctx 3072.
//   llama.cpp then pads again (llama-context.cpp): n_ctx = GGML_PAD(n_ctx, 256) and, without a
//   unified cache, n_ctx_seq = GGML_PAD(n_ctx / n_seq_max, 256).
// - sequences -> n_seq_max. kv_unified is always false (hard-coded both in _create and in the
//   addon), so llama.cpp splits n_ctx into n_seq_max streams of n_ctx / n_seq_max cells each.
// - batchSize defaults to min(contextSize * sequences, 512) (getDefaultContextBatchSize), is raised
//   to at least `sequences`, and gets +1 when the model has a sliding window (GGUF
//   attention.sliding_window > 0 and < n_ctx_train) and swaFullCache is off ("+1 to handle edge
//   cases with SWA KV cache"). The addon sets n_batch = n_ubatch = that value (the JS side queues
//   batches). So a SWA model at 4096 x 1 runs with n_batch = n_ubatch = 513. llama.cpp caps n_batch
//   at n_ctx for causal models and n_ubatch at n_batch.
// - flashAttention true/false -> LLAMA_FLASH_ATTN_TYPE_ENABLED/DISABLED, "auto" -> AUTO. The
//   default is "auto", except where node-llama-cpp thinks flash attention is unsupported (GGUF
//   arch gemma2 or grok, or attention.key_length != value_length, e.g. deepseek2 MLA): then false.
// - swaFullCache -> swa_full. node-llama-cpp's default is false and the addon always sets it, while
//   llama_context_default_params() defaults it to true.
// - experimentalKvCacheKeyType / ValueType -> type_k / type_v (ggml type ids); default f16. The
//   name must be upper-case ("Q8_0", a GgmlType key): the addon's getGgmlType compares against the
//   upper-cased ggml_type_name, and an unknown name such as "q8_0" is silently ignored (the cache
//   stays f16). This script upper-cases --type-k / --type-v.
// - threads -> n_threads and n_threads_batch (default: the math cores).
//   llama.cpp resolves flash_attn = auto later and says so: "resolve_fused_ops: Flash Attention
//   enabled".
// This script passes --context as contextSize (padded by node-llama-cpp as above), --batch-size as
// batchSize (else node-llama-cpp's default), failedCreationRemedy: false (no retry at a smaller
// context) and ignoreMemorySafetyChecks (node-llama-cpp's own estimate never shrinks the context).

import {readFileSync, writeFileSync} from "node:fs";
import path from "node:path";
import process from "node:process";

const usage = "usage: node load.mjs MODEL.gguf --context N --sequences S [--type-k f16|q8_0|q4_0] [--type-v ...] " +
    "[--swa-full] [--flash-attention on|off|auto] [--batch-size B]\n" +
    "       node load.mjs MODEL.gguf --settings FILE.json --out-dir DIR";

function fail(code, message) {
    process.stderr.write(`load.mjs: error: ${message}\n`);
    process.exit(code);
}

function parseArgs(argv) {
    const opts = {model: null, context: null, sequences: 1, typeK: null, typeV: null, swaFull: false,
        flashAttention: null, batchSize: null, settings: null, outDir: null};
    const int = (flag, v) => {
        if (v == null || !/^[0-9]+$/.test(v) || Number(v) < 1)
            fail(2, `${flag}: expected an integer >= 1, got '${v ?? ""}'`);
        return Number(v);
    };
    const kvType = (flag, v) => {
        if (!["f16", "f32", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"].includes(v ?? ""))
            fail(2, `${flag}: expected f16, q8_0, q4_0 or another ggml cache type, got '${v ?? ""}'`);
        return v;
    };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const next = () => argv[++i];
        if (a === "--context") opts.context = int(a, next());
        else if (a === "--sequences") opts.sequences = int(a, next());
        else if (a === "--type-k") opts.typeK = kvType(a, next());
        else if (a === "--type-v") opts.typeV = kvType(a, next());
        else if (a === "--swa-full") opts.swaFull = true;
        else if (a === "--batch-size") opts.batchSize = int(a, next());
        else if (a === "--settings") opts.settings = next();
        else if (a === "--out-dir") opts.outDir = next();
        else if (a === "--flash-attention") {
            const v = next();
            if (v === "on") opts.flashAttention = true;
            else if (v === "off") opts.flashAttention = false;
            else if (v === "auto") opts.flashAttention = "auto";
            else fail(2, `--flash-attention: expected on, off or auto, got '${v ?? ""}'`);
        } else if (a === "-h" || a === "--help") {
            process.stdout.write(usage + "\n");
            process.exit(0);
        } else if (a.startsWith("--")) fail(2, `unknown option '${a}'\n${usage}`);
        else if (opts.model == null) opts.model = a;
        else fail(2, `unexpected argument '${a}'\n${usage}`);
    }
    if (opts.model == null || (opts.context == null && opts.settings == null)) fail(2, usage);
    if ((opts.settings == null) !== (opts.outDir == null)) fail(2, "--settings and --out-dir go together\n" + usage);
    return opts;
}

const opts = parseArgs(process.argv.slice(2));
const nlcDir = process.env.KVPLAN_NLC_DIR || "/tmp/nlc";
const entry = path.join(nlcDir, "node_modules", "node-llama-cpp", "dist", "index.js");

// Every llama.cpp line, in order; node-llama-cpp's own messages (Llama._log: "Resolved model gpu
// layers", "Simulating context resource usage", a tokenizer round-trip warning) go through the same
// logger and are dropped here. node-llama-cpp hands the logger whole lines (it buffers up to the
// last newline); a message may still hold several lines, and llama.cpp's progress dots arrive one
// per call: consecutive dot-only messages are joined back into the one line llama.cpp printed.
const lines = [];
let dots = false;
let fromJs = false;
function logger(level, message) {
    if (fromJs) return;
    if (/^\.+$/.test(message)) {
        if (dots) lines[lines.length - 1] += message;
        else lines.push(message);
        dots = true;
        return;
    }
    dots = false;
    for (const line of String(message).split("\n")) lines.push(line);
}

function flush() {
    if (lines.length > 0) process.stdout.write(lines.join("\n") + "\n");
}

let nlc;
try {
    nlc = await import(entry);
} catch (err) {
    fail(1, `cannot load node-llama-cpp from ${entry} (set KVPLAN_NLC_DIR): ${err?.message ?? err}`);
}

const jsLog = nlc.Llama.prototype._log;
nlc.Llama.prototype._log = function (...args) {
    fromJs = true;
    try {
        return jsLog.apply(this, args);
    } finally {
        fromJs = false;
    }
};

// llama.cpp's log lines reach the logger asynchronously (node-llama-cpp queues them to the JS thread), so some
// arrive after the call that printed them has returned: wait until none has come for 30 ms (at most 2 s) before a
// log is cut off. Without this the last lines of a context (its KV cache lines among them) could be lost.
async function drain() {
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    let seen = -1;
    for (let waited = 0; seen !== lines.length && waited < 2000; waited += 30) {
        seen = lines.length;
        await sleep(30);
    }
}

// node-llama-cpp's createContext() options for one setting (the mapping is described at the top)
function contextOptions(o) {
    const c = {
        contextSize: o.context,
        sequences: o.sequences ?? 1,
        swaFullCache: o.swaFull ?? false,
        ignoreMemorySafetyChecks: true,
        failedCreationRemedy: false,
    };
    if (o.typeK != null) c.experimentalKvCacheKeyType = o.typeK.toUpperCase();
    if (o.typeV != null) c.experimentalKvCacheValueType = o.typeV.toUpperCase();
    if (o.flashAttention != null) c.flashAttention = o.flashAttention;
    if (o.batchSize != null) c.batchSize = o.batchSize;
    return c;
}

// --settings FILE --out-dir DIR: one model load, then one context per setting ({name, context, sequences, typeK,
// typeV, swaFull, flashAttention, batchSize}), each written to DIR/<name>.log as llama.cpp's lines up to the loaded
// model followed by that context's lines: the log a process of its own would have printed. The conformance
// matrix loads each architecture once this way (a process start and a model load per case were half its time).
// Prints [{name, ok, error}] on stdout.
async function runSettings(model) {
    const list = JSON.parse(readFileSync(opts.settings, "utf8"));
    const prefix = lines.length;
    const results = [];
    for (const st of list) {
        dots = false;
        let error = null;
        try {
            const context = await model.createContext(contextOptions(st));
            await context.dispose();
        } catch (err) {
            error = String(err?.message ?? err);
        }
        await drain();
        writeFileSync(path.join(opts.outDir, `${st.name}.log`), lines.join("\n") + "\n");
        lines.length = prefix;
        results.push({name: st.name, ok: error == null, error});
    }
    return results;
}

let code = 0;
let batch = null;
try {
    const llama = await nlc.getLlama({gpu: false, logLevel: nlc.LlamaLogLevel.debug, logger,
        build: "never", usePrebuiltBinaries: true, progressLogs: false});
    const model = await llama.loadModel({modelPath: path.resolve(opts.model), gpuLayers: 0,
        ignoreMemorySafetyChecks: true});
    await drain();
    try {
        if (opts.settings != null) batch = await runSettings(model);
        else {
            const context = await model.createContext(contextOptions(opts));
            await context.dispose();
            await drain();
        }
    } finally {
        await model.dispose();
    }
    await llama.dispose();
} catch (err) {
    code = 1;
    if (batch == null) flush();
    process.stderr.write(`load.mjs: error: ${opts.model}: ${err?.message ?? err}\n`);
}
if (batch != null) process.stdout.write(JSON.stringify(batch) + "\n");
else if (code === 0) flush();
process.exit(code);
