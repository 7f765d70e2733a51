"""A user's library of generalization hierarchies."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from anonymizer_app.engine.model import hierarchy as engine_hierarchy

NAME_MAX = 200  # characters of a hierarchy's name (the column's max_length)


def fit_name(text: str, limit: int = NAME_MAX) -> str:
    """A name we derive (column and dataset names, a file name) shortened to fit the column with '…'; a name
    the user types is refused when too long instead (forms say so)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Hierarchy(models.Model):
    CONFLICT_CHOICES = [
        ("error", "refuse contradictory rows"),
        ("lift", "lift ambiguous values to where their paths agree"),
        ("first", "keep the first path of ambiguous values"),
    ]

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="hierarchies")
    name = models.CharField(max_length=NAME_MAX)
    source_name = models.CharField(max_length=255, blank=True, help_text="file the hierarchy came from")
    # The one-row-per-leaf text exactly as uploaded; parsed on use so the file is never rewritten.
    content = models.TextField()
    delimiter = models.CharField(max_length=1, default=";")
    on_conflict = models.CharField(max_length=10, choices=CONFLICT_CHOICES, default="error")
    # Format of the uploaded file (engine.model.formats.FORMATS) or "builder"/"editor"; content is always
    # one row per leaf: an Amnesia upload is stored converted, an ARX or Datafly one as uploaded.
    source_format = models.CharField(max_length=20, blank=True, default="")
    leaves = models.PositiveIntegerField(default=0)
    height = models.PositiveIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return self.name

    def to_engine(self, column: str | None = None) -> engine_hierarchy.Hierarchy:
        cache = getattr(self, "_parsed", None)
        if cache is None:
            cache = engine_hierarchy.parse_hierarchy(
                self.content, column or self.name, self.source_name or self.name, self.delimiter, self.on_conflict
            )
            self._parsed = cache
        return cache

    @classmethod
    def from_text(cls, owner, name: str, text: str, source_name: str = "", on_conflict: str = "error",
                  delimiter: str | None = None) -> "Hierarchy":
        """Parse (raising HierarchyError with file and line on bad input), then build an unsaved row."""
        delimiter = delimiter or engine_hierarchy.sniff_hierarchy_delimiter(text)
        parsed = engine_hierarchy.parse_hierarchy(text, name, source_name or name, delimiter, on_conflict)
        obj = cls(owner=owner, name=name, source_name=source_name, content=text, delimiter=delimiter,
                  on_conflict=on_conflict, leaves=len(parsed.leaves), height=parsed.height)
        obj._parsed = parsed
        return obj
