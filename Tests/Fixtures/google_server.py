#!/usr/bin/env python3
"""A local stand-in for Google's Cross-Account Protection (RISC), for Gatehouse's tests: the discovery document and
key set a receiver verifies security event tokens with, the stream management API a service account calls, and a
signer for security event tokens of every type (and forged ones).

Written from Google's page and the specifications it builds on:
  - Protect user accounts with Cross-Account Protection (discovery at /.well-known/risc-configuration with issuer and
    jwks_uri; RS256 tokens; aud is one of the app's client ids; exp is not checked; the event types and their
    subjects; token-revoked's token_identifier_alg "prefix" (the first 16 characters) and "hash_base64_sha512_sha512";
    the management API's stream:update, stream, stream/status:update and stream:verify, authorised by a JWT the service
    account signs RS256 with iss = sub = its email and aud
    https://risc.googleapis.com/google.identity.risc.v1beta.RiscManagementService):
      https://developers.google.com/identity/protocols/risc
  - RFC 8417, Security Event Token (SET): https://www.rfc-editor.org/rfc/rfc8417
  - RFC 8935, Push-Based Security Event Token Delivery Using HTTP (the POST of the token, 202 / 400 {"err", "description"}):
      https://www.rfc-editor.org/rfc/rfc8935
  - OpenID RISC Event Types 1.0: https://openid.net/specs/openid-risc-event-types-1_0.html

Test-only endpoints:
  POST /test/sign {"event": "sessions-revoked", "sub", "aud", "jti", "iat", "exp", "reason", "state", "token_alg",
                   "token", "key": "google"|"other"|"rotated", "alg": "RS256"|"HS256"|"none", "iss", "kid",
                   "omit": [claim], "second_event": true, "no_subject": true} → {"token"}
  POST /test/sign-many {"event", "subs": [...], "aud"} → {"tokens": [...]}, one per sub, each with its own jti
  POST /test/service-account → {"key": <a service account's JSON key the management API accepts>}
  POST /test/rotate → a second signing key joins the key set (kid risc-key-2)
  POST /test/config {"keys_status": 500, "issuer": "https://…", "jwks_path": "/…"} → the discovery document and key set
                   answer that status; the discovery document names that issuer (which tokens are then signed with) and
                   serves the key set at that path (by default Google's: https://accounts.google.com/, /oauth2/v3/certs)
  GET  /test/stats → {"discovery": N, "certs": N, "management": [{"method", "path", "body"}], "pushes": [{"url", "status"}]}

Usage: python google_server.py [--port 0]   (prints "PORT <n>" once listening)
"""
import argparse
import base64
import hashlib
import hmac
import json
import sys
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER = "https://accounts.google.com/"
MANAGEMENT_AUDIENCE = "https://risc.googleapis.com/google.identity.risc.v1beta.RiscManagementService"
TYPES = {
    "sessions-revoked": "https://schemas.openid.net/secevent/risc/event-type/sessions-revoked",
    "tokens-revoked": "https://schemas.openid.net/secevent/oauth/event-type/tokens-revoked",
    "token-revoked": "https://schemas.openid.net/secevent/oauth/event-type/token-revoked",
    "account-disabled": "https://schemas.openid.net/secevent/risc/event-type/account-disabled",
    "account-enabled": "https://schemas.openid.net/secevent/risc/event-type/account-enabled",
    "account-credential-change-required": "https://schemas.openid.net/secevent/risc/event-type/account-credential-change-required",
    "verification": "https://schemas.openid.net/secevent/risc/event-type/verification",
}


def b64url_uint(value: int) -> str:
    data = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwk(key, kid):
    numbers = key.public_key().public_numbers()
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64url_uint(numbers.n), "e": b64url_uint(numbers.e)}


class State:
    def __init__(self):
        self.keys = {"risc-key-1": rsa.generate_private_key(public_exponent=65537, key_size=2048)}
        self.other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.rotated = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.service_accounts = {}  # kid -> (email, public key)
        self.stream = {"delivery": None, "events_requested": [], "status": "disabled"}
        self.keys_status = 200
        self.issuer = ISSUER
        self.jwks_path = "/oauth2/v3/certs"
        self.discovery = 0
        self.certs = 0
        self.management = []
        self.pushes = []
        self.lock = threading.Lock()


def sign_event(state, request, base):
    kind = request.get("event", "sessions-revoked")
    now = int(time.time())
    event = {}
    if kind == "verification":
        event["state"] = request.get("state", "")
    elif kind == "token-revoked":
        event["subject"] = {"subject_type": "oauth_token", "token_type": "refresh_token",
                            "token_identifier_alg": request.get("token_alg", "prefix"), "token": request.get("token", "")}
    else:
        event["subject"] = {"subject_type": "iss-sub", "iss": state.issuer, "sub": request.get("sub", "")}
        if request.get("reason"):
            event["reason"] = request["reason"]
    claims = {"iss": request.get("iss", state.issuer), "aud": request.get("aud", "web-client.apps.googleusercontent.com"),
              "iat": request.get("iat", now), "jti": request.get("jti", uuid.uuid4().hex),
              "events": {TYPES.get(kind, kind): event}}
    if "exp" in request:
        claims["exp"] = request["exp"]
    # Forgeries of the token's shape: claims left out, a second event, an event without its subject.
    for name in request.get("omit", []):
        claims.pop(name, None)
    if request.get("second_event"):
        claims["events"][TYPES["account-enabled"]] = {"subject": {"subject_type": "iss-sub", "iss": state.issuer, "sub": request.get("sub", "")}}
    if request.get("no_subject"):
        for body in claims["events"].values():
            body.pop("subject", None)
    alg = request.get("alg", "RS256")
    which = request.get("key", "google")
    kid = request.get("kid", {"google": "risc-key-1", "other": "risc-key-1", "rotated": "risc-key-2"}.get(which, "risc-key-1"))
    if alg == "none":
        header = base64.urlsafe_b64encode(json.dumps({"alg": "none", "kid": kid}).encode()).rstrip(b"=").decode()
        payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
        return f"{header}.{payload}."
    if alg == "HS256":
        # The classic confusion: HMAC keyed with the public key's PEM, which anyone can read.
        secret = state.keys["risc-key-1"].public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        header = base64.urlsafe_b64encode(json.dumps({"alg": "HS256", "kid": kid}).encode()).rstrip(b"=").decode()
        payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
        signature = base64.urlsafe_b64encode(hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()).rstrip(b"=").decode()
        return f"{header}.{payload}.{signature}"
    key = {"google": state.keys["risc-key-1"], "other": state.other, "rotated": state.rotated}[which]
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid, "typ": "secevent+jwt"})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State = None

    def log_message(self, fmt, *args):
        pass

    def body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status, payload=None, headers=None):
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def base(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def do_GET(self):
        state = self.state
        if self.path == "/.well-known/risc-configuration":
            with state.lock:
                state.discovery += 1
                status = state.keys_status
                issuer, jwks_path = state.issuer, state.jwks_path
            if status != 200:
                return self.send(status, {"error": "unavailable"})
            return self.send(200, {"issuer": issuer, "jwks_uri": self.base() + jwks_path,
                                   "delivery_methods_supported": ["https://schemas.openid.net/secevent/risc/delivery-method/push"],
                                   "add_subject_endpoint": self.base() + "/v1beta/subjects:add",
                                   "remove_subject_endpoint": self.base() + "/v1beta/subjects:remove"})
        if self.path == state.jwks_path:
            with state.lock:
                state.certs += 1
                status = state.keys_status
                keys = [jwk(key, kid) for kid, key in state.keys.items()]
            if status != 200:
                return self.send(status, {"error": "unavailable"})
            return self.send(200, {"keys": keys})
        if self.path == "/v1beta/stream":
            if not self.authorised():
                return
            with state.lock:
                stream = dict(state.stream)
            return self.send(200, {"delivery": stream["delivery"], "events_requested": stream["events_requested"],
                                   "events_delivered": stream["events_requested"]})
        if self.path == "/test/stats":
            with state.lock:
                return self.send(200, {"discovery": state.discovery, "certs": state.certs, "management": state.management,
                                       "pushes": state.pushes, "stream": state.stream})
        self.send(404, {"error": "not_found"})

    def authorised(self):
        """The management API's check of the service account's JWT: RS256 by a key the account holds, iss = sub =
        its email, aud the management service, not expired."""
        authorization = self.headers.get("Authorization") or ""
        token = authorization[7:] if authorization.startswith("Bearer ") else ""
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            with self.state.lock:
                email, public = self.state.service_accounts[kid]
            claims = jwt.decode(token, public, algorithms=["RS256"], audience=MANAGEMENT_AUDIENCE)
            if claims.get("iss") != email or claims.get("sub") != email or claims["exp"] - claims["iat"] > 3600:
                raise ValueError("iss/sub/lifetime")
        except Exception as error:  # noqa: BLE001 - any fault is 401, as Google answers
            self.send(401, {"error": {"code": 401, "message": f"Request had invalid authentication credentials ({type(error).__name__}).",
                                      "status": "UNAUTHENTICATED"}})
            return False
        return True

    def do_POST(self):
        state = self.state
        body = self.body()
        if self.path.startswith("/v1beta/"):
            if not self.authorised():
                return
            request = json.loads(body or b"{}")
            with state.lock:
                state.management.append({"method": "POST", "path": self.path, "body": request})
            if self.path == "/v1beta/stream:update":
                delivery = request.get("delivery") or {}
                if not delivery.get("url") or delivery.get("delivery_method") != "https://schemas.openid.net/secevent/risc/delivery-method/push":
                    return self.send(400, {"error": {"code": 400, "message": "delivery.url and the push delivery_method are required"}})
                with state.lock:
                    state.stream["delivery"] = delivery
                    state.stream["events_requested"] = request.get("events_requested", [])
                return self.send(200, {})
            if self.path == "/v1beta/stream/status:update":
                with state.lock:
                    state.stream["status"] = request.get("status")
                return self.send(200, {"status": request.get("status")})
            if self.path == "/v1beta/stream:verify":
                with state.lock:
                    delivery = state.stream.get("delivery")
                    audience = state.stream.get("audience", "web-client.apps.googleusercontent.com")
                if not delivery:
                    return self.send(400, {"error": {"code": 400, "message": "no stream configured"}})
                token = sign_event(state, {"event": "verification", "state": request.get("state", ""), "aud": audience}, self.base())
                push = urllib.request.Request(delivery["url"], data=token.encode(), method="POST",
                                              headers={"Content-Type": "application/secevent+jwt", "Accept": "application/json"})
                try:
                    with urllib.request.urlopen(push, timeout=10) as answer:
                        status = answer.status
                except urllib.error.HTTPError as error:
                    status = error.code
                except Exception:  # noqa: BLE001
                    status = 0
                with state.lock:
                    state.pushes.append({"url": delivery["url"], "status": status})
                return self.send(200, {})
            return self.send(404, {"error": {"code": 404, "message": "not found"}})
        if self.path == "/test/sign":
            return self.send(200, {"token": sign_event(state, json.loads(body), self.base())})
        if self.path == "/test/sign-many":
            # {"event", "subs": [...], "aud"}: one token per sub, each with its own jti (ops/bench's pre-signed load).
            request = json.loads(body)
            tokens = [sign_event(state, {"event": request.get("event", "sessions-revoked"), "sub": sub, "aud": request.get("aud", "web-client.apps.googleusercontent.com")}, self.base())
                      for sub in request.get("subs", [])]
            return self.send(200, {"tokens": tokens})
        if self.path == "/test/service-account":
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            kid = uuid.uuid4().hex
            email = "risc-admin@gatehouse-test.iam.gserviceaccount.com"
            with state.lock:
                state.service_accounts[kid] = (email, key.public_key())
            pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
            return self.send(200, {"key": {"type": "service_account", "project_id": "gatehouse-test", "private_key_id": kid,
                                           "private_key": pem, "client_email": email, "client_id": "1234567890",
                                           "token_uri": "https://oauth2.googleapis.com/token"}})
        if self.path == "/test/rotate":
            with state.lock:
                state.keys["risc-key-2"] = state.rotated
            return self.send(200, {})
        if self.path == "/test/config":
            config = json.loads(body)
            with state.lock:
                if "keys_status" in config:
                    state.keys_status = config["keys_status"]
                if "audience" in config:
                    state.stream["audience"] = config["audience"]
                if "issuer" in config:
                    state.issuer = config["issuer"]
                if "jwks_path" in config:
                    state.jwks_path = config["jwks_path"]
            return self.send(200, {})
        self.send(404, {"error": "not_found"})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    Handler.state = State()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
