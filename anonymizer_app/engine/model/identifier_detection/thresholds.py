"""The thresholds of identifier detection (docs/definitions.md, "Identifier detection")."""

from __future__ import annotations

SAMPLE_SIZE = 2000  # non-missing values whose shape is checked, per column
SHAPE_SHARE = 0.8  # share of the sampled values of one shape that makes the column that kind
SHAPE_SOME = 0.3  # ... a medium-confidence suggestion
UNIQUE_DISTINCTION = 0.95  # distinction at or above which a column "nearly identifies every record"
UNIQUE_SEPARATION = 0.999  # separation at or above which record pairs almost never share a value
MIN_ROWS = 20  # fewer non-missing values: uniqueness is no evidence
MIN_NAME_DISTINCT = 10  # a person-name column with fewer distinct values is medium (3..9) or low (<= 2)
REPEAT_MIN_DISTINCT = 10  # a repeating id with fewer distinct values is no person id
REPEAT_MAX_PER_VALUE = 1000  # ... nor one with more records per value on average
MAX_CELL = 254  # longer cells are not e-mails, phones, IBANs, ids or IPs (URLs: 2,048)
