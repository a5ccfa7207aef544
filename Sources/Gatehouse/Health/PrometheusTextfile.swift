import Foundation

/// The node_exporter textfile-collector form of a health report, written atomically: to a temporary
/// name in the same directory (not ending in `.prom`, so the collector never reads it half-written),
/// then renamed over the target. Samples carry no timestamps, as the collector requires.
public enum PrometheusTextfile {
    /// The exposition text for a report.
    public static func render(_ report: HealthReport) -> String {
        var families: [(name: String, help: String, lines: [String])] = []
        func add(_ name: String, _ help: String, _ labels: [String: String], _ value: Double) {
            let line = name + labelText(labels) + " " + number(value)
            if let index = families.firstIndex(where: { $0.name == name }) {
                families[index].lines.append(line)
            } else {
                families.append((name, help, [line]))
            }
        }
        add("gatehouse_health_status", "Worst status of the run: 0 ok, 1 warning, 2 critical, 3 unknown.", [:], Double(report.status.exitCode))
        for check in report.checks {
            add("gatehouse_check_status", "Status of each health check: 0 ok, 1 warning, 2 critical, 3 unknown.", ["check": check.id], Double(check.status.exitCode))
        }
        for check in report.checks {
            for sample in check.samples { add(sample.metric, sample.help, sample.labels, sample.value) }
        }
        add("gatehouse_health_last_run_timestamp_seconds", "When this health run happened.", [:], Double(report.at.seconds))
        add("gatehouse_health_duration_seconds", "How long the health run took.", [:], Double(report.durationMilliseconds) / 1000)
        add("gatehouse_build_info", "The Gatehouse version that wrote this file.", ["version": report.version], 1)
        return families.map { family in
            "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) gauge\n" + family.lines.joined(separator: "\n") + "\n"
        }.joined()
    }

    /// Writes the report to `path` atomically, its references to fields and commands in the words of `spelling`
    /// (the front end that writes it).
    public static func write(_ report: HealthReport, to path: String, spelling: DomainText.Spelling) throws {
        let target = URL(fileURLWithPath: path)
        let directory = target.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw GatehouseError.invalid("the folder for \(field: .prometheus) \(path) does not exist", fix: "create it, or point \(field: .prometheus) at node_exporter's textfile directory")
        }
        let temporary = directory.appendingPathComponent(".\(target.lastPathComponent).\(getpid()).tmp")
        do {
            try Data(DomainText.render(render(report), spelling).utf8).write(to: temporary)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: temporary.path)
            guard rename(temporary.path, target.path) == 0 else {
                throw GatehouseError("cannot rename \(temporary.path) to \(path): \(String(cString: strerror(errno)))")
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if let error = error as? GatehouseError { throw error }
            throw GatehouseError("cannot write the Prometheus file \(path)", fix: "check that its folder is writable")
        }
    }

    static func labelText(_ labels: [String: String]) -> String {
        guard !labels.isEmpty else { return "" }
        return "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(escape($0.value))\"" }.joined(separator: ",") + "}"
    }

    static func escape(_ value: String) -> String {
        var out = ""
        for char in value {
            switch char {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(char)
            }
        }
        return out
    }

    static func number(_ value: Double) -> String {
        if value.rounded() == value && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
