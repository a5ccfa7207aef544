#!/usr/bin/env python3
"""A local stand-in for appleid.apple.com, for Gatehouse's tests: the two endpoints Gatehouse calls, answered the
way Apple documents them, plus faults on request and a signer for server-to-server notifications.

Follows Apple's documentation:
  - Token revocation, POST /auth/revoke (form-encoded client_id, client_secret, token, token_type_hint; 200 with an
    empty body on success):
      https://developer.apple.com/documentation/signinwithapplerestapi/revoke-tokens
  - Error responses, {"error": "invalid_request" | "invalid_client" | "invalid_grant" | "unauthorized_client" |
    "unsupported_grant_type" | "invalid_scope"} with HTTP 400:
      https://developer.apple.com/documentation/signinwithapplerestapi/errorresponse
  - Apple's public keys, GET /auth/keys, a JWKS of RSA keys (kty, kid, use "sig", alg "RS256", n, e):
      https://developer.apple.com/documentation/signinwithapplerestapi/fetch-apple's-public-key-for-verifying-token-signature
  - Server-to-server notifications, POSTed as {"payload": "<JWT>"}; the JWT's claims iss, aud, iat, exp, jti and
    events, a string holding JSON with type, sub, event_time and, for the email events, email and is_private_email:
      https://developer.apple.com/documentation/sign_in_with_apple/processing-changes-for-sign-in-with-apple-accounts
  - TN3194, Handling account deletions and revoking tokens for Sign in with Apple:
      https://developer.apple.com/documentation/technotes/tn3194-handling-account-deletions-and-revoking-tokens-for-sign-in-with-apple
  - App transfers: "Transferring your apps and users to another team", "Bringing new apps and users into your team"
    and TN3159, Migrating Sign in with Apple users for an app transfer:
      https://developer.apple.com/documentation/signinwithapple/transferring-your-apps-and-users-to-another-team
      https://developer.apple.com/documentation/signinwithapple/bringing-new-apps-and-users-into-your-team
      https://developer.apple.com/documentation/technotes/tn3159-migrating-sign-in-with-apple-users-for-an-app-transfer
    POST /auth/token (form grant_type=client_credentials, scope=user.migration, client_id, client_secret) answers
    {"access_token", "token_type": "Bearer", "expires_in": 3600}; POST /auth/usermigrationinfo with
    "Authorization: Bearer <token>" and the form sub + target (sending team) answers {"transfer_sub"}, and the form
    transfer_sub (recipient team) answers {"sub", "email", "is_private_email"}; client_id and client_secret go with
    both. Errors as TN3107 names them: invalid_client (the secret is not the team's), invalid_grant (the token expired
    or is another team's), invalid_request (a user who revoked the app, a missing field, a target that is the sender).

Faults, chosen by the token sent to /auth/revoke: "tok-client" → 400 invalid_client, "tok-grant" → 400 invalid_grant,
"tok-request" → 400 invalid_request, "tok-500" → 500, "tok-slow" → 200 after 5 s, "tok-cut" → the connection closed
without an answer. A client secret that is not an ES256 JWT with a 64-byte signature, aud https://appleid.apple.com
and sub == client_id is answered invalid_client, as Apple does.

Client secrets for the migration endpoints are verified as Apple does, against the public key of the team's key:
with --keys-dir DIR the server reads the public half of every AuthKey_<KID>.p8 there (Apple holds the public half of
the keys it issues), and --team KID=TEAMID binds a key to its team (an unbound key is bound to the first team that
uses it, as the portal's registration would have). Transfer identifiers and new subs are derived deterministically
from the teams and the sub; a sub not registered with /test/config "users" is a Hide My Email user.

Test-only endpoints: POST /test/config {"rate_limit_every": N, "retry_after": S, "latency_ms": M, "fail_every": N,
"revoked": [sub], "users": {sub: {"email", "private"}}, "expire_tokens": true, "refuse_grants": true (every access
token answered invalid_grant), "retry_after_date": true (Retry-After as an HTTP date)} sets the migration faults;
GET /test/identity?sub=S&from=A&to=B → {"transfer_sub", "sub", "email"} for a test to make a straggler;
POST /test/sign {"claims": {...}, "key": "apple"|"other", "kid": "..."} → {"token": "..."};
GET /test/revocations → what /auth/revoke received (the token as its SHA-256 only); GET /test/stats → counters
("early_requests": migration requests that came before the Retry-After of a 429 had passed);
POST /test/keys {"status": 500} makes /auth/keys fail.

Usage: python apple_server.py [--port 0] [--max-age 3600] [--tls-cert PEM --tls-key PEM] [--keys-dir DIR] [--team KID=TEAMID]   (prints "PORT <n>" once
listening; with a certificate it serves HTTPS)
"""
import argparse
import base64
import hashlib
import json
import os
import secrets
import socket
import sys
import threading
import time
import urllib.parse
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

APPLE_KID = "TESTKID001"


def b64url_uint(value: int) -> str:
    data = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class State:
    def __init__(self, max_age: int):
        self.max_age = max_age
        self.apple_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.revocations = []
        self.key_fetches = 0
        self.keys_status = 200
        self.lock = threading.Lock()
        # App transfers.
        self.keys_dir = None
        self.team_of_key = {}
        self.public_keys = {}
        self.tokens = {}
        self.transfer_subs = {}
        self.users = {}
        self.revoked = set()
        self.rate_limit_every = 0
        self.retry_after = 1
        self.latency_ms = 0
        self.fail_every = 0
        self.token_ttl = 3600
        self.token_requests = 0
        self.migration_requests = 0
        self.rate_limited = 0
        self.refuse_grants = False
        self.retry_after_date = False
        self.blocked_until = 0.0
        self.early_requests = 0

    def public_key(self, kid):
        """The public half of key `kid` from --keys-dir, or None."""
        with self.lock:
            if kid in self.public_keys:
                return self.public_keys[kid]
        if not self.keys_dir or not kid.isalnum():
            return None
        path = os.path.join(self.keys_dir, f"AuthKey_{kid}.p8")
        try:
            with open(path, "rb") as handle:
                private = serialization.load_pem_private_key(handle.read(), password=None)
        except (OSError, ValueError):
            return None
        public = private.public_key()
        with self.lock:
            self.public_keys[kid] = public
        return public

    def jwks(self):
        numbers = self.apple_key.public_key().public_numbers()
        return {"keys": [{"kty": "RSA", "kid": APPLE_KID, "use": "sig", "alg": "RS256",
                          "n": b64url_uint(numbers.n), "e": b64url_uint(numbers.e)}]}


def client_secret_fault(secret: str, client_id: str):
    """Why Apple would answer invalid_client to this client secret, or None."""
    try:
        header = jwt.get_unverified_header(secret)
        claims = jwt.decode(secret, options={"verify_signature": False, "verify_exp": False, "verify_aud": False})
        signature = base64.urlsafe_b64decode(secret.split(".")[2] + "==")
    except Exception as error:  # noqa: BLE001 - any undecodable secret is invalid_client
        return f"undecodable: {error}"
    if header.get("alg") != "ES256" or not header.get("kid"):
        return "alg/kid"
    if len(signature) != 64:
        return "signature is not raw r||s"
    if claims.get("aud") != "https://appleid.apple.com" or claims.get("sub") != client_id:
        return "aud/sub"
    if not isinstance(claims.get("iss"), str) or len(claims["iss"]) != 10:
        return "iss"
    if claims.get("exp", 0) - claims.get("iat", 0) > 15_777_000 or claims.get("exp", 0) < time.time():
        return "lifetime"
    return None


def derive(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def apple_sub(digest: str) -> str:
    """An identifier shaped like Apple's team-scoped subs: 000123.<32 hex>.0123."""
    return f"{int(digest[:5], 16) % 1000000:06d}.{digest[5:37]}.{int(digest[37:41], 16) % 10000:04d}"


def migration_secret_team(state: State, secret: str, client_id: str):
    """The team a migration request's client secret is signed for, or None when Apple would answer invalid_client:
    ES256 by a key Apple issued (its public half), iss the key's team, aud Apple, sub the client id, not expired."""
    if client_secret_fault(secret, client_id):
        return None
    try:
        kid = jwt.get_unverified_header(secret).get("kid", "")
        key = state.public_key(kid)
        if key is None:
            return None
        claims = jwt.decode(secret, key, algorithms=["ES256"], audience="https://appleid.apple.com")
    except Exception:  # noqa: BLE001 - a bad signature is invalid_client
        return None
    team = claims.get("iss")
    with state.lock:
        bound = state.team_of_key.setdefault(kid, team)
    return team if bound == team else None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State = None

    def log_message(self, fmt, *args):  # quiet
        pass

    def body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status: int, payload=None, headers=None):
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        if payload is not None:
            self.send_header("Content-Type", "application/json;charset=UTF-8")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        state = self.state
        if self.path == "/auth/keys":
            with state.lock:
                state.key_fetches += 1
                status = state.keys_status
            if status != 200:
                self.send(status, {"error": "server_error"})
                return
            self.send(200, state.jwks(), {"Cache-Control": f"max-age={state.max_age}"})
        elif self.path == "/test/revocations":
            with state.lock:
                self.send(200, state.revocations)
        elif self.path == "/test/stats":
            with state.lock:
                self.send(200, {"key_fetches": state.key_fetches, "revocations": len(state.revocations),
                                "token_requests": state.token_requests, "migration_requests": state.migration_requests,
                                "rate_limited": state.rate_limited, "early_requests": state.early_requests})
        elif self.path.startswith("/test/identity?"):
            query = {k: v[0] for k, v in urllib.parse.parse_qs(self.path.split("?", 1)[1]).items()}
            sub, source, target = query.get("sub", ""), query.get("from", ""), query.get("to", "")
            new_sub, email, _ = self.recipient_view(sub, target)
            self.send(200, {"transfer_sub": apple_sub(derive("transfer", source, target, sub)), "sub": new_sub, "email": email})
        else:
            self.send(404, {"error": "not_found"})

    def do_POST(self):
        state = self.state
        body = self.body()
        if self.path == "/auth/revoke":
            self.revoke(body)
        elif self.path == "/test/sign":
            request = json.loads(body)
            key = state.apple_key if request.get("key", "apple") == "apple" else state.other_key
            token = jwt.encode(request["claims"], key, algorithm="RS256", headers={"kid": request.get("kid", APPLE_KID)})
            self.send(200, {"token": token})
        elif self.path == "/auth/token":
            self.token(body)
        elif self.path == "/auth/usermigrationinfo":
            self.migration_info(body)
        elif self.path == "/test/config":
            config = json.loads(body)
            with state.lock:
                for name in ("rate_limit_every", "retry_after", "latency_ms", "fail_every", "token_ttl", "refuse_grants", "retry_after_date"):
                    if name in config:
                        setattr(state, name, config[name])
                state.revoked |= set(config.get("revoked", []))
                state.users.update(config.get("users", {}))
                if config.get("expire_tokens"):
                    state.tokens.clear()
            self.send(200, {})
        elif self.path == "/test/keys":
            with state.lock:
                state.keys_status = json.loads(body).get("status", 200)
            self.send(200, {})
        else:
            self.send(404, {"error": "not_found"})

    def form(self, body: bytes):
        if not (self.headers.get("Content-Type") or "").startswith("application/x-www-form-urlencoded"):
            return None
        return {k: v[0] for k, v in urllib.parse.parse_qs(body.decode(errors="replace"), keep_blank_values=True).items()}

    def token(self, body: bytes):
        state = self.state
        with state.lock:
            state.token_requests += 1
        form = self.form(body)
        if form is None or not form.get("client_id") or not form.get("client_secret"):
            self.send(400, {"error": "invalid_request"})
            return
        if form.get("grant_type") != "client_credentials":
            self.send(400, {"error": "unsupported_grant_type"})
            return
        if form.get("scope") != "user.migration":
            self.send(400, {"error": "invalid_scope"})
            return
        team = migration_secret_team(state, form["client_secret"], form["client_id"])
        if team is None:
            self.send(400, {"error": "invalid_client"})
            return
        token = "at_" + secrets.token_urlsafe(24)
        with state.lock:
            state.tokens[token] = (team, form["client_id"], time.time() + state.token_ttl)
        self.send(200, {"access_token": token, "token_type": "Bearer", "expires_in": state.token_ttl})

    def recipient_view(self, sub: str, target: str):
        """The recipient team's identifiers for the sending team's `sub`: new sub, email, is_private_email."""
        new_sub = apple_sub(derive("sub", target, sub))
        with self.state.lock:
            user = self.state.users.get(sub)
        if user and not user.get("private", True):
            return new_sub, user["email"], False
        return new_sub, derive("relay", target, sub)[:12] + "@privaterelay.appleid.com", True

    def migration_info(self, body: bytes):
        state = self.state
        with state.lock:
            state.migration_requests += 1
            count = state.migration_requests
            limited = state.rate_limit_every and count % state.rate_limit_every == 0
            failing = state.fail_every and count % state.fail_every == 0
            latency, retry_after, as_date = state.latency_ms, state.retry_after, state.retry_after_date
            if time.time() < state.blocked_until:
                state.early_requests += 1
            if limited:
                state.rate_limited += 1
        if latency:
            time.sleep(latency / 1000)
        if limited:
            until = time.time() + retry_after
            if as_date:
                # An HTTP date has whole seconds: the client may come back at the second it names.
                until = float(int(until))
                header = formatdate(until, usegmt=True)
            else:
                header = str(retry_after)
            with state.lock:
                state.blocked_until = until
            self.send(429, {"error": "rate_limited"}, {"Retry-After": header})
            return
        if failing:
            self.send(503, None)
            return
        form = self.form(body)
        if form is None or not form.get("client_id") or not form.get("client_secret"):
            self.send(400, {"error": "invalid_request"})
            return
        authorization = self.headers.get("Authorization") or ""
        token = authorization[7:] if authorization.startswith("Bearer ") else ""
        team = migration_secret_team(state, form["client_secret"], form["client_id"])
        if team is None:
            self.send(400, {"error": "invalid_client"})
            return
        with state.lock:
            issued = state.tokens.get(token)
        if not issued or issued[2] < time.time() or issued[0] != team or issued[1] != form["client_id"] or state.refuse_grants:
            self.send(400, {"error": "invalid_grant"})
            return
        if "sub" in form:
            sub, target = form["sub"], form.get("target", "")
            if not sub or len(target) != 10 or target == team or sub in state.revoked:
                self.send(400, {"error": "invalid_request"})
                return
            transfer_sub = apple_sub(derive("transfer", team, target, sub))
            with state.lock:
                state.transfer_subs[transfer_sub] = (team, sub, target)
            self.send(200, {"transfer_sub": transfer_sub})
        elif "transfer_sub" in form:
            with state.lock:
                known = state.transfer_subs.get(form["transfer_sub"])
            if not known or known[2] != team:
                self.send(400, {"error": "invalid_request"})
                return
            new_sub, email, private = self.recipient_view(known[1], team)
            self.send(200, {"sub": new_sub, "email": email, "is_private_email": private})
        else:
            self.send(400, {"error": "invalid_request"})

    def revoke(self, body: bytes):
        if not (self.headers.get("Content-Type") or "").startswith("application/x-www-form-urlencoded"):
            self.send(400, {"error": "invalid_request"})
            return
        form = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode(), keep_blank_values=True).items()}
        token = form.get("token", "")
        with self.state.lock:
            self.state.revocations.append({
                "client_id": form.get("client_id"), "token_type_hint": form.get("token_type_hint"),
                "token_sha256": hashlib.sha256(token.encode()).hexdigest(),
                "client_secret_fault": client_secret_fault(form.get("client_secret", ""), form.get("client_id", "")),
            })
        if not form.get("client_id") or not form.get("client_secret") or not token:
            self.send(400, {"error": "invalid_request"})
        elif token == "tok-cut":
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        elif token == "tok-500":
            self.send(500, None)
        elif token == "tok-slow":
            time.sleep(5)
            self.send(200, None)
        elif token == "tok-client" or client_secret_fault(form["client_secret"], form["client_id"]):
            self.send(400, {"error": "invalid_client"})
        elif token == "tok-grant":
            self.send(400, {"error": "invalid_grant"})
        elif token == "tok-request":
            self.send(400, {"error": "invalid_request"})
        else:
            self.send(200, None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--max-age", type=int, default=3600)
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (and --tls-key)")
    parser.add_argument("--tls-key", help="the certificate's PEM private key")
    parser.add_argument("--keys-dir", help="the folder of AuthKey_<KID>.p8 files whose public halves verify migration client secrets")
    parser.add_argument("--team", action="append", default=[], help="KID=TEAMID: the team a key belongs to")
    args = parser.parse_args()
    Handler.state = State(args.max_age)
    Handler.state.keys_dir = args.keys_dir
    for binding in args.team:
        kid, _, team = binding.partition("=")
        Handler.state.team_of_key[kid] = team
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    if args.tls_cert:
        # HTTPS as appleid.apple.com serves it (TLS 1.2 or later), with a certificate the test made for 127.0.0.1.
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
