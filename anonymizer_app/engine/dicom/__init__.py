"""DICOM headers as a table and back (issue 16): the PS3.15 Annex E Basic Profile (:mod:`.profile`), the
files of a zip or folder checked (:mod:`.source`), chosen header attributes extracted one row per file,
series or study (:mod:`.headers`), and de-identified copies written with the published cells
(:mod:`.deidentify`, :mod:`.archive`). Pure Python + pydicom: no Django."""

from .archive import write_archive
from .deidentify import deidentify, pseudonym_uid, verify
from .headers import (
    DEFAULT_ATTRIBUTES,
    LEVEL_LABELS,
    LEVELS,
    Extraction,
    date_hierarchies,
    default_attributes,
    extract,
    proposed_role,
    resolve_keyword,
    uid_only_identifier,
)
from .profile import BASIC_PROFILE, ProfileEntry, entry_for, resolve_code
from .source import DicomSource, open_source

__all__ = [
    "BASIC_PROFILE", "DEFAULT_ATTRIBUTES", "LEVELS", "LEVEL_LABELS", "DicomSource", "Extraction", "ProfileEntry",
    "date_hierarchies", "default_attributes", "deidentify", "entry_for", "extract", "open_source", "proposed_role",
    "pseudonym_uid", "resolve_code", "resolve_keyword", "uid_only_identifier", "verify", "write_archive",
]
