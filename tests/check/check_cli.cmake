# CLI tests of `tlbsim check` (src/cli/main.c cmd_check, src/check/checker.c):
# exit codes (0 nothing found, 1 violation, 2 usage or input error with one
# line on stderr and nothing on stdout), the human report, replay tokens,
# --json and --trace. Every run is bounded by --runs / --time-limit and takes
# well under a second in the dev build.

set(TLBSIM_CHECK_DIR ${CMAKE_CURRENT_LIST_DIR})
set(TLBSIM_CHECK_EXPECT_EXIT ${CMAKE_CURRENT_LIST_DIR}/../cli/expect_exit.sh)

# tlbsim_check_out(<name> <exit 0|1> [HAS text...] [RE regex...] [LACKS text...] ARGS args...)
# stdout results, empty stderr (check_expect.sh).
function(tlbsim_check_out name code)
  cmake_parse_arguments(C "" "" "HAS;RE;LACKS;ARGS" ${ARGN})
  set(cmd bash ${TLBSIM_CHECK_DIR}/check_expect.sh ${code})
  foreach(s IN LISTS C_HAS)
    list(APPEND cmd --has "${s}")
  endforeach()
  foreach(s IN LISTS C_RE)
    list(APPEND cmd --re "${s}")
  endforeach()
  foreach(s IN LISTS C_LACKS)
    list(APPEND cmd --lacks "${s}")
  endforeach()
  # --time-limit 55 first (a later one in ARGS wins): a run bounded by --runs
  # ends on its schedule count, not on the default 10 s host budget, so its
  # result does not depend on how loaded the machine is (ASan under load)
  list(APPEND cmd -- $<TARGET_FILE:tlbsim> check --time-limit 55 ${C_ARGS})
  add_test(NAME check_cli_${name} COMMAND ${cmd})
  set_tests_properties(check_cli_${name} PROPERTIES
    PASS_REGULAR_EXPRESSION "check_expect: PASS"
    FAIL_REGULAR_EXPRESSION "check_expect: FAIL"
    LABELS "check;cli" TIMEOUT 60)
endfunction()

# tlbsim_check_err(<name> [STDERR regex...] ARGS args...): exit 2, one line on
# stderr matching every regex, empty stdout (tests/cli/expect_exit.sh).
function(tlbsim_check_err name)
  cmake_parse_arguments(C "" "" "STDERR;ARGS" ${ARGN})
  set(cmd bash ${TLBSIM_CHECK_EXPECT_EXIT} 2)
  foreach(re IN LISTS C_STDERR)
    list(APPEND cmd --stderr "${re}")
  endforeach()
  list(APPEND cmd -- $<TARGET_FILE:tlbsim> check ${C_ARGS})
  add_test(NAME check_cli_${name} COMMAND ${cmd})
  set_tests_properties(check_cli_${name} PROPERTIES
    PASS_REGULAR_EXPRESSION "expect_exit: PASS"
    FAIL_REGULAR_EXPRESSION "expect_exit: FAIL"
    LABELS "check;cli" TIMEOUT 60)
endfunction()

# The unit tests of this directory (globbed by CMakeLists.txt): bounded, so
# that a regression that makes an access fault forever (the livelock
# detector never firing) fails in minutes instead of hanging. 300 s: under
# ASan test_explore takes tens of seconds of CPU, and on a machine loaded 3x
# over 120 s was seen to end it (its budgets are schedule counts, not time).
foreach(t test_invariants test_explore)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES TIMEOUT 300 LABELS check)
  endif()
endforeach()

# ---- results ----
# seed 000 on arm64 64K with the pre-fix nested policy: exit 1, a report with
# the violation, the trace, the replay command and the token.
tlbsim_check_out(seed000_prefix 1
  HAS "VIOLATION I1" "trace (step" "replay: tlbsim check mmap5" "token: t2."
      "walk-cache" "found after"
  RE "^workload mmap5 " "^replay: tlbsim check mmap5 .*--policy nested=prefix --replay t2\\.[0-9a-f]{8}\\."
  LACKS "no violation"
  ARGS mmap5 --profile falkor-46 --policy nested=prefix --runs 20000 --time-limit 20)
# the upstream fix: nothing within the budget, exit 0
tlbsim_check_out(seed000_fullmm 0
  HAS "no violation: 500 schedules"
  LACKS "VIOLATION" "token:"
  ARGS mmap5 --profile falkor-46 --policy nested=fullmm --runs 500)
tlbsim_check_out(seed000_fullmm_dfs 0
  HAS "no violation: " "(search space exhausted within the bound)"
  ARGS mmap5 --profile falkor-46 --policy nested=fullmm --strategy dfs --runs 20000
       --time-limit 20)
tlbsim_check_out(seed000_pct 1
  HAS "VIOLATION I1" "token: t2."
  ARGS mmap5 --profile arm64-4k --policy nested=prefix --strategy pct --runs 20000
       --time-limit 20)
tlbsim_check_out(invariant_livelock 1
  HAS "VIOLATION livelock" "token: t2."
  ARGS mmap5 --profile falkor-46 --policy nested=prefix --invariant livelock --runs 20000
       --time-limit 20)
# two tables freed while reachable at one step are two trace lines that say
# which: each names its CPU and frame (they read the same)
tlbsim_check_out(violation_events_distinct 1
  HAS "tlbsim_VIOLATION: I1 at 0x7fff77e00000 (cpu 1, frame 6)"
      "tlbsim_VIOLATION: I1 at 0x7fff40000000 (cpu 1, frame 5)"
  ARGS lazy_tables --policy x86_lazy=never)
tlbsim_check_out(madv_race_free 1
  HAS "VIOLATION I3"
  ARGS madv_race --policy nested_check=off -w advice=free --runs 20000 --time-limit 20)
tlbsim_check_out(madv_race_dontneed 1
  HAS "VIOLATION I2"
  ARGS madv_race --policy nested_check=off -w advice=dontneed --runs 20000 --time-limit 20)
# x86_flush=invlpgb on milan-72 (AMD INVLPGB, v6.15): the x86 race scenarios
# with their fixed policies stay clean. They run 3 tasks, so their mm never
# gets a global ASID (more than 3 active CPUs needed): the IPI path of a
# kernel that has INVLPGB. mmap8 with 6 threads for 100 iterations does get
# one (the pid/jiffies test passes within the run): INVLPGB + TLBSYNC flushes
# and the ASID transition, checked by I1/I2.
foreach(adv dontneed free)
  tlbsim_check_out(invlpgb_madv_race_${adv} 0
    HAS "no violation" "x86_flush=invlpgb"
    ARGS madv_race --profile milan-72 --policy x86_flush=invlpgb -w advice=${adv} --runs 2000
         --time-limit 20)
endforeach()
tlbsim_check_out(invlpgb_lazy_tables 0
  HAS "no violation" "x86_flush=invlpgb"
  ARGS lazy_tables --profile milan-72 --policy x86_flush=invlpgb --runs 2000 --time-limit 20)
tlbsim_check_out(invlpgb_mmap8_global_asid 0
  HAS "no violation" "x86_flush=invlpgb"
  ARGS mmap8 --profile milan-72 --cpus 6 --threads 6 --iters 100 -w size=64K
       --policy x86_flush=invlpgb --runs 50 --time-limit 20)
# kernel flushes by INVLPGB reach the checker too: the withdrawn KASAN draft
# is still found (I5), the fixed order is clean
tlbsim_check_out(invlpgb_vmalloc_reuse_late 1
  HAS "VIOLATION I5" "x86_flush=invlpgb"
  ARGS vmalloc_reuse --profile milan-72 --policy x86_flush=invlpgb
       --policy kasan_flush=per_node_late --runs 2000 --time-limit 20)
tlbsim_check_out(invlpgb_vmalloc_reuse_per_node 0
  HAS "no violation" "x86_flush=invlpgb"
  ARGS vmalloc_reuse --profile milan-72 --policy x86_flush=invlpgb --policy kasan_flush=per_node
       --runs 300 --time-limit 20)
tlbsim_check_out(invlpgb_mmap8_kernel618 0
  HAS "no violation" "x86_flush=invlpgb" "x86_table_free=rcu"
  ARGS mmap8 --profile milan-72 --cpus 6 --threads 6 --iters 100 -w size=64K --kernel 6.18
       --runs 50 --time-limit 20)
tlbsim_check_out(help 0
  HAS "usage: tlbsim check WORKLOAD" "--replay TOKEN" "--trace FILE" "--invariant NAME"
  ARGS --help)

# ---- replay, JSON, trace ----
foreach(mode roundtrip other_policy json)
  add_test(NAME check_cli_replay_${mode}
           COMMAND bash ${TLBSIM_CHECK_DIR}/replay_token.sh $<TARGET_FILE:tlbsim> ${mode})
  set_tests_properties(check_cli_replay_${mode} PROPERTIES
    PASS_REGULAR_EXPRESSION "replay_token: PASS"
    FAIL_REGULAR_EXPRESSION "replay_token: FAIL"
    LABELS "check;cli" TIMEOUT 60)
endforeach()
add_test(NAME check_cli_replay_overrides
         COMMAND bash ${TLBSIM_CHECK_DIR}/replay_overrides.sh $<TARGET_FILE:tlbsim>
                 ${CMAKE_SOURCE_DIR}/scenarios)
set_tests_properties(check_cli_replay_overrides PROPERTIES
  PASS_REGULAR_EXPRESSION "replay_overrides: PASS"
  FAIL_REGULAR_EXPRESSION "replay_overrides: FAIL"
  LABELS "check;cli" TIMEOUT 120)
foreach(mode ok error files long_name)
  add_test(NAME check_cli_trace_${mode}
           COMMAND bash ${TLBSIM_CHECK_DIR}/trace_file.sh $<TARGET_FILE:tlbsim> ${mode})
  set_tests_properties(check_cli_trace_${mode} PROPERTIES
    PASS_REGULAR_EXPRESSION "trace_file: PASS"
    FAIL_REGULAR_EXPRESSION "trace_file: FAIL"
    LABELS "check;cli" TIMEOUT 60)
endforeach()

# ---- input errors: exit 2, one line on stderr naming the problem ----
tlbsim_check_err(err_trace_nonexistent_dir STDERR "--trace /nonexistent/dir/x.json"
  ARGS mmap5 --profile falkor-46 --policy nested=prefix --runs 20000
       --trace /nonexistent/dir/x.json)
tlbsim_check_err(err_replay_garbage STDERR "--replay garbage" "replay token"
  ARGS mmap5 --profile falkor-46 --replay garbage)
tlbsim_check_err(err_replay_truncated STDERR "--replay t1\\.2298"
  ARGS mmap5 --profile falkor-46 --replay t1.2298)
# 60 characters with a valid checksum that spell 4 x 10^8 decisions: refused
# before any memory is taken (they took 1.5 GB and 10 s)
tlbsim_check_err(err_replay_huge STDERR "token holds more than 3204096 decisions"
  ARGS mmap5 --profile falkor-46 --max-memory 64M
       --replay t2.01dab911.-30-1-5f5e100--5f5e100--5f5e100--5f5e100-.f106f1f4)
tlbsim_check_err(err_runs_zero STDERR "--runs 0" ARGS mmap5 --runs 0)
tlbsim_check_err(err_runs_abc STDERR "--runs abc" ARGS mmap5 --runs abc)
tlbsim_check_err(err_runs_negative STDERR "--runs -1" ARGS mmap5 --runs -1)
tlbsim_check_err(err_time_limit_zero STDERR "--time-limit 0" ARGS mmap5 --time-limit 0)
tlbsim_check_err(err_strategy STDERR "--strategy nosuch" "random, pct or dfs"
  ARGS mmap5 --strategy nosuch)
tlbsim_check_err(err_depth_zero STDERR "--depth 0" ARGS mmap5 --depth 0)
tlbsim_check_err(err_depth_17 STDERR "--depth 17" ARGS mmap5 --depth 17)
tlbsim_check_err(err_invariant STDERR "--invariant nosuch" "livelock"
  ARGS mmap5 --invariant nosuch)
tlbsim_check_err(err_unknown_workload STDERR "unknown workload 'nosuch'" ARGS nosuch)
tlbsim_check_err(err_missing_workload STDERR "missing WORKLOAD" ARGS)
tlbsim_check_err(err_unknown_option STDERR "--bogus" ARGS mmap5 --bogus)
tlbsim_check_err(err_unknown_profile STDERR "unknown profile 'nosuch'"
  ARGS mmap5 --profile nosuch)
tlbsim_check_err(err_policy_value STDERR "unknown value 'bar'" ARGS mmap5 --policy nested=bar)
tlbsim_check_err(err_w_advice STDERR "advice=maybe"
  ARGS madv_race -w advice=maybe --runs 10)

# A long option given without its value: the one stderr line names the option.
tlbsim_check_err(err_runs_missing_value STDERR "--runs" ARGS mmap5 --runs)

# Timelines of the historical counterexamples nest and carry the right arrows.
add_test(NAME check_cli_trace_scenarios
         COMMAND bash ${TLBSIM_CHECK_DIR}/trace_scenarios.sh $<TARGET_FILE:tlbsim>)
set_tests_properties(check_cli_trace_scenarios PROPERTIES
  PASS_REGULAR_EXPRESSION "trace_scenarios: PASS" FAIL_REGULAR_EXPRESSION "trace_scenarios: FAIL"
  LABELS "check;cli" TIMEOUT 120)

# ---- seed 001: every spurious_flush value is clean on the retry, writeback
# and spurious-fault races (I1-I3, and I6 for the remote stale read-only
# entry), on arm64 and x86 ----
foreach(knob broadcast skip_tried skip_af_update noop local)
  tlbsim_check_out(s001_retry_munmap_${knob} 0
    HAS "no violation: 400 schedules" LACKS "VIOLATION"
    ARGS retry_race --policy spurious_flush=${knob} --runs 400)
  tlbsim_check_out(s001_retry_dontneed_${knob} 0
    HAS "no violation: 400 schedules" LACKS "VIOLATION"
    ARGS retry_race -w zap=dontneed --policy spurious_flush=${knob} --runs 400)
  tlbsim_check_out(s001_writeback_${knob} 0
    HAS "no violation: 400 schedules" LACKS "VIOLATION"
    ARGS writeback_race --policy spurious_flush=${knob} --runs 400)
  tlbsim_check_out(s001_spurious_${knob} 0
    HAS "no violation: 400 schedules" LACKS "VIOLATION"
    ARGS spurious_race --policy spurious_flush=${knob} --runs 400)
endforeach()
tlbsim_check_out(s001_retry_x86 0
  HAS "no violation: 400 schedules" LACKS "VIOLATION"
  ARGS retry_race --profile x86-24 --runs 400)
tlbsim_check_out(s001_writeback_x86 0
  HAS "no violation: 400 schedules" LACKS "VIOLATION"
  ARGS writeback_race --profile x86-24 --runs 400)
# the seed-000 livelock composition (stale walk entry + the spurious path's
# leaf-only flush) is still found with the pre-fix nested policy
tlbsim_check_out(s001_seed000_livelock_composition 1
  HAS "VIOLATION livelock" "token: t2."
  ARGS mmap5 --profile arm64-4k --policy nested=prefix,fault_retry=dirty_throttle
       --invariant livelock --strategy pct --runs 20000 --time-limit 20)

# ---- seed 003: I5 on vmalloc_reuse. The withdrawn draft (one shadow flush
# after the areas went back to the pools) is found with a replayable,
# minimised counterexample; the v6.10 per-area flush and the merged per-node
# flush are clean under random, PCT and bounded DFS ----
tlbsim_check_out(s003_reuse_per_node_late 1
  HAS "VIOLATION I5" "mapped again" "token: t2." "replay: tlbsim check vmalloc_reuse"
  ARGS vmalloc_reuse --policy kasan_flush=per_node_late --runs 20000 --time-limit 30)
tlbsim_check_out(s003_reuse_per_node_late_pct 1
  HAS "VIOLATION I5"
  ARGS vmalloc_reuse --policy kasan_flush=per_node_late --strategy pct --runs 20000
       --time-limit 30)
foreach(knob per_area per_node)
  tlbsim_check_out(s003_reuse_${knob}_random 0
    HAS "no violation: 100 schedules" LACKS "VIOLATION"
    ARGS vmalloc_reuse --policy kasan_flush=${knob} --runs 100 --time-limit 60)
  tlbsim_check_out(s003_reuse_${knob}_pct 0
    HAS "no violation: 60 schedules" LACKS "VIOLATION"
    ARGS vmalloc_reuse --policy kasan_flush=${knob} --strategy pct --runs 60 --time-limit 60)
  tlbsim_check_out(s003_reuse_${knob}_dfs 0
    HAS "no violation: 100 schedules" LACKS "VIOLATION"
    ARGS vmalloc_reuse --policy kasan_flush=${knob} --strategy dfs --runs 100 --time-limit 60)
endforeach()
# Counterexamples at the edges of the budgets: a long schedule keeps its
# token; one too long for a command-line argument is reported without one;
# minimisation stops at --time-limit.
foreach(mode long_token no_token time_limit long_schedule long_schedule_signal)
  add_test(NAME check_cli_budget_${mode}
           COMMAND bash ${TLBSIM_CHECK_DIR}/check_budget.sh $<TARGET_FILE:tlbsim> ${mode})
  set_tests_properties(check_cli_budget_${mode} PROPERTIES
    PASS_REGULAR_EXPRESSION "check_budget: PASS"
    FAIL_REGULAR_EXPRESSION "check_budget: FAIL"
    LABELS "check;cli" TIMEOUT 60)
endforeach()

# The replay command repeats a -w given twice once, with its last value.
tlbsim_check_out(w_repeated_replay 1 HAS "-w loops=4 --replay t2." LACKS "loops=3"
  ARGS mmap5 --profile falkor-46 --policy nested=prefix -w loops=3 -w loops=4 --runs 20000
       --time-limit 20)
tlbsim_check_out(dashdash_workload 0 HAS "no violation: 2 schedules" ARGS --runs 2 -- mmap5)

# ---- arm64_local (the 2020 proposal, 20200223192520.20808-4-aarcange@redhat.com) ----
# a single-threaded process migrates while it unmaps: with the test of the
# CPUs and the local TLBI under preempt_disable nothing is found in the whole
# (bounded) search space; with the test preemptible the TLBI can run on the
# new CPU and the old one keeps the freed translations.
foreach(knob off single_cpu_mm)
  tlbsim_check_out(local_migrate_${knob} 0
    HAS "no violation: " "(search space exhausted within the bound)"
    ARGS local_migrate --policy arm64_local=${knob} --strategy dfs --runs 20000 --time-limit 20)
endforeach()
tlbsim_check_out(local_migrate_preemptible 1
  HAS "VIOLATION I" "sched_migrate_task: orig_cpu=1 dest_cpu=2" "in its local form"
  ARGS local_migrate --policy arm64_local=single_cpu_mm_preemptible --strategy dfs --runs 20000
       --time-limit 20)
tlbsim_check_out(local_migrate_pages4_single_cpu_mm 0
  HAS "no violation: "
  ARGS local_migrate -w pages=4 --policy arm64_local=single_cpu_mm --runs 3000)

# ---- clear_refs (issue 13 item 5) ----
# v5.10: the soft-dirty clear's fullmm gather flushes nothing since
# 0758cd830494, a writable entry survives the return (I2), found on the
# first schedule; v5.13 (912efa17e512, flush_tlb_mm) and v5.1 (the gather
# still flushed): nothing within the budget
tlbsim_check_out(clear_refs_v510 1
  HAS "VIOLATION I2" "clear_refs of" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/clear_refs_race.tlbs --kernel 5.10 --runs 20000
       --time-limit 20)
tlbsim_check_out(clear_refs_v513 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/clear_refs_race.tlbs --kernel 5.13 --runs 3000)
tlbsim_check_out(clear_refs_v51 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/clear_refs_race.tlbs --kernel 5.1 --runs 3000)

# ---- mremap (issue 13 item 7) ----
# the pre-v4.9 flush after the PTE locks (mremap_flush=after_ptl): writeback
# cleans the moved dirty PTE while the writer's CPU keeps the old entry (I3);
# v4.9..v4.18 (--kernel 4.14, mremap_flush=dirty): a truncate frees the moved
# clean page before the end-of-move flush (I1, CVE-2018-18281); v5.1..v5.13
# (--kernel 5.10, mremap_pmd=need_rmap, arm64): move_normal_pmd without the
# rmap lock lets the truncate zap and free through the moved table (I1).
# Today's kernel (6.18: under_ptl, rmap_locks) is clean on all three.
tlbsim_check_out(mremap_writeback_after_ptl 1
  HAS "VIOLATION I3" "moved by mremap" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/mremap_writeback_race.tlbs --policy mremap_flush=after_ptl
       --runs 100000 --time-limit 60)
tlbsim_check_out(mremap_truncate_v414 1
  HAS "VIOLATION I1" "data frame" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/mremap_truncate_race.tlbs --kernel 4.14 --runs 100000
       --time-limit 60)
# the dirty move (mremap_truncate_dirty_race): v4.9..v4.18 flushed it with
# only the source PTE lock held - the truncate zaps through the destination
# before that flush (I1); the old model held both and was clean
tlbsim_check_out(mremap_truncate_dirty_v414 1
  HAS "VIOLATION I1" "data frame" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/mremap_truncate_dirty_race.tlbs --kernel 4.14 --runs 100000
       --time-limit 60)
tlbsim_check_out(mremap_truncate_dirty_v420 0
  HAS "no violation: 20000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/mremap_truncate_dirty_race.tlbs --kernel 4.20 --runs 20000)
tlbsim_check_out(mremap_pmd_v510 1
  HAS "VIOLATION I1" "data frame" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/mremap_pmd_race.tlbs --kernel 5.10 --runs 100000
       --time-limit 60)
tlbsim_check_out(mremap_writeback_v618 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/mremap_writeback_race.tlbs --kernel 6.18 --runs 3000)
tlbsim_check_out(mremap_truncate_v618 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/mremap_truncate_race.tlbs --kernel 6.18 --runs 3000)
tlbsim_check_out(mremap_pmd_v60 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/mremap_pmd_race.tlbs --kernel 6.0 --runs 3000)

# ---- zap vs writeback: the rmap removed before the zap's flush (issue 13 item 10) ----
# v6.0: page_mkclean finds the zapped page unmapped and returns; writeback
# cleans it while the writer's stale dirty entry still writes (I3); v6.6
# (5df397dec7c4, delayed rmap): nothing within the budget
tlbsim_check_out(zap_rmap_v60 1
  HAS "VIOLATION I3" "PTE was zapped" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/zap_writeback_race.tlbs --kernel 6.0 --runs 20000
       --time-limit 20)
tlbsim_check_out(zap_rmap_v66 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/zap_writeback_race.tlbs --kernel 6.6 --runs 3000)

# ---- reclaim with batched unmap flushes (src/mm/rmap.c): each historical
# ordering of scenarios/reclaim_*.tlbs is found within 60 s, minimised and
# replayed; the current ordering of the same scenario is clean ----
foreach(c mprotect munmap dontneed flag arm64_dsb lazyfree)
  add_test(NAME check_cli_reclaim_${c}
           COMMAND bash ${TLBSIM_CHECK_DIR}/reclaim_check.sh $<TARGET_FILE:tlbsim>
                   ${TLBSIM_CHECK_DIR}/../../scenarios ${c})
  set_tests_properties(check_cli_reclaim_${c} PROPERTIES
    PASS_REGULAR_EXPRESSION "reclaim_check: PASS" FAIL_REGULAR_EXPRESSION "reclaim_check: FAIL"
    LABELS "check;cli" TIMEOUT 180)
endforeach()

# ---- KSM (issue 13 item 4) ----
# ksm_wp=pte (before b3a81d0841a9, v4.13): write_protect_page skips its
# flush for the PTE that MADV_FREE cleaned and clear_refs write-protected,
# both flushes still pending; the writer's store after pages_identical goes
# through the stale entry (I3), found in 71 schedules (0.03 s). v5.1
# through the stale entry (I3), found in 206 schedules (0.06 s). v5.1
# (pending, b3a81d0841a9) and v6.18 (exclusive, 6c287605fd56): nothing.
tlbsim_check_out(ksm_wp_pte 1
  HAS "VIOLATION I3" "pages_identical" "write_protect_page: read-only and clean, no flush"
      "replay: tlbsim check" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/ksm_race.tlbs --policy ksm_wp=pte --runs 100000
       --time-limit 20)
tlbsim_check_out(ksm_v51 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/ksm_race.tlbs --kernel 5.1 --runs 3000)
tlbsim_check_out(ksm_v618 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/ksm_race.tlbs --kernel 6.18 --runs 3000)

# ---- device migration (issue 13 item 9; src/mm/migrate_device.c) ----
# (the clean runs have --time-limit 50: under ASan on a loaded machine the
# default 10 s can end them before their schedule count)
# migrate_flush=after_unlock (v4.14 .. v5.19, before 60bae7370896): a
# MADV_DONTNEED between migrate_vma_collect_pmd's unlock and its flush
# returns while the reader's CPU still translates the page (I2), found in
# 4 schedules; under_ptl (v6.0): clean.
tlbsim_check_out(migrate_after_unlock 1
  HAS "VIOLATION I2" "madvise(MADV_DONTNEED) of"
      "migrate_vma_collect_pmd: pte_unmap_unlock" "replay: tlbsim check" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/migrate_race.tlbs --policy migrate_flush=after_unlock
       --runs 20000 --time-limit 20)
tlbsim_check_out(migrate_v513 1
  HAS "VIOLATION I2" "madvise(MADV_DONTNEED)"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/migrate_race.tlbs --kernel 5.13 --runs 20000 --time-limit 20)
tlbsim_check_out(migrate_under_ptl 0
  HAS "no violation: 2000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/migrate_race.tlbs --kernel 6.0 --runs 2000 --time-limit 50)
tlbsim_check_out(migrate_under_ptl_arm64 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/migrate_race.tlbs --profile arm64-4k --runs 3000
       --time-limit 50)
# migrate_dirty=drop (before fd35ca3d12cc, v6.0): the lazyfree page written
# after MADV_FREE is copied as clean (I3 at the copy), first schedule.
tlbsim_check_out(migrate_dirty_drop 1
  HAS "VIOLATION I3" "was not carried to the page" "driver copy" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/migrate_dirty.tlbs --policy migrate_dirty=drop --runs 100)
tlbsim_check_out(migrate_dirty_copy 0
  HAS "no violation: 100 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/migrate_dirty.tlbs --kernel 6.0 --runs 100)

# ---- VM_PFNMAP mappings revoked by their driver (issue 13 item 11;
# src/mm/pfnmap.c) ----
# pfnmap_flush=none (x86 before b67fbebd4cf9, v5.19): munmap unlinks the
# VMA before its flush, the driver's unmap_mapping_range finds nothing and
# the frames are freed while cached (I1), 164 schedules; end_vma: clean;
# arm64 flushes at every tlb_end_vma: clean either way.
tlbsim_check_out(pfnmap_none 1
  HAS "VIOLATION I1" "data frame" "driver_unmap" "replay: tlbsim check" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/pfnmap_race.tlbs --policy pfnmap_flush=none
       --runs 20000 --time-limit 20)
tlbsim_check_out(pfnmap_end_vma 0
  HAS "no violation: 2000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/pfnmap_race.tlbs --kernel 6.0 --runs 2000 --time-limit 50)
tlbsim_check_out(pfnmap_none_arm64 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/pfnmap_race.tlbs --profile arm64-4k
       --policy pfnmap_flush=none --runs 3000 --time-limit 50)
# the stable trees' rewrite (unmap_region flushes before free_pgtables):
# stable_first looks at the region's first VMA only, so with an anonymous
# VMA first in the munmap (-w lead=1) the PFN VMA is unlinked unflushed
# (I1, 164 schedules); "mm: Fix TLB flush for not-first PFNMAP mappings in
# unmap_region()" (stable_any) is clean.
tlbsim_check_out(pfnmap_stable_first 1
  HAS "VIOLATION I1" "data frame" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/pfnmap_race.tlbs --policy pfnmap_flush=stable_first
       -w lead=1 --runs 20000 --time-limit 20)
tlbsim_check_out(pfnmap_stable_any 0
  HAS "no violation: 2000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/pfnmap_race.tlbs --policy pfnmap_flush=stable_any
       -w lead=1 --runs 2000 --time-limit 50)
# VM_MIXEDMAP is treated as VM_PFNMAP by every value (-w mixed=1)
tlbsim_check_out(pfnmap_mixed_none 1
  HAS "VIOLATION I1" "data frame"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/pfnmap_race.tlbs --policy pfnmap_flush=none -w mixed=1
       --runs 20000 --time-limit 20)
tlbsim_check_out(pfnmap_mixed_end_vma 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/pfnmap_race.tlbs -w mixed=1 --runs 3000 --time-limit 50)

# ---- the minimiser (src/check/search.c minimise_schedule) ----
# The reported schedule is locally minimal: no single preemption, and no pair
# of a preemption and one of the next four, can be replaced by "continue" with
# the same invariant still firing on fewer preemptions (minimal_schedule.py
# replays each such variant through --replay). Before the pair pass the
# zap_writeback schedule minimised to 12 preemptions, of which decisions 3 and
# 4 could go together.
function(tlbsim_check_minimal name)
  add_test(NAME check_minimal_${name}
           COMMAND python3 ${TLBSIM_CHECK_DIR}/minimal_schedule.py $<TARGET_FILE:tlbsim> ${ARGN})
  set_tests_properties(check_minimal_${name} PROPERTIES
    PASS_REGULAR_EXPRESSION "minimal_schedule: PASS"
    FAIL_REGULAR_EXPRESSION "minimal_schedule: FAIL"
    LABELS "check" TIMEOUT 120)
endfunction()
tlbsim_check_minimal(zap_writeback ${CMAKE_SOURCE_DIR}/scenarios/zap_writeback_race.tlbs
  --kernel 6.0 --runs 20000)
tlbsim_check_minimal(mremap_writeback ${CMAKE_SOURCE_DIR}/scenarios/mremap_writeback_race.tlbs
  --policy mremap_flush=after_ptl)
# ---- NUMA-hinting PROT_NONE and migration (issue 13 item 1) ----
# scenarios/numa_race.tlbs: the scan makes the page PROT_NONE, a hinting
# fault migrates it before the scan's flush. Without tlb_flush_pending
# raised by change_protection (numa_pending=none) or without pte_accessible's
# pending test (pte_accessible=present) - both 20841405940e, v3.13 -
# migration's unmap does not flush and the writer's store after the copy
# is lost (I3). Every preset from 5.10 on: clean.
tlbsim_check_out(numa_pending_none 1
  HAS "VIOLATION I3" "migrate_page_copy" "not pte_accessible, no flush"
      "replay: tlbsim check" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/numa_race.tlbs --policy numa_pending=none
       --invariant I3 --runs 100000 --time-limit 20)
tlbsim_check_out(numa_pte_accessible_present 1
  HAS "VIOLATION I3" "migrate_page_copy" "not pte_accessible, no flush"
      "replay: tlbsim check" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/numa_race.tlbs --policy pte_accessible=present
       --invariant I3 --runs 100000 --time-limit 20)
tlbsim_check_out(numa_v510 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/numa_race.tlbs --kernel 5.10 --runs 3000)
tlbsim_check_out(numa_v618 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/numa_race.tlbs --kernel 6.18 --runs 3000)

# ---- userfaultfd write-protect (issue 13 item 6) ----
# scenarios/uffd_wp_race.tlbs: UFFDIO_WRITEPROTECT(mode 0) demotes the PTE
# and defers its flush; a COW fault copies the pinned page while another
# CPU still writes through its writable entry (I3). uffd_wp_flush=none is
# every preset before v5.12 (6ce64428d621): --kernel 5.10 finds it;
# 5.13 and 6.18 (do_wp_page flushes first) are clean.
tlbsim_check_out(uffd_wp_flush_none 1
  HAS "VIOLATION I3" "wp_page_copy: copy" "after a COW fault (wp_page_copy) copied the page"
      "replay: tlbsim check" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/uffd_wp_race.tlbs --policy uffd_wp_flush=none
       --runs 100000 --time-limit 20)
tlbsim_check_out(uffd_v510 1
  HAS "VIOLATION I3" "wp_page_copy"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/uffd_wp_race.tlbs --kernel 5.10 --runs 100000
       --time-limit 20)
tlbsim_check_out(uffd_v513 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/uffd_wp_race.tlbs --kernel 5.13 --runs 3000)
tlbsim_check_out(uffd_v618 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/uffd_wp_race.tlbs --kernel 6.18 --runs 3000)
# ---- page-table freeing paths (issue 14 item 5) ----
# table_free_users=shortcut with arm64_pgtable_flush=gather (the arm64 kernels
# between 5e5f6dc10546 and 285994a62c80): the sole user's munmap frees a
# table CPU 1 still caches, before the gather's flush (I1, first schedule).
# v4.14 (shortcut + the free hook's TLBI) and v5.1/v6.18 (batched): clean.
tlbsim_check_out(table_free_users_shortcut 1
  HAS "VIOLATION I1" "tlbsim_table_free_one: table frame" "(mm_users < 2)"
      "replay: tlbsim check" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/table_free_users.tlbs
       --policy table_free_users=shortcut,arm64_pgtable_flush=gather --runs 1000)
foreach(k 4.14 5.1 6.18)
  tlbsim_check_out(table_free_users_v${k} 0
    HAS "no violation: 3000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/table_free_users.tlbs --kernel ${k} --runs 3000)
endforeach()
# table_free_one=sync (before d86564a2f085, v4.19): after fail_table_batch the
# one-off free follows only the IPI sync (I1); no arm64 release had it: 4.14
# (the free hook's TLBI), 5.1 (tlb_table_invalidate first, as arm64 selected
# HAVE_RCU_TABLE_INVALIDATE from v4.20), 5.8 and 6.18 are clean.
tlbsim_check_out(table_batch_fail_sync 1
  HAS "VIOLATION I1" "no batch page: tlb_remove_table_one" "replay: tlbsim check"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/table_batch_fail.tlbs --policy table_free_one=sync
       --runs 1000)
foreach(k 4.14 5.1 5.8 6.18)
  tlbsim_check_out(table_batch_fail_v${k} 0
    HAS "no violation: 3000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/table_batch_fail.tlbs --kernel ${k} --runs 3000)
endforeach()
# the same failure injected for every allocation by -D table_batch_fail=1
tlbsim_check_out(table_batch_fail_param 1
  HAS "VIOLATION I1" "no batch page: tlb_remove_table_one"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/table_free_users.tlbs --policy table_free_one=sync
       -D table_batch_fail=1 --runs 1000)

# ---- hugetlb PMD sharing (issue 14 item 6) ----
# hugetlb_unshare_flush=after_unlock (before a4a118f2eead, v5.16): the
# unsharing munmap records nothing in its gather for the unshared PUD, so
# nothing flushes it: the munmap returns with CPU 1 still translating
# through the shared table (I2, first schedule), and the other process's
# munmap frees the page CPU 1 still caches (I1 with --invariant I1: the
# data frame first). --kernel 5.13: the same; 6.0 and 6.18 (before_unlock):
# clean. arm64-4k likewise (its tlb_end_vma had nothing to flush either):
# I1 on the shared page table.
tlbsim_check_out(hugetlb_after_unlock 1
  HAS "VIOLATION I1" "data frame 4 freed while cpu 1" "huge_pmd_unshare" "huge_pmd_share"
      "replay: tlbsim check" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/hugetlb_share.tlbs --policy hugetlb_unshare_flush=after_unlock
       --invariant I1 --runs 20000 --time-limit 20)
tlbsim_check_out(hugetlb_after_unlock_i2 1
  HAS "VIOLATION I2" "returned while cpu 1 still translates 0x4000000000"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/hugetlb_share.tlbs --policy hugetlb_unshare_flush=after_unlock
       --runs 20000 --time-limit 20)
tlbsim_check_out(hugetlb_v513 1
  HAS "VIOLATION I1" "data frame 4 freed while cpu 1"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/hugetlb_share.tlbs --kernel 5.13 --invariant I1 --runs 20000
       --time-limit 20)
foreach(k 6.0 6.18)
  tlbsim_check_out(hugetlb_v${k} 0
    HAS "no violation: 3000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/hugetlb_share.tlbs --kernel ${k} --runs 3000)
endforeach()
# arm64 before v5.16: nothing recorded for tlb_end_vma to flush either (I1);
# before_unlock: clean on arm64-4k (512 PMD strides: one ASIDE1IS)
tlbsim_check_out(hugetlb_arm64 1
  HAS "VIOLATION I1" "shared (hugetlb) page-table frame"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/hugetlb_share.tlbs --profile arm64-4k
       --policy hugetlb_unshare_flush=after_unlock --runs 3000)
tlbsim_check_out(hugetlb_arm64_before 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/hugetlb_share.tlbs --profile arm64-4k
       --policy hugetlb_unshare_flush=before_unlock --runs 3000)

# ---- FEAT_TTL level hints (issue 14 item 5) ----
# arm64_ttl=level (c4ab2cbc1d87, v5.9..v5.13) on a FEAT_TTL part
# (arm64-v84): a freed PTE table's VAE1IS hints level 2 and CPU 1's walk
# entry survives (I1 at the RCU hand-off, first schedule); leaf_only
# (52218fcd61cb, v5.14; --kernel 6.0) and a part ignoring the hint: clean.
tlbsim_check_out(ttl_level 1
  HAS "VIOLATION I1" "TTL hint: leaf at depth 2" "replay: tlbsim check"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/ttl_table_free.tlbs --policy arm64_ttl=level --runs 1000)
tlbsim_check_out(ttl_v513 1
  HAS "VIOLATION I1" "TTL hint"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/ttl_table_free.tlbs --kernel 5.13 --runs 1000)
foreach(k 5.8 6.0 6.18)
  tlbsim_check_out(ttl_v${k} 0
    HAS "no violation: 2000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/ttl_table_free.tlbs --kernel ${k} --runs 2000)
endforeach()
tlbsim_check_out(ttl_ignored 0
  HAS "no violation: 2000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/ttl_table_free.tlbs --policy arm64_ttl=level
       -D ttl_ignored=1 --runs 2000)

# ---- the x86 INVLPG Global-entry erratum (issue 14 item 7) ----
# x86_invlpg_miss=ignore (PCIDs on an affected part; every kernel before
# v6.4, --kernel 6.0) on adl-16: the purge's INVLPG leaves CPU 1's Global
# vmalloc entry and the VA is mapped again (I5, first schedule). nopcid
# (ce0b15d11ad8, v6.4; --kernel 6.6) and a part without the erratum
# (x86-24, or -D invlpg_global_miss=0): clean.
tlbsim_check_out(invlpg_ignore 1
  HAS "VIOLATION I5" "did not remove this CPU's entry" "(INVLPG)" "replay: tlbsim check"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/invlpg_global.tlbs --policy x86_invlpg_miss=ignore
       --runs 1000)
tlbsim_check_out(invlpg_v6.0 1
  HAS "VIOLATION I5"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/invlpg_global.tlbs --kernel 6.0 --runs 1000)
foreach(k 6.6 6.18)
  tlbsim_check_out(invlpg_v${k} 0
    HAS "no violation: 2000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/invlpg_global.tlbs --kernel ${k} --runs 2000)
endforeach()
tlbsim_check_out(invlpg_unaffected 0
  HAS "no violation: 2000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/invlpg_global.tlbs --profile x86-24
       --policy x86_invlpg_miss=ignore --runs 2000)
tlbsim_check_out(invlpg_no_erratum 0
  HAS "no violation: 2000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/invlpg_global.tlbs --policy x86_invlpg_miss=ignore
       -D invlpg_global_miss=0 --runs 2000)

# ---- x86 flush_tlb_range's freed_tables (issue 14 item 5) ----
# x86_range_freed=false (016c4d92cd16 .. v6.13; --kernel 6.11): the hugetlb
# mprotect that unshares a PMD table flushes with flush_tlb_range, which
# skips the lazy CPU still caching it; the other process frees it (I1 on a
# shared page table, first schedule). true (3ef938c35035; --kernel 6.18):
# clean.
tlbsim_check_out(range_freed_false 1
  HAS "VIOLATION I1" "shared (hugetlb) page-table frame" "huge_pmd_unshare" "replay: tlbsim check"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/hugetlb_mprotect.tlbs --policy x86_range_freed=false
       --runs 1000)
tlbsim_check_out(range_freed_v611 1
  HAS "VIOLATION I1"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/hugetlb_mprotect.tlbs --kernel 6.11 --runs 1000)
tlbsim_check_out(range_freed_v618 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/hugetlb_mprotect.tlbs --kernel 6.18 --runs 3000)
# ---- --memory-model tso (issue 14 item 2) ----
# SB litmus test: r1 = r2 = 0 is found under x86-TSO (both loads pass their
# CPU's buffered store), the bounded dfs exhausts without it with the
# MFENCEs, and under SC.
tlbsim_check_out(litmus_sb_tso 1
  HAS "VIOLATION litmus" "SB: r1 = 0 and r2 = 0" "tlbsim_tso_store: cpu 0 buffers its store to x"
      "--memory-model tso --replay t2."
  ARGS litmus_sb --memory-model tso --runs 20000)
tlbsim_check_out(litmus_sb_mfence 0
  HAS "search space exhausted"
  ARGS litmus_sb --memory-model tso -w fence=mfence --strategy dfs --depth 3)
tlbsim_check_out(litmus_sb_sc 0
  HAS "search space exhausted"
  ARGS litmus_sb --memory-model sc --strategy dfs --depth 3)
# switch_mm_irqs_off vs flush_tlb_mm_range (scenarios/switch_mm_tso.tlbs,
# --kernel 6.18 with the file's memory_model tso): clean; without the
# smp_mb() of 83b0177a6c48 the flusher reads the CPU's old loaded_mm while
# the CPU reads the old tlb_gen -> I4a with its I1-realized symptom (362
# schedules, 0.01 s, seed 1); without fea4e317f9e7 the LOADED_MM_SWITCHING
# window itself -> I1 (no reordering needed; 2 schedules). Under SC switch_mm is one step:
# nothing.
tlbsim_check_out(switch_mm_tso_v618 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/switch_mm_tso.tlbs --runs 3000)
tlbsim_check_out(switch_mm_tso_atomic 1
  HAS "VIOLATION I4a" "symptom I1" "tlbsim_tso_reorder: should_flush_tlb leaves out cpu 0"
      "switch_mm_irqs_off: cpu 0 writes CR3 (no flush)" "--memory-model tso --replay t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/switch_mm_tso.tlbs --policy x86_switch_mb=atomic
       --runs 100000 --time-limit 30)
tlbsim_check_out(switch_mm_tso_switching_skip 1
  HAS "VIOLATION I1:" LACKS "I4a"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/switch_mm_tso.tlbs --policy x86_switching=skip
       --runs 100000 --time-limit 30)
tlbsim_check_out(switch_mm_tso_sc 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/switch_mm_tso.tlbs --memory-model sc
       --policy x86_switch_mb=atomic,x86_switching=skip --runs 3000)
tlbsim_check_err(memory_model_bad
  STDERR "^tlbsim: --memory-model weak: want sc or tso$"
  ARGS litmus_sb --memory-model weak)
# ---- completion windows (-D async_completion, docs/checker.md) ----
# reclaim's arm64 TLBI without a DSB and flush_tlb_batched_pending as a DSB
# on the munmap / MADV_DONTNEED CPU (arm64_batch=dsb): I2 when the TLBI
# completes at an explored point (the default), invisible when it completes
# at issue; flush_tlb_mm (4b634918384c) is clean either way.
foreach(race 1 2)
  tlbsim_check_out(async_arm64_dsb_race${race} 1
    HAS "VIOLATION I2" "token: t2."
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/reclaim_race_arm64.tlbs --policy arm64_batch=dsb
         -w race=${race} -D async_completion=1 --runs 20000 --time-limit 20)
  tlbsim_check_out(async_arm64_dsb_immediate_race${race} 0
    HAS "no violation: 3000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/reclaim_race_arm64.tlbs --policy arm64_batch=dsb
         -w race=${race} -D async_completion=0 --runs 3000)
endforeach()
tlbsim_check_out(async_arm64_flush_mm 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/reclaim_race_arm64.tlbs --policy arm64_batch=flush_mm
       -D async_completion=1 --runs 3000)
# a token recorded with one completion model does not replay under the other
add_test(NAME check_cli_async_token_hash
         COMMAND bash -c "tok=$($<TARGET_FILE:tlbsim> check ${CMAKE_SOURCE_DIR}/scenarios/reclaim_race_arm64.tlbs --policy arm64_batch=dsb --runs 20000 | sed -n 's/^token: //p'); [ -n \"$tok\" ] || { echo 'async_token: FAIL: no token'; exit 1; }; $<TARGET_FILE:tlbsim> check ${CMAKE_SOURCE_DIR}/scenarios/reclaim_race_arm64.tlbs --policy arm64_batch=dsb -D async_completion=0 --replay $tok >/dev/null 2>&1; rc=$?; [ $rc = 2 ] && echo 'async_token: PASS' || echo \"async_token: FAIL: exit $rc\"")
set_tests_properties(check_cli_async_token_hash PROPERTIES
  PASS_REGULAR_EXPRESSION "async_token: PASS" FAIL_REGULAR_EXPRESSION "async_token: FAIL"
  LABELS "check;cli" TIMEOUT 60)
# the completion entities are candidates of every strategy: pct and dfs find
# the same race (dfs with one preemption: completing late is "no preemption"
# for the munmap thread)
tlbsim_check_out(async_arm64_dsb_pct 1
  HAS "VIOLATION I2"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/reclaim_race_arm64.tlbs --policy arm64_batch=dsb
       --strategy pct --runs 20000 --time-limit 20)
tlbsim_check_out(async_arm64_dsb_dfs 1
  HAS "VIOLATION I2"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/reclaim_race_arm64.tlbs --policy arm64_batch=dsb
       --strategy dfs --depth 1 --runs 20000 --time-limit 20)

# ---- THP collapse and GUP-fast (issue 14 items 3 and 4) ----
# thp_collapse_range=end (27e1f8273113, v5.4..v5.8):
# collapse_pte_mapped_thp flushes the next 2 MiB and frees the PTE table
# its CPU still caches (I1, first schedule) on arm64-v84, whose range TLBIs
# flush exactly the range given; haddr (723a80dafed5, v5.9): clean. No
# arm64 release had it: range TLBIs came in v5.9 too (d1d3aa98b1d4), so
# --kernel 5.8 flushes the 512 pages with one ASIDE1IS: clean. On
# arm64 without FEAT_TLBIRANGE and on x86 at the default ceiling a 2 MiB
# range is a full flush: clean with both; x86 with the ceiling raised to
# 512 pages flushes page by page: with end the INVLPGs still drop the
# paging-structure caches of the PCID (no I1), but the leaf entry of the
# second page survives, and the munmap after it, whose flush covers only
# what it cleared, returns with it (I2).
tlbsim_check_out(thp_range_end 1
  HAS "VIOLATION I1" "RVAE1IS over" "0x40200000, 0x40400000" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_range.tlbs --policy thp_collapse_range=end
       --runs 1000)
tlbsim_check_out(thp_range_v5.8 0
  HAS "no violation: 1000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_range.tlbs --kernel 5.8 --runs 1000)
foreach(k 5.9 6.0 6.18)
  tlbsim_check_out(thp_range_v${k} 0
    HAS "no violation: 1000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_range.tlbs --kernel ${k} --runs 1000)
endforeach()
tlbsim_check_out(thp_range_arm64_norange 0
  HAS "no violation: 1000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_range.tlbs --profile arm64-4k
       --policy thp_collapse_range=end --runs 1000)
tlbsim_check_out(thp_range_x86_ceiling 0
  HAS "no violation: 1000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_range.tlbs --profile x86-24
       --policy thp_collapse_range=end --runs 1000)
tlbsim_check_out(thp_range_x86_end 1
  HAS "VIOLATION I2" "0x40001000"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_range.tlbs --profile x86-24
       -D flush_ceiling=512 --policy thp_collapse_range=end --runs 1000)
tlbsim_check_out(thp_range_x86_haddr 0
  HAS "no violation: 1000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_range.tlbs --profile x86-24
       -D flush_ceiling=512 --policy thp_collapse_range=haddr --runs 1000)
# thp_pmd: PMD-mapped anonymous THP (huge_memory.c): huge faults, a split
# and whole-block zaps; the block entry goes with the split's pmdp_invalidate
# flush and the zap's PMD-stride gather flush (clean; no knob)
foreach(p x86-24 arm64-4k arm64-v84)
  tlbsim_check_out(thp_pmd_${p} 0
    HAS "no violation: 1000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_pmd.tlbs --profile ${p} --runs 1000)
endforeach()
# thp_gup_sync=none (up to v6.0; --kernel 6.0): on arm64 the collapse frees
# the PTE table under a GUP-fast walk on CPU 1 (I1 of a software walker);
# ipi (2ba99c5e0881, v6.1; --kernel 6.6, 6.18): the walk holds the sync
# off, clean. x86 flushes with an IPI that the walk holds off: clean with
# none too.
tlbsim_check_out(thp_gup_none 1
  HAS "VIOLATION I1" "I1 (software walker)" "GUP-fast" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_gup_fast.tlbs --policy thp_gup_sync=none
       --runs 20000 --time-limit 20)
tlbsim_check_out(thp_gup_v6.0 1
  HAS "VIOLATION I1" "I1 (software walker)"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_gup_fast.tlbs --kernel 6.0 --runs 20000
       --time-limit 20)
foreach(k 6.6 6.18)
  tlbsim_check_out(thp_gup_v${k} 0
    HAS "no violation: 3000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_gup_fast.tlbs --kernel ${k} --runs 3000)
endforeach()
tlbsim_check_out(thp_gup_dfs 1
  HAS "VIOLATION I1"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_gup_fast.tlbs --policy thp_gup_sync=none
       --strategy dfs --depth 1 --runs 20000 --time-limit 20)
tlbsim_check_out(thp_gup_async 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_gup_fast.tlbs -D async_completion=1 --runs 3000)
# collapse_huge_page (anonymous): thp_gup_sync=none (--kernel 6.0) lets a
# GUP-fast walk on CPU 1 read the detached PTE table after the collapse freed
# it (the deposit's pte_free, brought forward: src/mm/khugepaged.c), I1 of a
# software walker on arm64; ipi (2ba99c5e0881, v6.1): clean. x86's IPI flush
# is held off by the walk: clean with none too.
tlbsim_check_out(thp_anon_none 1
  HAS "VIOLATION I1" "I1 (software walker)" "GUP-fast" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_anon.tlbs --policy thp_gup_sync=none
       --runs 20000 --time-limit 20)
tlbsim_check_out(thp_anon_v6.0 1
  HAS "VIOLATION I1" "I1 (software walker)"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_anon.tlbs --kernel 6.0 --runs 20000
       --time-limit 20)
foreach(k 6.6 6.18)
  tlbsim_check_out(thp_anon_v${k} 0
    HAS "no violation: 3000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_anon.tlbs --kernel ${k} --runs 3000)
endforeach()
tlbsim_check_out(thp_anon_dfs 1
  HAS "VIOLATION I1"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_anon.tlbs --policy thp_gup_sync=none
       --strategy dfs --depth 1 --runs 20000 --time-limit 20)
tlbsim_check_out(thp_anon_x86_none 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_collapse_anon.tlbs --profile x86-24
       --policy thp_gup_sync=none --runs 3000)
# retract_page_tables: the parent's collapse of a shared tmpfs range frees
# the child's PTE table of it under the child's GUP-fast walk: I1 (software
# walker) on arm64 with thp_gup_sync=none (--kernel 6.0), clean with ipi
# (2ba99c5e0881, v6.1); x86's IPI flush is held off by the walk.
tlbsim_check_out(thp_retract_none 1
  HAS "VIOLATION I1" "I1 (software walker)" "GUP-fast" "token: t2."
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_retract.tlbs --policy thp_gup_sync=none
       --runs 20000 --time-limit 20)
tlbsim_check_out(thp_retract_v6.0 1
  HAS "VIOLATION I1" "I1 (software walker)"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_retract.tlbs --kernel 6.0 --runs 20000
       --time-limit 20)
foreach(k 6.6 6.18)
  tlbsim_check_out(thp_retract_v${k} 0
    HAS "no violation: 3000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_retract.tlbs --kernel ${k} --runs 3000)
endforeach()
tlbsim_check_out(thp_retract_dfs 1
  HAS "VIOLATION I1"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_retract.tlbs --policy thp_gup_sync=none
       --strategy dfs --depth 1 --runs 20000 --time-limit 20)
tlbsim_check_out(thp_retract_x86_none 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_retract.tlbs --profile x86-24
       --policy thp_gup_sync=none --runs 3000)
tlbsim_check_out(thp_gup_x86_none 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_gup_fast.tlbs --profile x86-24
       --policy thp_gup_sync=none --runs 3000)
tlbsim_check_out(thp_gup_x86_async_none 0
  HAS "no violation: 3000 schedules"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/thp_gup_fast.tlbs --profile x86-24
       --policy thp_gup_sync=none -D async_completion=1 --runs 3000)
# GUP-fast against munmap's table frees (gup_fast_munmap.tlbs): arm64's RCU
# table free waits for the walk's IRQs-off section, tlb_remove_table_one's
# IPI sync (-w fail=1) waits for it too, x86's flush IPI holds the free
# off: clean everywhere (a false I1 here would mean the walker is not held
# off by what holds it off in the kernel).
foreach(fail 0 1)
  tlbsim_check_out(gup_munmap_fail${fail} 0
    HAS "no violation: 5000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/gup_fast_munmap.tlbs -w fail=${fail} --runs 5000)
endforeach()
tlbsim_check_out(gup_munmap_dfs 0
  HAS "search space exhausted"
  ARGS ${CMAKE_SOURCE_DIR}/scenarios/gup_fast_munmap.tlbs --strategy dfs --depth 2 --runs 20000)
foreach(tf page rcu)
  tlbsim_check_out(gup_munmap_x86_${tf} 0
    HAS "no violation: 3000 schedules"
    ARGS ${CMAKE_SOURCE_DIR}/scenarios/gup_fast_munmap.tlbs --profile x86-24
         --policy x86_table_free=${tf} --runs 3000)
endforeach()
# thp_mprotect / thp_mremap / thp_clear_refs / thp_numa: mprotect, mremap,
# clear_refs and the NUMA scan of PMD-mapped anonymous THP (huge_memory.c
# change_huge_pmd, move_huge_pmd, clear_refs_huge_pmd; do_huge_pmd_wp_page,
# do_huge_pmd_numa_page): clean, no knob
foreach(sc thp_mprotect thp_mremap thp_clear_refs thp_numa)
  foreach(p x86-24 arm64-4k)
    tlbsim_check_out(${sc}_${p} 0
      HAS "no violation: 1000 schedules"
      ARGS ${CMAKE_SOURCE_DIR}/scenarios/${sc}.tlbs --profile ${p} --runs 1000)
  endforeach()
endforeach()

# check has no time slices: a timed workload's check instance runs one task
# per CPU (ebizzy's default of two per CPU left one queued behind a looping
# task that never started: every schedule cut at --max-steps), and more
# tasks than CPUs is one line, exit 2
tlbsim_check_out(ebizzy_check_instance 0
  HAS "no violation: 30 schedules"
  LACKS "were cut at"
  ARGS ebizzy --runs 30)
tlbsim_check_err(err_timed_tasks_over_cpus STDERR "with 3 tasks on 2 CPUs" "give at most 2 tasks"
  ARGS page_fault1 --cpus 2 --threads 3 --runs 5)
