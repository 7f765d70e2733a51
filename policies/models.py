"""Release policies: a policy is a named sequence of versions (each a policy file, docs/policies.md) and the
releases published under it, in order (the history m-invariance checks a new release against)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Policy(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="policies")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="policy_unique_name_per_owner")]

    def __str__(self) -> str:
        return self.name

    @property
    def latest(self) -> "PolicyVersion | None":
        return self.versions.order_by("-number").first()


class PolicyVersion(models.Model):
    policy = models.ForeignKey(Policy, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    # The policy file (docs/policies.md), validated on the way in; never holds a secret.
    config = models.JSONField()
    created = models.DateTimeField(auto_now_add=True)
    # The job the version was saved from, if any (none for an imported file).
    source_job = models.ForeignKey("anonymizer_app.Job", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="policy_versions")

    class Meta:
        ordering = ["policy", "number"]
        constraints = [models.UniqueConstraint(fields=["policy", "number"], name="policy_version_unique_number")]

    def __str__(self) -> str:
        return f"{self.policy.name} v{self.number}"


class Release(models.Model):
    """One publication under a policy: the job that produced it and its number in the policy's sequence."""

    policy = models.ForeignKey(Policy, on_delete=models.CASCADE, related_name="releases")
    version = models.ForeignKey(PolicyVersion, on_delete=models.CASCADE, related_name="releases")
    job = models.ForeignKey("anonymizer_app.Job", null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="policy_releases")
    number = models.PositiveIntegerField()
    created = models.DateTimeField(auto_now_add=True)
    # Filled by re-publication models (m-invariance: signatures of the records published so far).
    state = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["policy", "number"]
        constraints = [models.UniqueConstraint(fields=["policy", "number"], name="release_unique_number")]

    def __str__(self) -> str:
        return f"{self.policy.name} release {self.number}"
