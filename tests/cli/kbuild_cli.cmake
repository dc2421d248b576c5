# CLI tests of the kbuild workload (make -j N, seed 003): its parameters, their
# errors (exit 2, one line naming the parameter), a small run and a 256-CPU
# run's tasklist_lock metrics. Included from cli_tests.cmake.

tlbsim_cli(kbuild_small 0
           STDOUT "^workload kbuild \\(kasan=on jobs=12 job_ms=1 job_sigma=1 ws_pages=4 procs=3\\)"
                  "profile x86-24, 4 CPUs, 4 threads" "^ops +12$"
           ARGS run kbuild --profile x86-24 --cpus 4 -w jobs=12 -w job_ms=1 -w ws_pages=4)
tlbsim_cli(kbuild_json 0
           STDOUT "\"workload\":\"kbuild\"" "\"kasan\":\"off\"" "\"ops\":8,"
                  "\"tasklist_lock_waits\":[0-9]+" "\"softlockups\":0"
           ARGS run kbuild --cpus 2 --iters 4 -w kasan=off -w job_ms=0.5 -w ws_pages=2 --json)
tlbsim_cli(kbuild_256 0 STDOUT "^ops +512$" "^tasklist_waits +[1-9]"
           ARGS run kbuild --cpus 256 --iters 2 -w job_ms=5 -w ws_pages=8)
# a seed-003 table says "softlockups 0" rather than leaving the row out
tlbsim_cli(kbuild_softlockups_row 0 STDOUT "^softlockups +0$"
           ARGS run kbuild --cpus 8 -w jobs=40 -w ws_pages=2)
tlbsim_cli(list_kbuild 0 STDOUT "^kbuild " "-w job_ms=" "-w kasan=" ARGS list workloads)
tlbsim_cli(list_params_003 0
           STDOUT "^tasklist_write_hold_ns +ns +123000" "^kasan_slowdown " "^watchdog_thresh_s +s +10"
           ARGS list params)
tlbsim_cli(err_kbuild_kasan 2 STDERR "kasan=maybe" "on or off" ARGS run kbuild -w kasan=maybe)
tlbsim_cli(err_kbuild_jobs 2 STDERR "jobs=x" ARGS run kbuild -w jobs=x)
tlbsim_cli(err_kbuild_jobs_big 2 STDERR "jobs=2000000" "0..1000000"
           ARGS run kbuild -w jobs=2000000)
tlbsim_cli(err_kbuild_job_ms 2 STDERR "job_ms=0" "milliseconds" ARGS run kbuild -w job_ms=0)
tlbsim_cli(err_kbuild_job_ms_dec 2 STDERR "job_ms=1.2345" ARGS run kbuild -w job_ms=1.2345)
tlbsim_cli(err_kbuild_sigma 2 STDERR "job_sigma=4" "0..3" ARGS run kbuild -w job_sigma=4)
tlbsim_cli(err_kbuild_sigma_neg 2 STDERR "job_sigma=-1" ARGS run kbuild -w job_sigma=-1)
tlbsim_cli(err_kbuild_ws 2 STDERR "ws_pages=2000000" ARGS run kbuild -w ws_pages=2000000)
tlbsim_cli(err_kbuild_iters 2 STDERR "--iters 300000 x 256 job slots"
           ARGS run kbuild --iters 300000)
tlbsim_cli(err_kbuild_duration 2 STDERR "--duration" ARGS run kbuild --duration 1)
tlbsim_cli(err_kbuild_param 2 STDERR "no parameter 'size'" ARGS run kbuild -w size=4K)
tlbsim_cli(err_kbuild_procs 2 STDERR "procs=9" "1..8" ARGS run kbuild -w procs=9)
tlbsim_cli(err_kasan_slowdown 2 STDERR "kasan_slowdown=0" "1..100"
           ARGS run kbuild -D kasan_slowdown=0)
tlbsim_cli(err_watchdog_thresh 2 STDERR "watchdog_thresh_s=61" "0..60"
           ARGS run kbuild -D watchdog_thresh_s=61)
# an absurd global ASID count is bad input, not an internal error (found by
# robust_slice: machine_init's bound on the x86 global ASID space)
tlbsim_cli(err_global_asids 2 STDERR "global_asids=1000000" "0..65000"
           ARGS run madv_race -D global_asids=1000000)
