# CLI tests of the will-it-scale workloads and their options (--tasks,
# --duration, -w mode/fs/size, the workloads' own kernel defaults).
# Included from cli_tests.cmake.

# the done-when command of issue 8, small: ops/s per policy with the ratio
tlbsim_cli(wis_compare_pf3 0
           STDOUT "^workload page_fault3 \\(mode=processes fs=ext4 size=256K\\)" "4 tasks"
                  "warm-up round then 1 measured round per task"
                  "fault_retry=dirty_throttle" "^ops_per_sec  " "^window  "
                  "ratio = spurious_flush=skip_tried / spurious_flush=broadcast"
           ARGS compare page_fault3 --profile arm64-4k --tasks 4 --cpus 4 -w size=256K
                --policy spurious_flush=broadcast --policy spurious_flush=skip_tried)
# --duration: the window is that long (simulated)
tlbsim_cli(wis_duration 0 STDOUT "then 500.0 µs measured" "^window +50[0-9.]+ µs"
           ARGS run tlb_flush2 --tasks 2 --cpus 2 --duration 0.0005)
tlbsim_cli(wis_json_fields 0
           STDOUT "\"duration_ns\":0" "\"ops_per_sec\":[1-9]" "\"ops_per_sec_task\":[1-9]"
                  "\"window_ns\":[1-9]" "\"fault_retries\":" "\"spurious_flushes\":"
                  "\"fault_retry\":\"dirty_throttle\""
           ARGS run page_fault3 --tasks 2 --cpus 2 -w size=64K -w mode=threads --json)
# an explicit knob beats the workload's kernel default
tlbsim_cli(wis_policy_override 0 STDOUT "fault_retry=none" "^fault_retries +0$"
           ARGS run page_fault3 --tasks 1 --cpus 1 -w size=64K --policy fault_retry=none)
tlbsim_cli(list_wis 0 STDOUT "^page_fault3 " "^tlb_flush2 " "kernel: fault_retry=dirty_throttle"
           "one per CPU" ARGS list workloads)
tlbsim_cli(err_duration_untimed 2 STDERR "--duration" "will-it-scale"
           ARGS run mmap8 --duration 1)
tlbsim_cli(err_duration_and_iters 2 STDERR "--duration and --iters"
           ARGS run page_fault1 --duration 1 --iters 2)
tlbsim_cli(err_duration_bad 2 STDERR "--duration 1x" ARGS run page_fault1 --duration 1x)
tlbsim_cli(err_duration_zero 2 STDERR "--duration 0" ARGS run page_fault1 --duration 0)
tlbsim_cli(err_wis_mode 2 STDERR "mode=fork" "processes or threads"
           ARGS run page_fault1 -w mode=fork)
tlbsim_cli(err_wis_fs 2 STDERR "fs=xfs" "ext4 or tmpfs" ARGS run page_fault3 -w fs=xfs)
tlbsim_cli(err_wis_fs_anon 2 STDERR "no parameter 'fs'" ARGS run page_fault1 -w fs=ext4)
tlbsim_cli(err_wis_size 2 STDERR "size=1" "one page" ARGS run page_fault1 -w size=1)
tlbsim_cli(err_tasks_zero 2 STDERR "--tasks 0" ARGS run page_fault1 --tasks 0)
# mprotect_storm (one pinned process per CPU flipping RO/RW on its pages)
tlbsim_cli(mprotect_storm_compare 0 STDOUT "arm64_local=single_cpu_mm" "tlbi local"
           ARGS compare mprotect_storm --profile arm64-4k --tasks 32 --iters 3 --seeds 1
                --policy arm64_local=off --policy arm64_local=single_cpu_mm)
tlbsim_cli(mprotect_storm_x86 0 STDOUT "ops_per_sec" ARGS run mprotect_storm --profile x86-24 --iters 3)
tlbsim_cli(err_mprotect_storm_pages 2 STDERR "workload parameter pages=0: want 1 to 1048576"
           ARGS run mprotect_storm -w pages=0)
# sched_slice_ns=0 (no time slices) with more tasks than CPUs: a timed
# workload's tasks loop until every task has run, so a queued one would never
# start and the run would never end: refused (exit 2); as many tasks as CPUs
# run to the end
tlbsim_cli(wis_no_slices_oversubscribed 2
           STDERR "sched_slice_ns=0 .* 3 tasks on 2 CPUs"
           ARGS run page_fault3 --cpus 2 --threads 3 --iters 1 -w size=16K -D sched_slice_ns=0)
tlbsim_cli(ebizzy_no_slices_oversubscribed 2 STDERR "sched_slice_ns=0 .* 3 tasks on 2 CPUs"
           ARGS run ebizzy --cpus 2 --threads 3 --iters 1 -D sched_slice_ns=0)
tlbsim_cli(storm_no_slices_oversubscribed 2 STDERR "sched_slice_ns=0 .* 3 tasks on 2 CPUs"
           ARGS run mprotect_storm --cpus 2 --threads 3 --iters 1 -D sched_slice_ns=0)
tlbsim_cli(wis_no_slices_one_per_cpu 0 STDOUT "^ops "
           ARGS run page_fault3 --cpus 2 --threads 2 --iters 1 -w size=16K -D sched_slice_ns=0)
