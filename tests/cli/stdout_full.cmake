# Output that cannot be written to stdout is a runtime failure (exit 3, one line on stderr), whichever command and
# format wrote it: a CI gate that redirects a report to a full disk must not pass with an empty file. /dev/full
# fails every write with ENOSPC.
# one case a string, its arguments joined by '|'
set(cases
    "kv|llama-3.1-8b"
    "plan|llama-3.1-8b|--format|json"
    "sweep|llama-3.1-8b|--context|1k..64k*2|--concurrency|1..64*2|--format|jsonl"
    "simulate|llama-3.1-8b|--requests|5|--format|csv"
    "gpus")
foreach(joined IN LISTS cases)
  string(REPLACE "|" ";" c "${joined}")
  string(REPLACE "|" " " shown "${joined}")
  execute_process(COMMAND ${EXE} ${c} OUTPUT_FILE /dev/full ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 3)
    message(FATAL_ERROR "kvplan ${shown} > /dev/full: expected exit 3, got ${rc} (${err})")
  endif()
  if(NOT err MATCHES "^kvplan: error: stdout: the output could not be written")
    message(FATAL_ERROR "kvplan ${shown} > /dev/full: expected one error line naming stdout, got: ${err}")
  endif()
endforeach()
# the control: the same commands into a writable file exit 0
execute_process(COMMAND ${EXE} kv llama-3.1-8b OUTPUT_FILE ${WORK}/stdout_full_control.txt RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kvplan kv llama-3.1-8b > file: expected exit 0, got ${rc}")
endif()
