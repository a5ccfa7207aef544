extension P256.PublicKey {
    /// Whether `signature` is a valid ECDSA P-256 / SHA-256 signature of `data` in ASN.1 DER (`ECDSA-Sig-Value`), the
    /// form WebAuthn and X.509 use, as opposed to JWS's 64-byte r‖s (`isValidSignature(_:for:)`).
    ///
    /// Only the one canonical DER encoding is valid: trailing bytes, a long-form or padded length, or an integer with
    /// a superfluous leading zero make it invalid, so that one signature has one byte form. r and s must lie in
    /// [1, n − 1].
    ///
    ///     key.isValidSignature(derEncoded: assertion.signature, for: authenticatorData + SHA256.hash(clientDataJSON))
    public func isValidSignature(derEncoded signature: [UInt8], for data: [UInt8]) -> Bool {
        guard let raw = ECDSASignature.raw(fromDER: signature),
              ECDSASignature.der(fromRaw: raw) == signature
        else { return false }
        return isValidSignature(raw, for: data)
    }
}
