#!/bin/sh
# Reimplementation of calc from its documentation.
op=$1 a=$2 b=$3
case $op in
add) r=$((a + b)) ;;
sub) r=$((a - b)) ;;
mul) r=$((a * b)) ;;
div)
	[ "$b" -eq 0 ] && { echo "error: division by zero" >&2; exit 2; }
	r=$((a / b))
	;;
*) echo "usage: executable add|sub|mul|div A B" >&2; exit 1 ;;
esac
printf '%s\n' "$r"
