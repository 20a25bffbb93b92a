#!/usr/bin/env python3
"""Give a user a key, list their keys, roll one and revoke the old one: the key-administration API from
Python, signing with botocore's SigV4Auth (Debian's python3-botocore, or `pip install botocore`).

    CATALOGUE_ADMIN_URL=https://<id>.lambda-url.<region>.on.aws/v1 python3 admin_client.py user_42

On AWS the request is signed with your application's own AWS credentials (its role, an instance profile,
AWS_PROFILE…: botocore's usual chain) for the service `lambda` in the stack's region. Against `npm start`,
paste the CATALOGUE_ADMIN_* lines it prints: they hold the local credentials it accepts.

It prints one JSON line per call: what the user area would store or show. The key itself is printed once,
by the call that issued it; a real application shows it to its user once and never stores it.
"""
import json
import os
import sys
import urllib.error
import urllib.request
import uuid

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.session import Session


def credentials():
    """The local credentials npm start prints, or the usual AWS chain."""
    key_id = os.environ.get("CATALOGUE_ADMIN_ACCESS_KEY_ID")
    if key_id:
        return Credentials(key_id, os.environ["CATALOGUE_ADMIN_SECRET_ACCESS_KEY"])
    found = Session().get_credentials()
    if found is None:
        sys.exit("no AWS credentials: set AWS_PROFILE or the AWS_ACCESS_KEY_ID variables")
    return found.get_frozen_credentials()


BASE = os.environ["CATALOGUE_ADMIN_URL"].rstrip("/")
REGION = os.environ.get("CATALOGUE_ADMIN_REGION") or os.environ.get("AWS_REGION", "us-east-1")
CREDENTIALS = credentials()


def call(method, path, body=None, idempotency_key=None):
    """One signed call: (status, parsed JSON answer)."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if idempotency_key:
        headers["Idempotency-Key"] = idempotency_key
    request = AWSRequest(method=method, url=BASE + path, data=data, headers=headers)
    SigV4Auth(CREDENTIALS, "lambda", REGION).add_auth(request)
    prepared = request.prepare()
    sent = urllib.request.Request(prepared.url, data=prepared.body, method=method, headers=dict(prepared.headers))
    try:
        with urllib.request.urlopen(sent, timeout=10) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as refused:
        return refused.code, json.load(refused)


def main(owner):
    # Issue: the Idempotency-Key makes a retry of this very call safe (same key id, nothing created twice).
    status, issued = call("POST", "/keys", {"owner": owner, "tier": "free", "label": "from Python"}, str(uuid.uuid4()))
    print(json.dumps({"call": "issue", "status": status, "key_id": issued["data"]["key_id"], "key": issued["data"]["key"]}))
    key_id = issued["data"]["key_id"]

    status, listed = call("GET", "/keys?owner=" + urllib.request.quote(owner, safe=""))
    print(json.dumps({"call": "list", "status": status, "key_ids": [key["key_id"] for key in listed["data"]]}))

    status, rolled = call("POST", "/keys/%s/roll" % key_id, {}, str(uuid.uuid4()))
    print(json.dumps({"call": "roll", "status": status, "key_id": rolled["data"]["key_id"], "key": rolled["data"]["key"],
                      "old_key_expires": rolled["data"]["old_key"]["expires"]}))

    status, revoked = call("POST", "/keys/%s/revoke" % key_id)
    print(json.dumps({"call": "revoke", "status": status, "key_id": key_id, "status_now": revoked["data"]["status"],
                      "effective_by": revoked["data"]["effective_by"]}))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "user_42")
