"""Schemathesis hooks that sign every request as `mallcheck serve` expects (spec §5).

The reference server checks `Authorization: <appid> <signature>` with the md5 signer: the
signature is the lowercase hex md5 of the raw body bytes followed by the key. The body is only
final once `requests` has prepared it, so the signature is added by a `requests` auth callable
that sees the prepared request.

Only a request that carries the placeholder `Authorization: <appid> SIGN` (given with
`-H 'Authorization: mallcheck-demo-app SIGN'`) is signed; a request from which Schemathesis
removed or replaced the header (its `ignored_auth` check) is sent as it is.

The key comes from MALLCHECK_SIGN_KEY and the appid put in every body from MALLCHECK_APPID (the
demo key and appid of `mallcheck serve` by default). About half of the bodies also get a known
seller (MALLCHECK_MERCHANT_ID, MALLCHECK_MERCHANT_USER_ID, MALLCHECK_ROLE) and mall
(MALLCHECK_MALL_SN, MALLCHECK_MALL_SIGNATURE) when those are set, so that the calls reach data.

    SCHEMATHESIS_HOOKS=schemathesis_hooks schemathesis run openapi.json \
        --url http://127.0.0.1:8080 -H 'Authorization: mallcheck-demo-app SIGN'
"""

import hashlib
import os

import schemathesis

PLACEHOLDER = "SIGN"
KEY = os.environ.get("MALLCHECK_SIGN_KEY", "mallcheck-demo-key")
APPID = os.environ.get("MALLCHECK_APPID", "mallcheck-demo-app")
SELLER = {
    "merchantId": os.environ.get("MALLCHECK_MERCHANT_ID", ""),
    "merchantUserId": os.environ.get("MALLCHECK_MERCHANT_USER_ID", ""),
    "role": os.environ.get("MALLCHECK_ROLE", ""),
}
MALL_SN = os.environ.get("MALLCHECK_MALL_SN", "")
MALL_SIGNATURE = os.environ.get("MALLCHECK_MALL_SIGNATURE", "")


def sign(request):
    value = request.headers.get("Authorization")
    if value is None:
        return request
    appid, _, signature = value.partition(" ")
    if signature != PLACEHOLDER:
        return request
    body = request.body or b""
    if isinstance(body, str):
        body = body.encode("utf-8")
    digest = hashlib.md5(body + KEY.encode("utf-8")).hexdigest()
    request.headers["Authorization"] = f"{appid} {digest}"
    return request


def known(body):
    """Whether this body gets the known seller and mall: for about half of the bodies, chosen
    by their content so that a run with a seed repeats."""
    return hashlib.md5(repr(body).encode("utf-8")).digest()[0] % 2 == 0


def put_known_seller(seller):
    if isinstance(seller, dict) and all(isinstance(seller.get(k), str) for k in SELLER):
        for k, v in SELLER.items():
            if v:
                seller[k] = v


@schemathesis.hook
def before_call(context, case, kwargs):
    body = case.body
    if isinstance(body, dict):
        # §5.1: the body's appid is the first part of Authorization. Schemathesis cannot know
        # the deployment's appid, so a generated string appid is replaced by it (a body whose
        # appid is not a string is left alone and stays invalid).
        if isinstance(body.get("appid"), str):
            body["appid"] = APPID
        # Random ids name no merchant or mall, so every products call would be a 404: reach
        # the data with the known seller and mall too (only where the generated values are
        # strings, so an invalid body stays invalid).
        if known(body):
            put_known_seller(body.get("seller"))
            put_known_seller((body.get("filter") or {}).get("seller") if isinstance(body.get("filter"), dict) else None)
            mall = body.get("mallID")
            if MALL_SN and isinstance(mall, dict) and all(isinstance(mall.get(k), str) for k in ("mallSn", "signature")):
                mall["mallSn"] = MALL_SN
                mall["signature"] = MALL_SIGNATURE
    kwargs["auth"] = sign
