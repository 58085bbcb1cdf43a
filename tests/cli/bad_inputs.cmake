# Bad-input catalogue: each malformed input gives exit 2, one line naming the field and the fix,
# and nothing on stdout. Expected lines reviewed by hand (docs/bad-input.md lists the promises).
set(BAD ${KVPLAN_DATA}/bad)
kvplan_cli_test(bad_config_heads_string EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/heads-string.json --context 1k
  STDERR "kvplan: error: ${BAD}/heads-string.json: /num_attention_heads: expected integer in [1, 1048576], got string \"32\"")
kvplan_cli_test(bad_config_layers_negative EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/layers-negative.json --context 1k
  STDERR "kvplan: error: ${BAD}/layers-negative.json: /num_hidden_layers: expected integer in [1, 100000], got -1")
kvplan_cli_test(bad_config_layers_zero EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/layers-zero.json --context 1k
  STDERR "kvplan: error: ${BAD}/layers-zero.json: /num_hidden_layers: expected integer in [1, 100000], got 0")
kvplan_cli_test(bad_config_layers_huge EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/layers-huge.json --context 1k
  STDERR "kvplan: error: ${BAD}/layers-huge.json: /num_hidden_layers: expected integer in [1, 100000], got 10000000")
kvplan_cli_test(bad_config_hidden_float EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/hidden-float.json --context 1k
  STDERR "kvplan: error: ${BAD}/hidden-float.json: /hidden_size: expected integer in [1, 16777216], got 4096.5")
kvplan_cli_test(bad_config_vocab_missing EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/vocab-missing.json --context 1k
  STDERR "kvplan: error: ${BAD}/vocab-missing.json: /vocab_size: missing (or padded_vocab_size)<SEMI> expected integer in [1, 2147483648]<SEMI> add it to the config")
kvplan_cli_test(bad_config_kv_heads_inconsistent EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/kv-heads-inconsistent.json --context 1k
  STDERR "kvplan: error: ${BAD}/kv-heads-inconsistent.json: /num_key_value_heads: num_attention_heads 32 is not divisible by 5 KV heads<SEMI> fix the head counts")
kvplan_cli_test(bad_config_head_dim_zero EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/head-dim-zero.json --context 1k
  STDERR "kvplan: error: ${BAD}/head-dim-zero.json: /head_dim: expected integer in [1, 16777216], got 0")
kvplan_cli_test(bad_config_dtype_unknown EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/dtype-unknown.json --context 1k
  STDERR "kvplan: error: ${BAD}/dtype-unknown.json: /torch_dtype: unknown dtype \"float12\"<SEMI> use float32, float16 or bfloat16")
kvplan_cli_test(bad_config_layer_types_short EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/layer-types-short.json --context 1k
  STDERR "kvplan: error: ${BAD}/layer-types-short.json: /layer_types: has 1 entries but num_hidden_layers is 32<SEMI> make them agree")
kvplan_cli_test(bad_config_intermediate_huge EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/intermediate-huge.json --context 1k
  STDERR "kvplan: error: ${BAD}/intermediate-huge.json: /intermediate_size: expected integer in [1, 16777216], got 1099511627776")
kvplan_cli_test(bad_config_sliding_window_negative EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/sliding-window-negative.json --context 1k
  STDERR "kvplan: error: ${BAD}/sliding-window-negative.json: /sliding_window: expected integer in [1, 1099511627776], got -4")
kvplan_cli_test(bad_config_bool_as_string EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/bool-as-string.json --context 1k
  STDERR "kvplan: error: ${BAD}/bool-as-string.json: /tie_word_embeddings: expected true or false, got string \"yes\"")
kvplan_cli_test(bad_config_nan_layers EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/nan-layers.json --context 1k
  STDERR "kvplan: error: ${BAD}/nan-layers.json: /num_hidden_layers: expected integer in [1, 100000], got NaN")
kvplan_cli_test(bad_config_infinity_hidden EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/infinity-hidden.json --context 1k
  STDERR "kvplan: error: ${BAD}/infinity-hidden.json: /hidden_size: expected integer in [1, 16777216], got Infinity")
kvplan_cli_test(bad_config_empty EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/empty.json --context 1k
  STDERR "kvplan: error: ${BAD}/empty.json: line 1, column 1: invalid JSON (empty document)<SEMI> fix the JSON syntax")
kvplan_cli_test(bad_config_whitespace EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/whitespace.json --context 1k
  STDERR "kvplan: error: ${BAD}/whitespace.json: line 2, column 3: invalid JSON (empty document)<SEMI> fix the JSON syntax")
kvplan_cli_test(bad_config_top_level_array EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/top-level-array.json --context 1k
  STDERR "kvplan: error: ${BAD}/top-level-array.json: expected a JSON object at the top level<SEMI> pass a config.json")
kvplan_cli_test(bad_config_trailing_comma EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/trailing-comma.json --context 1k
  STDERR "kvplan: error: ${BAD}/trailing-comma.json: line 1, column 45: invalid JSON (syntax error while parsing object key - unexpected '}'<SEMI> expected string literal)<SEMI> fix the JSON syntax")
kvplan_cli_test(bad_config_deep EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/deep.json --context 1k
  STDERR "kvplan: error: ${BAD}/deep.json: line 1, column 1281: nesting deeper than 256 levels<SEMI> flatten the document")
kvplan_cli_test(bad_config_binary EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/binary.json --context 1k
  STDERR "kvplan: error: ${BAD}/binary.json: line 1, column 1: invalid JSON (syntax error while parsing value - unexpected end of input<SEMI> expected '[', '{', or a literal)<SEMI> fix the JSON syntax")
kvplan_cli_test(bad_config_utf16 EXIT 2 STDOUT_EMPTY ARGS kv ${BAD}/utf16.json --context 1k
  STDERR "kvplan: error: ${BAD}/utf16.json: line 1, column 1: invalid JSON (syntax error while parsing value - invalid literal<SEMI> last read: '\\xff')<SEMI> fix the JSON syntax")
kvplan_cli_test(bad_deploy_empty_yaml EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-empty.yaml
  STDERR "kvplan: error: ${BAD}/deploy-empty.yaml: empty document<SEMI> list deployments under 'deployments:' (docs/deployment-files.md)")
kvplan_cli_test(bad_deploy_list_empty_yaml EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-list-empty.yaml
  STDERR "kvplan: error: ${BAD}/deploy-list-empty.yaml:1:14: deployments: expected a non-empty list, got an empty list<SEMI> list one or more deployments")
kvplan_cli_test(bad_deploy_not_mapping_yaml EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-not-mapping.yaml
  STDERR "kvplan: error: ${BAD}/deploy-not-mapping.yaml:1:1: expected a mapping with 'deployments:' at the top<SEMI> see docs/deployment-files.md")
kvplan_cli_test(bad_deploy_deep_yaml EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-deep.yaml
  STDERR "kvplan: error: ${BAD}/deploy-deep.yaml: /deployments/0/settings/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0...: nesting deeper than 64 levels<SEMI> flatten the document")
kvplan_cli_test(bad_deploy_tab_yaml EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-tab.yaml
  STDERR "kvplan: error: ${BAD}/deploy-tab.yaml:2:2: invalid YAML (illegal block entry)<SEMI> fix the YAML syntax")
kvplan_cli_test(bad_deploy_engine_unknown_yaml EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-engine-unknown.yaml
  STDERR "kvplan: error: ${BAD}/deploy-engine-unknown.yaml:4:13: unknown engine 'tgi'<SEMI> use vllm, sglang, trtllm, llama.cpp or generic")
kvplan_cli_test(bad_deploy_gpu_unknown_yaml EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-gpu-unknown.yaml
  STDERR "kvplan: error: ${BAD}/deploy-gpu-unknown.yaml:4:10: unknown GPU 'h10'<SEMI> did you mean 'h100'? (kvplan gpus lists them)")
# A flag the engine version does not have is a warning (the gate keeps working across engine upgrades);
# --strict turns it into a failed requirement, exit 1.
kvplan_cli_test(deploy_flag_unknown_warns EXIT 0 ARGS check ${BAD}/deploy-flag-unknown.yaml STDOUT_CONTAINS "PASS")
kvplan_cli_test(deploy_flag_unknown_strict EXIT 1 ARGS check --strict ${BAD}/deploy-flag-unknown.yaml --format md STDOUT_CONTAINS "no warnings (--strict)")
kvplan_cli_test(bad_deploy_entry_unknown_yaml EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-entry-unknown.yaml
  STDERR "kvplan: error: ${BAD}/deploy-entry-unknown.yaml:3:14: unsupported entry point 'text-generation-launcher'<SEMI> kvplan reads vllm serve, python -m vllm.entrypoints.openai.api_server, python -m sglang.launch_server, sglang serve, python -m dynamo.vllm|sglang|trtllm, llama-server, trtllm-serve, sh -c and docker run command lines, or an engine's bare arguments when the engine is named")
kvplan_cli_test(bad_deploy_concurrency_huge_yaml EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-concurrency-huge.yaml
  STDERR "kvplan: error: ${BAD}/deploy-concurrency-huge.yaml:4:43: concurrency: expected an integer in [1, 1099511627776], got string \"99999999999999999999\"")
kvplan_cli_test(bad_deploy_nan_headroom_yaml EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-nan-headroom.yaml
  STDERR "kvplan: error: ${BAD}/deploy-nan-headroom.yaml:4:34: min_headroom: expected a number in [0.0, 1.0], got NaN")
kvplan_cli_test(bad_deploy_model_missing_json EXIT 2 STDOUT_EMPTY ARGS check ${BAD}/deploy-model-missing.json
  STDERR "kvplan: error: ${BAD}/deploy-model-missing.json: /deployments/0: deployment 'x' has neither model nor command<SEMI> add model: or command:")
# fuzzing regressions (fuzz/findings): each once crashed a harness
kvplan_cli_test(fuzz_hf_config_number_overflow EXIT 2 STDOUT_EMPTY ARGS kv ${KVPLAN_DATA}/fuzz-regressions/hf_config-number-overflow.json --context 1k
  STDERR "kvplan: error: ${KVPLAN_DATA}/fuzz-regressions/hf_config-number-overflow.json: invalid JSON (number overflow parsing '1e3333333333333333333333333333333333333333333333333333333333333333333333333333333333333')<SEMI> fix the value")
kvplan_cli_test(fuzz_deployments_recursive_alias EXIT 2 STDOUT_EMPTY ARGS check ${KVPLAN_DATA}/fuzz-regressions/deployments-recursive-alias.yaml
  STDERR "kvplan: error: ${KVPLAN_DATA}/fuzz-regressions/deployments-recursive-alias.yaml: more than 20000 YAML nodes (an alias bomb?)<SEMI> write the document out plainly")
# extreme sizes: an overflow error naming the operation, never a wrapped number
kvplan_cli_test(extreme_context_concurrency EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --context 1000000000000 --concurrency 1000000000 --allow-long-context --max-model-len 1000000000000
  STDERR "kvplan: error: arithmetic: pool units needed: 1000000000 * 62500000000 overflows 64-bit bytes<SEMI> the inputs describe more bytes than 2^63<SEMI> reduce context, concurrency or sizes")
kvplan_cli_test(extreme_gpu_bytes EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu-memory-bytes 99999999999999999999 --context 8k
  STDERR "kvplan: error: arithmetic: --gpu-memory-bytes: 99999999999999999999 is beyond the 64-bit byte range<SEMI> the inputs describe more bytes than 2^63<SEMI> reduce context, concurrency or sizes")
kvplan_cli_test(extreme_sweep EXIT 2 STDOUT_EMPTY ARGS sweep llama-3.1-8b --context 1m --concurrency 1000000000 --format csv
  STDERR "kvplan: error: arithmetic: KV bytes: 65536000000000 * 2097152 overflows 64-bit bytes<SEMI> the inputs describe more bytes than 2^63<SEMI> reduce context, concurrency or sizes")
# the probe under faults: asking for more memory than there is ends cleanly with exit 3 and no report
kvplan_cli_test(probe_too_big EXIT 3 STDOUT_EMPTY ARGS probe llama-3.1-8b --backend cpu --seqs 64 --contexts 16m --seconds 0.1)
# fuzzing finding (manifests harness): yaml-cpp 0.7 allocates without bound on a ',' starting a line in block context
kvplan_cli_test(fuzz_manifests_comma_line EXIT 2 STDOUT_EMPTY ARGS check ${KVPLAN_DATA}/fuzz-regressions/manifests-comma-line.yaml
  STDERR "kvplan: error: ${KVPLAN_DATA}/fuzz-regressions/manifests-comma-line.yaml:8:2: ',' starts a line outside a flow collection ([...] or {...})<SEMI> quote the value or put the list in [ ]")
# fuzzing finding (manifests harness): another input on which yaml-cpp 0.7 allocates without bound; the parse budget stops it
kvplan_cli_test(fuzz_manifests_yaml_budget EXIT 2 STDOUT_EMPTY ARGS check ${KVPLAN_DATA}/fuzz-regressions/manifests-yaml-cpp-unbounded.yaml
  STDERR "kvplan: error: ${KVPLAN_DATA}/fuzz-regressions/manifests-yaml-cpp-unbounded.yaml: the YAML parser needed more than 64 MiB for this file<SEMI> check the YAML syntax (indentation, stray ',' or '-')")
# KV cache formats: the weight-only ggml types are no KV cache type; an nvfp4 KV cache only where vLLM and
# TensorRT-LLM offer it
kvplan_cli_test(bad_kv_nvfp4_sglang EXIT 2 STDOUT_EMPTY ARGS plan llama-3-8b --gpu h100 --engine sglang --kv-cache-dtype nvfp4 --context 4k
  STDERR "kvplan: error: --kv-cache-dtype: an nvfp4 KV cache is not available in sglang<SEMI> SGLang's FP4 cache is fp4_e2m1")
# llama.cpp has no fp8 (or int8) cache: its kv_cache_types are f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1
kvplan_cli_test(bad_kv_fp8_llamacpp EXIT 2 STDOUT_EMPTY ARGS plan llama-3-8b --gpu h100 --engine llama.cpp --cache-type-k fp8_e4m3 --context 4k
  STDERR "kvplan: error: --cache-type-k: llama.cpp has no fp8_e4m3 KV cache (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)<SEMI> use q8_0 (8.5 bits a value) or f16")
# a llama.cpp cache type on vLLM is planned at its size with a warning, which --strict makes a failure (exit 1):
# a 16-token page of one layer is 16 x 8 KV heads x 128 x 2 (K, V) x 34 / 32 B (q8_0) = 34,816 B
kvplan_cli_test(strict_kv_q8_0_vllm EXIT 1 ARGS plan llama-3-8b --gpu h100 --engine vllm --kv-cache-dtype q8_0 --context 4k --strict
  STDOUT_CONTAINS "16 / 34,816")
kvplan_cli_test(bad_kv_weight_only_type EXIT 2 STDOUT_EMPTY ARGS plan llama-3-8b --gpu h100 --engine llama.cpp --cache-type-k q2_k --context 4k
  STDERR "kvplan: error: --cache-type-k: q2_k is a weight format, not a KV cache type<SEMI> use f16, bf16, fp8_e4m3, q8_0, q4_0 (llama.cpp), nvfp4 (vLLM, TensorRT-LLM) or fp4_e2m1 (SGLang)")
# weight formats (issue #11): an unknown one lists every valid name on one line; mxfp4 needs MoE experts
kvplan_cli_test(bad_weight_format_unknown EXIT 2 STDOUT_EMPTY ARGS kv llama-3-8b --weight-format q9
  STDERR "kvplan: error: --weight-format: unknown weight format 'q9'<SEMI> use f32, f16, bf16, fp8, fp8_block, int8, int4, awq, gptq, nvfp4, mxfp4, a llama-quantize type (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, MXFP4_MOE, Q2_K, Q2_K_S, Q3_K_S, Q3_K_M, Q3_K_L, Q3_K, Q4_K_S, Q4_K_M, Q4_K, Q5_K_S, Q5_K_M, Q5_K, Q6_K, IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M, IQ3_XXS, IQ3_XS, IQ3_S, IQ3_M, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, each optionally with :imatrix) or pure:<ggml type> (q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k, iq1_s, iq1_m, iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq4_xs, tq1_0, tq2_0, mxfp4)")
kvplan_cli_test(bad_weight_format_mxfp4_dense EXIT 2 STDOUT_EMPTY ARGS kv llama-3-8b --weight-format mxfp4
  STDERR "kvplan: error: --weight-format: mxfp4 packs MoE experts only (vLLM's Mxfp4Config) and this model has none<SEMI> use nvfp4, or pure:mxfp4 for a llama.cpp file")
kvplan_cli_test(bad_kv_mxfp4_vllm EXIT 2 STDOUT_EMPTY ARGS plan llama-3-8b --gpu h100 --engine vllm --kv-cache-dtype fp4_e2m1 --context 4k
  STDERR "kvplan: error: --kv-cache-dtype: fp4_e2m1 is SGLang's FP4 KV cache, not vllm's<SEMI> use nvfp4 on vLLM and TensorRT-LLM")
# speculative decoding and decode context parallel: each bad value names the field and the fix
kvplan_cli_test(bad_spec_config_not_json EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --speculative-config "{method:eagle}"
  STDERR "kvplan: error: --speculative-config: '{method:eagle}' is not JSON<SEMI> give a JSON object such as '{\"method\": \"eagle\", \"model\": \"MODEL\", \"num_speculative_tokens\": 3}'")
kvplan_cli_test(bad_spec_config_array EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --speculative-config "[1,2]"
  STDERR "kvplan: error: --speculative-config: expected a JSON object, got an array<SEMI> give a JSON object such as '{\"method\": \"ngram\", \"num_speculative_tokens\": 4}'")
kvplan_cli_test(bad_spec_method_unknown EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --speculative-config "{\"method\":\"medusa\",\"num_speculative_tokens\":2}"
  STDERR "kvplan: error: --speculative-config: /method: string \"medusa\" is not a method kvplan models<SEMI> use draft_model, eagle, eagle3, mtp or ngram")
kvplan_cli_test(bad_spec_tokens_missing EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --speculative-config "{\"method\":\"eagle\"}"
  STDERR "kvplan: error: --speculative-config: /num_speculative_tokens: missing<SEMI> give the number of tokens to propose per step, e.g. \"num_speculative_tokens\": 3")
kvplan_cli_test(bad_spec_tokens_zero EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --speculative-config "{\"method\":\"eagle\",\"num_speculative_tokens\":0}"
  STDERR "kvplan: error: --speculative-config: /num_speculative_tokens: expected an integer 1..1024, got 0")
kvplan_cli_test(bad_spec_draft_not_a_model EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --speculative-config "{\"method\":\"draft_model\",\"model\":\"no-such-model\",\"num_speculative_tokens\":3}"
  STDERR "kvplan: error: --speculative-config: /model: 'no-such-model' is not a model kvplan can read (unknown model 'no-such-model')<SEMI> give a built-in model id (kvplan models), a config.json or snapshot folder, or a Hugging Face id kvplan knows")
kvplan_cli_test(bad_spec_draft_folder_not_a_model EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --speculative-config "{\"method\":\"eagle\",\"model\":\"${BAD}\",\"num_speculative_tokens\":3}"
  STDERR "kvplan: error: --speculative-config: /model: '${BAD}' is not a model kvplan can read (directory has no config.json)<SEMI> give a built-in model id (kvplan models), a config.json or snapshot folder, or a Hugging Face id kvplan knows")
kvplan_cli_test(bad_spec_mtp_without_layers EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --speculative-config "{\"method\":\"mtp\"}"
  STDERR "kvplan: error: --speculative-config: method mtp needs the model's multi-token-prediction layers<SEMI> llama-3.1-8b has none (num_nextn_predict_layers 0)<SEMI> use a draft model or an EAGLE head, or a model with MTP layers (DeepSeek-V3/R1, Qwen3-Next)")
kvplan_cli_test(bad_spec_draft_tp EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --tp 4 --speculative-config "{\"method\":\"eagle\",\"num_speculative_tokens\":3,\"draft_tensor_parallel_size\":3}"
  STDERR "kvplan: error: --speculative-config: /draft_tensor_parallel_size: 3 must be 1 or the tensor-parallel size 4<SEMI> give 1 or 4")
kvplan_cli_test(bad_spec_sglang_algorithm EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine sglang --speculative-algorithm MEDUSA
  STDERR "kvplan: error: --speculative-algorithm: unknown speculative algorithm 'MEDUSA'<SEMI> use EAGLE, EAGLE3, NEXTN, STANDALONE or NGRAM")
kvplan_cli_test(bad_spec_sglang_steps_alone EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine sglang --speculative-num-steps 3
  STDERR "kvplan: error: --speculative-num-steps: has no effect without --speculative-algorithm<SEMI> give --speculative-algorithm EAGLE, EAGLE3, NEXTN, STANDALONE or NGRAM")
kvplan_cli_test(bad_spec_pasted_method EXIT 2 STDOUT_EMPTY ARGS plan -- vllm serve meta-llama/Llama-3.1-8B --speculative-config "{\"method\": \"medusa\", \"num_speculative_tokens\": 2}"
  STDERR "kvplan: error: command: --speculative-config: /method: string \"medusa\" is not a method kvplan models<SEMI> use draft_model, eagle, eagle3, mtp or ngram")
kvplan_cli_test(bad_dcp_not_divisor EXIT 2 STDOUT_EMPTY ARGS plan deepseek-v3 --gpu h200 --tp 8 --decode-context-parallel-size 3
  STDERR "kvplan: error: --decode-context-parallel-size: 3 does not divide the tensor-parallel size 8<SEMI> use a divisor of --tensor-parallel-size")
kvplan_cli_test(bad_dp_attention_not_divisor EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine sglang --tp 4 --dp-size 3 --enable-dp-attention
  STDERR "kvplan: error: --dp-size: 3 does not divide the tensor-parallel size 4<SEMI> use a --dp-size that divides --tp-size")
# llama.cpp over several GPUs and with a draft model (docs/engine-rules.md "llama.cpp on several GPUs")
kvplan_cli_test(bad_llama_tensor_split_word EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine llama.cpp --tensor-split 1,x
  STDERR "kvplan: error: --tensor-split: 'x' in '1,x' is not a proportion<SEMI> give non-negative numbers, one per GPU, such as 3,1 or 0,1,1,1")
kvplan_cli_test(bad_llama_tensor_split_pasted EXIT 2 STDOUT_EMPTY ARGS plan --gpu h100-sxm -- llama-server -m llama-3.1-8b -ts 3,-1
  STDERR "kvplan: error: command: -ts: '-1' in '3,-1' is not a proportion<SEMI> give non-negative numbers, one per GPU, such as 3,1 or 0,1,1,1")
kvplan_cli_test(bad_llama_tensor_split_sixteen EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine llama.cpp -ts 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1
  STDERR "kvplan: error: --tensor-split: 16 entries<SEMI> llama.cpp refuses 16 or more (llama_max_devices)<SEMI> give one proportion per GPU")
kvplan_cli_test(bad_llama_main_gpu EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine llama.cpp --split-mode none --main-gpu 2 --gpu-count 2
  STDERR "kvplan: error: --main-gpu: GPU 2 is not one of the model's 2 GPU(s)<SEMI> give --main-gpu 0..1")
kvplan_cli_test(bad_llama_split_mode_tensor EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine llama.cpp -sm tensor
  STDERR "kvplan: error: --split-mode: split mode tensor (experimental in llama.cpp) is not modelled<SEMI> use layer, row or none")
kvplan_cli_test(bad_llama_device_beyond_count EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine llama.cpp --device CUDA3 --gpu-count 2
  STDERR "kvplan: error: --device: GPU 3 is not one of the 2 GPUs of --gpu-count<SEMI> name GPUs 0..1")
kvplan_cli_test(bad_llama_draft_unknown EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine llama.cpp --model-draft nosuchmodel
  STDERR "kvplan: error: --model-draft: 'nosuchmodel' is not a draft model: unknown model 'nosuchmodel'<SEMI> give a GGUF file or a model kvplan knows (kvplan models)")
kvplan_cli_test(bad_llama_draft_not_a_model EXIT 2 STDOUT_EMPTY ARGS plan --gpu h100-sxm -- llama-server -m llama-3.1-8b -md ${BAD}/draft-not-a-model.txt
  STDERR "kvplan: error: command: -md: '${BAD}/draft-not-a-model.txt' is not a draft model: neither a GGUF file nor a config.json<SEMI> give a GGUF file or a model kvplan knows (kvplan models)")
kvplan_cli_test(bad_llama_draft_setting_alone EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine llama.cpp -cd 4096
  STDERR "kvplan: error: --ctx-size-draft: applies to a draft model, and none is given<SEMI> give --model-draft FILE")
kvplan_cli_test(bad_llama_override_regex EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine llama.cpp -ot "blk\\.(1=CPU"
  STDERR "kvplan: error: --override-tensor: 'blk\\.(1' is not a regular expression (Mismatched '(' and ')' in regular expression)<SEMI> write an ECMAScript pattern such as 'blk\\.[0-9]+\\.ffn_.*_exps'")
kvplan_cli_test(bad_llama_override_buffer EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine llama.cpp -ot exps=XPU
  STDERR "kvplan: error: --override-tensor: unknown buffer type 'XPU' in 'exps=XPU'<SEMI> use CPU or a GPU's buffer such as CUDA0")
kvplan_cli_test(bad_llama_gpu_count_huge EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine llama.cpp --gpu-count 17
  STDERR "kvplan: error: --gpu-count: 17 GPUs<SEMI> llama.cpp uses at most 16<SEMI> give at most 16 GPUs")
# vLLM --limit-mm-per-prompt: JSON from 0.10, key=value pairs in 0.8; the line names the flag and the form to write
kvplan_cli_test(bad_limit_mm_pairs_on_new_vllm EXIT 2 STDOUT_EMPTY ARGS plan llava-1.5-7b --context 1k --limit-mm-per-prompt image=4
  STDERR "kvplan: error: --limit-mm-per-prompt: 'image=4' is not JSON<SEMI> vLLM 0.10 and later take a JSON object such as '{\"image\": 16}' (image=16 is vLLM 0.8's form)")
kvplan_cli_test(bad_limit_mm_json_on_vllm_083 EXIT 2 STDOUT_EMPTY ARGS plan llava-1.5-7b --context 1k --engine vllm@0.8.3 --limit-mm-per-prompt "{\"image\":4}"
  STDERR "kvplan: error: --limit-mm-per-prompt: '{\"image\":4}' is JSON<SEMI> vLLM 0.8.3 takes modality=count pairs such as image=16,video=2")
kvplan_cli_test(bad_limit_mm_negative EXIT 2 STDOUT_EMPTY ARGS plan llava-1.5-7b --context 1k --limit-mm-per-prompt "{\"image\":-1}"
  STDERR "kvplan: error: --limit-mm-per-prompt: \"image\": expected a count >= 0 or {\"count\": N}, got -1<SEMI> vLLM 0.10 and later take a JSON object such as '{\"image\": 16}' (image=16 is vLLM 0.8's form)")
# vLLM --mm-processor-kwargs: a JSON object; max_pixels a positive integer
kvplan_cli_test(bad_mm_processor_kwargs_not_json EXIT 2 STDOUT_EMPTY ARGS plan qwen2.5-vl-7b-instruct --context 1k --mm-processor-kwargs max_pixels=1003520
  STDERR "kvplan: error: --mm-processor-kwargs: 'max_pixels=1003520' is not JSON<SEMI> pass a JSON object such as '{\"max_pixels\": 1003520}'")
kvplan_cli_test(bad_mm_processor_kwargs_max_pixels_zero EXIT 2 STDOUT_EMPTY ARGS plan qwen2.5-vl-7b-instruct --context 1k --mm-processor-kwargs "{\"max_pixels\":0}"
  STDERR "kvplan: error: --mm-processor-kwargs: \"max_pixels\": expected an integer from 1 to 2^40, got 0<SEMI> pass a JSON object such as '{\"max_pixels\": 1003520}'")
# vLLM KV connectors (host and disk KV tiers): each bad value names the flag and the fix
kvplan_cli_test(bad_kv_transfer_not_json EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm --kv-transfer-config "{kv_connector:lmcache}"
  STDERR "kvplan: error: --kv-transfer-config: '{kv_connector:lmcache}' is not JSON<SEMI> give a JSON object such as '{\"kv_connector\":\"OffloadingConnector\",\"kv_role\":\"kv_both\"}'")
kvplan_cli_test(bad_kv_transfer_cpu_bytes_string EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm
  --kv-transfer-config "{\"kv_connector\":\"OffloadingConnector\",\"kv_connector_extra_config\":{\"cpu_bytes_to_use\":\"lots\"}}"
  STDERR "kvplan: error: --kv-transfer-config: kv_connector_extra_config.cpu_bytes_to_use: expected bytes >= 0, got string \"lots\"<SEMI> give the host bytes summed over the TP ranks, such as 34359738368")
kvplan_cli_test(bad_kv_transfer_cpu_bytes_negative EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm
  --kv-transfer-config "{\"kv_connector\":\"OffloadingConnector\",\"kv_connector_extra_config\":{\"cpu_bytes_to_use\":-1}}"
  STDERR "kvplan: error: --kv-transfer-config: kv_connector_extra_config.cpu_bytes_to_use: expected bytes >= 0, got -1<SEMI> give the host bytes summed over the TP ranks, such as 34359738368")
kvplan_cli_test(bad_kv_transfer_blocks_negative EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm
  --kv-transfer-config "{\"kv_connector\":\"OffloadingConnector\",\"kv_connector_extra_config\":{\"num_cpu_blocks\":-5}}"
  STDERR "kvplan: error: --kv-transfer-config: kv_connector_extra_config.num_cpu_blocks: expected an integer >= 0, got -5<SEMI> give a whole number of host blocks per rank")
kvplan_cli_test(bad_kv_transfer_connector_number EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm --kv-transfer-config "{\"kv_connector\":7}"
  STDERR "kvplan: error: --kv-transfer-config: kv_connector: expected a string, got 7<SEMI> name a connector such as \"OffloadingConnector\"")
kvplan_cli_test(bad_lmcache_cpu_size_negative EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm
  --kv-transfer-config "{\"kv_connector\":\"LMCacheConnectorV1\"}" --lmcache-max-local-cpu-size -3
  STDERR "kvplan: error: --lmcache-max-local-cpu-size: '-3' is not a non-negative number<SEMI> give a decimal number >= 0, such as 0.5 or 71")
# --host-bandwidth (host memory for the performance model's host_weights / host_kv_read terms)
kvplan_cli_test(bad_host_bandwidth_word EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --host-bandwidth fast
  STDERR "kvplan: error: --host-bandwidth: 'fast' is not a bandwidth<SEMI> give bytes/s or a rate such as 89.6GB/s (dual-channel DDR5-5600) or 8.96e10")
kvplan_cli_test(bad_host_bandwidth_zero EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --host-bandwidth 0GB/s
  STDERR "kvplan: error: --host-bandwidth: '0GB/s' must be above 0 bytes/s<SEMI> give bytes/s or a rate such as 89.6GB/s (dual-channel DDR5-5600) or 8.96e10")
kvplan_cli_test(bad_host_bandwidth_unit EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --host-bandwidth 90GT/s
  STDERR "kvplan: error: --host-bandwidth: '90GT/s' is not a bandwidth<SEMI> give bytes/s or a rate such as 89.6GB/s (dual-channel DDR5-5600) or 8.96e10")
kvplan_cli_test(bad_lmcache_config_file_missing EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm
  --kv-transfer-config "{\"kv_connector\":\"LMCacheConnectorV1\"}" --lmcache-config-file ${BAD}/no-such-lmcache.yaml
  STDERR "kvplan: error: --lmcache-config-file: '${BAD}/no-such-lmcache.yaml' is not a file kvplan can read<SEMI> give the path of LMCache's YAML config as this machine sees it, or leave LMCACHE_CONFIG_FILE out")
kvplan_cli_test(bad_lmcache_config_file_size EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm
  --kv-transfer-config "{\"kv_connector\":\"LMCacheConnectorV1\"}" --lmcache-config-file ${BAD}/lmcache-bad-size.yaml
  STDERR "kvplan: error: ${BAD}/lmcache-bad-size.yaml:2:21: max_local_cpu_size: expected a number of GiB >= 0, got string \"lots\"<SEMI> give the GiB of pinned host memory per rank, such as 5.0")
# OffloadingConnector: the key the planned vLLM version reads must be there (vllm #24498: cpu_bytes_to_use from 0.14)
kvplan_cli_test(bad_kv_transfer_blocks_on_new_vllm EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm
  --kv-transfer-config "{\"kv_connector\":\"OffloadingConnector\",\"kv_connector_extra_config\":{\"num_cpu_blocks\":1000}}"
  STDERR "kvplan: error: --kv-transfer-config: kv_connector_extra_config.cpu_bytes_to_use: missing (the newest vLLM reads it, not num_cpu_blocks, and fails without it: \"cpu_bytes_to_use must be specified in kv_connector_extra_config\")<SEMI> give cpu_bytes_to_use, the host bytes summed over the TP ranks, or plan vLLM 0.11-0.13 (--engine vllm@0.11) for num_cpu_blocks")
kvplan_cli_test(bad_kv_transfer_bytes_on_old_vllm EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm@0.11
  --kv-transfer-config "{\"kv_connector\":\"OffloadingConnector\",\"kv_connector_extra_config\":{\"cpu_bytes_to_use\":34359738368}}"
  STDERR "kvplan: error: --kv-transfer-config: kv_connector_extra_config.num_cpu_blocks: missing (vLLM 0.11 reads it, not cpu_bytes_to_use, and fails without it: \"num_cpu_blocks must be specified in kv_connector_extra_config\")<SEMI> give num_cpu_blocks, the host blocks per rank, or plan vLLM >= 0.14 (--engine vllm@0.14, vllm #24498) for cpu_bytes_to_use")
kvplan_cli_test(bad_max_cpu_loras_below_max_loras EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine vllm --enable-lora --max-loras 2 --max-cpu-loras 1
  STDERR "kvplan: error: --max-cpu-loras: 1 is below --max-loras 2 (vLLM: \"max_cpu_loras must be >= max_loras\")<SEMI> give --max-cpu-loras >= --max-loras, or leave it out (default: --max-loras)")
kvplan_cli_test(bad_memory_channels_without_speed EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu cpu --engine llama.cpp --memory-channels 12
  STDERR "kvplan: error: --memory-channels: a CPU host's bandwidth needs both the channels and their data rate<SEMI> give --memory-channels N and --memory-speed MT/s (e.g. 12 and 4800)")
kvplan_cli_test(bad_cpu_sockets_on_a_gpu EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu h100 --cpu-sockets 2
  STDERR "kvplan: error: --cpu-sockets: describes a CPU host, not h100-sxm<SEMI> use --gpu cpu (or a CPU profile: kvplan gpus) for CPU inference")
kvplan_cli_test(bad_ecc_on_a_card_without_ecc EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu rtx-3090 --ecc on
  STDERR "kvplan: error: --ecc: rtx-3090 has no ECC mode to switch<SEMI> leave --ecc out for this GPU")
# --flash-attn takes an optional value (llama.cpp's -fa): a word after it that is none of its values is named as its
kvplan_cli_test(bad_flash_attn_value_spaced EXIT 2 STDOUT_EMPTY ARGS plan llama-2-7b --engine llama.cpp --flash-attn maybe
  STDERR "kvplan: error: --flash-attn: expected on, off or auto, got 'maybe' (alone, --flash-attn means on)")
kvplan_cli_test(bad_flash_attn_value_short EXIT 2 STDOUT_EMPTY ARGS plan llama-2-7b --engine llama.cpp -fa maybe
  STDERR "kvplan: error: --flash-attn: expected on, off or auto, got 'maybe' (alone, --flash-attn means on)")
kvplan_cli_test(bad_flash_attn_value_equals EXIT 2 STDOUT_EMPTY ARGS plan llama-2-7b --engine llama.cpp --flash-attn=maybe
  STDERR "kvplan: error: --flash-attn: expected on, off or auto, got 'maybe'")
# llama.cpp before b6325: -fa was a switch, off unless given, so a quantized V cache without it does not start
kvplan_cli_test(bad_quantized_v_before_fa_auto EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --engine-version b5937 -- llama-server -m x.gguf -c 8192 -ctv q4_0
  STDERR "kvplan: error: command: -ctv: a quantized V cache needs flash attention<SEMI> llama.cpp b5937 (flash attention off unless -fa) with -ctv q4_0<SEMI> add -fa, or use an f16 V cache")
# vLLM SchedulerConfig: without chunked prefill a whole prompt must fit one step, and the step must hold max_num_seqs
kvplan_cli_test(bad_vllm_unchunked_budget EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu h100 --engine vllm --no-enable-chunked-prefill --max-model-len 32768 --max-num-batched-tokens 8192
  STDERR "kvplan: error: --max-num-batched-tokens: 8192 is smaller than max_model_len 32768 with chunked prefill off: vLLM refuses to start (SchedulerConfig: a whole prompt must fit one step)<SEMI> raise --max-num-batched-tokens to at least 32768, lower --max-model-len, or drop --no-enable-chunked-prefill")
kvplan_cli_test(bad_vllm_budget_below_seqs EXIT 2 STDOUT_EMPTY ARGS plan llama-3.1-8b --gpu h100 --engine vllm --max-num-seqs 1024 --max-num-batched-tokens 512
  STDERR "kvplan: error: --max-num-batched-tokens: 512 is below max_num_seqs 1024: vLLM refuses to start (SchedulerConfig: \"must be greater than or equal to max_num_seqs\")<SEMI> raise --max-num-batched-tokens to at least 1024 or lower --max-num-seqs")
kvplan_cli_test(bad_sglang_swa_ratio EXIT 2 STDOUT_EMPTY ARGS plan gpt-oss-120b --gpu h100 --engine sglang --swa-full-tokens-ratio 1.5
  STDERR "kvplan: error: --swa-full-tokens-ratio: must be in (0, 1]<SEMI> use a ratio such as 0.8 (SGLang's default)")
