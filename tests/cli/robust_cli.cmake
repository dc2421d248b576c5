# Regression tests of the reliability defects of the command line (each
# failed before its fix). Included from cli_tests.cmake.

# Parameters that scale host memory or time are bounded up front (exit 2).
tlbsim_cli(err_rcu_grace_absurd 2 STDERR "rcu_grace_ns" "absurd"
           ARGS run mmap8 -D rcu_grace_ns=10000000000)
tlbsim_cli(err_memory_estimate 2 STDERR "needs about [0-9]+ MiB" "--max-memory"
           ARGS run mmap8 --profile arm64-4k -w size=1T -w touch=268435456 --threads 1 --iters 1)
tlbsim_cli(err_max_memory_small 2 STDERR "--max-memory 1M" ARGS run mmap8 --max-memory 1M)
# Memory that only a running simulation can use up (page tables waiting for
# RCU) hits the budget: one line, exit 3, never an abort.
tlbsim_cli(run_memory_budget_exit3 3 STDERR "out of host memory" "--max-memory"
           ARGS run mmap8 -D rcu_grace_ns=1000000000 --max-memory 64M)
# Workloads with their own thread structure refuse --threads.
tlbsim_cli(err_threads_fixed_mmap5 2 STDERR "--threads 3" "fixed set"
           ARGS run mmap5 --threads 3)
tlbsim_cli(err_threads_fixed_madv 2 STDERR "--threads" ARGS check madv_race --threads 5)
tlbsim_cli(err_threads_fixed_lazy 2 STDERR "--threads" ARGS run lazy_tables --threads 2)
# Integers are digits only.
tlbsim_cli(err_iters_space 2 STDERR "--iters  5" ARGS run mmap8 --iters " 5")
tlbsim_cli(err_iters_plus 2 STDERR "--iters \\+5" ARGS run mmap8 --iters +5)
tlbsim_cli(err_seed_overflow 2 STDERR "--seed" ARGS run mmap8 --seed 99999999999999999999999)
# A policy option may set several knobs; each compare column is labelled by
# every knob it sets differently from the first column.
tlbsim_cli(compare_labels 0
           STDOUT "nested=v2,nested_check=on +nested=prefix +nested_check=off" "ratio = nested_check=off / "
           ARGS compare mmap8 --iters 2 --threads 2 --policy nested=v2 --policy nested=prefix
                --policy nested=v2,nested_check=off)
tlbsim_cli(compare_multi_knob 0 STDOUT "nested=prefix,x86_lazy=never"
           ARGS compare mmap8 --iters 2 --threads 2 --profile x86-24 --policy nested=v2
                --policy nested=prefix,x86_lazy=never)
# `list` refuses extra arguments.
tlbsim_cli(err_list_extra 2 STDERR "unexpected argument 'bogus'" ARGS list workloads bogus)
# an option that belongs to another command
tlbsim_cli(err_option_wrong_command 2 STDERR "--strategy does not apply" ARGS run mmap8 --strategy dfs)

# A script test: tests/cli/SCRIPT.sh TLBSIM [ARGS...] prints "TAG: PASS" or
# "TAG: FAIL: ..." (TAG is the script's name).
function(tlbsim_cli_script name script timeout labels)
  add_test(NAME ${name} COMMAND bash ${TLBSIM_CLI_DIR}/${script}.sh $<TARGET_FILE:tlbsim> ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout}
    PASS_REGULAR_EXPRESSION "${script}: PASS" FAIL_REGULAR_EXPRESSION "${script}: FAIL")
endfunction()

tlbsim_cli_script(cli_partial partial 120 cli)
tlbsim_cli_script(cli_table_and_json table_json 120 cli)

# The seed pair at bench size (iterations cut) on every profile, in every
# preset: under asan this is the sanitizer run of the main job.
tlbsim_cli_script(cli_seed_pair seed_pair 600 "cli;seed" 3000)

# user + sys + idle == wall x cpus, also with a large x86 CR3 cost.
tlbsim_cli_script(cli_time_identity time_identity 120 cli)

# A later -D or -w of the same name replaces the earlier one: no duplicate
# JSON keys, and repeating one name never counts against the -w/-D limits.
tlbsim_cli(D_repeated_replaces 0 STDOUT "\"overrides\":\\{\"pte_scan_ns\":2,\"syscall_ns\":5\\}"
           ARGS run lazy_tables -D pte_scan_ns=1 -D syscall_ns=5 -D pte_scan_ns=2 --json)
tlbsim_cli(w_repeated_replaces 0 STDOUT "\"params\":\\{\"size\":\"4096\",\"loops\":\"2\"\\}"
           ARGS run mmap5 --iters 1 -w loops=1 -w loops=1 -w loops=1 -w loops=1 -w loops=1
                -w loops=1 -w loops=1 -w loops=1 -w loops=1 -w loops=1 -w loops=1 -w loops=1
                -w loops=1 -w loops=1 -w loops=1 -w loops=1 -w loops=1 -w loops=2 --json)

# No command at all: one line naming the problem, not the help (exit 2).
tlbsim_cli(err_no_command 2 STDERR "^tlbsim: missing command \\(see tlbsim --help\\)$" ARGS)
# `list` refuses an extra argument after every list name.
tlbsim_cli(err_list_profiles_extra 2 STDERR "unexpected argument 'extra'" ARGS list profiles extra)
tlbsim_cli(err_list_params_extra 2 STDERR "unexpected argument 'extra'" ARGS list params --json extra)
# "--" ends the options: the workload may follow it (getopt used to hand the
# workload over twice: "unexpected argument 'mmap5'"); what follows it is
# never an option.
tlbsim_cli(dashdash_workload 0 STDOUT "^workload mmap5 \\(size=4096 loops=1\\)"
           ARGS run --iters 1 -w loops=1 -- mmap5)
tlbsim_cli(dashdash_workload_compare 0 STDOUT "^workload mmap5"
           ARGS compare --iters 1 -w loops=1 --policy nested=v2 --policy nested=fullmm -- mmap5)
tlbsim_cli(dashdash_ends_options 2 STDERR "unexpected argument '--iters'"
           ARGS run mmap5 -- --iters 1)

# ---- the randomized robustness harness (tests/robust/README.md) ----
# It runs tlbsim under ASan+UBSan, so it is registered in the asan preset
# (TLBSIM_SANITIZE) only. robust: a fixed slice, configurations 0-699 of
# seed 1 (about two minutes on the 2-core CI machine, plus minimisation of
# a failure), part of the asan workflow. A count, not a time budget: every
# CI run tries the same configurations, so a defect reached only late in the
# slice cannot turn CI red on a fast day and stay hidden on a slow one. It
# runs alone (RUN_SERIAL) because it keeps both cores busy and its per-run
# time caps should not compete with other tests. robust-long: two seeds for
# 15 minutes each, excluded from the presets' test runs; run it with
# `ctest --preset robust-long` (after building the asan preset).
if(TLBSIM_SANITIZE)
  set(TLBSIM_ROBUST ${CMAKE_SOURCE_DIR}/tests/robust/harness.py)
  find_package(Python3 3.9 COMPONENTS Interpreter)
  # limit: "--count;N" (a fixed slice) or "--budget-seconds;S"
  function(tlbsim_robust name label seed limit timeout)
    if(Python3_Interpreter_FOUND)
      add_test(NAME ${name}
               COMMAND ${Python3_EXECUTABLE} ${TLBSIM_ROBUST} --tlbsim $<TARGET_FILE:tlbsim>
                       --seed ${seed} ${limit} --minimise-seconds 20
                       --jobs 2 --keep-going --ignore-known
                       --scratch ${CMAKE_CURRENT_BINARY_DIR}/robust-s${seed}
                       --report ${CMAKE_CURRENT_BINARY_DIR}/robust-s${seed}.json)
      # exit 0: no failure, or only known ones (--ignore-known); 1: a new one
      set_tests_properties(${name} PROPERTIES LABELS ${label} TIMEOUT ${timeout}
        RUN_SERIAL TRUE)
    else()
      add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E echo
               "${name}: SKIPPED: the robustness harness needs python3 >= 3.9, which was not found")
      set_tests_properties(${name} PROPERTIES LABELS ${label} SKIP_REGULAR_EXPRESSION "SKIPPED")
    endif()
  endfunction()
  tlbsim_robust(robust_slice robust 1 "--count;700" 600)
  tlbsim_robust(robust_long_s11 robust-long 11 "--budget-seconds;900" 1800)
  tlbsim_robust(robust_long_s12 robust-long 12 "--budget-seconds;900" 1800)
  # files.py: the files a user hands tlbsim (result CSVs for plot, merge and
  # sweep's resume; profile files; the repository's scenario files), mutated
  # and run under ASan+UBSan. robust: cases 0-299 of seed 1 (about a minute
  # on 2 cores); robust-long: 3000 cases of seed 2.
  function(tlbsim_robust_files name label seed count timeout)
    if(Python3_Interpreter_FOUND)
      add_test(NAME ${name}
               COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/robust/files.py
                       --tlbsim $<TARGET_FILE:tlbsim> --seed ${seed} --count ${count}
                       --jobs 2 --timeout 60
                       --scratch ${CMAKE_CURRENT_BINARY_DIR}/robust-files-s${seed})
      set_tests_properties(${name} PROPERTIES LABELS ${label} TIMEOUT ${timeout}
        RUN_SERIAL TRUE PASS_REGULAR_EXPRESSION "files: PASS")
    endif()
  endfunction()
  tlbsim_robust_files(robust_files robust 1 300 600)
  tlbsim_robust_files(robust_files_long robust-long 2 3000 3600)
endif()
# --seeds, --jobs and the jitter parameter: means equal the per-seed runs,
# output independent of --jobs, jitter=0 the exact mode, bad values exit 2
tlbsim_cli_script(cli_seeds seeds 300 cli)
# --kernel presets: what each release did (000 bug in 5.1, fixed in 5.2; the
# 001 flush in 5.8, skipped in 5.9; no retry from 6.0), --policy wins, every
# preset on every workload
tlbsim_cli_script(cli_kernel kernel 300 cli)
# --profile FILE and list profiles --dump: round trip of every built-in
# profile, file parameters under -D, one-line errors naming the line
tlbsim_cli_script(cli_profile_file profile_file 300 cli)
# every option naming a file to write refuses a directory before any work
# (exit 2, one line), and a directory read as an input says so
tlbsim_cli_script(cli_output_dir output_dir 120 cli)
tlbsim_cli_script(cli_output_stream output_stream 300 cli)
tlbsim_cli_script(cli_output_paths output_paths 300 cli)
# tlbsim sensitivity: rows equal plain runs with one parameter moved, ranked;
# ratio of two policies; the SVG chart; -j independence; bad input exit 2
tlbsim_cli_script(cli_sensitivity sensitivity 300 cli)
# run/compare have --seed and --seeds: an abbreviation of both is ambiguous
# and says so; check has only --seed, so --see is --seed there
tlbsim_cli(err_ambiguous_seed 2 STDERR "option '--see' is ambiguous" "--seeds"
           ARGS run mmap8 --see 7 --iters 1)
tlbsim_cli(check_seed_abbrev 0 STDOUT "no violation" ARGS check mmap5 --see 7 --runs 3)
# compare's default of five seeds S..S+4 must fit under INT64_MAX
tlbsim_cli(err_compare_default_seeds_overflow 2 STDERR "compare's default 5 seeds run past"
           ARGS compare mmap8 --seed 9223372036854775807 --policy nested=v2 --policy nested=fullmm)

# The host side (docs/native.md): calibrate writes a loadable profile, native
# runs mmap8 and page_fault3 on the host, compare --native puts model and
# machine side by side; bad input exits 2. Sanity and structure, not values.
tlbsim_cli_script(cli_native_calibrate native 60 "cli;native" calibrate)
tlbsim_cli_script(cli_native_run native 60 "cli;native" run)
tlbsim_cli_script(cli_native_errors native 60 "cli;native" errors)
tlbsim_cli_script(cli_native_signals native 90 "cli;native" signals)
