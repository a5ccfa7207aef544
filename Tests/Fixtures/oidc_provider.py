#!/usr/bin/env python3
"""A local OpenID Connect provider for Gatehouse's single sign-on tests, built on Authlib's provider side.

The protocol work is Authlib's own (https://docs.authlib.org/en/latest/specs/oidc.html): its AuthorizationServer,
AuthorizationCodeGrant with the OpenIDCode extension (ID tokens, nonce) and CodeChallenge (PKCE), client
authentication by client_secret_basic or client_secret_post, and its OpenIDProviderMetadata checks the discovery
document. This file only gives it storage (dicts), a login form, and an HTTP server (http.server). Sources:

- OpenID Connect Core 1.0, §3.1 (the authorization code flow) and §2 (the ID token):
  https://openid.net/specs/openid-connect-core-1_0.html
- OpenID Connect Discovery 1.0, §3 and §4 (the provider's metadata at /.well-known/openid-configuration):
  https://openid.net/specs/openid-connect-discovery-1_0.html
- RFC 7636, Proof Key for Code Exchange (S256): https://www.rfc-editor.org/rfc/rfc7636
- RFC 6749 §2.3.1 (client passwords) and §4.1 (authorization code grant): https://www.rfc-editor.org/rfc/rfc6749

It prints `PORT <n>` once listening on 127.0.0.1 (`--port 0` picks one); its issuer is `http://127.0.0.1:<n>`. Users and
their groups are built in (`USERS`) and changed with POST /test/users. Test endpoints, for the refusals Gatehouse must
make (each applies to the next ID token issued, then is forgotten):

- POST /test/forge {"mode": M}: M is other_key (signed by a key that is not in the JWKS, under the real kid),
  unknown_kid (signed by a key whose kid the JWKS lacks), other_audience, several_audiences (aud has another client
  too, azp is the other client), expired, future (iat an hour ahead), wrong_nonce, other_issuer;
- POST /test/fault {"where": "discovery"|"jwks"|"token", "status": 500, "count": 1}: the next requests there fail;
- POST /test/rotate: a new signing key (a new kid) is added to the JWKS and used from now on;
- POST /test/config {"token_auth": "client_secret_post", "alg": "ES256", "scopes_groups": false}: what discovery says;
- GET /test/stats: how many times discovery, the JWKS and the token endpoint were asked.

The client secret comes from OIDC_CLIENT_SECRET (never the command line); the client id from --client-id.
"""

import argparse
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Plain http on loopback: Authlib refuses http URIs unless told this is a test.
os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")

from authlib.oauth2 import AuthorizationServer  # noqa: E402
from authlib.oauth2.rfc6749 import ClientMixin, OAuth2Request  # noqa: E402
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload  # noqa: E402
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant as _AuthorizationCodeGrant  # noqa: E402
from authlib.oauth2.rfc6750 import BearerTokenGenerator  # noqa: E402
from authlib.oauth2.rfc7636 import CodeChallenge  # noqa: E402
from authlib.oidc.core import UserInfo  # noqa: E402
from authlib.oidc.core.grants import OpenIDCode as _OpenIDCode  # noqa: E402
from authlib.oidc.core.models import AuthorizationCodeMixin  # noqa: E402
from authlib.oidc.discovery import OpenIDProviderMetadata  # noqa: E402
from joserfc.jwk import ECKey, KeySet, RSAKey  # noqa: E402

LOCK = threading.RLock()

USERS = {
    "alice": {"sub": "u-alice", "password": "alice-password", "email": "alice@example.com", "email_verified": True,
              "name": "Alice Admin", "groups": ["ops-admins", "staff"]},
    "sam": {"sub": "u-sam", "password": "sam-password", "email": "sam@example.com", "email_verified": True,
            "name": "Sam Support", "groups": ["ops-support"]},
    "vera": {"sub": "u-vera", "password": "vera-password", "email": "vera@example.com", "email_verified": True,
             "name": "Vera Viewer", "groups": ["staff"]},
    "mallory": {"sub": "u-mallory", "password": "mallory-password", "email": "mallory@example.com", "email_verified": True,
                "name": "Mallory Marketing", "groups": ["marketing"]},
    "eve": {"sub": "u-eve", "password": "eve-password", "email": "eve@example.com", "email_verified": False,
            "name": "Eve Unverified", "groups": ["ops-admins"]},
    "olga": {"sub": "u-olga", "password": "olga-password", "email": "olga@other.example", "email_verified": True,
             "name": "Olga Elsewhere", "groups": ["ops-admins"]},
}

STATE = {
    "issuer": None,
    "client_id": "gatehouse",
    "client_secret": os.environ.get("OIDC_CLIENT_SECRET", "test-client-secret"),
    "token_auth": "client_secret_basic",
    "alg": "RS256",
    "scopes_groups": True,
    "groups_claim": "groups",
    "forge": None,
    "faults": {},
    "stats": {"discovery": 0, "jwks": 0, "token": 0, "authorize": 0},
    "codes": {},
    "nonces": set(),
}


def new_key(alg, kid):
    params = {"kid": kid, "use": "sig", "alg": alg}
    return RSAKey.generate_key(2048, parameters=params) if alg == "RS256" else ECKey.generate_key("P-256", parameters=params)


KEYS = {"signing": None, "published": []}
OTHER = {}


def reset_keys(alg):
    key = new_key(alg, f"key-{secrets.token_hex(4)}")
    KEYS["signing"] = key
    KEYS["published"] = [key]
    OTHER["same_kid"] = new_key(alg, key.kid)
    OTHER["unknown_kid"] = new_key(alg, f"stray-{secrets.token_hex(4)}")


reset_keys("RS256")


class Client(ClientMixin):
    def get_client_id(self):
        return STATE["client_id"]

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        allowed = {"openid", "email", "profile", "groups"}
        return " ".join(s for s in scope.split() if s in allowed)

    def check_redirect_uri(self, redirect_uri):
        # Any console on this machine: the tests' consoles listen on free ports.
        parsed = urllib.parse.urlparse(redirect_uri)
        return parsed.scheme == "http" and parsed.hostname in ("127.0.0.1", "localhost") and parsed.path == "/api/auth/sso/callback"

    def check_client_secret(self, client_secret):
        return secrets.compare_digest(client_secret.encode(), STATE["client_secret"].encode())

    def check_endpoint_auth_method(self, method, endpoint):
        return endpoint != "token" or method == STATE["token_auth"]

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type == "authorization_code"


CLIENT = Client()


class AuthorizationCode(AuthorizationCodeMixin):
    def __init__(self, code, user, redirect_uri, scope, nonce, challenge, method):
        self.code, self.user, self.redirect_uri, self.scope, self.nonce = code, user, redirect_uri, scope, nonce
        self.code_challenge, self.code_challenge_method = challenge, method
        self.auth_time = int(time.time())

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def get_nonce(self):
        return self.nonce

    def get_auth_time(self):
        return self.auth_time

    def get_acr(self):
        return None

    def get_amr(self):
        return ["pwd"]


class AuthorizationCodeGrant(_AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def save_authorization_code(self, code, request):
        data = request.payload.data
        with LOCK:
            # A nonce is used once (OpenIDCode refuses one it has seen: exists_nonce).
            if data.get("nonce"):
                STATE["nonces"].add(data["nonce"])
            STATE["codes"][code] = AuthorizationCode(code, request.user, data.get("redirect_uri"), data.get("scope"), data.get("nonce"),
                                                     data.get("code_challenge"), data.get("code_challenge_method"))

    def query_authorization_code(self, code, client):
        with LOCK:
            return STATE["codes"].get(code)

    def delete_authorization_code(self, authorization_code):
        # Single use (RFC 6749 §4.1.2): a code exchanged once is gone.
        with LOCK:
            STATE["codes"].pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code):
        return authorization_code.user


class OpenIDCode(_OpenIDCode):
    """Authlib's OpenIDCode, with the ID token's inputs changed on request to forge one."""

    def exists_nonce(self, nonce, request):
        with LOCK:
            return nonce in STATE["nonces"]

    def resolve_client_private_key(self, client):
        mode = STATE.get("issuing")
        if mode == "other_key":
            return OTHER["same_kid"]
        if mode == "unknown_kid":
            return OTHER["unknown_kid"]
        return KEYS["signing"]

    def get_client_algorithm(self, client):
        return STATE["alg"]

    def get_encode_header(self, client):
        return {"alg": STATE["alg"], "kid": self.resolve_client_private_key(client).kid}

    def get_client_claims(self, client):
        mode = STATE.get("issuing")
        issuer = STATE["issuer"] + "/other" if mode == "other_issuer" else STATE["issuer"]
        if mode == "other_audience":
            return {"iss": issuer, "aud": ["someone-else"]}
        if mode == "several_audiences":
            return {"iss": issuer, "aud": [STATE["client_id"], "someone-else"], "azp": "someone-else"}
        return {"iss": issuer, "aud": [STATE["client_id"]]}

    def get_compatible_claims(self, request):
        claims = super().get_compatible_claims(request)
        now = int(time.time())
        mode = STATE.get("issuing")
        if mode == "expired":
            claims.update(iat=now - 7200, exp=now - 3600, auth_time=now - 7200)
        elif mode == "future":
            claims.update(iat=now + 3600, exp=now + 7200)
        return claims

    def get_authorization_code_claims(self, authorization_code):
        claims = super().get_authorization_code_claims(authorization_code)
        if STATE.get("issuing") == "wrong_nonce":
            claims["nonce"] = "not-the-nonce-" + secrets.token_urlsafe(8)
        return claims

    def generate_user_info(self, user, scope):
        info = UserInfo(sub=user["sub"], name=user["name"])
        if "email" in scope:
            info["email"] = user["email"]
            info["email_verified"] = user["email_verified"]
        info[STATE["groups_claim"]] = list(user["groups"])
        return info

    def process_token(self, grant, response):
        with LOCK:
            STATE["issuing"], STATE["forge"] = STATE["forge"], None
            try:
                return super().process_token(grant, response)
            finally:
                STATE["issuing"] = None


class Server(AuthorizationServer):
    def query_client(self, client_id):
        return CLIENT if client_id == STATE["client_id"] else None

    def save_token(self, token, request):
        pass

    def create_oauth2_request(self, request):
        return request

    def create_json_request(self, request):
        return request

    def handle_response(self, status, body, headers):
        return status, body, headers

    def send_signal(self, name, *args, **kwargs):
        pass


class Request(OAuth2Request):
    """An OAuth2Request over http.server's parsed request."""

    def __init__(self, method, uri, headers, query, form):
        super().__init__(method, uri, headers=headers)
        self._args, self._form = query, form
        self.payload = BasicOAuth2Payload({**query, **form})

    @property
    def args(self):
        return self._args

    @property
    def form(self):
        return self._form


SERVER = Server(scopes_supported=["openid", "email", "profile", "groups"])
SERVER.register_grant(AuthorizationCodeGrant, [OpenIDCode(require_nonce=True), CodeChallenge(required=True)])
SERVER.register_token_generator("default", BearerTokenGenerator(lambda *a, **k: secrets.token_urlsafe(32)))


def discovery():
    issuer = STATE["issuer"]
    scopes = ["openid", "email", "profile"] + (["groups"] if STATE["scopes_groups"] else [])
    metadata = OpenIDProviderMetadata({
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        "jwks_uri": issuer + "/jwks",
        "scopes_supported": scopes,
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        # Discovery §3: RS256 MUST be listed (OpenIDProviderMetadata.validate holds it to that).
        "id_token_signing_alg_values_supported": sorted({STATE["alg"], "RS256"}),
        "token_endpoint_auth_methods_supported": [STATE["token_auth"]],
        "code_challenge_methods_supported": ["S256"],
        "grant_types_supported": ["authorization_code"],
        "claims_supported": ["sub", "email", "email_verified", "name", STATE["groups_claim"]],
    })
    metadata.validate()
    return dict(metadata)


def login_form(params, error=""):
    hidden = "".join(f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in params.items()
                     if k not in ("username", "password", "deny"))
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Test IdP sign-in</title><style>body{{font-family:sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}}
label,input,button{{display:block;width:100%;margin:.4rem 0;font-size:1rem}}.error{{color:#b00}}</style></head>
<body><h1>Test IdP</h1><p>Sign in to continue to {escape(STATE['client_id'])}.</p>
<p class="error" id="idp-error">{escape(error)}</p>
<form method="post" action="/authorize">{hidden}
<label>Username <input name="username" id="idp-username" autocomplete="username"></label>
<label>Password <input name="password" id="idp-password" type="password" autocomplete="current-password"></label>
<button type="submit" id="idp-submit">Sign in</button>
<button type="submit" name="deny" value="1" id="idp-deny">Cancel</button></form></body></html>"""


def escape(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body=b"", content_type="application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def fault(self, where):
        with LOCK:
            fault = STATE["faults"].get(where)
            if not fault or fault["count"] <= 0:
                return False
            fault["count"] -= 1
        self.send(fault["status"], {"error": "server_error", "error_description": "a fault the test asked for"})
        return True

    def parsed(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return url.path, query, raw

    def oauth_request(self, query, form):
        return Request(self.command, STATE["issuer"] + self.path, self.headers, query, form)

    def respond(self, result):
        status, body, headers = result
        content_type = "application/json" if isinstance(body, dict) else "text/plain"
        self.send(status, body, content_type, [h for h in headers if h[0].lower() != "content-type"])

    def do_GET(self):
        path, query, _ = self.parsed()
        if path == "/.well-known/openid-configuration":
            with LOCK:
                STATE["stats"]["discovery"] += 1
            if not self.fault("discovery"):
                self.send(200, discovery())
        elif path == "/jwks":
            with LOCK:
                STATE["stats"]["jwks"] += 1
            if not self.fault("jwks"):
                self.send(200, KeySet(KEYS["published"]).as_dict(private=False))
        elif path == "/authorize":
            with LOCK:
                STATE["stats"]["authorize"] += 1
            try:
                SERVER.get_consent_grant(self.oauth_request(query, {}))
            except Exception as error:  # Authlib's OAuth2Error: the request is not one to show a form for
                self.send(400, f"invalid authorization request: {error}", "text/plain")
                return
            self.send(200, login_form(query), "text/html; charset=utf-8")
        elif path == "/test/stats":
            with LOCK:
                self.send(200, dict(STATE["stats"]))
        else:
            self.send(404, {"error": "not_found"})

    def do_POST(self):
        path, query, raw = self.parsed()
        form = dict(urllib.parse.parse_qsl(raw.decode(), keep_blank_values=True))
        if path == "/authorize":
            request = self.oauth_request({}, form)
            user = None if form.get("deny") else USERS.get(form.get("username", ""))
            if not form.get("deny") and (not user or not secrets.compare_digest(form.get("password", "").encode(), user["password"].encode())):
                self.send(200, login_form(form, "Wrong username or password."), "text/html; charset=utf-8")
                return
            try:
                grant = SERVER.get_consent_grant(request, end_user=user)
            except Exception as error:  # Authlib's OAuth2Error: not a request to answer with a redirect
                self.send(400, f"invalid authorization request: {error}", "text/plain")
                return
            # grant_user None: the person declined (Authlib answers error=access_denied).
            self.respond(SERVER.create_authorization_response(request, grant_user=user, grant=grant))
        elif path == "/token":
            with LOCK:
                STATE["stats"]["token"] += 1
            if self.fault("token"):
                return
            self.respond(SERVER.create_token_response(self.oauth_request({}, form)))
        elif path.startswith("/test/"):
            body = json.loads(raw or b"{}")
            with LOCK:
                if path == "/test/forge":
                    STATE["forge"] = body["mode"]
                elif path == "/test/fault":
                    STATE["faults"][body["where"]] = {"status": int(body.get("status", 500)), "count": int(body.get("count", 1))}
                elif path == "/test/rotate":
                    key = new_key(STATE["alg"], f"key-{secrets.token_hex(4)}")
                    KEYS["signing"] = key
                    KEYS["published"] = KEYS["published"] + [key]
                elif path == "/test/users":
                    USERS.setdefault(body["username"], {"sub": "u-" + body["username"], "password": body["username"] + "-password",
                                                        "email": body["username"] + "@example.com", "email_verified": True,
                                                        "name": body["username"], "groups": []}).update(
                        {k: v for k, v in body.items() if k != "username"})
                elif path == "/test/config":
                    for name in ("token_auth", "scopes_groups", "groups_claim"):
                        if name in body:
                            STATE[name] = body[name]
                    if "alg" in body and body["alg"] != STATE["alg"]:
                        STATE["alg"] = body["alg"]
                        reset_keys(body["alg"])
                else:
                    self.send(404, {"error": "not_found"})
                    return
            self.send(200, {"ok": True})
        else:
            self.send(404, {"error": "not_found"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--client-id", default="gatehouse")
    parser.add_argument("--alg", choices=["RS256", "ES256"], default="RS256")
    args = parser.parse_args()
    STATE["client_id"] = args.client_id
    if args.alg != STATE["alg"]:
        STATE["alg"] = args.alg
        reset_keys(args.alg)
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    httpd.daemon_threads = True
    STATE["issuer"] = f"http://127.0.0.1:{httpd.server_address[1]}"
    print(f"PORT {httpd.server_address[1]}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
