"""Registry names as people read them: a privacy model's label ("distinct l-diversity"), never its registry key
("distinct-l-diversity"); what an algorithm supports, from its registry entry (never a list in a template); the
sources a page links to, from theirs."""

from django import template

from ..engine import algorithms
from ..engine.privacy import PRIVACY_MODELS
from ..services import sources

register = template.Library()


@register.filter
def model_labels(names) -> str:
    """The models' labels, comma separated; a name the registry no longer knows is shown as it is."""
    return ", ".join(PRIVACY_MODELS[n].label if n in PRIVACY_MODELS else str(n) for n in names)


@register.filter
def algorithm_supports(name, flag: str) -> bool:
    """Does the algorithm ``name`` support ``flag`` (lattice, cluster, out_of_core, person_level)?"""
    return algorithms.supports(str(name), flag)


@register.simple_tag
def linked_sources() -> list:
    """The sources the datasets page links to (services/sources: one link per page, registry order)."""
    return sources.linked()
