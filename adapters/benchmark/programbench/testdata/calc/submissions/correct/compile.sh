#!/bin/sh
set -e
cp src/calc.sh executable
chmod +x executable
