# Golden outputs (table, md, csv): compare byte for byte; regenerate with -DUPDATE_GOLDEN=ON and review the diff.
kvplan_golden(kv_llama31_8b_32k kv llama-3.1-8b --context 32k)
kvplan_golden(kv_gemma3_1b_md kv gemma-3-1b-it --context 32k --format md)
kvplan_golden(kv_jamba_csv kv jamba-1.5-mini --context 4k --format csv)
