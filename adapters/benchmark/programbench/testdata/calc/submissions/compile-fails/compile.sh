#!/bin/sh
# Builds a working ./executable, then fails: upstream scores compile_failed.
cp src/calc.sh executable
chmod +x executable
echo "linker error (simulated)" >&2
exit 1
