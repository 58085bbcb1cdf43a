"""A --coefficients file for the dev scripts (perf-cases.py, sim-cases.py, aic-corpus.py): a JSON object of
coefficient names and numbers, as `kvplan plan --format json` prints results.performance.coefficients. A file
that cannot be read ends the script with one line naming it and exit status 2."""
import json
import sys


def fail(path, why):
    print(f"{sys.argv[0]}: error: --coefficients {path}: {why}", file=sys.stderr)
    sys.exit(2)


def read_coefficients(path):
    try:
        with open(path) as f:
            c = json.load(f)
    except (OSError, ValueError) as e:
        fail(path, e)
    if not isinstance(c, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in c.values()):
        fail(path, "expected a JSON object of coefficient names and numbers")
    return c
