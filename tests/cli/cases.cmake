# CLI contract: exit codes and the exact error line (stdout stays empty on error).
kvplan_cli_test(kv_ok EXIT 0 ARGS kv llama-3-8b --context 8k STDOUT_CONTAINS "131,072")
kvplan_cli_test(kv_json EXIT 0 ARGS kv llama-3-8b --context 8k --format json STDOUT_CONTAINS "\"kv_bytes_per_token\": 131072")
kvplan_cli_test(kv_path EXIT 0 ARGS kv ${KVPLAN_DATA}/configs/llama-3-8b.json --context 1 --format csv STDOUT_CONTAINS "full,32")
kvplan_cli_test(kv_snapshot_dir EXIT 0 ARGS kv ${KVPLAN_DATA}/snapshot --context 1 --format json STDOUT_CONTAINS "\"kv_bytes_per_token\": 131072")
kvplan_cli_test(unknown_model EXIT 2 STDOUT_EMPTY ARGS kv llama-3.1-8 --context 1
  STDERR "kvplan: error: unknown model 'llama-3.1-8'; did you mean 'llama-3.1-8b'? (kvplan models lists them; or pass a config.json path)")
kvplan_cli_test(bad_context EXIT 2 STDOUT_EMPTY ARGS kv llama-3-8b --context 12x
  STDERR "kvplan: error: --context: '12x' is not a count; use digits with an optional k or m suffix, e.g. 32k")
kvplan_cli_test(bad_kv_dtype EXIT 2 STDOUT_EMPTY ARGS kv llama-3-8b --kv-dtype q3
  STDERR "kvplan: error: --kv-dtype: unknown format 'q3'; use one of f32, f16, bf16, fp8_e4m3, fp8_e5m2, int8, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, mxfp4, nvfp4, fp4_e2m1, int8_per_token_head, fp8_per_token_head, int4_per_token_head, turboquant_k8v4, turboquant_4bit_nc, turboquant_k3v4_nc, turboquant_3bit_nc")
kvplan_cli_test(bad_format EXIT 2 STDOUT_EMPTY ARGS kv llama-3-8b --format xml
  STDERR "kvplan: error: --format: unknown format 'xml'; use table, md, csv, json or jsonl")
kvplan_cli_test(block_mismatch EXIT 2 STDOUT_EMPTY ARGS kv ${KVPLAN_DATA}/configs/bad/head-dim-80.json --context 1 --cache-type-k q8_0
  STDERR "kvplan: error: K head row (head_dim): row of 80 elements is not a multiple of q8_0's block of 32; choose a plain cache type (f16, bf16, fp8_e4m3) for this model")
kvplan_cli_test(malformed_json EXIT 2 STDOUT_EMPTY ARGS kv ${KVPLAN_DATA}/configs/bad/truncated.json --context 1
  STDERR "kvplan: error: ${KVPLAN_DATA}/configs/bad/truncated.json: line 4, column 1: invalid JSON (syntax error while parsing object key - unexpected end of input; expected string literal); fix the JSON syntax")
kvplan_cli_test(zero_heads EXIT 2 STDOUT_EMPTY ARGS kv ${KVPLAN_DATA}/configs/bad/zero-kv-heads.json --context 1
  STDERR "kvplan: error: ${KVPLAN_DATA}/configs/bad/zero-kv-heads.json: /num_key_value_heads: expected integer in [1, 1048576], got 0")
kvplan_cli_test(no_config_dir EXIT 2 STDOUT_EMPTY ARGS kv ${KVPLAN_DATA}/configs/bad
  STDERR "kvplan: error: ${KVPLAN_DATA}/configs/bad: directory has no config.json; pass a model snapshot folder or the config.json itself")
# a config with no length key (the released Falcon-7B's): 2048, as vLLM and SGLang assume, with a warning
kvplan_cli_test(no_max_context EXIT 0 ARGS kv ${KVPLAN_DATA}/configs/falcon-7b-instruct.json
  STDERR "kvplan: warning: the config has no max_position_embeddings (nor n_positions, max_sequence_length, seq_length, max_seq_len): its maximum length is taken as 2048, as vLLM and SGLang assume; pass --max-model-len N for another")
kvplan_cli_test(overflow EXIT 2 STDOUT_EMPTY ARGS kv llama-3-8b --context 1000000000000000
  STDERR "kvplan: error: arithmetic: K bytes of group: 2048000000000000000 * 32 overflows 64-bit bytes; the inputs describe more bytes than 2^63; reduce context, concurrency or sizes")
kvplan_cli_test(excluded_flags EXIT 2 STDOUT_EMPTY ARGS kv llama-3-8b --kv-dtype f16 --cache-type-k q8_0)
kvplan_cli_test(no_subcommand EXIT 2 STDOUT_EMPTY ARGS)
kvplan_cli_test(unknown_gpu_profiles EXIT 2 STDOUT_EMPTY ARGS --profiles ${KVPLAN_DATA}/profiles-bad gpus
  STDERR "kvplan: error: ${KVPLAN_DATA}/profiles-bad/gpus/x.json: /nmae: unknown key; did you mean 'name'?")
kvplan_cli_test(profiles_override EXIT 0 ARGS --profiles ${KVPLAN_DATA}/profiles-extra models --format csv STDOUT_CONTAINS "tiny-llama,llama,2,")
kvplan_cli_test(gpus_list EXIT 0 ARGS gpus STDOUT_CONTAINS "h100-sxm")
kvplan_cli_test(help EXIT 0 ARGS --help STDOUT_CONTAINS "Exit codes")

# plan / sweep / fit
kvplan_cli_test(plan_fits EXIT 0 ARGS plan llama-3.1-8b --gpu h100 --context 8k --concurrency 32 STDOUT_CONTAINS "fits")
kvplan_cli_test(plan_does_not_fit EXIT 1 ARGS plan llama-3.1-70b --gpu l4 --context 1k STDOUT_CONTAINS "NO (limited by weights)")
kvplan_cli_test(plan_json_engine EXIT 0 ARGS plan llama-3.1-8b --gpu rtx-3090 --max-model-len 20000 --kv-cache-memory-bytes 4094689280 --format json
  STDOUT_CONTAINS "\"num_gpu_blocks\": 1952")
kvplan_cli_test(plan_wrong_engine_flag EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine sglang --gpu-memory-utilization 0.8
  STDERR "kvplan: error: --gpu-memory-utilization: is not a SGLang setting; with --engine sglang use --mem-fraction-static")
kvplan_cli_test(plan_llamacpp_flag EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --n-gpu-layers 8
  STDERR "kvplan: error: --n-gpu-layers: is not a vLLM setting; kvplan reads it for llama.cpp only; drop it")
kvplan_cli_test(plan_bad_tp EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --tensor-parallel-size 3
  STDERR "kvplan: error: --tensor-parallel-size: 3 does not divide num_attention_heads 32; use a tensor-parallel size that divides 32")
kvplan_cli_test(plan_bad_util EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu-memory-utilization 1.2
  STDERR "kvplan: error: --gpu-memory-utilization: must be in (0, 1], got 1.2; use a fraction such as 0.9")
kvplan_cli_test(plan_long_context EXIT 2 STDOUT_EMPTY ARGS plan llama-3-8b --max-model-len 16k
  STDERR "kvplan: error: --max-model-len: 16384 exceeds the model's max_position_embeddings 8192; lower it, or pass --allow-long-context to override as VLLM_ALLOW_LONG_MAX_MODEL_LEN does")
kvplan_cli_test(plan_long_context_allowed EXIT 0 ARGS plan llama-3-8b --max-model-len 16k --allow-long-context STDOUT_CONTAINS "16,384")
kvplan_cli_test(plan_pp_too_big EXIT 2 STDOUT_EMPTY ARGS plan llama-3-8b --pipeline-parallel-size 40
  STDERR "kvplan: error: --pipeline-parallel-size: 40 stages exceed the model's 32 layers; use at most 32")
kvplan_cli_test(plan_block_size EXIT 2 STDOUT_EMPTY ARGS plan llama-3-8b --block-size 24
  STDERR "kvplan: error: --block-size: 24 is not supported by vLLM; use 1, 8 or a multiple of 16")
kvplan_cli_test(plan_unknown_gpu EXIT 2 STDOUT_EMPTY ARGS plan llama-3-8b --gpu h10
  STDERR "kvplan: error: --gpu: unknown GPU 'h10'; did you mean 'h100'? (kvplan gpus lists them)")
kvplan_cli_test(plan_ambiguous_gpu EXIT 2 STDOUT_EMPTY ARGS plan llama-3-8b --gpu a100
  STDERR "kvplan: error: --gpu: 'a100' is ambiguous: a100-40gb (40 GB), a100-pcie-40gb (40 GB), a100-pcie-80gb (80 GB), a100-sxm-80gb (80 GB)<SEMI> name one, or give --gpu-memory-bytes")
kvplan_cli_test(sweep_unknown_gpu EXIT 2 STDOUT_EMPTY ARGS sweep llama-3-8b --gpu h100,h10
  STDERR "kvplan: error: --gpu: unknown GPU 'h10'<SEMI> did you mean 'h100'? (kvplan gpus lists them)")
kvplan_cli_test(plan_unknown_engine EXIT 2 STDOUT_EMPTY ARGS plan llama-3-8b --engine tgi
  STDERR "kvplan: error: --engine: unknown engine 'tgi'; use vllm, sglang, trtllm, llama.cpp or generic")
kvplan_cli_test(sweep_csv EXIT 0 ARGS sweep llama-3.1-8b --gpu h100,l4 --context 1k..4k*2 --concurrency 1,8 --format csv
  STDOUT_CONTAINS "l4,1,bf16,4096,8,")
kvplan_cli_test(sweep_bad_range EXIT 2 STDOUT_EMPTY ARGS sweep llama-3.1-8b --context 8k..1k
  STDERR "kvplan: error: --context: range '8k..1k' ends before it starts; write A..B with A <= B")
kvplan_cli_test(fit_concurrency EXIT 0 ARGS fit llama-3.1-8b --gpu l4 --max-model-len 8k --context 8k STDOUT_CONTAINS "max concurrency at 8,192 tokens")
# one contract: a vLLM deployment that does not start (131072-token max_model_len on an L4) fits nothing
kvplan_cli_test(fit_does_not_start EXIT 1 ARGS fit llama-3.1-8b --gpu l4 --context 8k --format csv STDOUT_CONTAINS "does_not_start")
kvplan_cli_test(plan_does_not_start EXIT 1 ARGS plan llama-3.1-8b --gpu l4 --context 8k --concurrency 1 STDOUT_CONTAINS "NO (limited by does_not_start)")
kvplan_cli_test(fit_fewest EXIT 0 ARGS fit llama-3.1-70b --context 32k --concurrency 64 --fewest-gpus --format json STDOUT_CONTAINS "\"found\": true")
kvplan_cli_test(fit_none EXIT 1 ARGS fit llama-3.1-405b --gpu l4 --context 128k --concurrency 64 --fewest-gpus --max-gpus 4 STDOUT_CONTAINS "none within 4 GPUs")

# check: deployment files
set(DEP ${KVPLAN_DATA}/deploy)
kvplan_cli_test(check_pass EXIT 0 ARGS check ${DEP}/pass.yaml STDOUT_CONTAINS "PASS")
kvplan_cli_test(check_yaml_syntax EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/syntax.yaml
  STDERR "kvplan: error: ${DEP}/syntax.yaml:5:1: invalid YAML (end of sequence flow not found); fix the YAML syntax")
# a file of two YAML documents: the second was dropped without a word (a CI gate skipped its deployments)
kvplan_cli_test(check_two_documents EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/two-documents.yaml
  STDERR "kvplan: error: ${DEP}/two-documents.yaml:7: a second YAML document (after '---'); this file is read as one document; put its keys in the first document (one 'deployments:' list holds every deployment), or give it as its own file")
kvplan_cli_test(check_leading_empty_document EXIT 0 ARGS check ${DEP}/leading-empty-document.yaml STDOUT_CONTAINS "PASS")
# one setting given twice in one layer with two values: which was meant is not known (a later layer overrides by design)
kvplan_cli_test(check_two_spellings EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/two-spellings.yaml
  STDERR "kvplan: error: ${DEP}/two-spellings.yaml:6:45: --tp: 'tensor_parallel_size' is given twice: '4' (${DEP}/two-spellings.yaml:6:38: tensor-parallel-size) and '2' here; give it once")
kvplan_cli_test(plan_flag_and_set EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-70b --tp 2 --set tensor_parallel_size=4
  STDERR "kvplan: error: --set tensor_parallel_size: 'tensor_parallel_size' is given twice: '2' (--tp) and '4' here; give it once")
kvplan_cli_test(plan_set_twice EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --set max_model_len=16384 --set max-model-len=2048
  STDERR "kvplan: error: --set max-model-len: 'max_model_len' is given twice: '16384' (--set max_model_len) and '2048' here; give it once")
kvplan_cli_test(plan_set_model_over_positional EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --set model=qwen3-8b
  STDERR "kvplan: error: --set model: 'model' is given twice: 'llama-3.1-8b' (MODEL) and 'qwen3-8b' here; give it once")
kvplan_cli_test(plan_engine_at_and_version EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm@0.11 --engine-version 0.10
  STDERR "kvplan: error: --engine-version: '0.10' is not the version --engine names ('0.11'); give the version once")
kvplan_cli_test(plan_set_same_value EXIT 0 ARGS plan llama-3.1-70b --tp 2 --set tensor_parallel_size=2 --gpu h200 STDOUT_CONTAINS "fits")
# a file given twice checks its deployments twice under one name; a name in two files is told apart by its file
kvplan_cli_test(check_file_twice EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/pass.yaml ${DEP}/pass.yaml
  STDERR "kvplan: error: ${DEP}/pass.yaml: given twice (also as '${DEP}/pass.yaml'); give each file once")
kvplan_cli_test(check_name_in_two_files EXIT 0 ARGS check ${DEP}/pass.yaml ${DEP}/leading-empty-document.yaml --format csv
  STDOUT_CONTAINS "ok (${DEP}/leading-empty-document.yaml),")
kvplan_cli_test(check_blank_name EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/blank-name.yaml
  STDERR "kvplan: error: ${DEP}/blank-name.yaml:3:11: a blank name; give the deployment a name, or leave name: out (deployment-N)")
# keys that would check nothing: min_concurrency_tokens without min_concurrency, a rate without a simulated requirement
kvplan_cli_test(check_tokens_alone EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/tokens-alone.yaml
  STDERR "kvplan: error: ${DEP}/tokens-alone.yaml:5:44: min_concurrency_tokens: the length min_concurrency is checked at, and there is no min_concurrency; add min_concurrency, or drop min_concurrency_tokens")
kvplan_cli_test(check_rate_unused EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/rate-unused.yaml
  STDERR "kvplan: error: ${DEP}/rate-unused.yaml:5:21: rate: drives the simulated requirements (max_p99_ttft_ms, max_p99_tpot_ms, min_goodput, max_preemption_rate), and there is none; add one, or drop rate")
# model: beside a command that names another model replaces it, with a warning (--strict: a failure)
kvplan_cli_test(check_model_beside_command EXIT 0 ARGS check ${DEP}/model-beside-command.yaml
  STDERR "kvplan: warning: a: ${DEP}/model-beside-command.yaml:4:12: model 'qwen3-8b' replaces the command's 'meta-llama/Llama-3.1-70B-Instruct' (${DEP}/model-beside-command.yaml:5:14: model argument), another model (built-in profile llama-3.1-70b)")
kvplan_cli_test(check_model_beside_command_strict EXIT 1 ARGS check ${DEP}/model-beside-command.yaml --strict STDOUT_CONTAINS "FAIL")
kvplan_cli_test(check_setting_named EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/bad-util-setting.yaml
  STDERR "kvplan: error: ${DEP}/bad-util-setting.yaml:5:40: --gpu-memory-utilization: must be in (0, 1], got 1.2; use a fraction such as 0.9")
kvplan_cli_test(check_unknown_key EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/unknown-key.yaml
  STDERR "kvplan: error: ${DEP}/unknown-key.yaml:5:13: unknown key 'trafic'; did you mean 'traffic'?")
kvplan_cli_test(check_unknown_setting EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/unknown-setting.yaml
  STDERR "kvplan: error: ${DEP}/unknown-setting.yaml:4:37: unknown setting 'tensor-paralel-size'; did you mean 'tensor-parallel-size'? (the flags of kvplan plan --help)")
kvplan_cli_test(check_wrong_type EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/wrong-type.yaml
  STDERR "kvplan: error: ${DEP}/wrong-type.yaml:4:28: concurrency: expected an integer in [1, 1099511627776], got string \"lots\"")
kvplan_cli_test(check_wrong_type_json EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/wrong-type.json
  STDERR "kvplan: error: ${DEP}/wrong-type.json: /deployments/0/gpu: gpu: expected a string, got 7")
kvplan_cli_test(check_bad_headroom EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/bad-headroom.yaml
  STDERR "kvplan: error: ${DEP}/bad-headroom.yaml:4:34: min_headroom: expected a number in [0.0, 1.0], got 1.5")
kvplan_cli_test(check_gpus_mismatch EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/gpus-mismatch.yaml
  STDERR "kvplan: error: ${DEP}/gpus-mismatch.yaml:2:5: gpus: 4 but the layout uses 2 (tensor 2 x pipeline 1 x data 1); make gpus equal the product, or set the parallel sizes")
kvplan_cli_test(check_duplicate_name EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/duplicate-name.yaml
  STDERR "kvplan: error: ${DEP}/duplicate-name.yaml:4:5: deployment name 'a' is used twice (first at ${DEP}/duplicate-name.yaml:2:5); give each deployment its own name")
kvplan_cli_test(check_alias_bomb EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/alias-bomb.yaml
  STDERR "kvplan: error: ${DEP}/alias-bomb.yaml: more than 20000 YAML nodes (an alias bomb?); write the document out plainly")
kvplan_cli_test(check_missing_output_dir EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/pass.yaml --junit /nonexistent-kvplan-dir/x.xml
  STDERR "kvplan: error: --junit: folder '/nonexistent-kvplan-dir' does not exist; create it or write elsewhere")
kvplan_cli_test(check_missing_file EXIT 2 STDOUT_EMPTY ARGS check ${DEP}/no-such-file.yaml
  STDERR "kvplan: error: ${DEP}/no-such-file.yaml: no such file; check the path")

# examples: every example runs with its expected exit code
set(EX ${CMAKE_SOURCE_DIR}/examples)
kvplan_cli_test(example_llama8b_l4 EXIT 0 ARGS check ${EX}/llama8b-l4-llamacpp.yaml STDOUT_CONTAINS "PASS")
kvplan_cli_test(example_llama70b_4xh100 EXIT 0 ARGS check ${EX}/llama70b-4xh100-vllm-fp8.yaml STDOUT_CONTAINS "PASS")
kvplan_cli_test(example_deepseek_v3 EXIT 0 ARGS check ${EX}/deepseek-v3-8xh200-sglang.json STDOUT_CONTAINS "PASS")
kvplan_cli_test(example_qwen3_4090 EXIT 0 ARGS check ${EX}/qwen3-30b-a3b-rtx4090.yaml STDOUT_CONTAINS "PASS")
kvplan_cli_test(example_gpt_oss_120b EXIT 0 ARGS check ${EX}/gpt-oss-120b-h100.yaml STDOUT_CONTAINS "PASS")
kvplan_cli_test(example_fails EXIT 1 ARGS check ${EX}/fails-llama70b-2xl40s.yaml STDOUT_CONTAINS "FAIL")

# probe (CPU backend end to end) and calibrate
kvplan_cli_test(probe_cpu EXIT 0 ARGS probe llama-3.1-8b --backend cpu --threads 2 --seqs 2 --contexts 300 --seconds 0.05 --live-steps 8
  STDOUT_CONTAINS "\"gpu\": \"host\"")
# a --gpu given is kept (the plan for that GPU, probed on this CPU)
kvplan_cli_test(probe_cpu_gpu_given EXIT 0 ARGS probe llama-3.1-8b --gpu l4 --backend cpu --threads 2 --seqs 2 --contexts 300 --seconds 0.05 --live-steps 8
  STDOUT_CONTAINS "\"gpu\": \"l4\"")
kvplan_cli_test(probe_bad_backend EXIT 2 STDOUT_EMPTY ARGS probe llama-3.1-8b --backend tpu
  STDERR "kvplan: error: --backend: unknown backend 'tpu'; use cuda or cpu")
kvplan_cli_test(probe_unsupported_dtype EXIT 2 STDOUT_EMPTY ARGS probe llama-3.1-8b --backend cpu --kv-dtype q4_1
  STDERR "kvplan: error: --kv-dtype: the probe kernels do not support a q4_1 cache; supported cache types: bf16, f16, fp8_e4m3, fp8_e5m2, q8_0, q4_0 (the last three on the CPU backend)")
kvplan_cli_test(probe_unsupported_head_dim EXIT 2 STDOUT_EMPTY ARGS probe phi-3-mini-4k-instruct --backend cpu
  STDERR "kvplan: error: probe shape: head_dim 96 is not supported by the kernels; supported head dims: 64, 128, 256")
kvplan_cli_test(calibrate_fit EXIT 0 ARGS calibrate ${KVPLAN_DATA}/probe-synthetic-h200.json STDOUT_CONTAINS "\"attention_bandwidth_bytes_per_s\": 4000000000000.0")
kvplan_cli_test(calibrate_not_probe EXIT 2 STDOUT_EMPTY ARGS calibrate ${KVPLAN_DATA}/deploy/wrong-type.json
  STDERR "kvplan: error: ${KVPLAN_DATA}/deploy/wrong-type.json: not a kvplan probe report (schema.name must be kvplan.probe); pass the JSON kvplan probe wrote")
kvplan_cli_test(paste_to_kv EXIT 2 STDOUT_EMPTY ARGS kv llama-3.1-8b -- vllm serve m
  STDERR "kvplan: error: --: kvplan kv takes no engine command after --; paste the command after plan, sweep, fit, check, report, simulate or probe")
kvplan_cli_test(paste_unset_variable EXIT 2 STDOUT_EMPTY ARGS plan -- vllm serve m --max-model-len \${LEN}
  STDERR "kvplan: error: command: --max-model-len: unexpanded variable in settings that change memory: --max-model-len $LEN (--set LEN=VALUE or --set max-model-len=VALUE)")
kvplan_cli_test(paste_set_variable EXIT 0 ARGS plan llama-3.1-8b --set LEN=8192 --format json -- vllm serve m --max-model-len \${LEN}
  STDOUT_CONTAINS "\"max_model_len\": 8192")
kvplan_cli_test(bad_engine_version EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm@newest
  STDERR "kvplan: error: --engine: 'newest' is not an engine version; give a release such as 0.11, 0.5.4 or b6000, or latest")
kvplan_cli_test(bad_engine_version_flag EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine-version xyz
  STDERR "kvplan: error: --engine-version: 'xyz' is not an engine version; give a release such as 0.11, 0.5.4 or b6000, or latest")
# --perf-coefficients: every key a coefficient, every value a positive number
kvplan_cli_test(perf_coefficients_negative EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --perf-coefficients ${KVPLAN_DATA}/perf/bad/negative.json
  STDERR "kvplan: error: ${KVPLAN_DATA}/perf/bad/negative.json: /kv_eff: expected a number > 0; give the coefficient as a positive number")
kvplan_cli_test(perf_coefficients_unknown EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --perf-coefficients ${KVPLAN_DATA}/perf/bad/unknown.json
  STDERR "kvplan: error: ${KVPLAN_DATA}/perf/bad/unknown.json: /nope: unknown coefficient; see docs/performance-model.md for the names")
# a non-finite number is refused before any option parses it (a gamma arrival of shape inf never returned)
kvplan_cli_test(non_finite_burstiness EXIT 2 STDOUT_EMPTY ARGS simulate llama-3.1-8b --rate 1 --burstiness inf --requests 1
  STDERR "kvplan: error: --burstiness: 'inf' is not a finite number; give a finite value")
kvplan_cli_test(non_finite_price EXIT 2 STDOUT_EMPTY ARGS fit llama-3.1-8b --context 4k --price-per-gpu-hour=NaN
  STDERR "kvplan: error: --price-per-gpu-hour: 'NaN' is not a finite number; give a finite value")
kvplan_cli_test(non_finite_set EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --set gpu-memory-utilization=-Infinity
  STDERR "kvplan: error: --set: '-Infinity' is not a finite number; give a finite value")
kvplan_cli_test(gpu_bandwidth_zero EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu-bandwidth 0
  STDERR "kvplan: error: --gpu-bandwidth: '0' must be above 0 bytes/s; give it in bytes/s or as a rate, e.g. 3.35e12 or 3.35TB/s")
kvplan_cli_test(gpu_bandwidth_gb_by_mistake EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu-bandwidth 3.35
  STDERR "kvplan: error: --gpu-bandwidth: must be from 1e9 to 1e15 bytes per second; give it in bytes/s or as a rate, e.g. 3.35e12 or 3.35TB/s")
# a rate with its unit, as --host-bandwidth takes it: 3.35 TB/s = 3.35e12 bytes/s
kvplan_cli_test(gpu_bandwidth_rate EXIT 0 ARGS plan llama-3.1-8b --gpu h100 --gpu-bandwidth 3.35TB/s --format json
  STDOUT_CONTAINS "\"gpu_bandwidth_bytes_per_s\": 3350000000000")
kvplan_cli_test(bad_engine_version_negative EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine-version=-1
  STDERR "kvplan: error: --engine-version: '-1' is not an engine version; give a release such as 0.11, 0.5.4 or b6000, or latest")
kvplan_cli_test(bad_engine_version_empty_at EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm@
  STDERR "kvplan: error: --engine: '' is not an engine version; give a release such as 0.11, 0.5.4 or b6000, or latest")
# (--trace= : a CMake list cannot carry an empty argument; tests/unit covers --trace "")
kvplan_cli_test(empty_option_value EXIT 2 STDOUT_EMPTY ARGS simulate llama-3.1-8b --trace=
  STDERR "kvplan: error: --trace: empty value; give a value, or leave --trace out")
kvplan_cli_test(sweep_empty_gpu_name EXIT 2 STDOUT_EMPTY ARGS sweep llama-3.1-8b --gpu h100-sxm,,a10
  STDERR "kvplan: error: --gpu: 'h100-sxm,,a10' has an empty name; give names separated by single commas")
# kvplan log checks --gpu and --engine-version whether or not a model makes them count
kvplan_cli_test(log_unknown_gpu EXIT 2 STDOUT_EMPTY ARGS log ${KVPLAN_DATA}/logs/cases/vllm-llama31-8b-3090-20k.log --gpu nosuch
  STDERR "kvplan: error: --gpu: unknown GPU 'nosuch'; kvplan gpus lists them")
kvplan_cli_test(same_setting_two_spellings EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --tp 2 --tp-size 4
  STDERR "kvplan: error: --tp-size: '4' given, and --tp '2' for the same setting; give one of them")
kvplan_cli_test(two_reports_one_file EXIT 2 STDOUT_EMPTY ARGS check ${CMAKE_SOURCE_DIR}/examples/llama8b-l4-llamacpp.yaml --json same.out --junit same.out
  STDERR "kvplan: error: --junit: 'same.out' is also the --json file; give each output its own file")
kvplan_cli_test(kv_context_zero EXIT 2 STDOUT_EMPTY ARGS kv llama-3.1-8b --context 0
  STDERR "kvplan: error: --context: must be >= 1 token")
# vLLM on an Apple GPU or a CPU host: planned with its CUDA rules and a warning, which --strict fails
kvplan_cli_test(strict_vllm_on_apple EXIT 1 ARGS plan llama-3.1-8b --gpu m3-max-40c --strict STDOUT_CONTAINS "vllm")
kvplan_cli_test(strict_vllm_on_cpu EXIT 1 ARGS plan llama-3.1-8b --gpu cpu-epyc-9004 --strict STDOUT_CONTAINS "vllm")
kvplan_cli_test(llamacpp_on_apple_no_warning EXIT 0 ARGS plan llama-3.1-8b --gpu m3-max-40c --engine llama.cpp --context 8k --strict STDOUT_CONTAINS "llama.cpp")
# jsonl keeps a flattened boolean a JSON boolean (as sweep's rows); a statistic over no sample is null, not 0 ms
kvplan_cli_test(jsonl_boolean EXIT 0 ARGS plan llama-3.1-8b --gpu h100 --context 8k --format jsonl
  STDOUT_CONTAINS "{\"section\":\"fit\",\"key\":\"fits\",\"value\":true}")
kvplan_cli_test(simulate_one_token_tpot_null EXIT 0 ARGS simulate llama-3.1-8b --gpu h100 --requests 5 --output-tokens 1 --format json
  STDOUT_CONTAINS "\"tpot_ms\": {\n      \"mean\": null,")
# sweep warns of a KV type the engine does not have, as plan does; --strict fails it
kvplan_cli_test(sweep_strict_foreign_kv EXIT 1 ARGS sweep llama-3.1-8b --kv-dtype auto,q8_0 --context 8k --concurrency 1 --strict STDOUT_CONTAINS "q8_0")
# a --set key that is no setting and that no command reads is a misspelt key, not a silent no-op
kvplan_cli_test(set_unknown_key EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --set max-modle-len=4096
  STDERR "kvplan: error: --set max-modle-len: 'max-modle-len' is not a setting key, and no engine command reads it as $max-modle-len; did you mean --set max-model-len=...? (docs/settings.md lists the keys)")
# an output onto a file the command reads (the trace, a deployment file) or onto another output is refused before any work
kvplan_cli_test(simulate_output_onto_trace EXIT 2 STDOUT_EMPTY ARGS simulate llama-3.1-8b --trace ${KVPLAN_DATA}/traces/burstgpt.csv --per-request ${KVPLAN_DATA}/traces/burstgpt.csv
  STDERR "kvplan: error: --per-request: '${KVPLAN_DATA}/traces/burstgpt.csv' is a file this command reads; write the output to another file")
kvplan_cli_test(simulate_two_outputs_one_file EXIT 2 STDOUT_EMPTY ARGS simulate llama-3.1-8b --requests 5 --per-request same.out --html same.out
  STDERR "kvplan: error: --per-request: 'same.out' is also the --html file; give each output its own file")
kvplan_cli_test(check_output_onto_deployment EXIT 2 STDOUT_EMPTY ARGS check ${KVPLAN_DATA}/deploy/pass.yaml --markdown ${KVPLAN_DATA}/deploy/pass.yaml
  STDERR "kvplan: error: --markdown: '${KVPLAN_DATA}/deploy/pass.yaml' is a file this command reads; write the output to another file")
# sweep: -dcp is checked against the swept TP sizes (the first stays in the base); one memory total for several GPUs
# and a prompt length the cells would not read are refused
kvplan_cli_test(sweep_dcp_with_tp EXIT 0 ARGS sweep llama-3.1-8b --decode-context-parallel-size 2 --tensor-parallel-size 2 --context 4k --concurrency 1 --format csv
  STDOUT_CONTAINS "h100-sxm,2,bf16,4096,1,")
kvplan_cli_test(sweep_memory_for_two_gpus EXIT 2 STDOUT_EMPTY ARGS sweep llama-3.1-8b --gpu h100,l40s --gpu-memory-bytes 40000000000 --context 4k --concurrency 1
  STDERR "kvplan: error: --gpu-memory-bytes: one memory total cannot describe 2 GPUs; sweep one GPU with it, or leave it out to use each profile's")
kvplan_cli_test(sweep_prompt_tokens EXIT 2 STDOUT_EMPTY ARGS sweep llama-3.1-8b --context 4k --prompt-tokens 1000
  STDERR "kvplan: error: --prompt-tokens: a sweep's cells take their tokens per request from --context; give --context (a list or range) instead")
kvplan_cli_test(sweep_zero_concurrency EXIT 2 STDOUT_EMPTY ARGS sweep llama-3.1-8b --context 4k --concurrency 0
  STDERR "kvplan: error: --concurrency: every value must be >= 1, got 0; start the list or range at 1 or more")
# --set takes one KEY=VALUE per use: the FILE after it is checked, not swallowed; a --set variable no deployment reads fails
kvplan_cli_test(check_set_before_file EXIT 0 ARGS check --set max-model-len=8192 ${KVPLAN_DATA}/deploy/pass.yaml STDOUT_CONTAINS "PASS")
kvplan_cli_test(check_set_unread_variable EXIT 2 STDOUT_EMPTY ARGS check ${KVPLAN_DATA}/deploy/pass.yaml --set MAX_LEN=8192
  STDERR "kvplan: error: --set MAX_LEN: 'MAX_LEN' is not a setting key, and no engine command reads it as $MAX_LEN; use a key docs/settings.md lists")
# a TPOT requirement with no request of 2+ output tokens, and an SLO over traffic the server partly refuses, fail
kvplan_cli_test(check_tpot_without_tokens EXIT 1 ARGS check ${KVPLAN_DATA}/deploy/tpot-one-token.yaml --format csv
  STDOUT_CONTAINS "max p99 TPOT (simulated),FAIL,n/a: no request has 2 or more output tokens")
kvplan_cli_test(check_refused_requests_fail EXIT 1 ARGS check ${KVPLAN_DATA}/deploy/over-context.yaml --format csv
  STDOUT_CONTAINS "; 1 of 3 requests failed,<= 10000.00 ms")
# the sweep's kv_dtype names V too where it differs from K
kvplan_cli_test(sweep_kv_dtype_k_and_v EXIT 0 ARGS sweep llama-3.1-8b --engine llama.cpp -ctv q8_0 --context 4k --concurrency 1 --format csv
  STDOUT_CONTAINS "h100-sxm,1,f16/q8_0,4096,1,")
# jsonl keeps json's null for a value not known (the A10 has no fp8 tensor rate), not an empty string
kvplan_cli_test(gpus_jsonl_null EXIT 0 ARGS gpus --format jsonl STDOUT_CONTAINS "\"bf16_dense_tflops\":125.0,\"fp8_dense_tflops\":null")
# a missing file that a setting names is that setting's error
kvplan_cli_test(set_overheads_missing EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --set overheads=nonexist.json
  STDERR "kvplan: error: --set overheads: 'nonexist.json': no such file; check the path")
# a normal length spread past 50% would have its mean moved by the 1-token floor
kvplan_cli_test(simulate_normal_spread_too_wide EXIT 2 STDOUT_EMPTY ARGS simulate llama-3.1-8b --prompt-dist normal --prompt-spread 300
  STDERR "kvplan: error: --prompt-spread: a normal spread is at most 50 (a standard deviation of half the mean), got '300'; give a spread from 0 to 50, or a lognormal distribution (positive, any spread)")
# log csv: one header for every file, the file in its first column, raw numbers with the unit in its own column
kvplan_cli_test(log_csv_raw EXIT 0 ARGS log ${KVPLAN_DATA}/logs/vllm-0.10-llama31-8b-h100.log --format csv
  STDOUT_CONTAINS "vllm-0.10-llama31-8b-h100.log,GPU KV cache size,tokens,rule,448256,\"448,256\",")
# a cap of 0 is refused, not read as the engine's default
kvplan_cli_test(max_num_seqs_zero EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --max-num-seqs 0
  STDERR "kvplan: error: --max-num-seqs: must be >= 1, got 0; leave it out for the engine's default")
# fit reads the trace once before its search: a missing trace is bad input, not "none within 64 GPUs"
kvplan_cli_test(fit_missing_trace EXIT 2 STDOUT_EMPTY ARGS fit llama-3.1-8b --trace nonexistent-trace.csv --slo-tpot-ms 20
  STDERR "kvplan: error: nonexistent-trace.csv: cannot open the trace file; check the path (--trace FILE: CSV or JSONL)")
# a TTFT target on a GPU profile without TFLOP/s is an input to give, not "none within 64 GPUs"
kvplan_cli_test(fit_ttft_without_tflops EXIT 2 STDOUT_EMPTY ARGS fit llama-3.1-8b --gpu p40 --engine llama.cpp -c 4096 --concurrency 4 --slo-ttft-ms 1000
  STDERR "kvplan: error: --gpu: the p40 profile has no TFLOP/s for this weight format, so prefill (TTFT) is not estimated; give --gpu-tflops (the dense tensor rate), or leave the TTFT target out")
# the files a deployment file reads (its traffic trace here, named relative to the file) are inputs too
kvplan_cli_test(check_output_onto_deployment_trace EXIT 2 STDOUT_EMPTY ARGS check ${KVPLAN_DATA}/deploy/over-context.yaml --json ${KVPLAN_DATA}/deploy/over-context.csv
  STDERR "kvplan: error: --json: '${KVPLAN_DATA}/deploy/over-context.csv' is a file this command reads; write the output to another file")
# a CPU host holds every layer in its one RAM: llama.cpp's --fit moves nothing there, so a 70B bf16 model (132 GiB)
# does not fit 64 GiB (it used to "fit" by moving layers to a host memory that is the same RAM)
kvplan_cli_test(cpu_host_llamacpp_no_fit EXIT 1 ARGS plan llama-3.1-70b --gpu cpu --engine llama.cpp -c 8192
  STDOUT_CONTAINS "NO (limited by gpu_memory)")
kvplan_cli_test(cpu_host_llamacpp_one_host EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu cpu-epyc-9004 --engine llama.cpp --gpu-count 2
  STDERR "kvplan: error: --gpu-count: llama.cpp runs on one CPU host (cpu-epyc-9004) in one process; it splits layers over GPUs, not hosts; plan one host (--cpu-sockets N for a host of several sockets)")
kvplan_cli_test(cpu_host_fit_one_host EXIT 1 ARGS fit llama-3.1-70b --gpu cpu --engine llama.cpp --fewest-gpus --concurrency 1 --context 4096 --format md
  STDOUT_CONTAINS "none: it does not fit one cpu-desktop-ddr5 host")
kvplan_cli_test(fit_slo_missed_not_memory EXIT 1 ARGS fit llama-3.1-8b --slo-tpot-ms 2 --concurrency 4 --context 4096 --gpu h100 --format md
  STDOUT_CONTAINS "meets the targets (")
# --numa's value is checked whatever else is given (it was only with --cpu-sockets or the memory channels)
kvplan_cli_test(numa_bad_value EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu cpu-epyc-9004 --engine llama.cpp -c 4096 --numa foo
  STDERR "kvplan: error: --numa: 'foo' is not one of distribute, isolate, numactl; give one of them")
# a coefficient past its kind's scale is refused (1e308 s a ring step printed "TPOT inf ms"), and a key given twice
kvplan_cli_test(perf_coefficient_beyond_scale EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-70b --gpu rtx-4090 --tp 8 --perf-coefficients "{\"ar_step_pcie_s\": 1e308}"
  STDERR "kvplan: error: --perf-coefficients: /ar_step_pcie_s: 1e+308 is beyond any latency (at most 1 s); give seconds, e.g. 2e-5 for 20 us")
kvplan_cli_test(perf_coefficient_twice EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-70b --gpu rtx-4090 --tp 8 --perf-coefficients "{\"ar_step_pcie_s\": 2e-6, \"ar_step_pcie_s\": 3e-6}"
  STDERR "kvplan: error: --perf-coefficients: key \"ar_step_pcie_s\" appears twice in one object (the last would silently win); keep one of them")
# an unknown value (a CPU host's TTFT) is JSON null in jsonl, not the string "null"
kvplan_cli_test(plan_jsonl_unknown_is_null EXIT 0 ARGS plan llama-3.1-8b --gpu cpu --engine llama.cpp -c 4096 --prompt-tokens 512 --output-tokens 64 --format jsonl
  STDOUT_CONTAINS "{\"section\":\"performance\",\"key\":\"ttft_s\",\"value\":null}")
# a TTFT bound on a GPU (here a CPU host) without a FLOP rate is an input to give, as in fit, not a FAIL
kvplan_cli_test(check_ttft_unknown_is_input EXIT 2 STDOUT_EMPTY ARGS check ${KVPLAN_DATA}/deploy/cpu-ttft.yaml
  STDERR "kvplan: error: ${KVPLAN_DATA}/deploy/cpu-ttft.yaml:11:20: max_ttft_ms: the cpu-epyc-9004 profile has no TFLOP/s for this weight format, so TTFT is not estimated; give the GPU's dense tensor rate (settings: gpu_tflops), or leave max_ttft_ms out")
# --wired-limit-mb is macOS's: on a CPU host the line no longer says it applies to CPU hosts
kvplan_cli_test(wired_limit_cpu_host EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu cpu --engine llama.cpp -c 4096 --wired-limit-mb 1000
  STDERR "kvplan: error: --wired-limit-mb: is macOS's GPU memory limit: it applies to Apple silicon, not cpu-desktop-ddr5; use --gpu-memory-bytes for other devices")
# a price below a tenth of a cent an hour printed a tokens-per-dollar figure of hundreds of digits
kvplan_cli_test(fit_price_too_small EXIT 2 STDOUT_EMPTY ARGS fit llama-3.1-8b --concurrency 4 --context 4096 --gpu h100 --price-per-gpu-hour 1e-300
  STDERR "kvplan: error: --price-per-gpu-hour: must be from 0.001 (a tenth of a cent) to 10^6 US dollars an hour")
# a C hexadecimal number is refused where it was read (--slo-tpot-ms 0x10 meant 16 ms)
kvplan_cli_test(hex_number_value EXIT 2 STDOUT_EMPTY ARGS fit llama-3.1-8b --slo-tpot-ms 0x10 --concurrency 4 --context 4096 --gpu h100
  STDERR "kvplan: error: --slo-tpot-ms: '0x10' is a hexadecimal number; give it in decimal")
kvplan_cli_test(perf_coefficients_array EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --perf-coefficients "[]"
  STDERR "kvplan: error: --perf-coefficients: '[]' is not a JSON object; write {\"kv_eff\": 0.9, ...}")
# a CPU host's plan and report name the host, not a GPU it does not have: 4 sequences x 4,096 cells x 128 KiB
# (Llama-3.1-8B f16 KV: 2 x 32 layers x 8 heads x 128 x 2 B) = 2.00 GiB of cache
kvplan_cli_test(plan_cpu_host_labels EXIT 0 ARGS plan llama-3.1-8b --gpu cpu --engine llama.cpp --weight-format Q4_K_M --ctx-size 16384 --parallel 4
  --context 4096 --concurrency 4 --format md STDOUT_CONTAINS "| KV for these requests per host | 2.00 GiB |")
kvplan_cli_test(report_cpu_host_labels EXIT 0 ARGS report llama-3.1-8b --gpu cpu --engine llama.cpp --weight-format Q4_K_M
  STDOUT_CONTAINS "### Per-host memory budget")
# a version is a release, not words around a number or another engine's name
kvplan_cli_test(bad_engine_version_words EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine-version x0.5
  STDERR "kvplan: error: --engine-version: 'x0.5' is not an engine version; give a release such as 0.11, 0.5.4 or b6000, or latest")
kvplan_cli_test(bad_engine_version_other_engine EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm --engine-version trtllm@1.0
  STDERR "kvplan: error: --engine-version: 'trtllm@1.0' is not an engine version; give a release such as 0.11, 0.5.4 or b6000, or latest")
kvplan_cli_test(engine_version_dev_build EXIT 0 ARGS plan llama-3.1-8b --engine-version 0.19.1rc1.dev339+gedc364896 --format json
  STDOUT_CONTAINS "\"engine_version\": \"0.19.1rc1.dev339+gedc364896\"")
# --per-request keeps a late clock to the microsecond: an arrival at 50,000,000.123 s is written as it was given
# (9 significant digits printed 50000000.1)
kvplan_cli_test(per_request_late_clock EXIT 0 ARGS simulate llama-3.1-8b --trace ${KVPLAN_DATA}/traces/late-arrival.csv
  --per-request /dev/stdout --format json STDOUT_CONTAINS "1,50000000.123000,")
# the gpus table rounds bandwidth to the nearest GB/s: MI100's HBM2 1,228.8 GB/s (AMD's MI100 datasheet) reads 1,229
kvplan_cli_test(gpus_bandwidth_rounded EXIT 0 ARGS gpus --format md STDOUT_CONTAINS "| mi100 | AMD Instinct MI100 32GB | datacenter | 31.98 GiB | nvml | 1,229 |")
# simulate --strict fails a run whose own warning counts failed requests: llama.cpp -c 8192 -np 4 gives 2,048-cell slots,
# and prompts of 1,500 +- 50% (750-2,250 tokens) include some a slot cannot hold (HTTP 400)
kvplan_cli_test(simulate_strict_failed_requests EXIT 1 ARGS simulate llama-3.1-8b --engine llama.cpp --strict -c 8192 -np 4
  --prompt-tokens 1500 --prompt-dist uniform --prompt-spread 50 --requests 20 --seed 1 --format json STDOUT_CONTAINS "\"over_context\"")
# an unknown flag gets the subcommand's closest flag, option groups included; one setting under two spellings says so
kvplan_cli_test(unknown_flag_did_you_mean EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --contxt 4k
  STDERR "kvplan: error: --contxt: not a kvplan plan flag; did you mean --context?")
kvplan_cli_test(unknown_flag_simulate_did_you_mean EXIT 2 STDOUT_EMPTY ARGS simulate llama-3.1-8b --reqests 5
  STDERR "kvplan: error: --reqests: not a kvplan simulate flag; did you mean --requests?")
kvplan_cli_test(flag_spellings_twice EXIT 2 STDOUT_EMPTY ARGS kv llama-3.1-8b --kv-cache-dtype fp8 --kv-dtype bf16
  STDERR "kvplan: error: --kv-dtype: given more than once (under this or another of its spellings); give it once")
# log --set with a flag's spelling gets the key, as plan's --set does
kvplan_cli_test(log_set_flag_spelling EXIT 2 STDOUT_EMPTY ARGS log ${KVPLAN_DATA}/logs/vllm-0.10-llama31-8b-h100.log --set gpu-memory-utilization=0.5
  STDERR "kvplan: error: --set gpu-memory-utilization: 'gpu-memory-utilization' is a flag's spelling, not a setting key; write --set memory_fraction=VALUE, or the flag itself")
# log --set over a setting the vLLM args line shows (max_model_len 8192, line 3) with another value plans another
# deployment than the one that printed the figures: exit 2 naming the line; the same value is no conflict
kvplan_cli_test(log_set_shown_conflict EXIT 2 STDOUT_EMPTY ARGS log ${KVPLAN_DATA}/logs/vllm-0.10-llama31-8b-h100.log --set max-model-len=4096
  STDERR "kvplan: error: --set max-model-len: the log shows max_model_len = 8192 (log line 3), not 4096; drop it: --set gives the settings a log does not show")
kvplan_cli_test(log_set_shown_same EXIT 0 ARGS log ${KVPLAN_DATA}/logs/vllm-0.10-llama31-8b-h100.log --set max_model_len=8192
  STDOUT_CONTAINS "2 of 2 engine figures reproduced")
# a shared prefix with the prefix cache off is held by every request: 10 x 8,192 tokens x 131,072 B = 10.00 GiB
kvplan_cli_test(plan_shared_prefix_no_cache EXIT 0 ARGS plan llama-3.1-8b --max-model-len 16384 --context 8192 --concurrency 10 --shared-prefix 4096
  --no-enable-prefix-caching STDOUT_CONTAINS "KV for these requests per GPU                                    10.00 GiB")
# an error about the K or V cache type names the flag the user wrote (--kv-dtype gives both)
kvplan_cli_test(llamacpp_kv_dtype_fp8_named EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu h100 --engine llama.cpp --kv-dtype fp8 --context 4k
  STDERR "kvplan: error: --kv-dtype: llama.cpp has no fp8_e4m3 KV cache (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1); use q8_0 (8.5 bits a value) or f16")
# vLLM caches K and V in one type: different K and V types are llama.cpp's
kvplan_cli_test(vllm_mixed_kv_types EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm --cache-type-k fp8 --cache-type-v bf16
  STDERR "kvplan: error: --cache-type-k: vllm caches K and V in one type (--kv-cache-dtype); different K and V types are llama.cpp's; give one type with --kv-dtype (or the same type to both)")
# manifests: a Karpenter GPU label names the GPU; none at all plans the default GPU with a warning
kvplan_cli_test(manifest_karpenter_gpu EXIT 0 ARGS check ${KVPLAN_DATA}/manifests/karpenter-pod.yaml --format json STDOUT_CONTAINS "\"gpu\": \"a10g\"")
kvplan_cli_test(manifest_no_gpu_label_set_gpu EXIT 0 ARGS check ${KVPLAN_DATA}/manifests/no-gpu-label-pod.yaml --set gpu=l4 STDOUT_CONTAINS "PASS")
kvplan_cli_test(manifest_no_gpu_label EXIT 0 ARGS check ${KVPLAN_DATA}/manifests/no-gpu-label-pod.yaml
  STDERR "kvplan: warning: Pod/vllm: no GPU label (nodeSelector or required node affinity on nvidia.com/gpu.product, cloud.google.com/gke-accelerator, karpenter.k8s.aws/instance-gpu-name or node.kubernetes.io/instance-type): planned on the default GPU, h100-sxm; add the label, or give check --set gpu=ID")
# a .gguf without the GGUF magic (an empty download) is named as such, not as invalid JSON
kvplan_cli_test(kv_empty_gguf EXIT 2 STDOUT_EMPTY ARGS kv ${KVPLAN_DATA}/bad/empty.gguf
  STDERR "kvplan: error: ${KVPLAN_DATA}/bad/empty.gguf: not a GGUF file (it does not start with the GGUF magic: empty, cut short, or another format); download the file again")
# kv --format jsonl: the model's totals under the JSON's keys first (Llama-3.1-8B: 2 x 32 layers x 8 heads x 128 x 2 B)
kvplan_cli_test(kv_jsonl_totals EXIT 0 ARGS kv llama-3.1-8b --format jsonl STDOUT_CONTAINS "{\"record\":\"model\",\"kv_bytes_per_token\":131072,")
# a sweep axis over --max-cells names the limit it ran into
kvplan_cli_test(sweep_axis_over_max_cells EXIT 2 STDOUT_EMPTY ARGS sweep llama-3.1-8b --context 8k --concurrency 1..100+1 --max-cells 10
  STDERR "kvplan: error: --concurrency: expands to more than 10 values; use a coarser range or raise --max-cells")
# models csv carries the JSON's dtype and active parameters (Qwen3-30B-A3B: 30.5 B total, 3.3 B active)
kvplan_cli_test(models_csv_fields EXIT 0 ARGS models --format csv STDOUT_CONTAINS "id,model_type,num_layers,dtype,kv_bytes_per_token,max_context_tokens,params_total,params_active,origin")
# output tokens alone give no prompt length (every engine refuses an empty prompt); simulate has its own default prompt
kvplan_cli_test(plan_output_tokens_without_prompt EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --output-tokens 500
  STDERR "kvplan: error: --output-tokens: 500 output tokens without a prompt length<SEMI> give the prompt tokens too, or the context (prompt + output tokens)")
# a recurrent state is a float type; llama.cpp keeps it in f32 whatever is asked
kvplan_cli_test(state_dtype_not_float EXIT 2 STDOUT_EMPTY ARGS plan jamba-1.5-mini --state-dtype q8_0 --context 4k
  STDERR "kvplan: error: --state-dtype: 'q8_0' is not a recurrent-state dtype; use f32, f16 or bf16")
kvplan_cli_test(state_dtype_llamacpp_f32 EXIT 2 STDOUT_EMPTY ARGS plan jamba-1.5-mini --engine llama.cpp --state-dtype bf16 -c 4096
  STDERR "kvplan: error: --state-dtype: llama.cpp keeps the recurrent state in f32; drop it, or give f32")
# vLLM below compute capability 8.0 has no bfloat16: --dtype bfloat16 is refused, a bfloat16 checkpoint runs as
# float16 from 0.10 and is refused by 0.8-0.9; below 7.0 (Pascal) vLLM's CUDA builds do not run at all
kvplan_cli_test(vllm_bf16_on_turing EXIT 2 STDOUT_EMPTY ARGS plan llama-3.2-1b --gpu t4 --dtype bfloat16 --context 4k
  STDERR "kvplan: error: --dtype: vLLM runs bfloat16 only on GPUs of compute capability 8.0 or more (the t4 has compute capability 7.5)<SEMI> use --dtype half")
kvplan_cli_test(vllm_09_bf16_checkpoint_on_volta EXIT 2 STDOUT_EMPTY ARGS plan llama-3.2-1b --gpu v100-32gb --engine vllm@0.9.2 --context 4k
  STDERR "kvplan: error: MODEL: vLLM 0.9.2 runs this bf16 checkpoint in bfloat16, which it refuses on GPUs below compute capability 8.0 (the v100-32gb has compute capability 7.0)<SEMI> set the dtype to half (--dtype half)")
kvplan_cli_test(vllm_bf16_checkpoint_on_turing_runs_f16 EXIT 0 ARGS plan llama-3.2-1b --gpu t4 --context 4k
  STDOUT_CONTAINS "KV f16/f16")
kvplan_cli_test(vllm_on_pascal_warns EXIT 0 ARGS plan llama-3.2-1b --gpu p40 --context 4k --format json
  STDOUT_CONTAINS "vLLM's CUDA builds need compute capability 7.0 or more (the p40 has 6.1)")
# gemma3 is unstable in float16 (vLLM _FLOAT16_NOT_SUPPORTED_MODELS): without bfloat16 it runs in float32
kvplan_cli_test(vllm_gemma3_on_turing_runs_f32 EXIT 0 ARGS plan gemma-3-1b-it --gpu t4 --context 4k --format json
  STDOUT_CONTAINS "\"model_dtype\": \"f32\"")
# simulated requirements run the simulator's workload: output tokens alone take its 1,024-token prompt
kvplan_cli_test(check_output_only_simulated EXIT 0 ARGS check ${DEP}/output-only-simulated.yaml --format csv
  STDOUT_CONTAINS "one request fits (1524 tokens")
# llama.cpp's headroom is cells: -c 32768 over -np 4 is 8,192 cells a slot, and each of the 4 requests holds a slot,
# so none is free (its headroom_bytes is GPU memory beyond the cells: it read 120%); the name "42" stays a string
kvplan_cli_test(check_llamacpp_headroom_cells EXIT 1 ARGS check ${DEP}/llamacpp-headroom.yaml --format jsonl
  STDOUT_CONTAINS "{\"deployment\":\"42\",\"requirement\":\"min KV headroom at the traffic\",\"result\":\"FAIL\",\"actual\":\"0.0%\",\"required\":\">= 50.0%\",\"detail\":\"0 of 32,768 KV cells free\"")
kvplan_cli_test(simulate_turns_zero EXIT 2 STDOUT_EMPTY ARGS simulate llama-3.1-8b --turns 0
  STDERR "kvplan: error: --turns: must be >= 1<SEMI> give the turns of each conversation (1: single requests)")
# comparing GPUs, one the engine refuses is a row saying why (vLLM 0.9 keeps a bf16 checkpoint's bfloat16, which a T4,
# compute capability 7.5, lacks), not the end of the comparison
kvplan_cli_test(fit_compare_refused_gpu EXIT 0 ARGS fit llama-3.1-8b --gpu a10g,t4 --engine vllm@0.9.2 --context 4k --concurrency 4 --format csv
  STDOUT_CONTAINS "t4,none,\"refused: MODEL: vLLM 0.9.2 runs this bf16 checkpoint in bfloat16")
