# libFuzzer targets (clang -fsanitize=fuzzer,address + UBSan), built only when the
# compiler supports it (the clang preset; gcc has no libFuzzer):
#   fuzz_scenario  the scenario compiler (src/scenario/parse.c)
#   fuzz_token     the replay-token decoder (src/check/token.c)
# Each CTest runs its target for a bounded time from the seed corpus in
# tests/fuzz/corpus/ and fails on any crash, leak, timeout or trap.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address")
set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer,address")
check_c_source_compiles("
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }"
  TLBSIM_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
set(TLBSIM_FUZZ_SECONDS 20 CACHE STRING "seconds each fuzz CTest runs")
if(TLBSIM_HAVE_LIBFUZZER)
  # the code under test is compiled into the target with coverage and ASan;
  # the rest of the model comes from tlbsim_core
  foreach(t scenario token)
    if(t STREQUAL "scenario")
      set(srcs src/scenario/parse.c)
    else()
      set(srcs src/check/token.c)
    endif()
    add_executable(fuzz_${t} tests/fuzz/fuzz_${t}.c ${srcs})
    target_include_directories(fuzz_${t} PRIVATE src)
    target_compile_options(fuzz_${t} PRIVATE -fsanitize=fuzzer,address,undefined
                           -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_${t} PRIVATE tlbsim_core)
    add_test(NAME fuzz_${t}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/fuzz/run_fuzz.sh
                     $<TARGET_FILE:fuzz_${t}> ${CMAKE_CURRENT_SOURCE_DIR}/tests/fuzz/corpus/${t}
                     ${TLBSIM_FUZZ_SECONDS})
    set_tests_properties(fuzz_${t} PROPERTIES LABELS fuzz TIMEOUT 300
      PASS_REGULAR_EXPRESSION "run_fuzz: PASS" FAIL_REGULAR_EXPRESSION "run_fuzz: FAIL")
  endforeach()
endif()
