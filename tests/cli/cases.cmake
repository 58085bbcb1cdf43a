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
  STDERR "kvplan: error: --kv-dtype: unknown format 'q3'; use one of f32, f16, bf16, fp8_e4m3, fp8_e5m2, int8, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl")
kvplan_cli_test(bad_format EXIT 2 STDOUT_EMPTY ARGS kv llama-3-8b --format xml
  STDERR "kvplan: error: --format: unknown format 'xml'; use table, md, csv or json")
kvplan_cli_test(block_mismatch EXIT 2 STDOUT_EMPTY ARGS kv ${KVPLAN_DATA}/configs/bad/head-dim-80.json --context 1 --cache-type-k q8_0
  STDERR "kvplan: error: K head row (head_dim): row of 80 elements is not a multiple of q8_0's block of 32; choose a plain cache type (f16, bf16, fp8_e4m3) for this model")
kvplan_cli_test(malformed_json EXIT 2 STDOUT_EMPTY ARGS kv ${KVPLAN_DATA}/configs/bad/truncated.json --context 1
  STDERR "kvplan: error: ${KVPLAN_DATA}/configs/bad/truncated.json: line 4, column 1: invalid JSON (syntax error while parsing object key - unexpected end of input; expected string literal); fix the JSON syntax")
kvplan_cli_test(zero_heads EXIT 2 STDOUT_EMPTY ARGS kv ${KVPLAN_DATA}/configs/bad/zero-kv-heads.json --context 1
  STDERR "kvplan: error: ${KVPLAN_DATA}/configs/bad/zero-kv-heads.json: /num_key_value_heads: expected integer in [1, 1048576], got 0")
kvplan_cli_test(no_config_dir EXIT 2 STDOUT_EMPTY ARGS kv ${KVPLAN_DATA}/configs/bad
  STDERR "kvplan: error: ${KVPLAN_DATA}/configs/bad: directory has no config.json; pass a model snapshot folder or the config.json itself")
kvplan_cli_test(no_max_context EXIT 2 STDOUT_EMPTY ARGS kv falcon-7b-instruct
  STDERR "kvplan: error: --context: the model config has no max_position_embeddings; pass --context N (e.g. 4096 or 32k)")
kvplan_cli_test(overflow EXIT 2 STDOUT_EMPTY ARGS kv llama-3-8b --context 1000000000000000
  STDERR "kvplan: error: arithmetic: K bytes of group: 2048000000000000000 * 32 overflows 64-bit bytes; the inputs describe more bytes than 2^63; reduce context, concurrency or sizes")
kvplan_cli_test(excluded_flags EXIT 2 STDOUT_EMPTY ARGS kv llama-3-8b --kv-dtype f16 --cache-type-k q8_0)
kvplan_cli_test(no_subcommand EXIT 2 STDOUT_EMPTY ARGS)
kvplan_cli_test(unknown_gpu_profiles EXIT 2 STDOUT_EMPTY ARGS --profiles ${KVPLAN_DATA}/profiles-bad gpus
  STDERR "kvplan: error: ${KVPLAN_DATA}/profiles-bad/gpus/x.json: /nmae: unknown key; did you mean 'name'?")
kvplan_cli_test(profiles_override EXIT 0 ARGS --profiles ${KVPLAN_DATA}/profiles-extra models --format csv STDOUT_CONTAINS "tiny-llama,llama,2,")
kvplan_cli_test(gpus_list EXIT 0 ARGS gpus STDOUT_CONTAINS "h100-sxm")
kvplan_cli_test(help EXIT 0 ARGS --help STDOUT_CONTAINS "Exit codes")
