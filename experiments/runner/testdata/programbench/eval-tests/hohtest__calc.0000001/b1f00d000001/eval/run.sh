#!/bin/sh
# Evaluator-only test branch: runs ./executable and writes eval/results.xml
# in JUnit form, like pytest --junitxml.
cd "$(dirname "$0")/.." || exit 1
cases=""
check() { # name expected-stdout expected-exit args...
	name=$1 want=$2 wantcode=$3
	shift 3
	got=$(./executable "$@" 2>/dev/null)
	code=$?
	if [ "$got" = "$want" ] && [ "$code" = "$wantcode" ]; then
		cases="$cases<testcase classname=\"tests.test_calc\" name=\"$name\"/>"
	else
		cases="$cases<testcase classname=\"tests.test_calc\" name=\"$name\"><failure message=\"exit $code\"/></testcase>"
	fi
}
check test_addition 5 0 add 2 3
check test_subtraction -4 0 sub 3 7
check test_multiplication 42 0 mul 6 7
check test_division_by_zero "" 2 div 1 0
check test_flaky never 0 add 0 0
printf '<?xml version="1.0"?>\n<testsuites><testsuite name="calc">%s</testsuite></testsuites>\n' "$cases" >eval/results.xml
