# stress-ng-tlb (src/workload/stress_ng.c): a small run on each profile family,
# the skipped steps named in the output, the stress-ng metrics, the checker,
# and bad parameters (exit 2, one line naming the parameter).
tlbsim_cli(sng_run_x86 0
           STDOUT "^note: stress-ng-tlb skipped: .*MADV_COLLAPSE.*tlb_single_page_flush_ceiling"
                  "^bogo_ops_per_sec +[1-9]" "^tlb_shootdowns_per_sec +[1-9]" "^ipis_per_sec +[1-9]"
           ARGS run stress-ng-tlb --profile x86-24 --kernel 5.1 --iters 3 -w rotate=100us)
tlbsim_cli(sng_run_arm64_json 0
           STDOUT "\"notes\":\"stress-ng-tlb skipped: .*absent on arm64"
                  "\"tlb_shootdowns_per_sec\":0," "\"bogo_ops_per_sec\":[1-9]"
           ARGS run stress-ng-tlb --profile arm64-4k --kernel 6.18 --iters 2 -w rotate=100us --json)
tlbsim_cli(sng_run_milan_csv 0 STDOUT "tlb_shootdowns_per_sec"
           ARGS run stress-ng-tlb --profile milan-72 --iters 2 -w rotate=100us --csv)
tlbsim_cli(sng_list 0 STDOUT "^stress-ng-tlb .*github.com/ColinIanKing/stress-ng" "-w rotate=1s"
           ARGS list workloads)
tlbsim_cli(sng_check 0 STDOUT "no violation" "rotate=20us" ARGS check stress-ng-tlb --runs 50)
# the 2020 arm64 local-flush proposal across the children's CPU rotations
tlbsim_cli(sng_check_arm64_local 0 STDOUT "no violation"
           ARGS check stress-ng-tlb --profile arm64-4k --policy arm64_local=single_cpu_mm --runs 200)
tlbsim_cli(err_sng_procs 2 STDERR "workload parameter procs=3: want auto or 1 to 2"
           ARGS run stress-ng-tlb --cpus 2 -w procs=3)
tlbsim_cli(err_sng_procs_zero 2 STDERR "workload parameter procs=0"
           ARGS run stress-ng-tlb -w procs=0)
tlbsim_cli(err_sng_rotate 2 STDERR "workload parameter rotate=1h: want a simulated period"
           ARGS run stress-ng-tlb -w rotate=1h)
tlbsim_cli(err_sng_rotate_big 2 STDERR "workload parameter rotate=3601s"
           ARGS run stress-ng-tlb -w rotate=3601s)
tlbsim_cli(err_sng_pages 2 STDERR "workload parameter pages=0: want 1 to 65536"
           ARGS run stress-ng-tlb -w pages=0)
tlbsim_cli(err_sng_fs 2 STDERR "workload parameter fs=xfs: want ext4 or tmpfs"
           ARGS run stress-ng-tlb -w fs=xfs)
tlbsim_cli(err_sng_threads 2 STDERR "--threads 4: workload stress-ng-tlb runs a fixed set"
           ARGS run stress-ng-tlb --threads 4)
