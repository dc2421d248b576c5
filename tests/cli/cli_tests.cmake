# CLI tests: the tlbsim command line (src/cli/main.c), its exit codes and its
# output contracts (docs/output.md, conventions.md "CLI").
#
#   exit 0 ok; exit 2 on usage or input error with exactly one line on stderr
#   naming the problem and nothing on stdout; results on stdout.
#
# Most entries go through tests/cli/expect_exit.sh, which checks the exit code,
# the one-line/empty-stream rules and a set of regexes that must all match.
# All runs are tiny (a few iterations) so the suite takes well under a second.

set(TLBSIM_CLI_DIR ${CMAKE_CURRENT_LIST_DIR})

# tlbsim_cli(<name> <exit code> [STDOUT re...] [STDERR re...] ARGS args...)
function(tlbsim_cli name code)
  cmake_parse_arguments(C "" "" "STDOUT;STDERR;ARGS" ${ARGN})
  set(cmd bash ${TLBSIM_CLI_DIR}/expect_exit.sh ${code})
  foreach(re IN LISTS C_STDOUT)
    list(APPEND cmd --stdout "${re}")
  endforeach()
  foreach(re IN LISTS C_STDERR)
    list(APPEND cmd --stderr "${re}")
  endforeach()
  list(APPEND cmd -- $<TARGET_FILE:tlbsim> ${C_ARGS})
  add_test(NAME cli_${name} COMMAND ${cmd})
  set_tests_properties(cli_${name} PROPERTIES
    PASS_REGULAR_EXPRESSION "expect_exit: PASS"
    FAIL_REGULAR_EXPRESSION "expect_exit: FAIL"
    LABELS cli)
endfunction()

# ---- help ----
tlbsim_cli(help 0 STDOUT "usage: tlbsim" "compare" "run WORKLOAD" "list" ARGS --help)
tlbsim_cli(help_short 0 STDOUT "usage: tlbsim" "compare" ARGS -h)
tlbsim_cli(list_what_help 0 STDOUT "usage: tlbsim list" ARGS list params --help)
tlbsim_cli(version 0 STDOUT "^tlbsim [0-9]+\\.[0-9]+" ARGS --version)
# compare's summary line: last column against the first, in words (fullmm
# needs fewer broadcast TLBIs than v2 on falkor-46: one ASIDE1IS per nested
# finish instead of 256 VAE1IS)
tlbsim_cli(compare_summary 0
           STDOUT "^summary: nested=fullmm vs nested=v2: wall [0-9.]+x lower, ops/s [0-9.]+x higher"
                  "^summary: .* [0-9.,]+ [KMG]? ?fewer broadcast TLBIs$"
           ARGS compare mmap8 --iters 200 --seeds 1 --policy nested=v2 --policy nested=fullmm)
tlbsim_cli(run_help 0 STDOUT "usage: tlbsim run WORKLOAD" "--policy" "--seed" "-D NAME=VALUE"
           ARGS run --help)
tlbsim_cli(compare_help 0 STDOUT "usage: tlbsim compare WORKLOAD" "--policy" "one column per"
           ARGS compare --help)
tlbsim_cli(list_help 0 STDOUT "usage: tlbsim list" "workloads" ARGS list --help)

# ---- list ----
tlbsim_cli(list_workloads 0 STDOUT "^mmap8 " "^mmap5 " "-w size=" ARGS list workloads)
tlbsim_cli(list_policies 0
           STDOUT "^nested:" "nested=prefix" "nested=v1" "nested=v2" "nested=keep_bits"
                  "nested=need_flush_all" "nested=fullmm .*default"
           ARGS list policies)
tlbsim_cli(list_profiles 0 STDOUT "^x86-24 " "^falkor-46 " "^arm64-4k " "^arm64-16k "
           ARGS list profiles)
tlbsim_cli(list_params 0
           STDOUT "^name +unit" "^tlbi_op_ns " "^rcu_grace_ns " "^flush_ceiling " "^tlb_sets "
           ARGS list params)

# ---- successful small runs ----
tlbsim_cli(run_small 0 STDOUT "^workload mmap8" "profile falkor-46" "nested_finishes"
           ARGS run mmap8 --iters 2 --threads 2)
tlbsim_cli(run_small_x86 0 STDOUT "^workload mmap5" "profile x86-24" "ipi_sent"
           ARGS run mmap5 --iters 1 --profile x86-24 -w loops=5)
tlbsim_cli(compare_small 0 STDOUT "nested=prefix" "nested=fullmm" "ratio"
           ARGS compare mmap8 --iters 2 --threads 2 --policy nested=prefix --policy nested=fullmm)

# A first column whose label (every knob some column changes, with its value)
# is longer than 255 bytes: it used to be cut there, mid-value
# ("hugetlb_unshare_flush=before_" for before_unlock); now whole.
tlbsim_cli(compare_long_label 0
           STDOUT "^metric +x86_tlb_gen=mm_gen,x86_should_flush=not_lazy,.*,hugetlb_unshare_flush=before_unlock,arm64_ttl=leaf_only,thp_collapse_range=haddr,thp_gup_sync=ipi +x86_tlb_gen=new_gen,"
           ARGS compare mmap5 --iters 1 --seeds 1 --policy nested=fullmm
                --policy x86_tlb_gen=new_gen,x86_should_flush=loaded_mm,x86_flush=invlpgb,tlb_flush_cond=bits
                --policy ubc_check_madv_free=off,arm64_batch=none,numa_pending=none,uffd_wp_flush=none,migrate_dirty=drop
                --policy pfnmap_flush=stable_first,x86_range_freed=true,hugetlb_unshare_flush=after_unlock,arm64_ttl=level,thp_collapse_range=end,thp_gup_sync=none)

# ---- input errors: exit 2, one line on stderr naming the problem ----
tlbsim_cli(err_unknown_workload 2 STDERR "unknown workload 'nosuch'" ARGS run nosuch)
tlbsim_cli(err_unknown_workload_compare 2 STDERR "unknown workload 'nosuch'"
           ARGS compare nosuch --policy nested=prefix --policy nested=v2)
# test_vmalloc workers are coroutine stacks with guard pages: more than 16384
# of them passed vm.max_map_count and failed with exit 3
tlbsim_cli(err_vmtest_nr_threads 2 STDERR "nr_threads=20000: want 0..16384"
           ARGS run test_vmalloc -w nr_threads=20000)
tlbsim_cli(err_unknown_profile 2 STDERR "unknown profile 'nosuch'"
           ARGS run mmap8 --profile nosuch)
tlbsim_cli(err_unknown_policy_knob 2 STDERR "unknown policy knob 'foo'"
           ARGS run mmap8 --policy foo=bar)
tlbsim_cli(err_unknown_policy_value 2 STDERR "unknown value 'bar'" "nested"
           ARGS run mmap8 --policy nested=bar)
tlbsim_cli(err_unknown_policy_value_compare 2 STDERR "unknown value 'zzz'"
           ARGS compare mmap8 --policy nested=prefix --policy nested=zzz)
tlbsim_cli(err_policy_not_kv 2 STDERR "--policy nested" "NAME=VALUE"
           ARGS run mmap8 --policy nested)
# an option spelled in full without its value says so (--trace and --seed
# were called ambiguous: they prefix --trace-window and --seeds)
tlbsim_cli(err_trace_needs_value 2 STDERR "option --trace needs a value \\(FILE\\)"
           ARGS run mmap8 --iters 2 --trace)
tlbsim_cli(err_seed_needs_value 2 STDERR "option --seed needs a value"
           ARGS compare mmap8 --policy nested=v2 --policy nested=fullmm --seed)
tlbsim_cli(err_abbrev_ambiguous 2 STDERR "option '--tra' is ambiguous"
           ARGS run mmap8 --tra x)
# --json before WHAT lists the same (it named WHAT "unexpected")
tlbsim_cli(list_json_first 0 STDOUT "^.\"kernels\":" ARGS list --json kernels)
# a --trace-window time past its limit or finer than 1 ns says so (both
# said "want a number with a unit")
tlbsim_cli(err_trace_window_too_late 2 STDERR "bad END '1000001s': more than 1000000 s"
           ARGS run mmap8 --iters 2 --trace tw.json --trace-window 0:1000001s)
tlbsim_cli(err_trace_window_sub_ns 2 STDERR "bad START '0.5ns': finer than a nanosecond"
           ARGS run mmap8 --iters 2 --trace tw.json --trace-window 0.5ns:1ms)
# a name or value over its length says so (it said "want NAME=VALUE"); an
# argument of thousands of characters keeps the reason at the end of the
# line (the message was cut at 2 KiB, before it)
string(REPEAT "0" 100 tlbsim_z100)
string(REPEAT "0" 5000 tlbsim_z5000)
tlbsim_cli(err_wparam_value_too_long 2 STDERR "-w size=0+1: the value is longer than 79 characters"
           ARGS run mmap8 -w size=${tlbsim_z100}1)
tlbsim_cli(err_override_name_too_long 2 STDERR "the name is longer than 63 characters"
           ARGS run mmap8 -D ${tlbsim_z100}=1)
tlbsim_cli(err_huge_arg_keeps_reason 2
           STDERR "^tlbsim: -w size=0+\\[\\.\\.\\. [0-9]+ bytes \\.\\.\\.\\]0+1: the value is longer than 79 characters$"
           ARGS run mmap8 -w size=${tlbsim_z5000}1)
# an empty item or one knob twice in one --policy is a slip, not a policy
tlbsim_cli(err_policy_trailing_comma 2 STDERR "--policy nested=v2,: an empty item"
           ARGS run mmap8 --policy nested=v2,)
tlbsim_cli(err_policy_empty_item 2 STDERR "an empty item"
           ARGS sweep mmap8 --grid threads=1 --policy nested=v2,,x86_lazy=never)
tlbsim_cli(err_policy_knob_twice 2 STDERR "--policy nested=v2,nested=fullmm: nested given twice"
           ARGS compare mmap8 --policy nested=v2,nested=fullmm --policy nested=prefix)
tlbsim_cli(err_w_unknown_param 2 STDERR "no parameter 'nosuch'" ARGS run mmap8 -w nosuch=1)
tlbsim_cli(err_w_size_abc 2 STDERR "size=abc" ARGS run mmap8 -w size=abc --iters 1)
tlbsim_cli(err_cpus_zero 2 STDERR "--cpus 0" ARGS run mmap8 --cpus 0)
tlbsim_cli(err_cpus_abc 2 STDERR "--cpus abc" ARGS run mmap8 --cpus abc)
tlbsim_cli(err_iters_negative 2 STDERR "--iters -5" ARGS run mmap8 --iters -5)
tlbsim_cli(err_D_unknown 2 STDERR "unknown parameter 'unknown'" ARGS run mmap8 -D unknown=1)
tlbsim_cli(err_D_negative 2 STDERR "tlbi_op_ns" ARGS run mmap8 -D tlbi_op_ns=-1)
tlbsim_cli(err_D_tlb_sets_not_pow2 2 STDERR "tlb_sets" "power of two"
           ARGS run mmap8 -D tlb_sets=3)
tlbsim_cli(err_D_asid_bits_low 2 STDERR "asid_bits=1" "2\\.\\.16" ARGS run mmap8 -D asid_bits=1)
tlbsim_cli(err_D_asid_bits_high 2 STDERR "asid_bits=17" "2\\.\\.16" ARGS run mmap8 -D asid_bits=17)
# -D of the arch's own value is taken, as in a profile file (x86 has no
# arm64 ASID bits: 0, which `list profiles --dump x86-24` writes)
tlbsim_cli(D_asid_bits_x86_own 0 STDOUT "profile x86-24" ARGS run mmap8 --profile x86-24 --iters 1
           --threads 1 -D asid_bits=0)
tlbsim_cli(err_D_asid_bits_arm64_zero 2 STDERR "asid_bits=0" "2\\.\\.16" ARGS run mmap8 -D asid_bits=0)
tlbsim_cli(err_asid_bits_for_cpus 2 STDERR "asid_bits=3 gives 7 user ASIDs for 8 CPUs"
           "more ASIDs than CPUs" ARGS run mmap8 -D asid_bits=3 --cpus 8)
tlbsim_cli(err_asid_bits_kpti_for_cpus 2 STDERR "asid_bits=4 with kpti=1 gives 7 user ASIDs"
           ARGS run mmap8 -D asid_bits=4 -D kpti=1 --cpus 7)
tlbsim_cli(run_asid_bits_small 0 STDOUT "^asid_rollovers +0$" "^context_switches +[0-9]"
           ARGS run mmap8 --iters 2 --threads 2 --cpus 4 -D asid_bits=3)
tlbsim_cli(err_missing_workload 2 STDERR "missing WORKLOAD" ARGS run)
tlbsim_cli(err_compare_one_policy 2 STDERR "at least two --policy"
           ARGS compare mmap8 --policy nested=prefix)
tlbsim_cli(err_compare_no_policy 2 STDERR "at least two --policy" ARGS compare mmap8)
tlbsim_cli(err_unknown_command 2 STDERR "unknown command 'frobnicate'" ARGS frobnicate)
tlbsim_cli(err_unknown_option 2 STDERR "--bogus" ARGS run mmap8 --bogus)
tlbsim_cli(err_unknown_list 2 STDERR "unknown list 'nosuch' \\(want workloads, policies, profiles, params or kernels\\)" ARGS list nosuch)

# `tlbsim list` without a list name is a usage error: exit 2, one line on stderr.
tlbsim_cli(err_list_missing_name 2 STDERR "list: missing what to list" ARGS list)

# ---- determinism and JSON schema ----
add_test(NAME cli_determinism
         COMMAND bash ${TLBSIM_CLI_DIR}/determinism.sh $<TARGET_FILE:tlbsim>)
add_test(NAME cli_json_schema
         COMMAND bash ${TLBSIM_CLI_DIR}/json_schema.sh $<TARGET_FILE:tlbsim>
                 ${CMAKE_SOURCE_DIR}/include/tlbsim/tlbsim.h schema)
add_test(NAME cli_json_command_line
         COMMAND bash ${TLBSIM_CLI_DIR}/json_schema.sh $<TARGET_FILE:tlbsim>
                 ${CMAKE_SOURCE_DIR}/include/tlbsim/tlbsim.h command)
set_tests_properties(cli_determinism cli_json_schema cli_json_command_line
                     PROPERTIES LABELS cli)
# A long option without its value names the option in the one stderr line.
tlbsim_cli(err_cpus_missing_value 2 STDERR "--cpus" ARGS run mmap8 --cpus)
# Absurd cache geometry is bad input, not an out-of-memory crash.
tlbsim_cli(err_absurd_caches 2 STDERR "absurd" ARGS run mmap8 --cpus 1024 -D tlb_sets=65536 -D tlb_ways=32)
# one leaf TLB above its counting filter's 2^21 entries: bad input, named
# (it passed the machine-wide limit on one or two CPUs, then failed to
# initialise as "out of memory", exit 3: harness config 61889, seed 1)
tlbsim_cli(err_leaf_tlb_filter 2 STDERR "^tlbsim: tlb_sets x tlb_ways = 4194304 entries per leaf TLB: at most 2097152"
           ARGS run mmap5 --iters 1 --cpus 1 -D tlb_sets=65536 -D tlb_ways=64)
tlbsim_cli(leaf_tlb_filter_largest 0 STDOUT "^workload mmap5"
           ARGS run mmap5 --iters 1 --cpus 1 -D tlb_sets=65536 -D tlb_ways=32)
# a broadcast TLBI's receivers slow its issuer (arm64 tlbi_recv_ns): two tasks
# flushing in turn once starved a third whose CPU lost more time to their
# TLBIs than passed, and the run never ended (harness config 87815, seed 1)
tlbsim_cli(tlbi_recv_backpressure 0 STDOUT "^ops_per_sec +[1-9]"
           ARGS run tlb_flush3 -D tlbi_recv_ns=100000 --tasks 3 --cpus 4 -w size=256K
                --profile arm64-128 --time-limit 20)
include(${CMAKE_CURRENT_LIST_DIR}/robust_cli.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/wis_cli.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/kbuild_cli.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/forkexec_cli.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/daily_cli.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/run_trace.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/stress_ng_cli.cmake)
