"""Writes fixtures.json: WebAuthn ceremonies encoded by an implementation independent of Gatehouse's.

Source: Yubico's python-fido2 (PyPI `fido2`, https://github.com/Yubico/python-fido2), its `fido2.cbor`, `fido2.cose`
(ES256/RS256 `from_cryptography_key`) and `fido2.webauthn` (`AttestedCredentialData.create`,
`AuthenticatorData.create`, `AttestationObject.create`, `CollectedClientData.create`), with keys and signatures from
`cryptography`. Run once from the repository root (ops/lib/setup.sh's venv holds fido2):

    .venv/bin/python Tests/Fixtures/webauthn/make_fixtures.py > Tests/Fixtures/webauthn/fixtures.json

The output is committed; WebAuthnTests/Fido2FixtureTests read it. Keys are fresh on every run, so a rerun changes
every byte but not what the tests check.
"""

import hashlib
import json
import os

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from fido2 import cbor
from fido2.cose import ES256, RS256
from fido2.utils import websafe_encode
from fido2.webauthn import (
    Aaguid,
    AttestationObject,
    AttestedCredentialData,
    AuthenticatorData,
    CollectedClientData,
)

RP_ID = "console.example.com"
ORIGIN = "https://console.example.com"
FLAG = AuthenticatorData.FLAG


def ceremony(name, private_key, cose_class, sign, fmt):
    rp_id_hash = hashlib.sha256(RP_ID.encode()).digest()
    credential_id = os.urandom(32 if name == "es256" else 48)
    aaguid = Aaguid(os.urandom(16)) if fmt != "none" else Aaguid.NONE
    cose_key = cose_class.from_cryptography_key(private_key.public_key())

    reg_challenge = os.urandom(32)
    reg_client_data = CollectedClientData.create(
        type=CollectedClientData.TYPE.CREATE, challenge=reg_challenge, origin=ORIGIN
    )
    reg_auth_data = AuthenticatorData.create(
        rp_id_hash,
        FLAG.UP | FLAG.UV | FLAG.BE | FLAG.BS | FLAG.AT,
        0,
        AttestedCredentialData.create(aaguid, credential_id, cose_key),
    )
    if fmt == "packed":
        # Self attestation (WebAuthn §8.2): alg and sig over authData ‖ clientDataHash, no x5c.
        statement = {"alg": cose_class.ALGORITHM, "sig": sign(reg_auth_data + reg_client_data.hash)}
    else:
        statement = {}
    attestation_object = AttestationObject.create(fmt, reg_auth_data, statement)

    auth_challenge = os.urandom(32)
    auth_client_data = CollectedClientData.create(
        type=CollectedClientData.TYPE.GET, challenge=auth_challenge, origin=ORIGIN
    )
    auth_data = AuthenticatorData.create(rp_id_hash, FLAG.UP | FLAG.UV | FLAG.BE | FLAG.BS, 7)
    signature = sign(auth_data + auth_client_data.hash)
    # fido2's own check of the signature, so that the fixture is known good.
    cose_key.verify(auth_data + auth_client_data.hash, signature)

    cred = websafe_encode(credential_id)
    return {
        "name": name,
        "rpId": RP_ID,
        "origin": ORIGIN,
        "credentialId": cred,
        "publicKeyCOSE": cbor.encode(cose_key).hex(),
        "registrationChallenge": websafe_encode(reg_challenge),
        "registration": {
            "id": cred,
            "rawId": cred,
            "type": "public-key",
            "response": {
                "clientDataJSON": websafe_encode(bytes(reg_client_data)),
                "attestationObject": websafe_encode(bytes(attestation_object)),
                "transports": ["usb", "internal"],
            },
            "clientExtensionResults": {},
        },
        "authenticationChallenge": websafe_encode(auth_challenge),
        "authentication": {
            "id": cred,
            "rawId": cred,
            "type": "public-key",
            "response": {
                "clientDataJSON": websafe_encode(bytes(auth_client_data)),
                "authenticatorData": websafe_encode(bytes(auth_data)),
                "signature": websafe_encode(signature),
            },
            "clientExtensionResults": {},
        },
        "authenticationSignCount": 7,
    }


def describe(value):
    """A JSON description of a CBOR value that WebAuthnTests rebuilds from its own reading."""
    if isinstance(value, bool):
        return {"bool": value}
    if value is None:
        return {"null": True}
    if isinstance(value, int):
        return {"int": str(value)}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, str):
        return {"text": value}
    if isinstance(value, list):
        return {"array": [describe(v) for v in value]}
    if isinstance(value, dict):
        return {"map": [[describe(k), describe(v)] for k, v in value.items()]}
    raise TypeError(value)


CBOR_SAMPLES = [
    0, 23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1,
    -1, -24, -25, -256, -257, -(2**64),
    b"", b"\x00\xff", bytes(range(256)),
    "", "fmt", "é€𝄞", "x" * 300,
    [], [1, [2, [3, []]]], list(range(30)),
    {}, {1: 2, 3: -7, -1: 1}, {"fmt": "none", "attStmt": {}, "authData": b"\x01" * 37},
    {"a": [True, False], 10: {"b": b"c"}},
    True, False,
]


def main():
    p256 = ec.generate_private_key(ec.SECP256R1())
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    fixtures = {
        "source": "python-fido2 (Yubico), see make_fixtures.py",
        "ceremonies": [
            ceremony("es256", p256, ES256, lambda m: p256.sign(m, ec.ECDSA(hashes.SHA256())), "none"),
            ceremony("rs256", rsa_key, RS256,
                     lambda m: rsa_key.sign(m, padding.PKCS1v15(), hashes.SHA256()), "none"),
            ceremony("es256-packed", p256, ES256, lambda m: p256.sign(m, ec.ECDSA(hashes.SHA256())), "packed"),
        ],
        "cbor": [{"hex": cbor.encode(v).hex(), "value": describe(v)} for v in CBOR_SAMPLES],
    }
    print(json.dumps(fixtures, indent=1))


if __name__ == "__main__":
    main()
