# CLI tests of scenario files (src/scenario/, docs/scenarios.md): the shipped
# files against their built-in C workloads, malformed files, `tlbsim test`,
# and the project's own scenario suite (`tlbsim test scenarios/`).
set(TLBSIM_SCEN_TESTS ${CMAKE_CURRENT_LIST_DIR})
set(TLBSIM_SCEN_DIR ${CMAKE_CURRENT_LIST_DIR}/../../scenarios)

add_test(NAME scenario_equiv
         COMMAND bash ${TLBSIM_SCEN_TESTS}/equiv.sh $<TARGET_FILE:tlbsim> ${TLBSIM_SCEN_DIR})
set_tests_properties(scenario_equiv PROPERTIES LABELS "scenario;cli" TIMEOUT 600
  PASS_REGULAR_EXPRESSION "equiv: PASS" FAIL_REGULAR_EXPRESSION "equiv: FAIL")

add_test(NAME scenario_bad_input
         COMMAND bash ${TLBSIM_SCEN_TESTS}/bad_input.sh $<TARGET_FILE:tlbsim>
                 ${TLBSIM_SCEN_TESTS}/bad)
set_tests_properties(scenario_bad_input PROPERTIES LABELS "scenario;cli" TIMEOUT 120
  PASS_REGULAR_EXPRESSION "bad_input: PASS" FAIL_REGULAR_EXPRESSION "bad_input: FAIL")

add_test(NAME scenario_parser_limits
         COMMAND bash ${TLBSIM_SCEN_TESTS}/parser_limits.sh $<TARGET_FILE:tlbsim>)
set_tests_properties(scenario_parser_limits PROPERTIES LABELS "scenario;cli" TIMEOUT 300
  PASS_REGULAR_EXPRESSION "parser_limits: PASS" FAIL_REGULAR_EXPRESSION "parser_limits: FAIL")

add_test(NAME scenario_test_runner
         COMMAND bash ${TLBSIM_SCEN_TESTS}/test_runner.sh $<TARGET_FILE:tlbsim> ${TLBSIM_SCEN_DIR})
set_tests_properties(scenario_test_runner PROPERTIES LABELS "scenario;cli" TIMEOUT 120
  PASS_REGULAR_EXPRESSION "test_runner: PASS" FAIL_REGULAR_EXPRESSION "test_runner: FAIL")

# every shipped scenario (examples included) meets its expect clauses (1 s of
# host time per clean clause, 10 s per expect violation clause, which ends
# when found: in well under 1 s in the dev build)
add_test(NAME scenario_suite COMMAND $<TARGET_FILE:tlbsim> test ${TLBSIM_SCEN_DIR} --time-limit 1)
set_tests_properties(scenario_suite PROPERTIES LABELS "scenario;cli" TIMEOUT 300
  PASS_REGULAR_EXPRESSION "^.* passed, 0 failed\n$" FAIL_REGULAR_EXPRESSION "(FAIL|ERROR) ")

# tlbsim import strace on the trace shipped in tests/import/
add_test(NAME scenario_import_strace
         COMMAND bash ${TLBSIM_SCEN_TESTS}/../import/import.sh $<TARGET_FILE:tlbsim>
                 ${TLBSIM_SCEN_TESTS}/../import)
set_tests_properties(scenario_import_strace PROPERTIES LABELS "scenario;cli" TIMEOUT 120
  PASS_REGULAR_EXPRESSION "import: PASS" FAIL_REGULAR_EXPRESSION "import: FAIL")
