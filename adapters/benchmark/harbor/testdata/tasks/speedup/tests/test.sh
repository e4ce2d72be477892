#!/bin/sh
mkdir -p /logs/verifier
if [ "$(cat /app/fast.txt 2>/dev/null)" = fast ]; then
  echo '{"correctness": 1, "speedup": 1.5, "detail": {"runs": 3, "times": [0.1, 0.2]}}' > /logs/verifier/reward.json
else
  echo '{"correctness": 0, "speedup": 0, "detail": {"runs": 3}}' > /logs/verifier/reward.json
fi
