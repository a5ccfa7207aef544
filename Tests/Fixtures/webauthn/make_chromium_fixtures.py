"""Writes chromium_fixtures.json: real ceremonies from Chromium's virtual authenticator (CTAP2, internal transport,
user verification on), the authenticator issue 44's browser tests use.

Source: Chromium's WebAuthn implementation and its virtual authenticator, driven through Selenium's
`add_virtual_authenticator` (the WebDriver "Virtual Authenticators" extension of the WebAuthn spec, §11); the page calls
`navigator.credentials.create()` / `.get()` with options read by `PublicKeyCredential.parseCreationOptionsFromJSON` /
`parseRequestOptionsFromJSON` and hands back `credential.toJSON()`, byte for byte what the console's page will send.
The options have the shape WebAuthn's RelyingParty builds (CeremonyOptionsTests pins it). Run once from the repository
root with Chromium, chromedriver (Debian's chromium, chromium-driver) and the venv's selenium:

    .venv/bin/python Tests/Fixtures/webauthn/make_chromium_fixtures.py > Tests/Fixtures/webauthn/chromium_fixtures.json
"""

import base64
import http.server
import json
import os
import socketserver
import sys
import tempfile
import threading

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>webauthn fixtures</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


CREATE = """
const [options, done] = arguments;
navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options)})
  .then(c => done({ok: c.toJSON()}), e => done({error: String(e)}));
"""
GET = """
const [options, done] = arguments;
navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options)})
  .then(c => done({ok: c.toJSON()}), e => done({error: String(e)}));
"""


def run(driver, script, options):
    result = driver.execute_async_script(script, options)
    if "error" in result:
        sys.exit(f"the browser refused: {result['error']}")
    return result["ok"]


def ceremony(driver, origin, name, alg):
    authenticator = VirtualAuthenticatorOptions(
        protocol=Protocol.CTAP2, transport=Transport.INTERNAL, has_resident_key=True,
        has_user_verification=True, is_user_consenting=True, is_user_verified=True)
    driver.add_virtual_authenticator(authenticator)
    try:
        user_handle = os.urandom(16)
        registration_challenge = os.urandom(32)
        creation = {
            "rp": {"id": "localhost", "name": "Gatehouse"},
            "user": {"id": b64url(user_handle), "name": "alice", "displayName": "Alice"},
            "challenge": b64url(registration_challenge),
            "pubKeyCredParams": [{"type": "public-key", "alg": alg}],
            "timeout": 300000,
            "excludeCredentials": [],
            "authenticatorSelection": {"residentKey": "preferred", "userVerification": "preferred"},
            "attestation": "none",
        }
        registration = run(driver, CREATE, creation)
        assertions = []
        for _ in range(2):
            challenge = os.urandom(32)
            request = {
                "challenge": b64url(challenge),
                "timeout": 300000,
                "rpId": "localhost",
                "allowCredentials": [{"type": "public-key", "id": registration["rawId"]}],
                "userVerification": "preferred",
            }
            assertions.append({"challenge": b64url(challenge), "response": run(driver, GET, request)})
        return {
            "name": name,
            "rpId": "localhost",
            "origin": origin,
            "userHandle": b64url(user_handle),
            "registrationChallenge": b64url(registration_challenge),
            "registration": registration,
            "assertions": assertions,
        }
    finally:
        driver.remove_virtual_authenticator()


def main():
    server = socketserver.TCPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://localhost:{server.server_address[1]}"
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    with tempfile.TemporaryDirectory(prefix="webauthn-fixtures-") as scratch:
        options.add_argument(f"--user-data-dir={scratch}/profile")
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver", env={**os.environ, "TMPDIR": scratch}),
                                  options=options)
        try:
            driver.get(origin + "/")
            fixtures = {
                "source": f"{driver.capabilities.get('browserName')} {driver.capabilities.get('browserVersion')} "
                          "virtual authenticator, see make_chromium_fixtures.py",
                "ceremonies": [ceremony(driver, origin, "es256", -7), ceremony(driver, origin, "rs256", -257)],
            }
        finally:
            driver.quit()
            server.shutdown()
    print(json.dumps(fixtures, indent=1))


if __name__ == "__main__":
    main()
