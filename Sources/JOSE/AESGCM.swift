import CCrypto

/// AES-256-GCM boxes for secrets at rest (the `.p8` contents in the store).
///
/// A box is `version (1 byte, 0x01) ‖ nonce (12 random bytes) ‖ ciphertext ‖ tag (16 bytes)`. The associated data is
/// authenticated but not stored: bind a box to where it lives (a table and row id, say) so that it cannot be moved.
///
///     let box = try AESGCM.seal(Array(pem.utf8), key: masterKey, associatedData: Array("apple_key:ABC123DEFG".utf8))
///     let pem = try AESGCM.open(box, key: masterKey, associatedData: Array("apple_key:ABC123DEFG".utf8))
public enum AESGCM {
    /// The box format version this code writes.
    public static let version: UInt8 = 1
    /// Key length in bytes (AES-256).
    public static let keySize = 32
    /// Nonce length in bytes.
    public static let nonceSize = 12
    /// Tag length in bytes.
    public static let tagSize = 16
    /// The size of an empty box: the overhead added to every plaintext.
    public static let overhead = 1 + nonceSize + tagSize

    /// Why a box could not be sealed or opened. Never carries plaintext, ciphertext or key bytes.
    public enum Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        /// The key is not 32 bytes; the value is its actual length.
        case invalidKeySize(Int)
        /// The box is shorter than version + nonce + tag.
        case boxTooShort
        /// The box's version byte is not one this code reads.
        case unsupportedVersion(UInt8)
        /// Authentication failed: wrong key, wrong associated data, or the box was altered.
        case authenticationFailed
        /// OpenSSL failed for a reason of its own.
        case cryptoFailure

        public var description: String {
            switch self {
            case .invalidKeySize(let size):
                return "the sealing key is \(size) bytes; AES-256-GCM needs exactly 32"
            case .boxTooShort:
                return "the sealed value is too short to be an AES-GCM box; it is truncated or not a sealed value"
            case .unsupportedVersion(let version):
                return "the sealed value has format version \(version); this Gatehouse reads version 1"
            case .authenticationFailed:
                return "the sealed value cannot be opened: wrong master key, or the value was altered or moved"
            case .cryptoFailure:
                return "OpenSSL's AES-256-GCM failed"
            }
        }
    }

    /// `EVP_CTRL_GCM_*` (`EVP_CTRL_AEAD_*`), spelled out in case the macros do not import.
    private static let setIVLength: Int32 = 0x9
    private static let getTag: Int32 = 0x10
    private static let setTag: Int32 = 0x11

    /// Encrypts and authenticates `plaintext` under a fresh random nonce.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        guard key.count == keySize else { throw Error.invalidKeySize(key.count) }
        let nonce = try SecureRandom.bytes(nonceSize)
        guard let context = EVP_CIPHER_CTX_new() else { throw Error.cryptoFailure }
        defer { EVP_CIPHER_CTX_free(context) }

        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: tagSize)
        var length: Int32 = 0
        var total = 0
        guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(context, setIVLength, Int32(nonceSize), nil) == 1,
              EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1
        else { return try fail(Error.cryptoFailure) }
        if !associatedData.isEmpty {
            guard EVP_EncryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1 else {
                return try fail(Error.cryptoFailure)
            }
        }
        if !plaintext.isEmpty {
            let ok = ciphertext.withUnsafeMutableBufferPointer {
                EVP_EncryptUpdate(context, $0.baseAddress, &length, plaintext, Int32(plaintext.count))
            }
            guard ok == 1 else { return try fail(Error.cryptoFailure) }
            total = Int(length)
        }
        let finished = ciphertext.withUnsafeMutableBufferPointer {
            EVP_EncryptFinal_ex(context, $0.baseAddress! + total, &length)
        }
        guard finished == 1 else { return try fail(Error.cryptoFailure) }
        total += Int(length)
        let tagged = tag.withUnsafeMutableBytes {
            EVP_CIPHER_CTX_ctrl(context, getTag, Int32(tagSize), $0.baseAddress)
        }
        guard tagged == 1 else { return try fail(Error.cryptoFailure) }

        var box = [version]
        box.reserveCapacity(overhead + total)
        box.append(contentsOf: nonce)
        box.append(contentsOf: ciphertext.prefix(total))
        box.append(contentsOf: tag)
        return box
    }

    /// Authenticates and decrypts a box made by `seal`. Throws `.authenticationFailed` for a wrong key, wrong
    /// associated data or any altered byte; no plaintext is released in that case.
    public static func open(_ box: [UInt8], key: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        guard key.count == keySize else { throw Error.invalidKeySize(key.count) }
        guard box.count >= overhead else { throw Error.boxTooShort }
        guard box[0] == version else { throw Error.unsupportedVersion(box[0]) }
        let nonce = Array(box[1..<(1 + nonceSize)])
        let ciphertext = Array(box[(1 + nonceSize)..<(box.count - tagSize)])
        var tag = Array(box[(box.count - tagSize)...])

        guard let context = EVP_CIPHER_CTX_new() else { throw Error.cryptoFailure }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var length: Int32 = 0
        var total = 0
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(context, setIVLength, Int32(nonceSize), nil) == 1,
              EVP_DecryptInit_ex(context, nil, nil, key, nonce) == 1
        else { return try fail(Error.cryptoFailure) }
        if !associatedData.isEmpty {
            guard EVP_DecryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1 else {
                return try fail(Error.cryptoFailure)
            }
        }
        if !ciphertext.isEmpty {
            let ok = plaintext.withUnsafeMutableBufferPointer {
                EVP_DecryptUpdate(context, $0.baseAddress, &length, ciphertext, Int32(ciphertext.count))
            }
            guard ok == 1 else {
                OpenSSL.cleanse(&plaintext)
                return try fail(Error.cryptoFailure)
            }
            total = Int(length)
        }
        let tagSet = tag.withUnsafeMutableBytes {
            EVP_CIPHER_CTX_ctrl(context, setTag, Int32(tagSize), $0.baseAddress)
        }
        guard tagSet == 1 else { return try fail(Error.cryptoFailure) }
        let verified = plaintext.withUnsafeMutableBufferPointer {
            EVP_DecryptFinal_ex(context, $0.baseAddress! + total, &length)
        }
        guard verified == 1 else {
            // The unauthenticated plaintext must not survive a failed check.
            OpenSSL.cleanse(&plaintext)
            return try fail(Error.authenticationFailed)
        }
        total += Int(length)
        let result = Array(plaintext.prefix(total))
        OpenSSL.cleanse(&plaintext)
        return result
    }

    private static func fail(_ error: Error) throws -> [UInt8] {
        OpenSSL.clearErrors()
        throw error
    }
}
