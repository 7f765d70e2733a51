"""Measuring a release: utility metrics, the attack report, risk estimators, experiments."""
