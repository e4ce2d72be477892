#!/bin/sh
# Keeps the original ./executable: eval_clean_hashes removes it.
true
