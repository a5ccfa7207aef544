/// `gatehouse completion bash|zsh|fish`: a completion script, generated from the same spec that parses the line.
enum CompletionCommand: CommandNoun {
    static let name = "completion"
    static let summary = "print a shell completion script (bash, zsh, fish)"

    static func make() -> CommandSpec {
        CommandSpec(
            name: name, summary: summary,
            discussion: """
                The package installs these where each shell looks for them. Without it:
                  bash: source <(gatehouse completion bash)    (or save it as ~/.local/share/bash-completion/completions/gatehouse)
                  zsh:  gatehouse completion zsh > "${fpath[1]}/_gatehouse"
                  fish: gatehouse completion fish > ~/.config/fish/completions/gatehouse.fish
                """,
            subcommands: ShellCompletion.Shell.allCases.map { shell in
                CommandSpec(name: shell.rawValue, summary: "print the \(shell.rawValue) completion script", run: { invocation in
                    invocation.output.write(ShellCompletion.script(for: shell, tree: CommandTree(root: RootCommand.make())))
                    return 0
                })
            },
            examples: ["source <(gatehouse completion bash)"]
        )
    }
}

/// `gatehouse man`: gatehouse(1) in roff, from the same spec as `--help`. Hidden: the package runs it to install the
/// page, and an operator reads the page with `man gatehouse`.
enum ManCommand: CommandNoun {
    static let name = "man"
    static let summary = "print the gatehouse(1) man page (roff)"

    static func make() -> CommandSpec {
        CommandSpec(name: name, summary: summary, run: { invocation in
            invocation.output.write(ManPage.render(tree: CommandTree(root: RootCommand.make())))
            return 0
        })
    }
}
