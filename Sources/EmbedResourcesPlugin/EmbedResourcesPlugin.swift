import Foundation
import PackagePlugin

/// Embeds `migrations/` and `Public/` into the `EmbeddedResources` module at build time, and the build's commit
/// and date, so the release binary alone is a working install (issue 26).
///
/// Two commands, each rerun only when its own inputs change: the files (every file under the two folders is an
/// input, so editing a `.sql` or a console file rebuilds), and the build info (the git `HEAD` and the ref it names
/// are its inputs, so a commit updates `--version` while an edit does not rerun git).
@main
struct EmbedResourcesPlugin: BuildToolPlugin {
    /// The folders embedded, relative to the package; their paths inside the binary keep this prefix.
    static let folders = ["migrations", "Public"]

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let generator = try context.tool(named: "EmbedResourcesGenerator").url
        let root = context.package.directoryURL
        let work = context.pluginWorkDirectoryURL
        let filesOutput = work.appending(path: "EmbeddedFiles.swift")
        let buildInfoOutput = work.appending(path: "BuildInfo.swift")

        var inputs: [URL] = []
        for folder in Self.folders {
            inputs += Self.regularFiles(under: root.appending(path: folder))
        }
        // The environment a build may pin the build info with (a package built outside git, a reproducible date).
        var environment: [String: String] = [:]
        for name in ["PATH", "GATEHOUSE_BUILD_COMMIT", "SOURCE_DATE_EPOCH"] {
            if let value = ProcessInfo.processInfo.environment[name] { environment[name] = value }
        }
        return [
            .buildCommand(displayName: "Embedding the migrations and the console's files (\(inputs.count) files)",
                          executable: generator,
                          arguments: ["files", filesOutput.path, root.path] + Self.folders,
                          inputFiles: inputs, outputFiles: [filesOutput]),
            .buildCommand(displayName: "Recording the build's commit and date",
                          executable: generator,
                          arguments: ["build-info", buildInfoOutput.path, root.path],
                          environment: environment,
                          inputFiles: Self.gitInputs(root: root), outputFiles: [buildInfoOutput]),
        ]
    }

    /// Every regular, non-hidden file under `folder`, sorted.
    static func regularFiles(under folder: URL) -> [URL] {
        guard let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey],
                                                              options: [.skipsHiddenFiles]) else { return [] }
        var files: [URL] = []
        for case let url as URL in enumerator where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
            files.append(url)
        }
        return files.sorted { $0.path < $1.path }
    }

    /// The files whose change means a new commit: `HEAD`, the branch ref it points at, and `packed-refs`.
    /// Handles a worktree, whose `.git` is a file naming its own git directory (with `commondir` for refs).
    static func gitInputs(root: URL) -> [URL] {
        let dotGit = root.appending(path: ".git")
        var gitDirectory = dotGit
        if let text = try? String(contentsOf: dotGit, encoding: .utf8), text.hasPrefix("gitdir:") {
            let path = text.dropFirst("gitdir:".count).trimmingCharacters(in: .whitespacesAndNewlines)
            gitDirectory = path.hasPrefix("/") ? URL(fileURLWithPath: path) : root.appending(path: path)
        }
        let head = gitDirectory.appending(path: "HEAD")
        guard FileManager.default.fileExists(atPath: head.path) else { return [] }
        var common = gitDirectory
        if let text = try? String(contentsOf: gitDirectory.appending(path: "commondir"), encoding: .utf8) {
            let path = text.trimmingCharacters(in: .whitespacesAndNewlines)
            common = path.hasPrefix("/") ? URL(fileURLWithPath: path) : gitDirectory.appending(path: path)
        }
        var inputs = [head]
        if let text = try? String(contentsOf: head, encoding: .utf8), text.hasPrefix("ref:") {
            let ref = text.dropFirst("ref:".count).trimmingCharacters(in: .whitespacesAndNewlines)
            inputs.append(common.appending(path: ref))
        }
        inputs.append(common.appending(path: "packed-refs"))
        return inputs.filter { FileManager.default.fileExists(atPath: $0.path) }.map(\.standardizedFileURL)
    }
}
