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
# vLLM --limit-mm-per-prompt: JSON from 0.10, key=value pairs in 0.8; the line names the flag and the form to write
kvplan_cli_test(bad_limit_mm_pairs_on_new_vllm EXIT 2 STDOUT_EMPTY ARGS plan llava-1.5-7b --context 1k --limit-mm-per-prompt image=4
  STDERR "kvplan: error: --limit-mm-per-prompt: 'image=4' is not JSON<SEMI> vLLM 0.10 and later take a JSON object such as '{\"image\": 16}' (image=16 is vLLM 0.8's form)")
kvplan_cli_test(bad_limit_mm_json_on_vllm_083 EXIT 2 STDOUT_EMPTY ARGS plan llava-1.5-7b --context 1k --engine vllm@0.8.3 --limit-mm-per-prompt "{\"image\":4}"
  STDERR "kvplan: error: --limit-mm-per-prompt: '{\"image\":4}' is JSON<SEMI> vLLM 0.8.3 takes modality=count pairs such as image=16,video=2")
kvplan_cli_test(bad_limit_mm_negative EXIT 2 STDOUT_EMPTY ARGS plan llava-1.5-7b --context 1k --limit-mm-per-prompt "{\"image\":-1}"
  STDERR "kvplan: error: --limit-mm-per-prompt: \"image\": expected a count >= 0 or {\"count\": N}, got -1<SEMI> vLLM 0.10 and later take a JSON object such as '{\"image\": 16}' (image=16 is vLLM 0.8's form)")
