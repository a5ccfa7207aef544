import Foundation
import JOSE

/// The deleted rows of one deletion, sealed: every row as it was (full image, every type, its rowid), token columns
/// already NULL, as `MergeStep` deletes in the order they ran; undo inserts them back in reverse. The JSON is sealed
/// with AES-256-GCM under the master key (as Apple keys are), bound to the plan and the user by associated data,
/// so a box moved to another deletion's row does not open.
struct UserDeletionSealedRows: Codable {
    /// The layout version of this JSON.
    let format: Int
    let userID: BetterAuthUserID
    let deletedAt: Timestamp
    let steps: [MergeStep]

    static func associatedData(planID: String, userID: BetterAuthUserID) -> [UInt8] {
        Array("gatehouse_user_deletion:\(planID):\(userID.rawValue)".utf8)
    }

    func seal(key: MasterKey, planID: String) throws -> [UInt8] {
        try AESGCM.seal(Array(try MergeJSON.string(self).utf8), key: key.bytes, associatedData: Self.associatedData(planID: planID, userID: userID))
    }

    static func open(_ box: [UInt8], key: MasterKey, planID: String, userID: BetterAuthUserID, deletion: Int64) throws -> UserDeletionSealedRows {
        let plain: [UInt8]
        do { plain = try AESGCM.open(box, key: key.bytes, associatedData: associatedData(planID: planID, userID: userID)) } catch {
            throw GatehouseError("the sealed rows of deletion \(deletion) cannot be opened with the master key from \(key.source) (\(error))",
                                 fix: "use the master key the store had when the user was deleted (restore the key file or GATEHOUSE_MASTER_KEY); nothing was changed",
                                 code: .unsealFailed)
        }
        return try MergeJSON.decode(UserDeletionSealedRows.self, String(decoding: plain, as: UTF8.self), what: "sealed rows of deletion \(deletion)")
    }
}
