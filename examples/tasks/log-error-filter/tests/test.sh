#!/bin/bash
mkdir -p /logs/verifier
pip install --no-cache-dir pytest==8.3.4 pytest-json-ctrf==0.3.6 >/dev/null
pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA -v
if [ $? -eq 0 ]; then
    echo 1 > /logs/verifier/reward.txt
else
    echo 0 > /logs/verifier/reward.txt
fi
exit 0
