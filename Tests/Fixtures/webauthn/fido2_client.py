"""A WebAuthn client and authenticator made of python-fido2 and `cryptography`, for WebAuthnTests/Fido2LiveTests.

Source: Yubico's python-fido2 (PyPI `fido2`, https://github.com/Yubico/python-fido2): `fido2.webauthn` reads the
options JSON Gatehouse builds (`PublicKeyCredentialCreationOptions.from_dict`, `PublicKeyCredentialRequestOptions
.from_dict`) and encodes the client data, authenticator data and attestation object; `fido2.cose` the COSE key.

    fido2_client.py register OPTIONS.json KEY.pem ALG ORIGIN       prints RegistrationResponseJSON
    fido2_client.py authenticate OPTIONS.json KEY.pem ORIGIN COUNT prints AuthenticationResponseJSON

ALG is -7 (ES256, P-256) or -257 (RS256, RSA-2048); the credential id is derived from the key, so authenticate finds
it again. The options must ask for what Gatehouse asks for: the script fails if they do not parse or do not offer ALG.
"""

import hashlib
import json
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from fido2.cose import ES256, RS256
from fido2.utils import websafe_encode
from fido2.webauthn import (
    Aaguid,
    AttestationObject,
    AttestedCredentialData,
    AuthenticatorData,
    CollectedClientData,
    PublicKeyCredentialCreationOptions,
    PublicKeyCredentialRequestOptions,
)

FLAG = AuthenticatorData.FLAG


def sign(key, message):
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return key.sign(message, ec.ECDSA(hashes.SHA256()))
    return key.sign(message, padding.PKCS1v15(), hashes.SHA256())


def credential_id(key):
    public = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(public).digest()


def register(options_path, key_path, alg, origin):
    options = PublicKeyCredentialCreationOptions.from_dict(json.load(open(options_path)))
    if alg not in [p.alg for p in options.pub_key_cred_params]:
        sys.exit(f"the options do not offer {alg}")
    if alg == -7:
        key, cose = ec.generate_private_key(ec.SECP256R1()), ES256
    else:
        key, cose = rsa.generate_private_key(public_exponent=65537, key_size=2048), RS256
    with open(key_path, "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    cred_id = credential_id(key)
    client_data = CollectedClientData.create(CollectedClientData.TYPE.CREATE, options.challenge, origin)
    auth_data = AuthenticatorData.create(
        hashlib.sha256(options.rp.id.encode()).digest(),
        FLAG.UP | FLAG.UV | FLAG.AT,
        0,
        AttestedCredentialData.create(Aaguid.NONE, cred_id, cose.from_cryptography_key(key.public_key())),
    )
    attestation = AttestationObject.create(options.attestation or "none", auth_data, {})
    print(json.dumps({
        "id": websafe_encode(cred_id),
        "rawId": websafe_encode(cred_id),
        "type": "public-key",
        "response": {
            "clientDataJSON": websafe_encode(bytes(client_data)),
            "attestationObject": websafe_encode(bytes(attestation)),
            "transports": ["usb"],
        },
        "clientExtensionResults": {},
        "authenticatorAttachment": "cross-platform",
    }))


def authenticate(options_path, key_path, origin, count):
    options = PublicKeyCredentialRequestOptions.from_dict(json.load(open(options_path)))
    key = serialization.load_pem_private_key(open(key_path, "rb").read(), password=None)
    cred_id = credential_id(key)
    if cred_id not in [c.id for c in options.allow_credentials or []]:
        sys.exit("the options do not allow this credential")
    client_data = CollectedClientData.create(CollectedClientData.TYPE.GET, options.challenge, origin)
    auth_data = AuthenticatorData.create(hashlib.sha256(options.rp_id.encode()).digest(), FLAG.UP | FLAG.UV, count)
    signature = sign(key, bytes(auth_data) + client_data.hash)
    print(json.dumps({
        "id": websafe_encode(cred_id),
        "rawId": websafe_encode(cred_id),
        "type": "public-key",
        "response": {
            "clientDataJSON": websafe_encode(bytes(client_data)),
            "authenticatorData": websafe_encode(bytes(auth_data)),
            "signature": websafe_encode(signature),
            "userHandle": None,
        },
        "clientExtensionResults": {},
    }))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "register":
        register(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    elif command == "authenticate":
        authenticate(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        sys.exit(f"unknown command {command}")
