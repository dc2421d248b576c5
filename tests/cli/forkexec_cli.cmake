# CLI tests of the fork_exec workload (usemem-like fork / COW / exec / exit
# churn): the profiles and kernels it must run on, its parameters and their
# errors, and byte-identical output for the same seed.
tlbsim_cli(fork_exec_x86 0 STDOUT "^workload fork_exec \\(pages=8 write_pct=100 exec=0 parent_threads=1\\)"
           "^ops_per_sec +[1-9]" "^cow_faults +[1-9]"
           ARGS run fork_exec --profile x86-24 --cpus 4 --iters 2 -w pages=8)
tlbsim_cli(fork_exec_falkor_exec 0 STDOUT "^cow_faults +[1-9]" "^tlbi aside1is +[1-9]"
           ARGS run fork_exec --profile falkor-46 --cpus 4 --iters 2 -w pages=8 -w exec=1
                --kernel 5.1)
tlbsim_cli(fork_exec_arm64_618 0 STDOUT "^tlbi vale1is +[1-9]"
           ARGS run fork_exec --profile arm64-4k --cpus 4 --iters 2 -w pages=8 -w write_pct=50
                --kernel 6.18)
tlbsim_cli(fork_exec_milan 0 STDOUT "^ops_per_sec +[1-9]"
           ARGS run fork_exec --profile milan-72 --cpus 8 --iters 2 -w pages=8 -w exec=1
                --kernel 6.18)
tlbsim_cli(fork_exec_compare 0 STDOUT "x86_flush=ipi" "x86_flush=invlpgb" "^cow_faults"
           ARGS compare fork_exec --profile milan-72 --cpus 8 --iters 2 -w pages=8 --seeds 1
                --policy x86_flush=ipi --policy x86_flush=invlpgb)
tlbsim_cli(fork_exec_json 0 STDOUT "\"workload\":\"fork_exec\"" "\"cow_faults\":[1-9]"
           ARGS run fork_exec --cpus 2 --iters 1 -w pages=2 --json)
tlbsim_cli(fork_exec_check 0 STDOUT "no violation"
           ARGS check fork_exec --runs 20 -w exec=1)
tlbsim_cli(err_fork_exec_pages 2 STDERR "workload parameter pages=0: want 1 to 1048576"
           ARGS run fork_exec -w pages=0)
tlbsim_cli(err_fork_exec_write_pct 2 STDERR "workload parameter write_pct=101: want 0 to 100"
           ARGS run fork_exec -w write_pct=101)
tlbsim_cli(err_fork_exec_exec 2 STDERR "workload parameter exec=yes: want 0 or 1"
           ARGS run fork_exec -w exec=yes)
add_test(NAME cli_fork_exec_determinism
         COMMAND bash -c "a=$(\"$0\" run fork_exec --cpus 4 --iters 2 -w pages=4 -w exec=1 --seed 9 --json) && b=$(\"$0\" run fork_exec --cpus 4 --iters 2 -w pages=4 -w exec=1 --seed 9 --json) && [ -n \"$a\" ] && [ \"$a\" = \"$b\" ]"
                 $<TARGET_FILE:tlbsim>)
set_tests_properties(cli_fork_exec_determinism PROPERTIES LABELS cli)
tlbsim_cli(fork_exec_parent_threads 0 STDOUT "^ipi_sent +[1-9]"
           ARGS run fork_exec --profile x86-24 --tasks 2 --cpus 8 --iters 2 -w pages=4
                -w parent_threads=3)
tlbsim_cli(err_fork_exec_parent_threads 2
           STDERR "workload parameter parent_threads=0: want 1 to 64"
           ARGS run fork_exec -w parent_threads=0)
