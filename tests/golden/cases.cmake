# Golden outputs (table, md, csv): compare byte for byte; regenerate with -DUPDATE_GOLDEN=ON and review the diff.
kvplan_golden(kv_llama31_8b_32k kv llama-3.1-8b --context 32k --verbose)
kvplan_golden(kv_gemma3_1b_md kv gemma-3-1b-it --context 32k --format md)
kvplan_golden(kv_jamba_csv kv jamba-1.5-mini --context 4k --format csv)
kvplan_golden(plan_llama31_70b_4xh100_fp8 plan --verbose llama-3.1-70b --gpu h100 --tensor-parallel-size 4 --kv-dtype fp8 --max-model-len 32k --context 32k --concurrency 24)
kvplan_golden(plan_llamacpp_qwen3_4090_md plan qwen3-30b-a3b --engine llama.cpp --gpu rtx-4090 --ctx-size 32k --parallel 4 --cache-type-k q8_0 --cache-type-v q8_0 --weight-format int4 --format md)
kvplan_golden(sweep_gemma3_csv sweep gemma-3-27b-it --gpu h100,h200 --context 8k,32k,128k --concurrency 1,16 --format csv)
add_test(NAME golden:readme_kv_example
         COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:kvplan>" "-DARGS=kv;llama-3.1-8b;--context;32k"
                 "-DREADME=${CMAKE_SOURCE_DIR}/README.md" "-DMARKER=`kvplan kv llama-3.1-8b --context 32k`:"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/golden/readme.cmake)
