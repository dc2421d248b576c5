# run --trace: the timeline of a run (docs/output.md "Run timeline").
add_test(NAME cli_run_trace
         COMMAND bash ${TLBSIM_CLI_DIR}/run_trace.sh $<TARGET_FILE:tlbsim> ${TLBSIM_CLI_DIR})
set_tests_properties(cli_run_trace PROPERTIES LABELS cli
                     PASS_REGULAR_EXPRESSION "run_trace: PASS" FAIL_REGULAR_EXPRESSION "FAIL")
# A malformed or empty window is one line naming it, exit 2, and no file.
tlbsim_cli(err_trace_window_order 2 STDERR "--trace-window 5ms:1ms: END must be later"
           ARGS run mmap8 --iters 2 --trace t.json --trace-window 5ms:1ms)
tlbsim_cli(err_trace_window_empty 2 STDERR "--trace-window 1ms:1ms: END must be later"
           ARGS run mmap8 --iters 2 --trace t.json --trace-window 1ms:1ms)
tlbsim_cli(err_trace_window_nocolon 2 STDERR "--trace-window 1ms: want START:END"
           ARGS run mmap8 --iters 2 --trace t.json --trace-window 1ms)
tlbsim_cli(err_trace_window_unit 2 STDERR "--trace-window 10:20ms: bad START '10'"
           ARGS run mmap8 --iters 2 --trace t.json --trace-window 10:20ms)
tlbsim_cli(err_trace_window_badunit 2 STDERR "bad END '2xs'"
           ARGS run mmap8 --iters 2 --trace t.json --trace-window 1ms:2xs)
tlbsim_cli(err_trace_window_junk 2 STDERR "bad START 'abc'"
           ARGS run mmap8 --iters 2 --trace t.json --trace-window abc:1ms)
tlbsim_cli(err_trace_window_subns 2 STDERR "bad START '0.5ns'"
           ARGS run mmap8 --iters 2 --trace t.json --trace-window 0.5ns:1ms)
tlbsim_cli(err_trace_window_alone 2 STDERR "need --trace FILE"
           ARGS run mmap8 --iters 2 --trace-window 0:1ms)
tlbsim_cli(err_trace_format 2 STDERR "--trace-format json: want chrome or ftrace"
           ARGS run mmap8 --iters 2 --trace t.json --trace-format json)
tlbsim_cli(err_trace_compare 2 STDERR "compare: --trace is not available"
           ARGS compare mmap8 --iters 2 --policy nested=v2 --policy nested=fullmm --trace t.json)
tlbsim_cli(err_trace_sweep 2 STDERR "sweep: --trace is not available"
           ARGS sweep mmap8 --grid threads=1,2 --trace t.json)
tlbsim_cli(err_trace_stdout 2 STDERR "run: --trace wants a file name"
           ARGS run mmap8 --iters 2 --trace -)
tlbsim_cli(run_trace_help 0 STDOUT "--trace-window START:END" "first 10 ms" "ftrace"
           ARGS run --help)
