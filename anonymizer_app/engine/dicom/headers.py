"""Header attributes of DICOM files as a table: one row per file, per series or per study, the cells the
attributes' values as text; and the roles the de-identification profile proposes for them."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import pandas as pd

from ..errors import Cancelled, InputError
from ..model.hierarchy import Hierarchy
from ..model.table import Role
from .profile import entry_for
from .source import DicomSource, ProgressFn

# The level of a row and the attribute that identifies its group of files (None: each file is a row).
LEVELS = {"file": None, "series": "SeriesInstanceUID", "study": "StudyInstanceUID"}
LEVEL_LABELS = {"file": "one row per file", "series": "one row per series (the files of a series share it)",
                "study": "one row per study (the files of a study share it)"}
# How fine an attribute is in the DICOM information model: patient < study < series < instance (file).
_RANK = {"patient": 0, "study": 1, "series": 2, "file": 3}
_LEVEL_RANK = {"file": 3, "series": 2, "study": 1}


@dataclass(frozen=True)
class Attribute:
    keyword: str
    level: str  # patient, study, series or file
    role: Role  # what is proposed


# Offered on the upload form and by the CLI when no --attribute is given: the header attributes that
# identify a person directly (identifiers) and those that re-identify in combination (quasi-identifiers).
DEFAULT_ATTRIBUTES = (
    Attribute("PatientID", "patient", Role.IDENTIFYING),
    Attribute("PatientName", "patient", Role.IDENTIFYING),
    Attribute("PatientBirthDate", "patient", Role.QUASI_IDENTIFYING),
    Attribute("PatientSex", "patient", Role.QUASI_IDENTIFYING),
    Attribute("PatientAge", "study", Role.QUASI_IDENTIFYING),
    Attribute("StudyDate", "study", Role.QUASI_IDENTIFYING),
    Attribute("AccessionNumber", "study", Role.IDENTIFYING),
    Attribute("ReferringPhysicianName", "study", Role.IDENTIFYING),
    Attribute("StudyInstanceUID", "study", Role.IDENTIFYING),
    Attribute("InstitutionName", "series", Role.QUASI_IDENTIFYING),
    Attribute("Modality", "series", Role.INSENSITIVE),
    Attribute("SeriesInstanceUID", "series", Role.IDENTIFYING),
    Attribute("SOPInstanceUID", "file", Role.IDENTIFYING),
)
_DEFAULTS = {a.keyword: a for a in DEFAULT_ATTRIBUTES}
# Value representations held as text in the file: only these can carry a published (generalized) cell.
TEXT_VRS = {"AE", "AS", "CS", "DA", "DS", "DT", "IS", "LO", "LT", "PN", "SH", "ST", "TM", "UC", "UI", "UR", "UT"}
QI_KEYWORDS = {"PatientBirthDate", "PatientSex", "PatientAge", "StudyDate", "SeriesDate", "AcquisitionDate",
               "ContentDate", "InstitutionName", "PatientWeight", "PatientSize", "EthnicGroup",
               "InstitutionalDepartmentName", "StationName"}


def tag_of(keyword: str) -> int:
    """The tag of a dictionary keyword (resolve_keyword has checked it exists)."""
    from pydicom.datadict import tag_for_keyword

    tag = tag_for_keyword(keyword)
    if tag is None:
        raise InputError(f"attribute {keyword!r}: not a DICOM keyword")
    return int(tag)


def default_attributes(level: str) -> list[Attribute]:
    """The default attributes that are constant within a row of ``level`` (a file-level UID is not
    offered for a row per series)."""
    return [a for a in DEFAULT_ATTRIBUTES if _RANK[a.level] <= _LEVEL_RANK[level]]


def resolve_keyword(text: str) -> str:
    """A keyword (PatientAge) or a tag (0010,1010 / 00101010) as the dictionary's keyword, checked to be
    a text attribute; InputError naming it otherwise."""
    from pydicom.datadict import dictionary_VR, keyword_for_tag, tag_for_keyword

    text = text.strip()
    match = re.fullmatch(r"\(?([0-9A-Fa-f]{4}),?([0-9A-Fa-f]{4})\)?", text)
    if match:
        tag = int(match.group(1) + match.group(2), 16)
        keyword = keyword_for_tag(tag)
        if not keyword:
            raise InputError(f"attribute {text}: not a public attribute of the DICOM dictionary")
    else:
        keyword = text
        found = tag_for_keyword(keyword)
        if found is None:
            raise InputError(f"attribute {text!r}: not a DICOM keyword (e.g. PatientAge, or a tag 0010,1010)")
        tag = int(found)
    vr = dictionary_VR(tag)
    if vr not in TEXT_VRS:
        raise InputError(f"attribute {keyword}: its value representation {vr} is not text (sequences, binary and "
                         f"numeric attributes cannot be table columns)")
    return keyword


def proposed_role(keyword: str) -> Role:
    """The profile's proposal: a known default's role; a quasi-identifier among the usual ones; an
    identifier for every other attribute the Basic Profile does not keep; insensitive otherwise."""
    if keyword in _DEFAULTS:
        return _DEFAULTS[keyword].role
    if keyword in QI_KEYWORDS:
        return Role.QUASI_IDENTIFYING
    entry = entry_for(tag_of(keyword))
    return Role.IDENTIFYING if entry is not None and entry.action != "K" else Role.INSENSITIVE


def uid_only_identifier(keyword: str) -> bool:
    """The profile replaces this attribute by a new UID (U): it is always an identifier, its value in the
    files a keyed pseudonym, never a published cell."""
    entry = entry_for(tag_of(keyword))
    return entry is not None and entry.action == "U"


def cell_text(element) -> str:
    """The value of a text attribute as one cell: multiple values joined by a backslash, as DICOM does."""
    if element is None or element.value is None:
        return ""
    value = element.value
    if isinstance(value, (list, tuple)) or type(value).__name__ == "MultiValue":
        return "\\".join(str(v) for v in value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return str(value)


@dataclass
class Extraction:
    """The table (string cells; its row order is the order of first appearance), which row each file
    went to (by member), the level and the attributes."""

    frame: pd.DataFrame
    file_rows: dict[str, int]
    level: str
    attributes: list[str]
    files_per_row: list[int] = field(default_factory=list)


def extract(source: DicomSource, attributes: list[str], level: str,
            progress: ProgressFn | None = None) -> Extraction:
    """One row per file, series or study of ``source``, a column per attribute (keywords). Within a series
    or study every file must agree on every chosen attribute; a disagreement is named (the attribute and
    two files) rather than one value picked."""
    import pydicom

    if level not in LEVELS:
        raise InputError(f"level {level!r}: choose one of {', '.join(LEVELS)}")
    keywords = [resolve_keyword(a) for a in attributes]
    if not keywords:
        raise InputError("choose at least one header attribute")
    seen = set()
    for k in keywords:
        if k in seen:
            raise InputError(f"attribute {k}: chosen twice")
        seen.add(k)
    group_keyword = LEVELS[level]
    rows: list[list[str]] = []
    first_file: list[str] = []
    counts: list[int] = []
    key_row: dict[str, int] = {}
    file_rows: dict[str, int] = {}
    total = len(source.members)
    for i, (member, data) in enumerate(source.items()):
        ds = pydicom.dcmread(io.BytesIO(data), stop_before_pixels=True)
        values = [cell_text(ds.get(tag_of(k))) for k in keywords]
        if group_keyword is None:
            key = member
        else:
            key = cell_text(ds.get(tag_of(group_keyword)))
            if not key:
                raise InputError(f"{member}: has no {group_keyword}, so it belongs to no {level}; choose the "
                                 f"level 'file'")
        row = key_row.get(key)
        if row is None:
            row = key_row[key] = len(rows)
            rows.append(values)
            first_file.append(member)
            counts.append(0)
        else:
            for k, old, new in zip(keywords, rows[row], values, strict=True):
                if old != new:
                    raise InputError(f"attribute {k} differs within one {level}: {first_file[row]} has {old!r}, "
                                     f"{member} has {new!r}; choose the level 'file' or leave {k} out")
        counts[row] += 1
        file_rows[member] = row
        if progress is not None and progress(0.3 + 0.6 * (i + 1) / total,
                                             f"reading the headers: file {i + 1:,} of {total:,}") is False:
            raise Cancelled("reading the headers")
    frame = pd.DataFrame(rows, columns=keywords, dtype=object)
    return Extraction(frame, file_rows, level, keywords, counts)


_DATE = re.compile(r"\d{8}")
_AGE = re.compile(r"(\d{3})([DWMY])")


def date_rows(values) -> list[list[str]] | None:
    """A DA attribute's hierarchy rows: 20040119 → 2004-01 → 2004 → 2000-2009 → *; None when a value is not a
    plain date (empty, a range), so the default hierarchy is used instead."""
    distinct = sorted({str(v) for v in values})
    if not distinct or not all(_DATE.fullmatch(v) for v in distinct):
        return None
    return [[v, f"{v[:4]}-{v[4:6]}", v[:4], f"{v[:3]}0-{v[:3]}9", "*"] for v in distinct]


def age_rows(values) -> list[list[str]] | None:
    """An AS attribute's hierarchy rows: 058Y → [55, 60) → [50, 60) → [40, 60) → * (years; an age in days,
    weeks or months is under one year: [0, 5) ...); None when a value is not an age string."""
    distinct = sorted({str(v) for v in values})
    if not distinct or not all(_AGE.fullmatch(v) for v in distinct):
        return None
    rows = []
    for v in distinct:
        years = int(v[:3]) if v[3] == "Y" else 0
        rows.append([v] + [f"[{years // w * w}, {years // w * w + w})" for w in (5, 10, 20)] + ["*"])
    return rows


def hierarchy_rows(keyword: str, values) -> list[list[str]] | None:
    """The DICOM-aware hierarchy of a date (DA) or age (AS) attribute, or None (the default applies)."""
    from pydicom.datadict import dictionary_VR

    vr = dictionary_VR(tag_of(keyword))
    return date_rows(values) if vr == "DA" else age_rows(values) if vr == "AS" else None


def date_hierarchy(name: str, values) -> Hierarchy | None:
    rows = date_rows(values)
    return None if rows is None else Hierarchy.from_rows(rows, name, source="DICOM dates (year-month, year, decade)")


def date_hierarchies(frame: pd.DataFrame, columns) -> dict[str, Hierarchy]:
    """For each given column whose attribute is a date (DA) or an age (AS), its hierarchy when it applies."""
    out = {}
    for column in columns:
        rows = hierarchy_rows(column, frame[column])
        if rows is not None:
            out[column] = Hierarchy.from_rows(rows, column, source=f"DICOM {column} hierarchy")
    return out
