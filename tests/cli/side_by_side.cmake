# scripts/device/side_by_side.py (the GPU side-by-side) on a machine without torch or CUDA:
# --dry-run reads the probe report and plans every case without importing torch; a real run with torch
# missing, or with torch but no CUDA device, still exits 0 and writes the JSON with the reason per case;
# a file that is not a probe report exits 2 with one error line.
set(dir "${WORK}/side-by-side")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}/no-torch" "${dir}/no-cuda")

execute_process(COMMAND ${PYTHON} ${SCRIPT} ${PROBE} ${dir}/dry --dry-run
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--dry-run: expected exit 0, got ${rc}: ${err}")
endif()
foreach(want "3 cases, 32 q / 8 KV heads, head_dim 128, page 16"
             "case 0: 4 x 8192 tokens, bf16, random permutation pages; kvplan 6.492 ms"
             "sdpa: bf16 contiguous \\[4, 8, 8192, 128\\]"
             "sdpa: skip \\(SDPA has no fp8"
             "flashinfer: q bf16, kv fp8_e4m3 paged NHD, page 16"
             "flashinfer: skip \\(FlashInfer has no q8_0"
             "would write .*side-by-side-sample.json")
  if(NOT out MATCHES "${want}")
    message(FATAL_ERROR "--dry-run output lacks '${want}':\n${out}")
  endif()
endforeach()
if(EXISTS "${dir}/dry")
  message(FATAL_ERROR "--dry-run wrote ${dir}/dry")
endif()

# torch that does not import, then torch with no CUDA device: stand-ins found first on PYTHONPATH
file(WRITE "${dir}/no-torch/torch.py" "raise ImportError('hidden by the test')\n")
file(WRITE "${dir}/no-cuda/torch.py"
     "__version__ = '0.0-test'\nclass version:\n    cuda = None\nclass cuda:\n    @staticmethod\n    def is_available():\n        return False\n")
foreach(kind no-torch no-cuda)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${dir}/${kind} ${PYTHON} ${SCRIPT} ${PROBE} ${dir}/out-${kind}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${kind}: expected exit 0, got ${rc}: ${err}")
  endif()
  set(f "${dir}/out-${kind}/side-by-side-sample.json")
  if(NOT EXISTS "${f}")
    message(FATAL_ERROR "${kind}: ${f} not written: ${err}")
  endif()
  file(READ "${f}" json)
  string(JSON name GET "${json}" schema name)
  string(JSON n LENGTH "${json}" results cases)
  string(JSON why GET "${json}" results cases 0 sdpa why)
  string(JSON ratio TYPE "${json}" results cases 0 kvplan_over_sdpa)
  string(JSON fp8 GET "${json}" results cases 2 sdpa why)
  if(NOT name STREQUAL "kvplan.side_by_side" OR NOT n EQUAL 3 OR NOT ratio STREQUAL "NULL" OR NOT fp8 MATCHES "no fp8")
    message(FATAL_ERROR "${kind}: unexpected report:\n${json}")
  endif()
  if(kind STREQUAL "no-torch" AND NOT why MATCHES "hidden by the test")
    message(FATAL_ERROR "no-torch: case 0 does not say why: ${why}")
  endif()
  if(kind STREQUAL "no-cuda" AND NOT why MATCHES "is_available\\(\\) is False")
    message(FATAL_ERROR "no-cuda: case 0 does not say why: ${why}")
  endif()
  file(GLOB leftovers "${dir}/out-${kind}/*.tmp")
  if(leftovers)
    message(FATAL_ERROR "${kind}: temporary files left: ${leftovers}")
  endif()
endforeach()

execute_process(COMMAND ${PYTHON} ${SCRIPT} ${NOT_PROBE} ${dir}/bad RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^side_by_side: error: .*: /schema/name: expected kvplan.probe" OR NOT out STREQUAL "")
  message(FATAL_ERROR "not a probe report: expected exit 2 and one error line, got ${rc}: ${err}")
endif()
