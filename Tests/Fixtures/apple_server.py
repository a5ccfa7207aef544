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

Faults, chosen by the token sent to /auth/revoke: "tok-client" → 400 invalid_client, "tok-grant" → 400 invalid_grant,
"tok-request" → 400 invalid_request, "tok-500" → 500, "tok-slow" → 200 after 5 s, "tok-cut" → the connection closed
without an answer. A client secret that is not an ES256 JWT with a 64-byte signature, aud https://appleid.apple.com
and sub == client_id is answered invalid_client, as Apple does.

Test-only endpoints: POST /test/sign {"claims": {...}, "key": "apple"|"other", "kid": "..."} → {"token": "..."};
GET /test/revocations → what /auth/revoke received (the token as its SHA-256 only); GET /test/stats → counters;
POST /test/keys {"status": 500} makes /auth/keys fail.

Usage: python apple_server.py [--port 0] [--max-age 3600] [--tls-cert PEM --tls-key PEM]   (prints "PORT <n>" once
listening; with a certificate it serves HTTPS)
"""
import argparse
import base64
import hashlib
import json
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
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
                self.send(200, {"key_fetches": state.key_fetches, "revocations": len(state.revocations)})
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
        elif self.path == "/test/keys":
            with state.lock:
                state.keys_status = json.loads(body).get("status", 200)
            self.send(200, {})
        else:
            self.send(404, {"error": "not_found"})

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
    args = parser.parse_args()
    Handler.state = State(args.max_age)
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
