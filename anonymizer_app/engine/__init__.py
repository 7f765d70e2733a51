"""The anonymization engine: pure Python with numpy/pandas, no Django or Celery.

Views, Celery tasks, the CLI and the tests all call this API.
"""

from .algorithms import ALGORITHMS, AlgorithmInfo, get_algorithm
from .errors import (
    Cancelled,
    EngineError,
    HierarchyError,
    InputError,
    UnsatisfiableError,
    VerificationError,
)
from .io.reader import Format, read_table, sniff
from .measure.metrics import METRIC_HELP
from .model.defaults import default_hierarchy
from .model.formats import read_hierarchy
from .model.hierarchy import ROOT, Hierarchy, parse_hierarchy
from .model.table import COLUMN_TYPES, Role, Table, infer_type, suggest_role
from .privacy import PRIVACY_MODELS, KAnonymity, PrivacyModel
from .run.result import Result, verify_output
from .run.stages import anonymize, build_output

__all__ = [
    "ALGORITHMS", "AlgorithmInfo", "COLUMN_TYPES", "Cancelled", "EngineError", "Format", "Hierarchy",
    "HierarchyError", "InputError", "KAnonymity", "METRIC_HELP", "PRIVACY_MODELS", "PrivacyModel", "ROOT",
    "Result", "Role", "Table", "UnsatisfiableError", "VerificationError", "anonymize", "build_output",
    "default_hierarchy", "get_algorithm", "infer_type", "parse_hierarchy", "read_hierarchy", "read_table",
    "sniff", "suggest_role", "verify_output",
]
