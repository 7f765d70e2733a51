"""What identifier detection returns: a column's :class:`Suggestion`, a :class:`FreeTextFinding` and a table's
:class:`Detection`, with the roles and confidence levels they name."""

from __future__ import annotations

from dataclasses import dataclass, field

IDENTIFYING = "identifying"
PERSON_ID = "person id"  # the role of a repeating person/patient id (model.table.Role.PERSON's value)
HIGH, MEDIUM, LOW = "high", "medium", "low"
HIGH_SCORE, MEDIUM_SCORE = 0.8, 0.5  # score >= 0.8: high; >= 0.5: medium; else low


@dataclass(frozen=True)
class Suggestion:
    """A column suggested as an identifier: why, how sure, and which role to give it."""

    column: str
    kind: str  # what it looks like: "surname", "e-mail", "person id", "unique values", ...
    confidence: str  # high, medium or low
    score: float  # 0..1 (high >= 0.8, medium >= 0.5)
    reasons: tuple[str, ...]
    role: str = IDENTIFYING  # the role to give it: identifying, or "person id" for a repeating id (``person_id``)
    person_id: bool = False  # an id that repeats across records: one person, several records
    rows: int = 0  # non-missing values
    distinct: int = 0

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)

    @property
    def suggested_role(self) -> str:
        """The role named in words: "person id" for a repeating person id, else the role (kept beside ``role``
        for the callers that read it; both say the same since the person-id role exists)."""
        return PERSON_ID if self.person_id else self.role

    def to_dict(self) -> dict:
        return {"column": self.column, "kind": self.kind, "confidence": self.confidence,
                "score": round(self.score, 3), "reason": self.reason, "role": self.role,
                "suggested_role": self.suggested_role, "person_id": self.person_id,
                "rows": self.rows, "distinct": self.distinct}


@dataclass(frozen=True)
class FreeTextFinding:
    """A text column holding e-mail addresses or phone numbers inside longer values."""

    column: str
    sampled: int  # values looked at
    emails: int  # sampled values holding an e-mail address
    phones: int  # ... a phone number
    samples: tuple[str, ...]  # masked

    @property
    def message(self) -> str:
        what = []
        if self.emails:
            what.append(f"{self.emails:,} with an e-mail address")
        if self.phones:
            what.append(f"{self.phones:,} with a phone number")
        sample = f" (e.g. {', '.join(self.samples)})" if self.samples else ""
        return f"free text: of {self.sampled:,} values looked at, {' and '.join(what)}{sample}"

    def to_dict(self) -> dict:
        return {"column": self.column, "sampled": self.sampled, "emails": self.emails, "phones": self.phones,
                "samples": list(self.samples), "message": self.message}


@dataclass
class Detection:
    """Every suggestion and free-text finding of a table, in column order."""

    suggestions: list[Suggestion] = field(default_factory=list)
    free_text: list[FreeTextFinding] = field(default_factory=list)

    def for_column(self, column: str) -> Suggestion | None:
        return next((s for s in self.suggestions if s.column == column), None)

    def free_text_for(self, column: str) -> FreeTextFinding | None:
        return next((f for f in self.free_text if f.column == column), None)

    def with_confidence(self, *levels: str) -> list[Suggestion]:
        return [s for s in self.suggestions if s.confidence in levels]

    @property
    def high(self) -> list[Suggestion]:
        return self.with_confidence(HIGH)

    def to_dict(self) -> dict:
        return {"suggestions": [s.to_dict() for s in self.suggestions],
                "free_text": [f.to_dict() for f in self.free_text]}


def confidence_of(score: float) -> str:
    return HIGH if score >= HIGH_SCORE else MEDIUM if score >= MEDIUM_SCORE else LOW

