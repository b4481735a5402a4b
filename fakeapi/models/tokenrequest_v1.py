"""``authentication.k8s.io/v1`` TokenRequest: the body of ``serviceaccounts/{name}/token``."""

from typing import ClassVar

from fakeapi.models.base import ATOMIC, VALUE_STRUCT, Int64, KubeModel, Time, TopLevel, opt
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.authentication.v1"


class BoundObjectReference(KubeModel):
    """The object a token is bound to: it is valid only while that object exists."""

    kind: str | None = opt("Pod, Secret or Node.")
    api_version: str | None = opt("API version of the referent (v1).")
    name: str | None = opt("Name of the referent.")
    uid: str | None = opt("UID of the referent; when set it must match.")


class TokenRequestSpec(KubeModel):
    """What the token is for."""

    audiences: list[str] | None = opt("Intended audiences; empty means the API server's.", markers=ATOMIC)
    expiration_seconds: Int64 | None = opt("Requested lifetime, at least 600 (default 3600).")
    bound_object_ref: BoundObjectReference | None = opt("The object the token is bound to.")
    attestations: dict[str, list[str]] | None = opt("Claims the API server is asked to attest (ignored).")


class TokenRequestStatus(KubeModel):
    """The issued token."""

    token: str | None = opt("The opaque bearer token.")
    expiration_timestamp: Time | None = opt("When the token expires.")


class TokenRequest(TopLevel):
    """Requests a token for a service account (``kubectl create token``)."""

    gvk: ClassVar[tuple[str, str, str]] = ("authentication.k8s.io", "v1", "TokenRequest")
    api_version: str | None = opt("authentication.k8s.io/v1")
    kind: str | None = opt("TokenRequest")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: TokenRequestSpec | None = opt("What the token is for.", markers=VALUE_STRUCT)
    status: TokenRequestStatus | None = opt("The issued token, filled in by the server.", markers=VALUE_STRUCT)


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (TokenRequest,)}
