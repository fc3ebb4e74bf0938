"""The end of a check script: every failure printed, then the exit status."""


def report(bad):
    for b in bad:
        print(f"FAIL: {b}")
    return 1 if bad else 0
