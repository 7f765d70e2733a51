"""The pre-flight of a run: the high-confidence suggestions whose column would be published as it is."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .findings import PERSON_ID, Detection, Suggestion

# roles that publish a column's values as they are; identifying, quasi-identifying and person id handle the column
# (removed, pseudonymized or generalized)
HELD_ROLES = ("insensitive", "sensitive")


def unconfirmed(detection: Detection, roles: Mapping[str, str], confirmed: Iterable[str] = ()) -> list[Suggestion]:
    """The high-confidence suggestions whose column would be published as is (role insensitive or
    sensitive) without the user's confirmation: a run is held until each is confirmed or its role set."""
    ok = {str(c) for c in confirmed}
    return [s for s in detection.high
            if str(roles.get(s.column, "insensitive")) in HELD_ROLES and s.column not in ok]


def hold_message(s: Suggestion, how_to_confirm: str = "confirm that it may be published as is") -> str:
    """The pre-flight's message for one held column."""
    role = PERSON_ID if s.person_id else "identifying"
    return (f"Column {s.column!r} looks like a direct identifier ({s.reason}); its values would be published "
            f"as they are. Set its role to {role}, or {how_to_confirm}.")


def is_person_id(s: Suggestion | None) -> bool:
    return bool(s and s.person_id)
