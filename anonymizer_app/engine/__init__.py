"""The anonymization engine: pure Python with numpy/pandas, no Django or Celery.

Views, Celery tasks, the CLI and the tests all call this API.
"""

from .algorithms import ALGORITHMS, AlgorithmInfo, get_algorithm
from .api import anonymize, build_output
from .errors import (
    Cancelled,
    EngineError,
    HierarchyError,
    InputError,
    UnsatisfiableError,
    VerificationError,
)
from .hierarchy import ROOT, Hierarchy, default_hierarchy, parse_hierarchy, read_hierarchy
from .metrics import METRIC_HELP
from .privacy import PRIVACY_MODELS, KAnonymity, PrivacyModel
from .reader import Format, read_table, sniff
from .result import Result, verify_output
from .table import COLUMN_TYPES, Role, Table, infer_type, suggest_role

__all__ = [
    "ALGORITHMS", "AlgorithmInfo", "COLUMN_TYPES", "Cancelled", "EngineError", "Format", "Hierarchy",
    "HierarchyError", "InputError", "KAnonymity", "METRIC_HELP", "PRIVACY_MODELS", "PrivacyModel", "ROOT",
    "Result", "Role", "Table", "UnsatisfiableError", "VerificationError", "anonymize", "build_output",
    "default_hierarchy", "get_algorithm", "infer_type", "parse_hierarchy", "read_hierarchy", "read_table",
    "sniff", "suggest_role", "verify_output",
]
