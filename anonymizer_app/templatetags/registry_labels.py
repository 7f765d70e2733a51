"""Registry names as people read them: a privacy model's label ("distinct l-diversity"), never its registry key
("distinct-l-diversity")."""

from django import template

from ..engine.privacy import PRIVACY_MODELS

register = template.Library()


@register.filter
def model_labels(names) -> str:
    """The models' labels, comma separated; a name the registry no longer knows is shown as it is."""
    return ", ".join(PRIVACY_MODELS[n].label if n in PRIVACY_MODELS else str(n) for n in names)
