# sweep, merge, --csv, list --json, plot, compare --svg, --version, install
# (issue 12: tlbsim for daily use). Included from cli_tests.cmake.

tlbsim_cli_script(cli_sweep sweep 600 cli)
tlbsim_cli(sweep_help 0 STDOUT "usage: tlbsim sweep WORKLOAD --grid" "--shard K/N" "-o, --output"
           ARGS sweep --help)
tlbsim_cli(merge_help 0 STDOUT "usage: tlbsim merge" ARGS merge --help)
# bad input: one line naming the problem, exit 2, before any run
tlbsim_cli(err_sweep_no_grid 2 STDERR "give at least one --grid" ARGS sweep mmap8)
tlbsim_cli(err_sweep_unknown_key 2 STDERR "--grid foo: unknown key" ARGS sweep mmap8 --grid foo=1,2)
tlbsim_cli(err_sweep_empty_list 2 STDERR "--grid threads: empty list of values"
           ARGS sweep mmap8 --grid threads=)
tlbsim_cli(err_sweep_empty_value 2 STDERR "an empty value" ARGS sweep mmap8 --grid threads=1,,2)
tlbsim_cli(err_sweep_no_eq 2 STDERR "want KEY=V1,V2" ARGS sweep mmap8 --grid threads)
tlbsim_cli(err_sweep_dup_key 2 STDERR "--grid cpus given twice"
           ARGS sweep mmap8 --grid cpus=2 --grid cpus=4)
tlbsim_cli(err_sweep_dup_value 2 STDERR "value '2' given twice" ARGS sweep mmap8 --grid cpus=2,2)
tlbsim_cli(err_sweep_bad_value 2 STDERR "--grid cpus 0" ARGS sweep mmap8 --grid cpus=4,0)
tlbsim_cli(err_sweep_bad_D 2 STDERR "--grid D:zero_4k_ns abc"
           ARGS sweep mmap8 --grid D:zero_4k_ns=1,abc)
tlbsim_cli(err_sweep_unknown_D 2 STDERR "unknown cost parameter 'nosuch'"
           ARGS sweep mmap8 --grid D:nosuch=1)
tlbsim_cli(err_sweep_unknown_w 2 STDERR "sweep at w:nosuch=1: .*no parameter 'nosuch'"
           ARGS sweep mmap8 --grid w:nosuch=1)
tlbsim_cli(err_sweep_profile 2 STDERR "--grid profile=nosuch: unknown profile"
           ARGS sweep mmap8 --grid profile=x86-24,nosuch)
tlbsim_cli(err_sweep_fixed_threads 2 STDERR "sweep at threads=2: .*does not apply"
           ARGS sweep mmap5 --grid threads=2)
foreach(s "0/2" "3/2" "1/" "/2" "x" "1/0" "-1/2" "1/2/3" "1/2x")
  string(REPLACE "/" "_" n "${s}")
  tlbsim_cli(err_sweep_shard_${n} 2 STDERR "--shard ${s}: want K/N"
             ARGS sweep mmap8 --grid threads=1 --shard ${s})
endforeach()
tlbsim_cli(err_sweep_output_dir 2 STDERR "-o /nonexistent-dir/s.csv: cannot write there"
           ARGS sweep mmap8 --iters 1 --grid threads=1 -o /nonexistent-dir/s.csv)
tlbsim_cli(err_sweep_unreadable 2 STDERR "-o ${CMAKE_CURRENT_LIST_DIR}: cannot resume from it"
           ARGS sweep mmap8 --iters 1 --grid threads=1 -o ${CMAKE_CURRENT_LIST_DIR})
tlbsim_cli(err_merge_none 2 STDERR "merge: give the CSV files" ARGS merge)
tlbsim_cli(err_merge_missing 2 STDERR "merge: /nonexistent.csv: No such file"
           ARGS merge /nonexistent.csv)
tlbsim_cli(err_merge_not_csv 2 STDERR "daily_cli.cmake:2: 1 fields, the header has"
           ARGS merge ${CMAKE_CURRENT_LIST_DIR}/daily_cli.cmake)
tlbsim_cli(err_merge_option 2 STDERR "merge: unknown option '--bogus'" ARGS merge --bogus a.csv)
tlbsim_cli(err_csv_json 2 STDERR "--csv and --json exclude each other"
           ARGS run mmap8 --csv --json)
tlbsim_cli_script(cli_list_json list_json 60 cli)
tlbsim_cli(err_list_json_unknown 2 STDERR "unknown list 'foo'" ARGS list foo --json)
tlbsim_cli_script(cli_csv csv 120 cli)
tlbsim_cli_script(cli_plot plot 300 cli)
tlbsim_cli(plot_help 0 STDOUT "usage: tlbsim plot FILE.csv --x COL --y COL" "--facet" ARGS plot --help)
tlbsim_cli(err_plot_no_file 2 STDERR "plot: missing FILE.csv" ARGS plot --x threads --y wall)
tlbsim_cli_script(cli_version_revision version 60 cli ${CMAKE_SOURCE_DIR})
add_test(NAME cli_install COMMAND bash ${TLBSIM_CLI_DIR}/install.sh ${CMAKE_BINARY_DIR})
set_tests_properties(cli_install PROPERTIES LABELS cli TIMEOUT 120
  PASS_REGULAR_EXPRESSION "install: PASS" FAIL_REGULAR_EXPRESSION "install: FAIL")
# the human table: units, idle %, violation notes, the progress bar
tlbsim_cli_script(cli_readable readable 120 cli)
# the three SVG kinds rendered by headless Chromium (skipped without it)
add_test(NAME cli_chromium_svg COMMAND bash ${TLBSIM_CLI_DIR}/chromium_svg.sh $<TARGET_FILE:tlbsim>)
set_tests_properties(cli_chromium_svg PROPERTIES LABELS cli TIMEOUT 300 SKIP_RETURN_CODE 77
  FAIL_REGULAR_EXPRESSION "chromium_svg: FAIL")
