"""Write-back: a copy of each DICOM file de-identified by the Basic Profile, with the published cells of
its row written into their attributes; then every output file checked against what it must be.

What happens to one file:
  1. private attributes are removed (at every nesting level);
  2. every other attribute of table E.1-1, at every nesting level, gets its action (profile.resolve_code):
     X removed, Z emptied, D a dummy of its VR, U a keyed pseudonym UID (the same UID gives the same
     pseudonym in every file of the set: HMAC-SHA256 under the set's key, as a 2.25 UID), sequences not
     removed or emptied are cleaned item by item; the file meta's Media Storage SOP Instance UID follows
     the SOP Instance UID;
  3. the published cells of the file's row are written into their attributes (the gate-checked table is
     the only source of these values); a generalized value that its VR cannot hold ("[30, 40)" in a DA)
     is written with the VR LO (UT beyond 64 characters), which every reader reads as text;
  4. Patient Identity Removed (0012,0062) = YES and De-identification Method (0012,0063) say what was done.
Pixel data are never touched: the output's bytes of (7FE0,0010) equal the input's.
"""

from __future__ import annotations

import hashlib
import hmac
import io
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import VerificationError
from .profile import BASIC_PROFILE, entry_for

PIXEL_DATA = 0x7FE00010
DUMMY_TEXT = "ANONYMIZED"
DUMMY_BY_VR = {"DA": "19000101", "TM": "000000", "DT": "19000101000000", "AS": "000Y", "PN": "ANONYMOUS",
               "DS": "0", "IS": "0", "CS": "ANONYMIZED", "AE": "ANONYMIZED", "SH": "ANONYMIZED", "UR": "urn:anonymized"}
NUMBER_VRS = {"US": 0, "SS": 0, "UL": 0, "SL": 0, "UV": 0, "SV": 0, "FL": 0.0, "FD": 0.0, "AT": 0}
BYTES_VRS = {"OB", "OW", "OD", "OF", "OL", "OV", "UN"}
METHOD = "DICOM PS3.15 Annex E Basic Application Level Confidentiality Profile"


def pseudonym_uid(uid: str, key: bytes) -> str:
    """A keyed pseudonym of a UID: '2.25.' and 128 bits of HMAC-SHA256(key, uid) as a decimal number
    (at most 44 characters). Without the key nobody can tell which UID it stands for."""
    digest = hmac.new(key, uid.strip().encode("ascii", "replace"), hashlib.sha256).digest()
    return "2.25." + str(int.from_bytes(digest[:16], "big"))


@dataclass
class Outcome:
    """What was done to one file: tags (ints) by the action applied, the cells written (keyword -> text)."""

    actions: dict[int, str] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)
    private_removed: int = 0


def _vr(dataset, tag) -> str | None:
    """An element's VR without decoding its value (implicit VR files: the dictionary's)."""
    from pydicom.datadict import dictionary_VR

    vr = getattr(dataset.get_item(tag), "VR", None)
    if vr is None:
        try:
            vr = dictionary_VR(tag)
        except KeyError:
            return None
    return vr


def private_count(dataset, remove: bool = False) -> int:
    """Private attributes at any nesting level (removed when ``remove``), found without decoding the other
    elements' values (only sequences are opened): decoding every element costs more than the rest."""
    count = 0
    for tag in list(dataset.keys()):
        if tag.is_private:
            count += 1
            if remove:
                del dataset[tag]
        elif _vr(dataset, tag) == "SQ":
            for item in dataset[tag].value or []:
                count += private_count(item, remove)
    return count


def _dummy(element):
    vr = element.VR
    if vr in NUMBER_VRS:
        return NUMBER_VRS[vr]
    if vr in BYTES_VRS:
        return b"\x00\x00"
    return DUMMY_BY_VR.get(vr, DUMMY_TEXT)


def _remap(value, key: bytes):
    if isinstance(value, (list, tuple)) or type(value).__name__ == "MultiValue":
        return [pseudonym_uid(str(v), key) for v in value]
    return pseudonym_uid(str(value), key) if str(value) else value


def _clean(dataset, key: bytes, outcome: Outcome, top: bool) -> None:
    for base_tag in list(dataset.keys()):
        tag = int(base_tag)
        if tag == PIXEL_DATA:
            continue
        entry = entry_for(tag)
        action = entry.action if entry is not None else None
        if top and action:
            outcome.actions[tag] = action
        if action == "X":
            del dataset[tag]
            continue
        if action is None and _vr(dataset, base_tag) != "SQ":
            continue  # not in the profile: kept, and not decoded
        element = dataset[tag]
        if element.VR == "SQ":
            if action == "Z":
                element.value = []
            else:  # D, U or unlisted: the items stay, cleaned (the profile applies at every level)
                for item in element.value:
                    _clean(item, key, outcome, top=False)
        elif action == "Z":
            element.value = None
        elif action == "D":
            element.value = _dummy(element)
        elif action == "U":
            element.value = _remap(element.value, key)


def _fits(vr: str, text: str) -> bool:
    from pydicom import config
    from pydicom.valuerep import validate_value

    try:
        validate_value(vr, text, config.RAISE)
    except (ValueError, KeyError):
        return False
    return True


def write_cell(dataset, keyword: str, text: str) -> None:
    """The published cell into its attribute: in the attribute's own VR when the value fits it, else as LO
    (UT beyond 64 characters); an empty cell leaves the attribute present and empty."""
    from pydicom.datadict import dictionary_VR

    from .headers import tag_of

    tag = tag_of(keyword)
    vr = dictionary_VR(tag)
    value: object = text if text != "" else None
    if text != "" and not _fits(vr, text):
        vr = "LO" if len(text) <= 64 and _fits("LO", text) else "UT"
    if tag in dataset:
        del dataset[tag]
    dataset.add_new(tag, vr, value)


def writable(cells: Mapping[str, str]) -> dict[str, str]:
    """The cells that are written into the file: all but UIDs the profile replaces (U), which get their
    keyed pseudonym whatever role their column had (a published original UID would identify the file)."""
    from .headers import uid_only_identifier

    return {k: v for k, v in cells.items() if not uid_only_identifier(k)}


def deidentify(data: bytes, cells: Mapping[str, str], key: bytes, method: str = METHOD) -> tuple[bytes, Outcome]:
    """The de-identified copy of one DICOM file (bytes in, bytes out; the input is not changed)."""
    import pydicom
    from pydicom.uid import UID

    cells = writable(cells)
    dataset = pydicom.dcmread(io.BytesIO(data))
    outcome = Outcome()
    outcome.private_removed = private_count(dataset, remove=True)
    _clean(dataset, key, outcome, top=True)
    meta = dataset.file_meta
    if "MediaStorageSOPInstanceUID" in meta:
        meta.MediaStorageSOPInstanceUID = UID(pseudonym_uid(str(meta.MediaStorageSOPInstanceUID), key))
        outcome.actions[0x00020003] = "U"
    for keyword, text in cells.items():
        write_cell(dataset, keyword, text)
        outcome.written[keyword] = text
    dataset.PatientIdentityRemoved = "YES"
    dataset.add_new(0x00120063, "LO", method[:64])
    out = io.BytesIO()
    dataset.save_as(out)
    return out.getvalue(), outcome


def _pixel_bytes(dataset) -> bytes | None:
    element = dataset.get(PIXEL_DATA)
    return None if element is None else element.value


def verify(original: bytes, output: bytes, cells: Mapping[str, str], key: bytes) -> None:
    """Check an output file from its bytes: readable; pixel data byte-identical; every Basic Profile
    attribute of the original handled (removed, empty, dummy, pseudonym UID) unless it carries a
    published cell, which must read back exactly; no private attribute left. VerificationError otherwise."""
    import pydicom

    from .headers import cell_text, tag_of

    cells = writable(cells)
    before = pydicom.dcmread(io.BytesIO(original))
    try:
        after = pydicom.dcmread(io.BytesIO(output))
    except Exception as exc:
        raise VerificationError(f"the de-identified file cannot be read back: {exc}") from None
    if _pixel_bytes(before) != _pixel_bytes(after):
        raise VerificationError("the pixel data changed")
    written = {tag_of(k): v for k, v in cells.items()}
    for tag, text in written.items():
        got = cell_text(after.get(tag))
        if got != text:
            raise VerificationError(f"{BASIC_PROFILE.get(tag, tag)}: wrote {text!r}, read back {got!r}")
    if private_count(after):
        raise VerificationError("a private attribute was left in the file")
    for base_tag in before.keys():
        if base_tag.is_private:  # checked above on the whole output
            continue
        tag = int(base_tag)
        entry = entry_for(tag)
        if entry is None or tag in written or tag == PIXEL_DATA:
            continue
        element = before[tag]
        action = entry.action
        present = tag in after
        if action == "X" and present:
            raise VerificationError(f"{entry.tag_text} {entry.name}: should have been removed")
        if action in ("Z", "D", "U") and not present:
            raise VerificationError(f"{entry.tag_text} {entry.name}: should be present")
        if element.VR == "SQ":
            continue
        value = after[tag].value if present else None
        if action == "Z" and value not in (None, "", b"", []):
            raise VerificationError(f"{entry.tag_text} {entry.name}: should be empty")
        if action == "U" and str(element.value) and cell_text(after[tag]) != cell_text_remapped(element, key):
            raise VerificationError(f"{entry.tag_text} {entry.name}: not the pseudonym UID")
        if action == "D" and element.value not in (None, "", b"") and value == element.value:
            raise VerificationError(f"{entry.tag_text} {entry.name}: still holds its original value")


def cell_text_remapped(element, key: bytes) -> str:
    value = element.value
    if isinstance(value, (list, tuple)) or type(value).__name__ == "MultiValue":
        return "\\".join(pseudonym_uid(str(v), key) for v in value)
    return pseudonym_uid(str(value), key)
