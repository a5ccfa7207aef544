/// `gatehouse serve`: the console (wired up once the HTTP server lands).
enum ServeCommand {
    static func make() -> CommandSpec {
        CommandSpec(name: "serve", summary: "serve the console on 127.0.0.1",
                    options: [.value("listen", "ADDR:PORT", "where to listen (default 127.0.0.1:8787)")],
                    run: { invocation in
                        invocation.output.error("gatehouse: serve is not available in this build")
                        return 1
                    })
    }
}
