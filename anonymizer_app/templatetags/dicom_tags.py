"""{% load dicom_tags %}: what the shared pages need to know about a DICOM dataset (services.dicom)."""

from __future__ import annotations

from django import template

from ..services import dicom

register = template.Library()


@register.filter
def dicom_info(dataset) -> dict | None:
    """The level, what a row is, the number of files; None for a dataset that is not DICOM."""
    return dicom.describe(dataset) if dataset is not None and dataset.pk else None
