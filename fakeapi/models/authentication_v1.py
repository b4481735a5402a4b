"""``authentication.k8s.io/v1``: TokenReview ("who does this token authenticate as?") and
SelfSubjectReview ("who am I?") — create-only, answered in ``status``, never stored."""

from typing import ClassVar

from fakeapi.models.base import ATOMIC, KubeModel, TopLevel, opt, req
from fakeapi.models.meta import ObjectMeta

OPENAPI_PACKAGE = "io.k8s.api.authentication.v1"
GROUP, VERSION = "authentication.k8s.io", "v1"


class UserInfo(KubeModel):
    """An authenticated user."""

    username: str | None = opt("The user's name.")
    uid: str | None = opt("A unique value identifying the user across time.")
    groups: list[str] | None = opt("The groups the user belongs to.", markers=ATOMIC)
    extra: dict[str, list[str]] | None = opt("Further information from the authenticator.")


class TokenReviewSpec(KubeModel):
    """The token to check."""

    token: str | None = opt("The opaque bearer token.")
    audiences: list[str] | None = opt("Audiences the token must be valid for; empty is the server's.",
                                      markers=ATOMIC)


class TokenReviewStatus(KubeModel):
    """Who the token authenticates as."""

    authenticated: bool | None = opt("Whether the token is valid.")
    user: UserInfo | None = opt("The user the token authenticates as.")
    audiences: list[str] | None = opt("The audiences the token is valid for.", markers=ATOMIC)
    error: str | None = opt("Why the token could not be checked.")


class TokenReview(TopLevel):
    """Authenticate a token (what a webhook authenticator asks the API server)."""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "TokenReview")
    api_version: str | None = opt(f"{GROUP}/{VERSION}")
    kind: str | None = opt("TokenReview")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    spec: TokenReviewSpec = req("The token.")
    status: TokenReviewStatus | None = opt("The answer, filled in by the server.")


class SelfSubjectReviewStatus(KubeModel):
    """The requesting user."""

    user_info: UserInfo | None = opt("The requesting user's attributes.")


class SelfSubjectReview(TopLevel):
    """Who am I? (``kubectl auth whoami``)"""

    gvk: ClassVar[tuple[str, str, str]] = (GROUP, VERSION, "SelfSubjectReview")
    api_version: str | None = opt(f"{GROUP}/{VERSION}")
    kind: str | None = opt("SelfSubjectReview")
    metadata: ObjectMeta | None = opt("Standard object metadata.")
    status: SelfSubjectReviewStatus | None = opt("The answer, filled in by the server.")


MODELS: dict[str, type[TopLevel]] = {m.gvk[2]: m for m in (TokenReview, SelfSubjectReview)}
