"""``meta.k8s.io/v1`` options that travel as request bodies: DeleteOptions.

Not kinds of their own (no ``gvk``, not in ``MODELS``): a DELETE body is decoded against
:class:`DeleteOptions` with the same schema machinery as objects, so a wrong type is a 400 with
Go's decoder message instead of a failure deep in the delete path.
"""

from fakeapi.models.base import ATOMIC, Int64, KubeModel, opt

OPENAPI_PACKAGE = "io.k8s.apimachinery.pkg.apis.meta.v1"


class Preconditions(KubeModel):
    """What must hold of the object for the operation to go ahead."""

    uid: str | None = opt("The object's UID must be this one.")
    resource_version: str | None = opt("The object's resourceVersion must be this one.")


class DeleteOptions(KubeModel):
    """Options of a delete: grace period, preconditions, propagation of the deletion, dry run."""

    api_version: str | None = opt("APIVersion of this representation of the options.")
    kind: str | None = opt("DeleteOptions.")
    grace_period_seconds: Int64 | None = opt(
        "Seconds before the object is deleted; zero deletes immediately, unset uses the kind's default.")
    preconditions: Preconditions | None = opt("Must be fulfilled before the deletion is carried out.")
    orphan_dependents: bool | None = opt("Deprecated: use propagationPolicy.  Whether dependents are orphaned.")
    propagation_policy: str | None = opt("Orphan, Background or Foreground: how dependents are deleted.")
    dry_run: list[str] | None = opt("All: process the request without persisting anything.", markers=ATOMIC)
    ignore_store_read_error_with_cluster_breaking_potential: bool | None = opt(
        "Delete an object that cannot be read from storage (not applicable here: every object reads).")
