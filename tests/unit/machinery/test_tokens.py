"""Service account tokens: what one issuer signs it verifies; anything else is refused."""

from __future__ import annotations

import base64
import json

import pytest

from fakeapi.machinery.tokens import BoundObject, InvalidToken, TokenIssuer

NOW = 1_800_000_000.0
ISSUER = TokenIssuer()


def _claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def test_issued_token_verifies_with_the_account_and_bound_object():
    token, expiration = ISSUER.issue_token("team", "builder", [], 3600, BoundObject("Pod", "p", "uid-p"),
                                           service_account_uid="uid-sa", now=NOW)
    claims = ISSUER.verify_token(token, now=NOW + 10)
    assert (claims.namespace, claims.service_account, claims.service_account_uid) == ("team", "builder", "uid-sa")
    assert claims.username == "system:serviceaccount:team:builder"
    assert claims.groups == ("system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated")
    assert claims.bound_object == BoundObject("Pod", "p", "uid-p")
    assert claims.audiences == ("https://kubernetes.default.svc.cluster.local",)
    assert expiration.timestamp() == NOW + 3600 == claims.expiration.timestamp()
    raw = _claims(token)
    assert raw["sub"] == "system:serviceaccount:team:builder"
    assert raw["kubernetes.io"]["pod"] == {"name": "p", "uid": "uid-p"}


def _tampered() -> str:
    token, _ = ISSUER.issue_token("team", "builder", [], 3600, now=NOW)
    header, _payload, signature = token.split(".")
    forged = base64.urlsafe_b64encode(json.dumps({**_claims(token), "sub": "x"}).encode()).rstrip(b"=").decode()
    return f"{header}.{forged}.{signature}"


@pytest.mark.parametrize(("token", "audiences", "at", "problem"), [
    (lambda: ISSUER.issue_token("ns", "sa", [], 600, now=NOW)[0], (), NOW + 600, "expired"),
    (lambda: ISSUER.issue_token("ns", "sa", [], 600, now=NOW)[0], (), NOW - 5, "not valid yet"),
    (lambda: ISSUER.issue_token("ns", "sa", ["vault"], 600, now=NOW)[0], (), NOW, "audiences"),
    (lambda: TokenIssuer().issue_token("ns", "sa", [], 600, now=NOW)[0], (), NOW, "not signed by this server"),
    (_tampered, (), NOW, "invalid signature"),
    (lambda: "not-a-jwt", (), NOW, "not a JWT"),
    (lambda: "a.b.c", (), NOW, "malformed"),
], ids=["expired", "before-nbf", "wrong-audience", "other-issuer", "tampered", "not-jwt", "garbage"])
def test_invalid_tokens_are_refused(token, audiences, at, problem):
    with pytest.raises(InvalidToken, match=problem):
        ISSUER.verify_token(token(), audiences, now=at)


def test_a_requested_audience_is_accepted_when_the_caller_names_it():
    token, _ = ISSUER.issue_token("ns", "sa", ["vault"], 600, now=NOW)
    assert ISSUER.verify_token(token, ["vault"], now=NOW).audiences == ("vault",)


def test_each_issuer_has_its_own_key_made_when_first_needed():
    """The key pair is generated lazily: an issuer that has issued nothing yet still refuses
    another's tokens, and its key id stays the one its tokens carry."""
    first, second = TokenIssuer(), TokenIssuer()
    token, _ = first.issue_token("ns", "sa", [], 600, now=NOW)
    with pytest.raises(InvalidToken, match="not signed by this server"):
        second.verify_token(token, now=NOW)
    assert first.key_id != second.key_id
    own, _ = second.issue_token("ns", "sa", [], 600, now=NOW)
    assert second.verify_token(own, now=NOW).service_account == "sa"
    assert json.loads(base64.urlsafe_b64decode(own.split(".")[0] + "=="))["kid"] == second.key_id
