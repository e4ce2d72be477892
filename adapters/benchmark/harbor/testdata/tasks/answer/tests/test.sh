#!/bin/sh
# Evaluator-only marker: HIDDEN-TEST-MARKER
mkdir -p /logs/verifier
if [ "$(cat /workspace/answer.txt 2>/dev/null)" = "$EXPECTED" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
