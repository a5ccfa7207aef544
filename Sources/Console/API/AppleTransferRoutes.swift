import Gatehouse
import HTTPServer

/// An Apple app transfer, as `gatehouse apple transfer status` shows it:
///
/// - `GET /api/apple/transfer` → {transfer: the status (stage, teams, deadline, daysLeft, counts, failed, plan with its
///   straggler pairs, next) or null when none is recorded} (viewer)
///
/// Read-only: collect and exchange talk to Apple for minutes or hours and belong on the host (`ops/runbooks/apple-transfer.md`).
enum AppleTransferRoutes {
    struct Answer: Encodable { let transfer: AppleTransferStatus? }

    static func register(on router: inout Router) {
        router.add("GET", "/api/apple/transfer", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { store in
                let transfers = AppleTransferStore(store: store)
                return Answer(transfer: try transfers.latest() == nil ? nil : try transfers.status(now: ctx.now))
            })
        }
    }
}
